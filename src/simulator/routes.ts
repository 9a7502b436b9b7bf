/**
 * The manager API the simulator serves: the five calls of the spec (edge read and replace, pool
 * list, allocation list, release), and what real managers also have and clients use: the paged
 * edge list and one edge's summary, one pool, REST allocation, and the 6.4 token call. Handlers
 * are synchronous over SimulatorState, so concurrent requests see each call whole.
 *
 * Errors (status, errorCode from error-codes.ts, module):
 *   unknown edge, scope or pool (404 setting)  404  202      core-services  "The requested object : X could not be found. ..."
 *   unknown pool                               400  120054   core-services
 *   release of a non-allocated address         400  120056   core-services
 *   RESERVE of a taken address / outside       400  120056   core-services
 *   ALLOCATE with none free                    400  120051   core-services
 *   bad request body or query parameter        400  210      core-services
 *   edge document not well-formed or unmodelled 400 10001    vShield Edge
 *   edge id in the document ≠ path             400  10002    vShield Edge
 *   stale PUT (rejectStaleVersion)             409  10003    vShield Edge
 *   wrong Content-Type                         415  212      core-services
 *   no API at the path                         404  213      core-services
 *   method not allowed                         405  214      core-services, with Allow
 *   bad or missing credentials                 401  220      core-services, with WWW-Authenticate: Basic
 *   a write by the Auditor account             403  229      core-services
 */
import { NsxDocumentError, NsxResponseError } from "../nsx/errors.ts";
import { EdgeDocument } from "../nsx/edge-document.ts";
import { parseXmlObject } from "../nsx/xml.ts";
import type { Role } from "./auth.ts";
import { parseEdgeListQuery, pagedEdgeList, summaryOf, EdgeListQueryError } from "./edge-list.ts";
import { modelToXmlNode } from "./edge-model.ts";
import { ERROR_CODES, errorEntry, type ErrorCode } from "./error-codes.ts";
import type { ApiRoute } from "./faults.ts";
import type { Pool } from "./pools.ts";
import type { PutEdgeResult, SimulatorState } from "./state.ts";
import { booleanDocument, el, renderDocument, tokenDocument, type NsxErrorEntry } from "./xml.ts";

export interface ApiRequest {
  method: string;
  /** decoded path segments */
  segments: string[];
  query: URLSearchParams;
  contentType: string | undefined;
  authorization: string | undefined;
  body: Buffer;
}

export interface ApiResponse {
  status: number;
  headers?: Record<string, string>;
  /** XML; absent for 204 and for errors */
  body?: string | Buffer;
  /** rendered in the error shape the faults ask for */
  errors?: NsxErrorEntry[];
}

export type RouteMatch =
  { route: ApiRoute; params: string[] } | { route: "unknown"; status: 404 | 405; allow?: string };

type RouteTable = { pattern: string[]; methods: Partial<Record<string, ApiRoute>> }[];

/** `*` matches one segment, whose value becomes a param */
const ROUTES: RouteTable = [
  { pattern: ["api", "4.0", "edges"], methods: { GET: "listEdges" } },
  { pattern: ["api", "4.0", "edges", "*"], methods: { GET: "getEdge", PUT: "putEdge" } },
  { pattern: ["api", "4.0", "edges", "*", "summary"], methods: { GET: "getEdgeSummary" } },
  { pattern: ["api", "2.0", "services", "ipam", "pools", "*"], methods: { GET: "getPool" } },
  { pattern: ["api", "2.0", "services", "ipam", "pools", "scope", "*"], methods: { GET: "listPools" } },
  {
    pattern: ["api", "2.0", "services", "ipam", "pools", "*", "ipaddresses"],
    methods: { GET: "listAllocations", POST: "allocate" },
  },
  {
    pattern: ["api", "2.0", "services", "ipam", "pools", "*", "ipaddresses", "*"],
    methods: { DELETE: "releaseAddress" },
  },
  { pattern: ["api", "2.0", "services", "auth", "token"], methods: { POST: "token" } },
];

