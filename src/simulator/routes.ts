/**
 * The manager API the simulator serves: the five calls of the spec (edge read and replace, pool
 * list, allocation list, release), and what real managers also have and clients use: the paged
 * edge list and one edge's summary, edge creation and deletion (edge-create.ts), one pool and
 * pool creation, update and deletion (pool-routes.ts), REST allocation, version information, the
 * network fabric's features, the vCenter registration and the 6.4 authentication calls
 * (manager-routes.ts). Handlers are synchronous over SimulatorState, so
 * concurrent requests see each call whole.
 *
 * Errors (status, errorCode from error-codes.ts, module):
 *   unknown edge, scope or pool (404 setting)  404  202      core-services  "The requested object : X could not be found. ..."
 *   unknown pool                               400  120054   core-services
 *   release of a non-allocated address         400  120056   core-services
 *   RESERVE of a taken address / outside       400  120056   core-services
 *   ALLOCATE with none free                    400  120051   core-services
 *   bad request body or query parameter        400  210      core-services
 *   edge document not well-formed or unmodelled 400 10001    vShield Edge
 *   edge id in the document names another edge 400 10002    vShield Edge
 *   pool name taken in its scope               400  210      core-services  "Another object with same name : X already exists ..."
 *   pool update leaving allocations outside    400  120056   core-services
 *   pool deletion with allocations, not forced 400  120060   core-services
 *   stale PUT (rejectStaleVersion)             409  10003    vShield Edge
 *   Content-Type not XML, or unknown charset   415  212      core-services
 *   no API at the path (or not in this release) 404 213      core-services
 *   method not allowed                         405  214      core-services, with Allow
 *   Accept names no XML type                   406  215      core-services
 *   bad or missing credentials                 401  220      core-services, with WWW-Authenticate: Basic
 *   a write by the Auditor account             403  229      core-services
 */
import {
  badRequest,
  codedBadRequest,
  forbidden,
  notFound,
  readXmlBody,
  type ApiRequest,
  type ApiResponse,
  type Caller,
} from "./api.ts";
import { pagedEdgeList, parseEdgeListQuery, EdgeListQueryError } from "./edge-list.ts";
import { readEdgeToCreate } from "./edge-create.ts";
import { ERROR_CODES, errorEntry } from "./error-codes.ts";
import type { ApiRoute } from "./faults.ts";
import { isAtLeast, type ManagerRelease } from "./manager.ts";
import { handleManagerRoute, ROUTE_SINCE, type ManagerRoute } from "./manager-routes.ts";
import { handlePoolChange } from "./pool-routes.ts";
import type { Pool } from "./pools.ts";
import type { SimulatorState } from "./state.ts";
import { parseXmlObject } from "../nsx/xml.ts";
import { booleanDocument, el, renderDocument } from "./xml.ts";

export type RouteMatch =
  { route: ApiRoute; params: string[] } | { route: "unknown"; status: 404 | 405; allow?: string };

type RouteTable = readonly { pattern: readonly string[]; methods: Partial<Record<string, ApiRoute>> }[];

const AUTH = ["api", "2.0", "services", "auth"];
const POOLS = ["api", "2.0", "services", "ipam", "pools"];

