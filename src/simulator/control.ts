/**
 * The control API of the simulator, under `/_simulator/`: JSON in and out, open unless the
 * simulator was given a control token (then every call needs `Authorization: Bearer <token>`).
 * Tests and benchmarks use it to act as the rest of the world (a deployment allocating addresses,
 * another client changing an edge, an operator rotating the password), to inject faults and to
 * read what the simulator saw. Errors answer `{ "error": message, "path"?: field }`.
 *
 *   GET    /_simulator/state                  edges (id, version, tenant, name, bytes), scopes, pools
 *                                             with their allocations, username, settings
 *   GET    /_simulator/settings               the settings (see settings.ts)
 *   PUT    /_simulator/settings               { latencyMs?, tokenTtlMs?, basicAuthEnabled?,
 *                                             missingPoolStatus?, rejectStaleVersion?, prettyXml?,
 *                                             edgeSummaryInEdge?, maxRequestBytes? }
 *                                             changes the given ones → the settings; edges are
 *                                             rendered again in a changed format
 *   POST   /_simulator/clock                  { advanceMs } moves the simulator's clock (token expiry)
 *                                             → { nowMs }
 *   PUT    /_simulator/credentials            { username, password, keepTokens? } rotates: the old
 *                                             credentials get 401; tokens are revoked unless keepTokens
 *   POST   /_simulator/pools/{id}/allocations { mode?: "ALLOCATE" | "RESERVE", ip?, note? } allocates
 *                                             as a deployment would → 201 { id, ipAddress, note? };
 *                                             404 unknown pool, 409 exhausted or taken, 400 outside
 *   PUT    /_simulator/pools/{id}             a pool as in the state file (id may be omitted) adds or
 *                                             replaces it, allocations included → pool summary
 *   PATCH  /_simulator/edges/{id}             { "<field>": "<text>", ... } sets top-level fields of the
 *                                             edge out of band (drift); the version rises unless
 *                                             `version` is given → { id, version, tenant }
 *   PUT    /_simulator/edges/{id}             { xml } or { generate: { tenant?, firewallRules?,
 *                                             targetBytes?, seed? } } adds or replaces an edge, stored
 *                                             as the manager's model; a replaced edge's version
 *                                             rises → { id, version, tenant }
 *   GET    /_simulator/faults                 [{ id, spec, fired }]
 *   POST   /_simulator/faults                 a fault (see faults.ts) → 201 { id, spec, fired };
 *                                             { "kind": "staleList" } freezes the edge list as it
 *                                             is, { "kind": "staleList", "lagMs": N } makes it lag
 *   DELETE /_simulator/faults                 clears every fault
 *   DELETE /_simulator/faults/{id}            removes one
 *   GET    /_simulator/counters               { "<route>": { "<status>": n } }, status "reset" for resets
 *   DELETE /_simulator/counters               resets them
 *   GET    /_simulator/audit                  { violations: [...], releases: [...], dropped }
 *   DELETE /_simulator/audit                  resets it
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { childText } from "./edge-model.ts";
import { generateEdgeXml } from "./generate.ts";
import { parseFaultSpec } from "./faults.ts";
import {
  SimulatorInputError,
  asObject,
  asStringMap,
  optBoolean,
  optEnum,
  optInt,
  optString,
  rejectUnknownKeys,
  type JsonObject,
} from "./input.ts";
import { parseSettings } from "./settings.ts";
import { parseGenerateOptions } from "./edge-input.ts";
import { parseCredentials, parsePool } from "./state-file.ts";
import { parseEdge, type SimulatorState, type StoredEdge } from "./state.ts";

export interface ControlResponse {
  status: number;
  json: unknown;
}

/** Whether a control call may run: no token set, or the request carries it (compared in constant time). */
export function controlAuthorized(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const match = /^Bearer (.+)$/.exec(authorization ?? "");
  if (match === null) return false;
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(match[1] as string), digest(token));
}

export const CONTROL_UNAUTHORIZED: ControlResponse = {
  status: 401,
  json: { error: "the control API needs Authorization: Bearer <the simulator's control token>" },
};

