/**
 * The manager's identifiers of edges and pools, one definition each: what a spec may name, what
 * the client puts in a path, what a document or list must carry. The CRDs declare the same
 * patterns and bounds (test/api/crd-types.test.ts checks that they are these).
 */
import { boundedPattern } from "../util/bounded-pattern.ts";

export const EDGE_ID_PATTERN = "^edge-[0-9]+$";
export const EDGE_ID_MAX_LENGTH = 64;
export const POOL_ID_PATTERN = "^ipaddresspool-[0-9]+$";
export const POOL_ID_MAX_LENGTH = 64;

/** `edge-<n>`, at most EDGE_ID_MAX_LENGTH characters */
export const isEdgeId = boundedPattern(EDGE_ID_PATTERN, EDGE_ID_MAX_LENGTH);

/** `ipaddresspool-<n>`, at most POOL_ID_MAX_LENGTH characters */
export const isPoolId = boundedPattern(POOL_ID_PATTERN, POOL_ID_MAX_LENGTH);