export function matchRoute(method: string, segments: readonly string[]): RouteMatch {
  for (const { pattern, methods } of ROUTES) {
    if (pattern.length !== segments.length) continue;
    const params: string[] = [];
    const matches = pattern.every((p, i) => {
      if (p !== "*") return p === segments[i];
      params.push(segments[i] ?? "");
      return segments[i] !== "";
    });
    if (!matches) continue;
    const route = methods[method];
    if (route === undefined) return { route: "unknown", status: 405, allow: Object.keys(methods).join(", ") };
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

export function unauthorizedResponse(reason: string): ApiResponse {
  return {
    status: 401,
    headers: { "WWW-Authenticate": 'Basic realm="NSX Manager"' },
    errors: [errorEntry(ERROR_CODES.authenticationFailed, `Authentication failed: ${reason}.`)],
  };
}

/** Calls that change the manager: the Auditor role may not make them. */
const WRITES: ReadonlySet<ApiRoute> = new Set(["putEdge", "releaseAddress", "allocate"]);

/** Runs one authenticated call. */
export function handleApi(
  state: SimulatorState,
  route: ApiRoute,
  params: string[],
  req: ApiRequest,
  role: Role,
): ApiResponse {
  if (role === "auditor" && WRITES.has(route)) {
    return {
      status: 403,
      errors: [
        errorEntry(ERROR_CODES.notPermitted, "User does not have the rights to perform this operation."),
      ],
    };
  }
  const [first = "", second = ""] = params;
  switch (route) {
    case "listEdges":
      return listEdges(state, req);
    case "getEdgeSummary":
      return getEdgeSummary(state, first);
    case "getPool":
      return getPool(state, first);
    case "getEdge":
      return getEdge(state, first);
    case "putEdge":
      return putEdge(state, first, req);
    case "listPools":
      return listPools(state, first);
    case "listAllocations":
      return withPool(state, first, (pool) => allocationsResponse(state, pool));
    case "releaseAddress":
      return withPool(state, first, (pool) => release(state, pool, second));
    case "allocate":
      return withPool(state, first, (pool) => allocate(state, pool, req));
    case "token":
      return token(state, req, role);
  }
}

function getEdge(state: SimulatorState, id: string): ApiResponse {
  const edge = state.edge(id);
  return edge === undefined ? notFound(id) : { status: 200, body: edge.bytes };
}

function listEdges(state: SimulatorState, req: ApiRequest): ApiResponse {
  try {
    const page = pagedEdgeList(state.edges(), state.manager, parseEdgeListQuery(req.query));
    return { status: 200, body: renderDocument(page, { pretty: state.settings.prettyXml }) };
  } catch (error) {
    if (error instanceof EdgeListQueryError) return badRequest(error.message);
    throw error;
  }
}

function getEdgeSummary(state: SimulatorState, id: string): ApiResponse {
  const edge = state.edge(id);
  if (edge === undefined) return notFound(id);
  const summary = modelToXmlNode(summaryOf(edge, state.manager));
  return { status: 200, body: renderDocument(summary, { pretty: state.settings.prettyXml }) };
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
  const unsupported = requireXml(req);
  if (unsupported) return unsupported;
  if (state.edge(id) === undefined) return notFound(id);
  let doc: EdgeDocument;
  try {
    doc = EdgeDocument.parse(req.body.toString("utf8"));
  } catch (error) {
    const details =
      error instanceof NsxResponseError ? error.message : "The request body is not an edge document.";
    return codedBadRequest(ERROR_CODES.invalidEdgeDocument, details);
  }
  if (doc.id !== id) {
    return codedBadRequest(
      ERROR_CODES.edgeIdMismatch,
      `The edge id in the document (${doc.id}) does not match the path (${id}).`,
    );
  }
  let result: PutEdgeResult;
  try {
    result = state.putEdge(id, doc);
  } catch (error) {
    // e.g. two <version> elements: which one the manager would read is unknown
    if (error instanceof NsxDocumentError)
      return codedBadRequest(ERROR_CODES.invalidEdgeDocument, error.message);
    throw error;
  }
  if (result.ok) return { status: 204 };
  if (result.reason === "missing") return notFound(id);
  if (result.reason === "unmodelled") return codedBadRequest(ERROR_CODES.invalidEdgeDocument, result.message);
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

function allocate(state: SimulatorState, pool: Pool, req: ApiRequest): ApiResponse {
  const unsupported = requireXml(req);
  if (unsupported) return unsupported;
  let request: Record<string, unknown>;
  try {
    const parsed = parseXmlObject(req.body.toString("utf8"), "ipAddressRequest");
    if (typeof parsed.ipAddressRequest !== "object" || parsed.ipAddressRequest === null) {
      return badRequest("The request body must be an <ipAddressRequest> document.");
    }
    request = parsed.ipAddressRequest as Record<string, unknown>;
  } catch (error) {
    return badRequest(error instanceof Error ? error.message : String(error));
  }
  const mode = typeof request.allocationMode === "string" ? request.allocationMode : "ALLOCATE";
  const ipAddress = typeof request.ipAddress === "string" ? request.ipAddress : undefined;
  const note = typeof request.allocationNote === "string" ? request.allocationNote : undefined;
  if (mode !== "ALLOCATE" && mode !== "RESERVE") {
    return badRequest(`allocationMode must be ALLOCATE or RESERVE, not ${mode}.`);
  }
  if (mode === "RESERVE" && (ipAddress === undefined || ipAddress === "")) {
    return badRequest("RESERVE needs an <ipAddress>.");
  }
  const result = state.allocate(pool.id, {
    mode,
    ...(ipAddress ? { ipAddress } : {}),
    ...(note ? { note } : {}),
  });
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

function token(state: SimulatorState, req: ApiRequest, role: Role): ApiResponse {
  const minutes = req.query.get("expiresInMinutes");
  const ttlMs =
    minutes !== null && /^\d+$/.test(minutes) && Number(minutes) > 0 ? Number(minutes) * 60_000 : undefined;
  const issued = state.auth.issue({
    nowMs: state.clock.now(),
    ttlMs: ttlMs ?? state.settings.tokenTtlMs,
    role,
  });
  return { status: 200, body: tokenDocument(issued, { pretty: state.settings.prettyXml }) };
}

function requireXml(req: ApiRequest): ApiResponse | undefined {
  const mediaType = (req.contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (mediaType === "application/xml") return undefined;
  return {
    status: 415,
    errors: [
      errorEntry(
        ERROR_CODES.unsupportedMediaType,
        `Unsupported Content-Type ${req.contentType ?? "(none)"}: send application/xml.`,
      ),
    ],
  };
}

function notFound(id: string): ApiResponse {
  return {
    status: 404,
    errors: [
      {
        ...errorEntry(
          ERROR_CODES.objectNotFound,
          `The requested object : ${id} could not be found. Object identifiers are case sensitive.`,
        ),
        data: { objectId: id },
      },
    ],
  };
}

function badRequest(details: string): ApiResponse {
  return codedBadRequest(ERROR_CODES.invalidRequest, details);
}

/** a 400 with a module's own code: the edge module's or IPAM's */
function codedBadRequest(code: ErrorCode, details: string): ApiResponse {
  return { status: 400, errors: [errorEntry(code, details)] };
}
