/**
 * JSON equality without serializing: what a status write and a directory read ask of every
 * object, on the hot path.
 */

/**
 * Whether two values are the same as JSON: key order does not count as a change, and a key
 * whose value is undefined is as absent (an array's undefined item is JSON's null). Compared in
 * place: every pass asks of its status, and copies sorted for the question would be garbage.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) return sameArrays(a, b);
  return sameRecords(a as Record<string, unknown>, b as Record<string, unknown>);
}

function sameArrays(a: object, b: object): boolean {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameJson(a[i] ?? null, b[i] ?? null)) return false;
  return true;
}

function sameRecords(x: Record<string, unknown>, y: Record<string, unknown>): boolean {
  let keys = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key) || x[key] === undefined) continue;
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
    keys++;
  }
  for (const key in y) if (Object.hasOwn(y, key) && y[key] !== undefined) keys--;
  return keys === 0;
}
