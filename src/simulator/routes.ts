/**
 * The manager API the simulator serves: the five calls of the spec (edge read and replace, pool
 * list, allocation list, release), the allocation call real managers also have, and the 6.4 token
 * call. Handlers are synchronous over SimulatorState, so concurrent requests see each call whole.
 *
 * Error answers (status, errorCode, module), where the field notes give no code the HTTP status
 * is used as errorCode:
 *   unknown edge or scope        404  202     core-services  "The requested object : X could not be found. ..."
 *   unknown pool                 400  120054  core-services  (404 202 with settings.missingPoolStatus 404)
 *   release of a non-allocated   400  120056  core-services
 *   RESERVE of a taken / outside 400  120056  core-services
 *   ALLOCATE with none free      400  120051  core-services
 *   bad XML, id mismatch         400  400     vShield Edge / core-services
 *   stale PUT (setting)          409  409     vShield Edge
 *   wrong Content-Type           415  415     core-services
 *   bad or missing credentials   401  401     core-services, with WWW-Authenticate: Basic
 */
import { NsxDocumentError, NsxResponseError } from "../nsx/errors.ts";
import { EdgeDocument } from "../nsx/edge-document.ts";
import { parseXmlObject } from "../nsx/xml.ts";
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
  { pattern: ["api", "4.0", "edges", "*"], methods: { GET: "getEdge", PUT: "putEdge" } },
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
      errors: [{ errorCode: "405", details: `Method not allowed on ${path}.`, moduleName: "core-services" }],
    };
  }
  return {
    status: 404,
    errors: [{ errorCode: "404", details: `No API at ${path}.`, moduleName: "core-services" }],
  };
}

export function unauthorizedResponse(reason: string): ApiResponse {
  return {
    status: 401,
    headers: { "WWW-Authenticate": 'Basic realm="NSX Manager"' },
    errors: [{ errorCode: "401", details: `Authentication failed: ${reason}.`, moduleName: "core-services" }],
  };
}

/** Runs one authenticated call. */
export function handleApi(
  state: SimulatorState,
  route: ApiRoute,
  params: string[],
  req: ApiRequest,
): ApiResponse {
  const [first = "", second = ""] = params;
  switch (route) {
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
      return token(state, req);
  }
}

function getEdge(state: SimulatorState, id: string): ApiResponse {
  const edge = state.edge(id);
  return edge === undefined ? notFound(id) : { status: 200, body: edge.bytes };
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
    return badRequest(details, "vShield Edge");
  }
  if (doc.id !== id) {
    return badRequest(
      `The edge id in the document (${doc.id}) does not match the path (${id}).`,
      "vShield Edge",
    );
  }
  let result: PutEdgeResult;
  try {
    result = state.putEdge(id, doc);
  } catch (error) {
    // e.g. two <version> elements: which one the manager would read is unknown
    if (error instanceof NsxDocumentError) return badRequest(error.message, "vShield Edge");
    throw error;
  }
  if (result.ok) return { status: 204 };
  if (result.reason === "missing") return notFound(id);
  return {
    status: 409,
    errors: [
      {
        errorCode: "409",
        details: `Edge ${id} is at version ${result.storedVersion}; the document sent is version ${result.sentVersion}. Read it again and retry.`,
        moduleName: "vShield Edge",
      },
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
  return ipamError(120054, `The IP pool ${poolId} does not exist.`);
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
    return ipamError(120056, `The IP address ${ip} is not allocated from the IP pool ${pool.id}.`);
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
      return badRequest("The request body must be an <ipAddressRequest> document.", "core-services");
    }
    request = parsed.ipAddressRequest as Record<string, unknown>;
  } catch (error) {
    return badRequest(error instanceof Error ? error.message : String(error), "core-services");
  }
  const mode = typeof request.allocationMode === "string" ? request.allocationMode : "ALLOCATE";
  const ipAddress = typeof request.ipAddress === "string" ? request.ipAddress : undefined;
  const note = typeof request.allocationNote === "string" ? request.allocationNote : undefined;
  if (mode !== "ALLOCATE" && mode !== "RESERVE") {
    return badRequest(`allocationMode must be ALLOCATE or RESERVE, not ${mode}.`, "core-services");
  }
  if (mode === "RESERVE" && (ipAddress === undefined || ipAddress === "")) {
    return badRequest("RESERVE needs an <ipAddress>.", "core-services");
  }
  const result = state.allocate(pool.id, {
    mode,
    ...(ipAddress ? { ipAddress } : {}),
    ...(note ? { note } : {}),
  });
  if (result === undefined) return ipamError(120054, `The IP pool ${pool.id} does not exist.`);
  if (result.ok) {
    return {
      status: 200,
      body: renderDocument(pool.allocationXml(result.allocation), { pretty: state.settings.prettyXml }),
    };
  }
  if (result.reason === "exhausted")
    return ipamError(120051, `The IP pool ${pool.id} has no free address left.`);
  if (result.reason === "taken") {
    return ipamError(120056, `The IP address ${ipAddress} is already allocated from the IP pool ${pool.id}.`);
  }
  return ipamError(120056, `The IP address ${ipAddress} is not inside the ranges of the IP pool ${pool.id}.`);
}

function token(state: SimulatorState, req: ApiRequest): ApiResponse {
  const minutes = req.query.get("expiresInMinutes");
  const ttlMs =
    minutes !== null && /^\d+$/.test(minutes) && Number(minutes) > 0 ? Number(minutes) * 60_000 : undefined;
  const issued = state.auth.issue({ nowMs: state.clock.now(), ttlMs: ttlMs ?? state.settings.tokenTtlMs });
  return { status: 200, body: tokenDocument(issued, { pretty: state.settings.prettyXml }) };
}

function requireXml(req: ApiRequest): ApiResponse | undefined {
  const mediaType = (req.contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (mediaType === "application/xml") return undefined;
  return {
    status: 415,
    errors: [
      {
        errorCode: "415",
        details: `Unsupported Content-Type ${req.contentType ?? "(none)"}: send application/xml.`,
        moduleName: "core-services",
      },
    ],
  };
}

function notFound(id: string): ApiResponse {
  return {
    status: 404,
    errors: [
      {
        errorCode: "202",
        details: `The requested object : ${id} could not be found. Object identifiers are case sensitive.`,
        moduleName: "core-services",
        data: { objectId: id },
      },
    ],
  };
}

function badRequest(details: string, moduleName: string): ApiResponse {
  return { status: 400, errors: [{ errorCode: "400", details, moduleName }] };
}

function ipamError(code: number, details: string): ApiResponse {
  return { status: 400, errors: [{ errorCode: String(code), details, moduleName: "core-services" }] };
}
