/**
 * The errorCode of every error the simulator answers, as a manager writes it: a number of the
 * module that answers, never the HTTP status. From the field notes: 202 (an object that does not
 * exist), 100 (a bare 500), IPAM's 120051, 120054 and 120056, and 210 with "Another object with
 * same name : X already exists in the current scope : globalroot-0." (a 6.4.5 manager creating a
 * grouping object, here a pool, with a taken name). No record of a real manager's code was found for the others; they are the simulator's own, in the answering module's range (the
 * edge module's codes run from 10000, as 10115 does). Clients decide on the status first and show
 * the code as detail, which is what this project's client does.
 */
import type { NsxErrorEntry } from "./xml.ts";

export const ERROR_CODES = {
  // core-services
  internalError: 100,
  objectNotFound: 202,
  invalidRequest: 210,
  unsupportedMediaType: 212,
  noSuchApi: 213,
  methodNotAllowed: 214,
  notAcceptable: 215,
  authenticationFailed: 220,
  notPermitted: 229,
  poolExhausted: 120051,
  poolNotFound: 120054,
  addressNotAllocated: 120056,
  poolHasAllocations: 120060,
  // vShield Edge
  invalidEdgeDocument: 10001,
  edgeIdMismatch: 10002,
  edgeModified: 10003,
  edgeUnreachable: 10020,
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

export const CORE_SERVICES = "core-services";
export const EDGE_MODULE = "vShield Edge";

/** the edge module's codes; every other code is answered by core-services (IPAM's included) */
const EDGE_CODES: ReadonlySet<ErrorCode> = new Set([
  ERROR_CODES.invalidEdgeDocument,
  ERROR_CODES.edgeIdMismatch,
  ERROR_CODES.edgeModified,
  ERROR_CODES.edgeUnreachable,
]);

/** One error as a manager writes it: the code, what happened, and the module the code belongs to. */
export function errorEntry(code: ErrorCode, details: string): NsxErrorEntry {
  return { errorCode: String(code), details, moduleName: EDGE_CODES.has(code) ? EDGE_MODULE : CORE_SERVICES };
}

/** The code a fault injected with only a status answers with; any other status answers 100. */
const FAULT_CODES: Readonly<Record<number, ErrorCode>> = {
  400: ERROR_CODES.invalidRequest,
  401: ERROR_CODES.authenticationFailed,
  403: ERROR_CODES.notPermitted,
  404: ERROR_CODES.objectNotFound,
  409: ERROR_CODES.edgeModified,
  503: ERROR_CODES.edgeUnreachable,
};

export function faultCode(status: number): ErrorCode {
  return FAULT_CODES[status] ?? ERROR_CODES.internalError;
}