type Handler = (state: SimulatorState, params: string[], body: () => JsonObject) => ControlResponse;

/** `*` matches one segment after /_simulator/, whose value becomes a param */
const CONTROL_ROUTES: { method: string; pattern: string[]; handler: Handler }[] = [
  { method: "GET", pattern: ["state"], handler: (s) => ok(s.dump()) },
  { method: "GET", pattern: ["settings"], handler: (s) => ok(s.settings) },
  {
    method: "PUT",
    pattern: ["settings"],
    handler: (s, _p, body) => ok(s.updateSettings(parseSettings(body(), ""))),
  },
  { method: "POST", pattern: ["clock"], handler: advanceClock },
  { method: "PUT", pattern: ["credentials"], handler: rotateCredentials },
  { method: "POST", pattern: ["pools", "*", "allocations"], handler: allocate },
  { method: "PUT", pattern: ["pools", "*"], handler: putPool },
  { method: "PATCH", pattern: ["edges", "*"], handler: changeEdge },
  { method: "PUT", pattern: ["edges", "*"], handler: putEdge },
  { method: "GET", pattern: ["faults"], handler: (s) => ok(s.faults.list()) },
  {
    method: "POST",
    pattern: ["faults"],
    handler: (s, _p, body) => ({ status: 201, json: s.faults.add(parseFaultSpec(body())) }),
  },
  {
    method: "DELETE",
    pattern: ["faults"],
    handler: (s) => {
      s.faults.clear();
      return ok({ cleared: true });
    },
  },
  {
    method: "DELETE",
    pattern: ["faults", "*"],
    handler: (s, [id = ""]) =>
      s.faults.remove(Number(id)) ? ok({ removed: Number(id) }) : fail(404, `no fault ${id}`),
  },
  { method: "GET", pattern: ["counters"], handler: (s) => ok(s.counters.snapshot()) },
  {
    method: "DELETE",
    pattern: ["counters"],
    handler: (s) => {
      s.counters.reset();
      return ok({ reset: true });
    },
  },
  { method: "GET", pattern: ["audit"], handler: (s) => ok(s.audit.snapshot()) },
  {
    method: "DELETE",
    pattern: ["audit"],
    handler: (s) => {
      s.audit.reset();
      return ok({ reset: true });
    },
  },
];

/** segments: the decoded path after `/_simulator/`; rawBody: the request body (JSON or empty) */
export function handleControl(
  state: SimulatorState,
  method: string,
  segments: readonly string[],
  rawBody: string,
): ControlResponse {
  const candidates = CONTROL_ROUTES.filter((r) => sameShape(r.pattern, segments));
  if (candidates.length === 0) return fail(404, `no control route /_simulator/${segments.join("/")}`);
  const route = candidates.find((r) => r.method === method);
  if (route === undefined) return fail(405, `use ${candidates.map((r) => r.method).join(" or ")}`);
  return handleWith(route);

  function handleWith(r: (typeof CONTROL_ROUTES)[number]): ControlResponse {
    const params = segments.filter((_, i) => r.pattern[i] === "*");
    const body = (): JsonObject => {
      try {
        return asObject(rawBody.trim() === "" ? {} : JSON.parse(rawBody), "");
      } catch (cause) {
        if (cause instanceof SimulatorInputError) throw cause;
        throw new SimulatorInputError("", `the body is not JSON: ${(cause as Error).message}`, { cause });
      }
    };
    try {
      return r.handler(state, params, body);
    } catch (error) {
      if (error instanceof SimulatorInputError) {
        return { status: 400, json: { error: error.message, ...(error.path ? { path: error.path } : {}) } };
      }
      throw error;
    }
  }
}

function sameShape(pattern: readonly string[], segments: readonly string[]): boolean {
  return pattern.length === segments.length && pattern.every((p, i) => p === "*" || p === segments[i]);
}

function ok(json: unknown): ControlResponse {
  return { status: 200, json };
}

function fail(status: number, error: string): ControlResponse {
  return { status, json: { error } };
}

