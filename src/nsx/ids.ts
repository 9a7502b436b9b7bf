/**
 * The manager's identifiers of edges and pools, one definition each: what a spec may name, what
 * the client puts in a path, what a document or list must carry. The CRDs declare the same
 * patterns and bounds (test/api/crd-types.test.ts checks that they are these).
 */

export const EDGE_ID_PATTERN = "^edge-[0-9]+$";
export const EDGE_ID_MAX_LENGTH = 64;
export const POOL_ID_PATTERN = "^ipaddresspool-[0-9]+$";
export const POOL_ID_MAX_LENGTH = 64;

const EDGE_ID = new RegExp(EDGE_ID_PATTERN);
const POOL_ID = new RegExp(POOL_ID_PATTERN);

/** `edge-<n>`, at most EDGE_ID_MAX_LENGTH characters */
export function isEdgeId(value: unknown): boolean {
  return typeof value === "string" && value.length <= EDGE_ID_MAX_LENGTH && EDGE_ID.test(value);
}

/** `ipaddresspool-<n>`, at most POOL_ID_MAX_LENGTH characters */
export function isPoolId(value: unknown): boolean {
  return typeof value === "string" && value.length <= POOL_ID_MAX_LENGTH && POOL_ID.test(value);
}
