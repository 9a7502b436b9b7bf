/**
 * Fault injection per API route: added latency, error statuses, connection resets, truncated
 * bodies, 409 on PUT, slowly trickling bodies, the error body shape, and an edge list that lags
 * behind the edges (`staleList`, see stale-list.ts). A fault fires on every call of its route, or
 * on the next `count` calls, or at `rate` (0..1, from a generator seeded by `seed`, so a run is
 * reproducible); `count` and `rate` together mean "at this rate, at most count times".
 * `plan(route)` decides, for one call, what the faults do to it.
 */
import {
  SimulatorInputError,
  asArray,
  asObject,
  fieldPath,
  optBoolean,
  optEnum,
  optInt,
  optNumber,
  optString,
  rejectUnknownKeys,
  reqString,
  type JsonObject,
} from "./input.ts";
import { ERROR_CODES, errorEntry, faultCode } from "./error-codes.ts";
import type { EdgeListing } from "./edge-summary.ts";
import { createRandom, type Random } from "./random.ts";
import { StaleListing } from "./stale-list.ts";
import { omitUndefined } from "../util/options.ts";
import { ERROR_SHAPES, type ErrorShape, type NsxErrorEntry } from "./xml.ts";

export const API_ROUTES = [
  "listEdges",
  "getEdge",
  "getEdgeSummary",
  "putEdge",
  "listPools",
  "getPool",
  "listAllocations",
  "releaseAddress",
  "allocate",
  "token",
  "tokenWithCredentials",
  "getTokenExpiry",
  "setTokenExpiry",
  "invalidateTokens",
  "getBasicAuth",
  "setBasicAuth",
  "globalInfo",
  "createEdge",
  "deleteEdge",
  "createPool",
  "updatePool",
  "deletePool",
  "fabricFeatures",
  "getVcConfig",
] as const;
export type ApiRoute = (typeof API_ROUTES)[number];
export type FaultRoute = ApiRoute | "*";