function advanceClock(state: SimulatorState, _params: string[], body: () => JsonObject): ControlResponse {
  const obj = body();
  rejectUnknownKeys(obj, ["advanceMs"], "");
  state.clock.advance(optInt(obj, "advanceMs", "", { min: 0 }) ?? 0);
  return ok({ nowMs: state.clock.now() });
}

function rotateCredentials(
  state: SimulatorState,
  _params: string[],
  body: () => JsonObject,
): ControlResponse {
  const obj = body();
  const keepTokens = optBoolean(obj, "keepTokens", "") ?? false;
  const { keepTokens: _keep, ...rest } = obj;
  state.auth.rotate(parseCredentials(rest, ""), { keepTokens });
  return ok({ username: state.auth.username, keepTokens });
}

function allocate(state: SimulatorState, [poolId = ""]: string[], body: () => JsonObject): ControlResponse {
  const obj = body();
  rejectUnknownKeys(obj, ["mode", "ip", "note"], "");
  const mode = optEnum(obj, "mode", "", ["ALLOCATE", "RESERVE"] as const) ?? "ALLOCATE";
  const ip = optString(obj, "ip", "");
  const note = optString(obj, "note", "");
  if (mode === "RESERVE" && (ip === undefined || ip === ""))
    throw new SimulatorInputError("ip", "is required for RESERVE");
  const result = state.allocate(poolId, {
    mode,
    ...(ip ? { ipAddress: ip } : {}),
    ...(note ? { note } : {}),
  });
  if (result === undefined) return fail(404, `no pool ${poolId}`);
  if (result.ok) return { status: 201, json: result.allocation };
  if (result.reason === "outside") return fail(400, `${ip} is not inside the ranges of ${poolId}`);
  return fail(
    409,
    result.reason === "exhausted" ? `${poolId} has no free address` : `${ip} is already allocated`,
  );
}

function putPool(state: SimulatorState, [poolId = ""]: string[], body: () => JsonObject): ControlResponse {
  const obj = { id: poolId, ...body() };
  if (obj.id !== poolId) throw new SimulatorInputError("id", `must be ${poolId} as in the path`);
  const pool = state.addPool(parsePool(obj, "", []));
  const summary = state.dump().pools.find((p) => p.id === pool.id);
  return ok(summary);
}

function changeEdge(state: SimulatorState, [edgeId = ""]: string[], body: () => JsonObject): ControlResponse {
  const fields = asStringMap(body(), "");
  if (Object.keys(fields).length === 0) throw new SimulatorInputError("", "name at least one field to set");
  if ("id" in fields) throw new SimulatorInputError("id", "cannot be changed");
  if (fields.version !== undefined && !/^\d+$/.test(fields.version)) {
    throw new SimulatorInputError("version", "must be an integer");
  }
  const edge = state.changeEdge(edgeId, fields);
  return edge === undefined ? fail(404, `no edge ${edgeId}`) : ok(edgeSummary(edge));
}

function putEdge(state: SimulatorState, [edgeId = ""]: string[], body: () => JsonObject): ControlResponse {
  const obj = body();
  rejectUnknownKeys(obj, ["xml", "generate"], "");
  const number = /^edge-(\d+)$/.exec(edgeId)?.[1];
  if (number === undefined) return fail(400, `${edgeId} is not edge-<n>`);
  let xml = optString(obj, "xml", "");
  if (xml === undefined) {
    if (obj.generate === undefined) throw new SimulatorInputError("", "give xml or generate");
    const options = parseGenerateOptions(obj.generate, "generate", Number(number));
    const { prettyXml, edgeSummaryInEdge } = state.settings;
    xml = generateEdgeXml({ ...options, pretty: prettyXml, edgeSummary: edgeSummaryInEdge });
  }
  const model = parseEdge(xml, "xml");
  const id = childText(model, "id");
  if (id !== edgeId) throw new SimulatorInputError("xml", `the document is ${id}, the path ${edgeId}`);
  const existed = state.edge(edgeId) !== undefined;
  return { status: existed ? 200 : 201, json: edgeSummary(state.upsertEdge(model)) };
}

function edgeSummary(edge: StoredEdge): { id: string; version: number; tenant: string | null } {
  return { id: edge.id, version: edge.version, tenant: edge.doc.tenant ?? null };
}