/** `*` matches one segment, whose value becomes a param; src/simulator/README.md lists each */
export const ROUTES: RouteTable = [
  { pattern: ["api", "4.0", "edges"], methods: { GET: "listEdges", POST: "createEdge" } },
  {
    pattern: ["api", "4.0", "edges", "*"],
    methods: { GET: "getEdge", PUT: "putEdge", DELETE: "deleteEdge" },
  },
  { pattern: ["api", "4.0", "edges", "*", "summary"], methods: { GET: "getEdgeSummary" } },
  { pattern: [...POOLS, "*"], methods: { GET: "getPool", PUT: "updatePool", DELETE: "deletePool" } },
  { pattern: [...POOLS, "scope", "*"], methods: { GET: "listPools", POST: "createPool" } },
  { pattern: [...POOLS, "*", "ipaddresses"], methods: { GET: "listAllocations", POST: "allocate" } },
  { pattern: [...POOLS, "*", "ipaddresses", "*"], methods: { DELETE: "releaseAddress" } },
  { pattern: [...AUTH, "token"], methods: { POST: "token" } },
  { pattern: ["api", "3.0", "services", "auth", "token"], methods: { POST: "tokenWithCredentials" } },
  { pattern: [...AUTH, "tokenexpiration"], methods: { GET: "getTokenExpiry", PUT: "setTokenExpiry" } },
  { pattern: [...AUTH, "tokeninvalidation"], methods: { POST: "invalidateTokens" } },
  { pattern: [...AUTH, "basic"], methods: { GET: "getBasicAuth", PUT: "setBasicAuth" } },
  { pattern: ["api", "1.0", "appliance-management", "global", "info"], methods: { GET: "globalInfo" } },
  { pattern: ["api", "2.0", "nwfabric", "features"], methods: { GET: "fabricFeatures" } },
  { pattern: ["api", "2.0", "services", "vcconfig"], methods: { GET: "getVcConfig" } },
];

/** The route of a call; a call the manager's release does not have yet is no API at that path. */
export function matchRoute(method: string, segments: readonly string[], release: ManagerRelease): RouteMatch {
  for (const { pattern, methods } of ROUTES) {
    if (pattern.length !== segments.length) continue;
    const params: string[] = [];
    const matches = pattern.every((p, i) => {
      if (p !== "*") return p === segments[i];
      params.push(segments[i] ?? "");
      return segments[i] !== "";
    });
    if (!matches) continue;
    const offered = Object.entries(methods).filter((entry): entry is [string, ApiRoute] => {
      const since = entry[1] === undefined ? undefined : ROUTE_SINCE[entry[1]];
      return entry[1] !== undefined && (since === undefined || isAtLeast(release, since));
    });
    if (offered.length === 0) break;
    const route = Object.fromEntries(offered)[method];
    if (route === undefined)
      return { route: "unknown", status: 405, allow: offered.map(([m]) => m).join(", ") };
    return { route, params };
  }
  return { route: "unknown", status: 404 };
}

export function unknownRouteResponse(
  match: { status: 404 | 405; allow?: string },
  path: string,
): ApiResponse {
  if (match.status === 405) {
    return {
      status: 405,
      ...(match.allow !== undefined ? { headers: { Allow: match.allow } } : {}),
      errors: [errorEntry(ERROR_CODES.methodNotAllowed, `Method not allowed on ${path}.`)],
    };
  }
  return {
    status: 404,
    errors: [errorEntry(ERROR_CODES.noSuchApi, `No API at ${path}.`)],
  };
}

/** Calls that change the manager: the Auditor role may not make them. */
const WRITES: ReadonlySet<ApiRoute> = new Set([
  "createEdge",
  "putEdge",
  "deleteEdge",
  "createPool",
  "updatePool",
  "deletePool",
  "releaseAddress",
  "allocate",
  "setTokenExpiry",
  "invalidateTokens",
]);

type Handler = (state: SimulatorState, params: readonly string[], req: ApiRequest) => ApiResponse;

/** the edge and pool calls, by route; the others are the manager's own (manager-routes.ts) */
const HANDLERS: Partial<Record<ApiRoute, Handler>> = {
  listEdges: (state, _p, req) => listEdges(state, req),
  createEdge: (state, _p, req) => createEdge(state, req),
  getEdge: (state, [id = ""]) => getEdge(state, id),
  getEdgeSummary: (state, [id = ""], req) => getEdgeSummary(state, id, req),
  putEdge: (state, [id = ""], req) => putEdge(state, id, req),
  deleteEdge: (state, [id = ""]) => (state.deleteEdge(id) ? { status: 204 } : notFound(id)),
  listPools: (state, [scopeId = ""]) => listPools(state, scopeId),
  createPool: (state, [scopeId = ""], req) => handlePoolChange(state, "createPool", scopeId, req),
  getPool: (state, [poolId = ""]) => getPool(state, poolId),
  updatePool: (state, [poolId = ""], req) => handlePoolChange(state, "updatePool", poolId, req),
  deletePool: (state, [poolId = ""], req) => handlePoolChange(state, "deletePool", poolId, req),
  listAllocations: (state, [poolId = ""]) =>
    withPool(state, poolId, (pool) => allocationsResponse(state, pool)),
  releaseAddress: (state, [poolId = "", ip = ""]) =>
    withPool(state, poolId, (pool) => release(state, pool, ip)),
  allocate: (state, [poolId = ""], req) => withPool(state, poolId, (pool) => allocate(state, pool, req)),
};