export const FAULT_KINDS = [
  "latency",
  "status",
  "conflict",
  "reset",
  "malformed",
  "trickle",
  "errorShape",
  "staleList",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

interface FaultBase {
  route: FaultRoute;
  /** fire at most this many times (default: unlimited; `conflict`: 1) */
  count?: number;
  /** probability 0..1 of firing on a call (default 1) */
  rate?: number;
  /** seed of the rate's generator (default 1) */
  seed?: number;
}

export type FaultSpec = FaultBase &
  (
    | { kind: "latency"; latencyMs: number; jitterMs?: number }
    | { kind: "status"; status: number; errors?: NsxErrorEntry[]; shape?: ErrorShape }
    | { kind: "conflict"; shape?: ErrorShape }
    | { kind: "reset"; afterAction?: boolean }
    | { kind: "malformed" }
    | { kind: "trickle"; bytesPerInterval: number; intervalMs: number }
    | { kind: "errorShape"; shape: ErrorShape }
    /** route listEdges, getEdgeSummary or * (both); no lagMs: frozen as the fault is added */
    | { kind: "staleList"; lagMs?: number }
  );

/** the routes that answer from the edge summaries */
const SUMMARY_ROUTES: readonly FaultRoute[] = ["listEdges", "getEdgeSummary", "*"];

export interface FaultView {
  id: number;
  spec: FaultSpec;
  /** how many times it fired */
  fired: number;
}

/** What the faults do to one call. */
export interface FaultPlan {
  delayMs: number;
  /** answer with this instead of calling the handler (reset: destroy the socket) */
  outcome?:
    | { kind: "status"; status: number; errors: NsxErrorEntry[]; shape: ErrorShape | undefined }
    | { kind: "reset" };
  /** call the handler, then destroy the socket without answering */
  resetAfterAction: boolean;
  /** send the body cut in half */
  malformed: boolean;
  trickle?: { bytesPerInterval: number; intervalMs: number };
  /** shape of the error documents of this call */
  shape?: ErrorShape;
  /** answer the edge list or summary from these lagging summaries */
  staleListing?: StaleListing;
}

/** What a staleList fault reads when it is added and hears afterwards. */
export interface FaultContext {
  listings(): EdgeListing[];
  nowMs(): number;
}

interface Fault {
  id: number;
  spec: FaultSpec;
  remaining: number;
  fired: number;
  random: Random;
  staleListing?: StaleListing;
}

export class FaultSet {
  readonly #faults: Fault[] = [];
  readonly #context: FaultContext;
  #nextId = 1;

  constructor(context: FaultContext) {
    this.#context = context;
  }

  add(spec: FaultSpec): FaultView {
    const defaultCount = spec.kind === "conflict" ? 1 : Number.POSITIVE_INFINITY;
    const fault: Fault = {
      id: this.#nextId++,
      spec,
      remaining: spec.count ?? defaultCount,
      fired: 0,
      random: createRandom(spec.seed ?? 1),
    };
    if (spec.kind === "staleList") {
      const lag = spec.lagMs === undefined ? {} : { lagMs: spec.lagMs };
      fault.staleListing = new StaleListing(this.#context.listings(), lag);
    }
    this.#faults.push(fault);
    return view(fault);
  }

  list(): FaultView[] {
    return this.#faults.map(view);
  }

  remove(id: number): boolean {
    const i = this.#faults.findIndex((f) => f.id === id);
    if (i === -1) return false;
    this.#faults.splice(i, 1);
    return true;
  }

  clear(): void {
    this.#faults.length = 0;
  }

  /** a version of an edge was stored, or (listing undefined) the edge deleted: lagging lists hear of it */
  edgeStored(id: string, listing: EdgeListing | undefined): void {
    for (const fault of this.#faults) fault.staleListing?.record(id, listing, this.#context.nowMs());
  }

  /** Decides one call; counts and random draws are consumed only by faults that apply to it. */
  plan(route: ApiRoute): FaultPlan {
    const plan: FaultPlan = { delayMs: 0, resetAfterAction: false, malformed: false };
    for (const fault of this.#faults) {
      const { spec } = fault;
      if (spec.route !== "*" && spec.route !== route) continue;
      if (!needed(plan, spec, route) || !fires(fault)) continue;
      apply(plan, fault);
    }
    return plan;
  }
}

/** whether the fault could still change this call (the first outcome and first delivery fault win) */
function needed(plan: FaultPlan, spec: FaultSpec, route: ApiRoute): boolean {
  switch (spec.kind) {
    case "latency":
      return true;
    case "status":
      return plan.outcome === undefined;
    case "conflict":
      return route === "putEdge" && plan.outcome === undefined;
    case "reset":
      return spec.afterAction === true ? !plan.resetAfterAction : plan.outcome === undefined;
    case "malformed":
      return !plan.malformed;
    case "trickle":
      return plan.trickle === undefined;
    case "errorShape":
      return plan.shape === undefined;
    case "staleList":
      return (route === "listEdges" || route === "getEdgeSummary") && plan.staleListing === undefined;
  }
}

function fires(fault: Fault): boolean {
  if (fault.remaining <= 0) return false;
  if (fault.spec.rate !== undefined && fault.random.next() >= fault.spec.rate) return false;
  fault.remaining--;
  fault.fired++;
  return true;
}

function apply(plan: FaultPlan, fault: Fault): void {
  const { spec } = fault;
  switch (spec.kind) {
    case "latency":
      plan.delayMs += spec.latencyMs + (spec.jitterMs ? fault.random.int(0, spec.jitterMs) : 0);
      return;
    case "status":
      plan.outcome = {
        kind: "status",
        status: spec.status,
        errors: spec.errors ?? [injectedError(spec.status)],
        shape: spec.shape,
      };
      return;
    case "conflict":
      plan.outcome = {
        kind: "status",
        status: 409,
        errors: [
          errorEntry(
            ERROR_CODES.edgeModified,
            "The object was modified by another request. Read it again and retry.",
          ),
        ],
        shape: spec.shape,
      };
      return;
    case "reset":
      if (spec.afterAction === true) plan.resetAfterAction = true;
      else plan.outcome = { kind: "reset" };
      return;
    case "malformed":
      plan.malformed = true;
      return;
    case "trickle":
      plan.trickle = { bytesPerInterval: spec.bytesPerInterval, intervalMs: spec.intervalMs };
      return;
    case "errorShape":
      plan.shape = spec.shape;
      return;
    case "staleList":
      plan.staleListing = fault.staleListing;
      return;
  }
}

/** A module's code for the status (a 500 carries 100, as real ones often do), never the status itself. */
function injectedError(status: number): NsxErrorEntry {
  return errorEntry(faultCode(status), `Simulated fault: HTTP ${status}.`);
}

function view(fault: Fault): FaultView {
  return { id: fault.id, spec: fault.spec, fired: fault.fired };
}

const COMMON_KEYS = ["route", "kind", "count", "rate", "seed"];
const KIND_KEYS: Record<FaultKind, string[]> = {
  latency: ["latencyMs", "jitterMs"],
  status: ["status", "errors", "shape"],
  conflict: ["shape"],
  reset: ["afterAction"],
  malformed: [],
  trickle: ["bytesPerInterval", "intervalMs"],
  errorShape: ["shape"],
  staleList: ["lagMs"],
};

/** A fault from a control API body, every field checked. */
export function parseFaultSpec(value: unknown, path = ""): FaultSpec {
  const obj = asObject(value, path);
  const kind = optEnum(obj, "kind", path, FAULT_KINDS);
  if (kind === undefined) throw new SimulatorInputError(fieldPath(path, "kind"), "is required");
  rejectUnknownKeys(obj, [...COMMON_KEYS, ...KIND_KEYS[kind]], path);
  const base = parseFaultBase(obj, kind, path);
  const shape = optEnum(obj, "shape", path, ERROR_SHAPES);
  switch (kind) {
    case "latency":
      return { ...base, ...parseLatencyFault(obj, path) };
    case "status":
      return { ...base, ...parseStatusFault(obj, path), ...(shape ? { shape } : {}) };
    case "conflict":
      return { ...base, kind, ...(shape ? { shape } : {}) };
    case "reset":
      return { ...base, kind, afterAction: optBoolean(obj, "afterAction", path) ?? false };
    case "malformed":
      return { ...base, kind };
    case "trickle":
      return { ...base, ...parseTrickleFault(obj, path) };
    case "errorShape":
      if (shape === undefined) throw new SimulatorInputError(fieldPath(path, "shape"), "is required");
      return { ...base, kind, shape };
    case "staleList":
      return { ...base, ...parseStaleListFault(obj, base.route, path) };
  }
}

function parseLatencyFault(
  obj: JsonObject,
  path: string,
): { kind: "latency"; latencyMs: number; jitterMs: number } {
  return {
    kind: "latency",
    latencyMs: optInt(obj, "latencyMs", path, { min: 0, max: 600_000 }) ?? 0,
    jitterMs: optInt(obj, "jitterMs", path, { min: 0, max: 600_000 }) ?? 0,
  };
}

function parseTrickleFault(
  obj: JsonObject,
  path: string,
): { kind: "trickle"; bytesPerInterval: number; intervalMs: number } {
  return {
    kind: "trickle",
    bytesPerInterval: optInt(obj, "bytesPerInterval", path, { min: 1 }) ?? 64,
    intervalMs: optInt(obj, "intervalMs", path, { min: 1, max: 60_000 }) ?? 100,
  };
}

/** The fields every kind has: where, how often, and the seed of `rate`. */
function parseFaultBase(obj: JsonObject, kind: FaultKind, path: string): FaultBase {
  const route =
    optEnum(obj, "route", path, [...API_ROUTES, "*"] as const) ?? (kind === "conflict" ? "putEdge" : "*");
  const count = optInt(obj, "count", path, { min: 0 });
  const rate = optNumber(obj, "rate", path, { min: 0, max: 1, integer: false });
  const seed = optInt(obj, "seed", path, { min: 0, max: 2 ** 32 - 1 });
  return omitUndefined({ route, count, rate, seed });
}

function parseStatusFault(
  obj: JsonObject,
  path: string,
): { kind: "status"; status: number; errors?: NsxErrorEntry[] } {
  const status = optInt(obj, "status", path, { min: 400, max: 599 });
  if (status === undefined) throw new SimulatorInputError(fieldPath(path, "status"), "is required");
  if (obj.errors === undefined) return { kind: "status", status };
  return { kind: "status", status, errors: parseErrors(obj.errors, fieldPath(path, "errors")) };
}

function parseStaleListFault(
  obj: JsonObject,
  route: FaultBase["route"],
  path: string,
): { kind: "staleList"; lagMs?: number } {
  if (!SUMMARY_ROUTES.includes(route))
    throw new SimulatorInputError(fieldPath(path, "route"), "a stale list is listEdges, getEdgeSummary or *");
  const lagMs = optInt(obj, "lagMs", path, { min: 0, max: 86_400_000 });
  return { kind: "staleList", ...(lagMs !== undefined ? { lagMs } : {}) };
}

function parseErrors(value: unknown, path: string): NsxErrorEntry[] {
  const list = asArray(value, path);
  if (list.length === 0) throw new SimulatorInputError(path, "needs at least one error");
  return list.map((e, i) => parseErrorEntry(asObject(e, fieldPath(path, i)), fieldPath(path, i)));
}

function parseErrorEntry(obj: JsonObject, path: string): NsxErrorEntry {
  rejectUnknownKeys(obj, ["details", "errorCode", "moduleName", "data"], path);
  const entry: NsxErrorEntry = { errorCode: reqString(obj, "errorCode", path) };
  const details = optString(obj, "details", path);
  if (details !== undefined) entry.details = details;
  const moduleName = optString(obj, "moduleName", path);
  if (moduleName !== undefined) entry.moduleName = moduleName;
  if (obj.data !== undefined) {
    const data = asObject(obj.data, fieldPath(path, "data"));
    entry.data = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, String(v)]));
  }
  return entry;
}
