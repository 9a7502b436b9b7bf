/**
 * The OpenAPI formats the CRDs use, as ajv checks them, and ajv's count of a string's characters
 * (code points, as the API server counts maxLength): shared by the validators compiled at run
 * time (crds.ts) and the ones generated from the same CRDs (crd-validators.generated.ts), so that
 * both decide alike.
 */
import { createRequire } from "node:module";

/** RFC 3339, as the API server reads `format: date-time` */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export const CRD_FORMATS = {
  int32: { type: "number", validate: (n: number) => n >= -(2 ** 31) && n < 2 ** 31 },
  int64: { type: "number", validate: (n: number) => Number.isSafeInteger(n) },
  "date-time": RFC3339,
} as const;

/**
 * ajv's own (`ajv/dist/runtime/ucs2length`, a file of a few lines), which the code it generates
 * calls for maxLength and minLength; required alone, without the rest of ajv.
 */
export const ucs2length = (
  createRequire(import.meta.url)("ajv/dist/runtime/ucs2length") as {
    default: (text: string) => number;
  }
).default;