/** Runs one call; `caller` is undefined only for the calls that take credentials in the body. */
export function handleApi(
  state: SimulatorState,
  { route, params }: { route: ApiRoute; params: string[] },
  req: ApiRequest,
  caller: Caller | undefined,
): ApiResponse {
  if (caller?.role === "auditor" && WRITES.has(route)) return forbidden();
  const handler = HANDLERS[route];
  if (handler !== undefined) return handler(state, params, req);
  return handleManagerRoute(state, route as ManagerRoute, req, caller);
}

function getEdge(state: SimulatorState, id: string): ApiResponse {
  const edge = state.edge(id);
  return edge === undefined ? notFound(id) : { status: 200, body: edge.bytes };
}

function listEdges(state: SimulatorState, req: ApiRequest): ApiResponse {
  try {
    const query = parseEdgeListQuery(req.query);
    const listings = req.staleListing?.view(state.clock.now()) ?? state.edges().map((e) => e.listing);
    return {
      status: 200,
      body: renderDocument(pagedEdgeList(listings, query), { pretty: state.settings.prettyXml }),
    };
  } catch (error) {
    if (error instanceof EdgeListQueryError) return badRequest(error.message);
    throw error;
  }
}

function getEdgeSummary(state: SimulatorState, id: string, req: ApiRequest): ApiResponse {
  const listing =
    req.staleListing !== undefined ? req.staleListing.get(id, state.clock.now()) : state.edge(id)?.listing;
  if (listing === undefined) return notFound(id);
  return {
    status: 200,
    body: renderDocument(listing.summary, { pretty: state.settings.prettyXml }),
  };
}

function getPool(state: SimulatorState, id: string): ApiResponse {
  const pool = state.pool(id);
  if (pool === undefined) return notFound(id);
  return {
    status: 200,
    body: renderDocument(pool.toXml(state.manager), { pretty: state.settings.prettyXml }),
  };
}

function putEdge(state: SimulatorState, id: string, req: ApiRequest): ApiResponse {
  const body = readXmlBody(req);
  if ("refused" in body) return body.refused;
  const result = state.putEdge(id, body.text);
  if (result.ok) return { status: 204 };
  if (result.reason === "missing") return notFound(id);
  if (result.reason === "invalid") return codedBadRequest(result.code, result.message);
  return {
    status: 409,
    errors: [
      errorEntry(
        ERROR_CODES.edgeModified,
        `Edge ${id} is at version ${result.storedVersion}; the document sent is version ${result.sentVersion}. Read it again and retry.`,
      ),
    ],
  };
}

/** 201 with the new edge's path in Location (PowerNSX and govnsx take the id from it), no body */
function createEdge(state: SimulatorState, req: ApiRequest): ApiResponse {
  const body = readXmlBody(req);
  if ("refused" in body) return body.refused;
  const read = readEdgeToCreate(body.text);
  if (!read.ok) return codedBadRequest(read.code, read.message);
  const edge = state.createEdge(read.sent);
  return { status: 201, headers: { Location: `/api/4.0/edges/${edge.id}` } };
}

function listPools(state: SimulatorState, scopeId: string): ApiResponse {
  const pools = state.poolsInScope(scopeId);
  if (pools === undefined) return notFound(scopeId);
  const root = el(
    "ipamAddressPools",
    pools.map((p) => p.toXml(state.manager)),
  );
  return { status: 200, body: renderDocument(root, { pretty: state.settings.prettyXml }) };
}

