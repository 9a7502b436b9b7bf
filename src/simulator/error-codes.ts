/**
 * The errorCode of every error the simulator answers, as a manager writes it: a number of the
 * module that answers, never the HTTP status. From the field notes: 202 (an object that does not
 * exist), 100 (a bare 500) and IPAM's 120051, 120054 and 120056. No record of a real manager's code
 * was found for the others; they are the simulator's own, in the answering module's range (the
 * edge module's codes run from 10000, as 10115 does). Clients decide on the status first and show
 * the code as detail, which is what this project's client does.
 */
export const ERROR_CODES = {
  // core-services
  internalError: 100,
  objectNotFound: 202,
  invalidRequest: 210,
  unsupportedMediaType: 212,
  noSuchApi: 213,
  methodNotAllowed: 214,
  authenticationFailed: 220,
  notPermitted: 229,
  poolExhausted: 120051,
  poolNotFound: 120054,
  addressNotAllocated: 120056,
  // vShield Edge
  invalidEdgeDocument: 10001,
  edgeIdMismatch: 10002,
  edgeModified: 10003,
  edgeUnreachable: 10020,
} as const;

export const CORE_SERVICES = "core-services";
export const EDGE_MODULE = "vShield Edge";

/** The code and module a fault injected with only a status answers with. */
export function faultError(status: number): { errorCode: number; moduleName: string } {
  switch (status) {
    case 400:
      return { errorCode: ERROR_CODES.invalidRequest, moduleName: CORE_SERVICES };
    case 401:
      return { errorCode: ERROR_CODES.authenticationFailed, moduleName: CORE_SERVICES };
    case 403:
      return { errorCode: ERROR_CODES.notPermitted, moduleName: CORE_SERVICES };
    case 404:
      return { errorCode: ERROR_CODES.objectNotFound, moduleName: CORE_SERVICES };
    case 409:
      return { errorCode: ERROR_CODES.edgeModified, moduleName: EDGE_MODULE };
    case 503:
      return { errorCode: ERROR_CODES.edgeUnreachable, moduleName: EDGE_MODULE };
    default:
      return { errorCode: ERROR_CODES.internalError, moduleName: CORE_SERVICES };
  }
}
