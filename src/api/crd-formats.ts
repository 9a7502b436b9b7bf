/**
 * The OpenAPI formats the CRDs use, as ajv checks them: shared by the validators compiled at run
 * time (crds.ts) and the ones generated from the same CRDs (crd-validators.generated.ts), so that
 * both decide alike; and the count of a string's characters the generated ones call, as ajv's
 * own that the compiled ones call (code points, as the API server counts maxLength).
 */

/** RFC 3339, as the API server reads `format: date-time` */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export const CRD_FORMATS = {
  int32: { type: "number", validate: (n: number) => n >= -(2 ** 31) && n < 2 ** 31 },
  int64: { type: "number", validate: (n: number) => Number.isSafeInteger(n) },
  "date-time": RFC3339,
} as const;

/** a high surrogate and the low one after it: one character of two UTF-16 code units */
const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

/**
 * A string's characters as ajv counts them for maxLength and minLength (its
 * `ajv/dist/runtime/ucs2length`, which the code it generates calls): code units, a surrogate pair
 * counted once, a lone surrogate once. Counted by one native search rather than ajv's loop over
 * every code unit, which ran for each string of each manifest before it was compiled.
 */
export function ucs2length(text: string): number {
  return text.length - (text.match(SURROGATE_PAIR)?.length ?? 0);
}