function withPool(state: SimulatorState, poolId: string, then: (pool: Pool) => ApiResponse): ApiResponse {
  const pool = state.pool(poolId);
  if (pool !== undefined) return then(pool);
  if (state.settings.missingPoolStatus === 404) return notFound(poolId);
  return codedBadRequest(ERROR_CODES.poolNotFound, `The IP pool ${poolId} does not exist.`);
}

function allocationsResponse(state: SimulatorState, pool: Pool): ApiResponse {
  const root = el(
    "allocatedIpAddresses",
    pool.allocations().map((a) => pool.allocationXml(a)),
  );
  return { status: 200, body: renderDocument(root, { pretty: state.settings.prettyXml }) };
}

function release(state: SimulatorState, pool: Pool, ip: string): ApiResponse {
  const record = state.release(pool, ip);
  if (record === undefined) {
    return codedBadRequest(
      ERROR_CODES.addressNotAllocated,
      `The IP address ${ip} is not allocated from the IP pool ${pool.id}.`,
    );
  }
  return { status: 200, body: booleanDocument(true) };
}

function parseIpAddressRequest(
  text: string,
): { request: Record<string, unknown> } | { refused: ApiResponse } {
  try {
    const parsed = parseXmlObject(text, "ipAddressRequest");
    if (typeof parsed.ipAddressRequest !== "object" || parsed.ipAddressRequest === null) {
      return { refused: badRequest("The request body must be an <ipAddressRequest> document.") };
    }
    return { request: parsed.ipAddressRequest as Record<string, unknown> };
  } catch (error) {
    return { refused: badRequest(error instanceof Error ? error.message : String(error)) };
  }
}

/** The fields of an `<ipAddressRequest>` body, or the 400 that refuses it. */
function readAllocationRequest(
  req: ApiRequest,
): { mode: "ALLOCATE" | "RESERVE"; ipAddress?: string; note?: string } | { refused: ApiResponse } {
  const body = readXmlBody(req);
  if ("refused" in body) return body;
  const parsed = parseIpAddressRequest(body.text);
  if ("refused" in parsed) return parsed;
  const { request } = parsed;
  const mode = typeof request.allocationMode === "string" ? request.allocationMode : "ALLOCATE";
  const ipAddress = typeof request.ipAddress === "string" ? request.ipAddress : undefined;
  const note = typeof request.allocationNote === "string" ? request.allocationNote : undefined;
  if (mode !== "ALLOCATE" && mode !== "RESERVE") {
    return { refused: badRequest(`allocationMode must be ALLOCATE or RESERVE, not ${mode}.`) };
  }
  if (mode === "RESERVE" && (ipAddress === undefined || ipAddress === "")) {
    return { refused: badRequest("RESERVE needs an <ipAddress>.") };
  }
  return { mode, ...(ipAddress ? { ipAddress } : {}), ...(note ? { note } : {}) };
}

function allocate(state: SimulatorState, pool: Pool, req: ApiRequest): ApiResponse {
  const request = readAllocationRequest(req);
  if ("refused" in request) return request.refused;
  const { ipAddress } = request;
  const result = state.allocate(pool.id, request);
  if (result === undefined)
    return codedBadRequest(ERROR_CODES.poolNotFound, `The IP pool ${pool.id} does not exist.`);
  if (result.ok) {
    return {
      status: 200,
      body: renderDocument(pool.allocationXml(result.allocation), { pretty: state.settings.prettyXml }),
    };
  }
  if (result.reason === "exhausted")
    return codedBadRequest(ERROR_CODES.poolExhausted, `The IP pool ${pool.id} has no free address left.`);
  if (result.reason === "taken") {
    return codedBadRequest(
      ERROR_CODES.addressNotAllocated,
      `The IP address ${ipAddress} is already allocated from the IP pool ${pool.id}.`,
    );
  }
  return codedBadRequest(
    ERROR_CODES.addressNotAllocated,
    `The IP address ${ipAddress} is not inside the ranges of the IP pool ${pool.id}.`,
  );
}
