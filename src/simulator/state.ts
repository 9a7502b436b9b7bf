/**
 * Everything the simulator holds: edges (edge-store.ts), pools and scopes, credentials and
 * tokens, settings, the faults, counters and audit. Routes and the control API are thin layers
 * over this class, and tests running the simulator in-process may call it directly.
 */
import { randomUUID } from "node:crypto";
import { EdgeDocument } from "../nsx/edge-document.ts";
import { isXmlName, isXmlText } from "../nsx/xml.ts";
import { Audit, Counters, type ObjectChange } from "./audit.ts";
import { diffLeafTexts, diffModels, isEmptyDiff, type ModelDiff } from "./edge-diff.ts";
import { childText, edgeModelOf, setChildText, type EdgeModel } from "./edge-model.ts";
import { newEdgeConfig, placementOf } from "./edge-create.ts";
import { assignRuleIds } from "./edge-fill.ts";
import { KEPT_ON_PUT, configAfterPut, readSentEdge } from "./edge-put.ts";
import type { ErrorCode } from "./error-codes.ts";
import { EdgeStore, type StoredEdge } from "./edge-store.ts";
import { AuthStore, DEFAULT_CREDENTIALS, type Credentials } from "./auth.ts";
import { FaultSet } from "./faults.ts";
import { SimulatorInputError } from "./input.ts";
import { DEFAULT_RELEASE, managerIdentity, type ManagerIdentity } from "./manager.ts";
import { GLOBAL_SCOPE, Pool, type AllocateResult, type AllocationRecord, type ScopeInfo } from "./pools.ts";
import { SETTINGS_DEFAULTS, type SimulatorSettings } from "./settings.ts";
import {
  parsePool,
  validateStateInput,
  type PoolInput,
  type SimulatorStateInput,
  type ValidatedPool,
  type VcenterInput,
} from "./state-file.ts";
import { withDefaults } from "../util/options.ts";
import { isEdgeId } from "../nsx/ids.ts";

export type { StoredEdge } from "./edge-store.ts";

/**
 * Children of `<edge>` a PUT may change without the audit reporting it, by default: the tenant,
 * the one the operator's kinds write (reconcile's sanctionedEdgeFields(EFFECTS) says which; `simulate`
 * and `demo` pass that list, and a test keeps this default equal to it).
 */
export const DEFAULT_SANCTIONED_EDGE_FIELDS: readonly string[] = Object.freeze(["tenant"]);

export type PutEdgeResult =
  | { ok: true; edge: StoredEdge }
  | { ok: false; reason: "missing" }
  | { ok: false; reason: "invalid"; code: ErrorCode; message: string }
  | { ok: false; reason: "stale"; storedVersion: number; sentVersion: number };

export type CreatePoolResult =
  | { ok: true; pool: Pool }
  | { ok: false; reason: "unknownScope" }
  | { ok: false; reason: "duplicateName"; scopeId: string };

export type UpdatePoolResult =
  | { ok: true; pool: Pool }
  | { ok: false; reason: "missing" }
  | { ok: false; reason: "duplicateName"; scopeId: string }
  | { ok: false; reason: "outside"; addresses: string[] };

export type DeletePoolResult =
  { ok: true; dropped: AllocationRecord[] } | { ok: false; reason: "missing" | "allocated"; count?: number };

export interface AllocationRequest {
  mode: "ALLOCATE" | "RESERVE";
  /** required for RESERVE */
  ipAddress?: string;
  note?: string;
}

/**
 * The simulator's clock: the wall clock (or the one it was given, e.g. a test's fake clock) plus
 * an offset that the control API can advance. It times what the manager records and expires
 * (audit entries, tokens, stale lists); latency and trickling stay on real timers.
 */
export class SimulatorClock {
  readonly #wallMs: () => number;
  #offsetMs = 0;
  constructor(wallMs: () => number = Date.now) {
    this.#wallMs = wallMs;
  }
  now(): number {
    return this.#wallMs() + this.#offsetMs;
  }
  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}

export interface StateOverrides {
  credentials?: Credentials;
  settings?: Partial<SimulatorSettings>;
  /** the wall clock of SimulatorClock; default Date.now */
  nowMs?: () => number;
  /** children of `<edge>` a PUT may change without an audit violation; default DEFAULT_SANCTIONED_EDGE_FIELDS */
  sanctionedEdgeFields?: readonly string[];
}

export class SimulatorState {
  #settings: SimulatorSettings;
  /** children of `<edge>` the audit does not report: the sanctioned ones and the version */
  readonly #auditIgnored: ReadonlySet<string>;
  readonly clock: SimulatorClock;
  readonly manager: ManagerIdentity;
  /** the vCenter the manager is registered with, if any */
  readonly vcenter: VcenterInput | undefined;
  readonly auth: AuthStore;
  readonly faults: FaultSet;
  readonly counters = new Counters();
  readonly audit = new Audit();
  readonly #edges: EdgeStore;
  readonly #pools = new Map<string, Pool>();
  readonly #scopes = new Map<string, ScopeInfo>([[GLOBAL_SCOPE.id, GLOBAL_SCOPE]]);
  /** the highest n of any edge-<n> and ipaddresspool-<n> ever held: a manager never gives an id twice */
  #highestEdgeNumber = 0;
  #highestPoolNumber = 0;

  /** Validates the input (errors name the field) and builds the state from it. */
  constructor(input: SimulatorStateInput | undefined = undefined, overrides: StateOverrides = {}) {
    const valid = validateStateInput(input ?? {});
    // the version is the manager's: it raises it on every PUT
    const sanctioned = overrides.sanctionedEdgeFields ?? DEFAULT_SANCTIONED_EDGE_FIELDS;
    this.#auditIgnored = new Set([...sanctioned, "version"]);
    this.clock = new SimulatorClock(overrides.nowMs);
    this.#settings = withDefaults(withDefaults(SETTINGS_DEFAULTS, valid.settings), overrides.settings);
    this.auth = new AuthStore(
      overrides.credentials ?? valid.credentials ?? DEFAULT_CREDENTIALS,
      valid.auditor,
    );
    // each real manager has its own: two simulators are two managers unless a state file says otherwise
    const vsmUuid = valid.vsmUuid ?? randomUUID().toUpperCase();
    this.manager = managerIdentity(vsmUuid, valid.release ?? DEFAULT_RELEASE);
    this.vcenter = valid.vcenter;
    this.faults = new FaultSet({ listings: () => this.#edges.listings(), nowMs: () => this.clock.now() });
    this.#edges = new EdgeStore(
      this.manager,
      () => ({ pretty: this.#settings.prettyXml, summaryInEdge: this.#settings.edgeSummaryInEdge }),
      {
        stored: (listing) => this.faults.edgeStored(listing.id, listing),
        removed: (id) => this.faults.edgeStored(id, undefined),
      },
    );
    for (const scope of valid.scopes) this.#scopes.set(scope.id, scope);
    const format = { pretty: this.#settings.prettyXml, edgeSummary: this.#settings.edgeSummaryInEdge };
    for (const edge of valid.edges) {
      const model = parseEdge(edge.text(format), edge.path);
      const id = childText(model, "id") ?? "";
      if (this.#edges.get(id) !== undefined)
        throw new SimulatorInputError(edge.path, `a second edge with id ${id}`);
      this.upsertEdge(model);
    }
    for (const pool of valid.pools) this.addPool(pool);
  }

  get settings(): Readonly<SimulatorSettings> {
    return this.#settings;
  }

  /** Changes the given settings; edges are rendered again when their format changed. */
  updateSettings(changes: Partial<SimulatorSettings>): SimulatorSettings {
    const before = this.#settings;
    this.#settings = { ...before, ...changes };
    if (
      before.prettyXml !== this.#settings.prettyXml ||
      before.edgeSummaryInEdge !== this.#settings.edgeSummaryInEdge
    ) {
      this.#edges.reformat();
    }
    return this.#settings;
  }

  // ---- edges

  edge(id: string): StoredEdge | undefined {
    return this.#edges.get(id);
  }

  edges(): StoredEdge[] {
    return this.#edges.all();
  }

  /**
   * The PUT of spec 4.2 as a manager takes it (edge-put.ts): the sent document (`text`, decoded)
   * is read, refused as readSentEdge refuses it, and stored with the manager-owned fields kept and
   * the version one above the stored one. What the PUT removed, edited or added besides the
   * tenant is recorded in the audit, by path.
   */
  putEdge(id: string, text: string): PutEdgeResult {
    const stored = this.#edges.get(id);
    if (stored === undefined) return { ok: false, reason: "missing" };
    const leaves = this.#edges.rewrittenLeaves(stored, text);
    if (leaves !== undefined && this.#edges.isPutStable(stored)) return this.#putLeaves(stored, leaves);
    const read = readSentEdge(text, id);
    if (!read.ok) return { ok: false, reason: "invalid", code: read.code, message: read.message };
    const sentVersion = read.sent.version;
    if (this.#staleRefused(stored, sentVersion))
      return { ok: false, reason: "stale", storedVersion: stored.version, sentVersion: sentVersion! };
    const current = this.#edges.config(stored);
    const next = configAfterPut(current, read.sent.model, stored.version);
    this.#auditPut(stored, sentVersion, diffModels(current, next, this.#auditIgnored));
    return { ok: true, edge: this.#edges.store(next, stored.listing.summary) };
  }

  #staleRefused(stored: StoredEdge, sentVersion: number | undefined): boolean {
    return this.#settings.rejectStaleVersion && sentVersion !== undefined && sentVersion < stored.version;
  }

  /**
   * A PUT that sends the stored document back with only leaves' texts rewritten (`leaves`, the
   * changed ones), to an edge whose configuration is PUT-stable (edge-put.ts): configAfterPut
   * would keep the id and the manager's fields, raise the version and take every other leaf as
   * sent, so the store takes it as that (storeLeaves).
   */
  #putLeaves(stored: StoredEdge, leaves: ReadonlyMap<string, string>): PutEdgeResult {
    const versionText = (leaves.get("version") ?? String(stored.version)).trim();
    const sentVersion = /^\d+$/.test(versionText) ? Number(versionText) : undefined;
    if (this.#staleRefused(stored, sentVersion))
      return { ok: false, reason: "stale", storedVersion: stored.version, sentVersion: sentVersion! };
    const texts = new Map([...leaves].filter(([name]) => !KEPT_ON_PUT.has(name)));
    const changed = [...texts.keys()];
    texts.set("version", String(stored.version + 1));
    const edge = this.#edges.storeLeaves(stored, texts);
    if (edge === undefined) throw new Error(`edge ${stored.id}: a rewrite of its leaves was not stored`);
    this.#auditPut(stored, sentVersion, diffLeafTexts("edge", changed, this.#auditIgnored));
    return { ok: true, edge };
  }

  /** Records what a PUT did beyond the sanctioned fields, if anything. */
  #auditPut(stored: StoredEdge, sentVersion: number | undefined, diff: ModelDiff): void {
    if (isEmptyDiff(diff)) return;
    const stale = sentVersion !== undefined && sentVersion < stored.version;
    this.audit.addViolation({
      kind: diff.lost.length > 0 ? "lostContent" : "changedContent",
      edgeId: stored.id,
      time: new Date(this.clock.now()).toISOString(),
      storedVersion: stored.version,
      sentVersion,
      ...diff,
      message: stale
        ? `PUT based on version ${sentVersion} overwrote version ${stored.version}`
        : `the PUT ${diff.lost.length > 0 ? "lost" : "changed"} content beyond ${[...this.#auditIgnored]
            .filter((f) => f !== "version")
            .map((f) => `the ${f}`)
            .join(", ")}`,
    });
  }

  /**
   * An out-of-band change (another client, the UI): sets top-level fields and raises the version
   * (or sets it, when `version` is given). Throws SimulatorInputError for a name that is no XML
   * name, a value XML cannot carry, or a field the edge has more than once.
   */
  changeEdge(id: string, fields: Record<string, string>): StoredEdge | undefined {
    const stored = this.#edges.get(id);
    if (stored === undefined) return undefined;
    const config = this.#edges.config(stored);
    const texts = new Map(
      Object.entries({ ...fields, version: fields.version ?? String(stored.version + 1) }),
    );
    for (const [name, value] of texts) {
      if (!isXmlName(name)) throw new SimulatorInputError(name, "is not an element name");
      if (!isXmlText(value)) throw new SimulatorInputError(name, "has characters XML cannot carry");
      if (config.children.filter((c) => c.name === name).length > 1) {
        throw new SimulatorInputError(name, `the edge has several <${name}>; refusing to set one`);
      }
    }
    // asked before the change: a PUT-stable edge stays so with leaves' texts changed (edge-put.ts)
    this.#edges.isPutStable(stored, config);
    const changed = this.#edges.storeLeaves(stored, texts);
    if (changed !== undefined) return changed;
    for (const [name, value] of texts) setChildText(config, name, value);
    return this.#edges.store(config, stored.listing.summary);
  }

  /**
   * Adds an edge (its version 1 when it has none), or replaces one as another client would (its
   * version then rises). The model is stored as the manager's: the text's formatting is not kept,
   * and firewall and NAT rules without an id get one.
   */
  upsertEdge(model: EdgeModel): StoredEdge {
    const stored = this.#edges.get(childText(model, "id") ?? "");
    const versionText = childText(model, "version")?.trim();
    const version = versionText === undefined ? undefined : Number(versionText);
    const next = { ...model, children: [...model.children] };
    // a manager's rules all have ids: a document seeded without them gets them, as a POST would
    assignRuleIds(next, stored === undefined ? undefined : this.#edges.config(stored));
    if (stored !== undefined)
      setChildText(next, "version", String(Math.max(version ?? 0, stored.version + 1)));
    else if (version === undefined) setChildText(next, "version", "1");
    const edge = this.#edges.storeDocument(next);
    this.#highestEdgeNumber = Math.max(this.#highestEdgeNumber, numberOf(edge.id));
    return edge;
  }

  /**
   * POST /api/4.0/edges (edge-create.ts): the edge a manager makes of a checked document, with the
   * next id it has never given; recorded in the audit.
   */
  createEdge(sent: EdgeModel): StoredEdge {
    const id = `edge-${++this.#highestEdgeNumber}`;
    const neighbours = this.edges().map((e) => ({
      datacenterMoid: e.doc.datacenterMoid,
      datacenterName: e.doc.datacenterName,
      text: e.text,
    }));
    const placement = placementOf(sent, neighbours);
    const edge = this.#edges.store(newEdgeConfig(sent, id, placement), undefined);
    this.#recordObject({ action: "created", kind: "edge", id, name: edge.doc.name });
    return edge;
  }

  /** DELETE /api/4.0/edges/{id}: false when there is no such edge. Its id is never given again. */
  deleteEdge(id: string): boolean {
    const name = this.#edges.get(id)?.doc.name;
    if (!this.#edges.delete(id)) return false;
    this.#recordObject({ action: "deleted", kind: "edge", id, name });
    return true;
  }

  #recordObject(change: Omit<ObjectChange, "time">): void {
    const { name, ...rest } = change;
    this.audit.addObjectChange({
      ...rest,
      ...(name !== undefined ? { name } : {}),
      time: new Date(this.clock.now()).toISOString(),
    });
  }

  // ---- pools

  scope(id: string): ScopeInfo | undefined {
    return this.#scopes.get(id);
  }

  /** the pools of a known scope (maybe none), undefined for an unknown one */
  poolsInScope(scopeId: string): Pool[] | undefined {
    if (!this.#scopes.has(scopeId)) return undefined;
    return [...this.#pools.values()].filter((p) => p.config.scope.id === scopeId);
  }

  pool(id: string): Pool | undefined {
    return this.#pools.get(id);
  }

  pools(): Pool[] {
    return [...this.#pools.values()];
  }

  /** Adds or replaces a pool, with its allocations (errors name the allocation's field). */
  addPool(valid: ValidatedPool): Pool {
    const pool = new Pool(valid.config);
    for (const a of valid.allocations) {
      const result = pool.reserve(a.ip, a.note);
      if (!result.ok) {
        throw new SimulatorInputError(
          `${a.path}.ip`,
          result.reason === "taken" ? "allocated twice" : "not inside any range of the pool",
        );
      }
    }
    if (!this.#scopes.has(pool.config.scope.id)) this.#scopes.set(pool.config.scope.id, pool.config.scope);
    this.#pools.set(pool.id, pool);
    this.#highestPoolNumber = Math.max(this.#highestPoolNumber, numberOf(pool.id));
    return pool;
  }

  /**
   * POST .../pools/scope/{scopeId}: a pool with the next id the manager has never given. Throws
   * SimulatorInputError naming the field of a bad input (state-file.ts checks it).
   */
  createPool(scopeId: string, input: Omit<PoolInput, "id">): CreatePoolResult {
    const scope = this.#scopes.get(scopeId);
    if (scope === undefined) return { ok: false, reason: "unknownScope" };
    const id = `ipaddresspool-${this.#highestPoolNumber + 1}`;
    const valid = parsePool({ ...input, id, scope: scope.id }, "", [scope]);
    if (this.#nameTaken(scope.id, valid.config.name, undefined))
      return { ok: false, reason: "duplicateName", scopeId };
    const pool = this.addPool(valid);
    this.#recordObject({ action: "created", kind: "pool", id, name: pool.config.name });
    return { ok: true, pool };
  }

  /** PUT .../pools/{poolId}: new settings and ranges; the allocations must stay inside the ranges. */
  updatePool(poolId: string, input: Omit<PoolInput, "id">): UpdatePoolResult {
    const pool = this.#pools.get(poolId);
    if (pool === undefined) return { ok: false, reason: "missing" };
    const { config } = parsePool({ ...input, id: poolId, allocationIds: pool.config.allocationIds }, "", []);
    const scopeId = pool.config.scope.id;
    if (this.#nameTaken(scopeId, config.name, poolId)) return { ok: false, reason: "duplicateName", scopeId };
    const result = pool.reconfigure({ ...config, subnetId: pool.config.subnetId });
    if (!result.ok)
      return { ok: false, reason: "outside", addresses: result.outside.map((a) => a.ipAddress) };
    this.#recordObject({ action: "updated", kind: "pool", id: poolId, name: pool.config.name });
    return { ok: true, pool };
  }

  /** DELETE .../pools/{poolId}[?force=true]: a pool with allocations goes only when forced, with them. */
  deletePool(poolId: string, force: boolean): DeletePoolResult {
    const pool = this.#pools.get(poolId);
    if (pool === undefined) return { ok: false, reason: "missing" };
    if (pool.usedAddressCount > 0 && !force)
      return { ok: false, reason: "allocated", count: pool.usedAddressCount };
    const dropped = pool.clear();
    this.#pools.delete(poolId);
    this.#recordObject({
      action: "deleted",
      kind: "pool",
      id: poolId,
      name: pool.config.name,
      ...(dropped.length > 0
        ? {
            droppedAllocations: dropped.map((a) => ({
              ip: a.ipAddress,
              allocationId: a.id,
              ...(a.note !== undefined ? { note: a.note } : {}),
            })),
          }
        : {}),
    });
    return { ok: true, dropped };
  }

  /** another pool of the scope has that name (grouping objects' names are unique per scope) */
  #nameTaken(scopeId: string, name: string, except: string | undefined): boolean {
    return [...this.#pools.values()].some(
      (p) => p.id !== except && p.config.scope.id === scopeId && p.config.name === name,
    );
  }

  /** undefined when the pool does not exist */
  allocate(poolId: string, request: AllocationRequest): AllocateResult | undefined {
    const pool = this.#pools.get(poolId);
    if (pool === undefined) return undefined;
    if (request.mode === "ALLOCATE") return pool.allocateNext(request.note);
    return pool.reserve(request.ipAddress ?? "", request.note);
  }

  /** The release of spec 4.5; undefined when the address is not allocated from the pool. */
  release(pool: Pool, ip: string): AllocationRecord | undefined {
    const record = pool.release(ip);
    if (record !== undefined) {
      this.audit.addRelease({
        poolId: pool.id,
        ip: record.ipAddress,
        ...(record.note !== undefined ? { note: record.note } : {}),
        allocationId: record.id,
        time: new Date(this.clock.now()).toISOString(),
      });
    }
    return record;
  }

  /** A JSON summary for the control API. */
  dump(): StateDump {
    return {
      edges: this.edges().map((e) => ({
        id: e.id,
        version: e.version,
        tenant: e.doc.tenant ?? null,
        name: e.doc.name ?? null,
        bytes: e.bytes.length,
      })),
      scopes: [...this.#scopes.values()],
      pools: this.pools().map((p) => ({
        id: p.id,
        name: p.config.name,
        scopeId: p.config.scope.id,
        ipPoolType: p.config.ipPoolType,
        totalAddressCount: p.totalAddressCount,
        usedAddressCount: p.usedAddressCount,
        usedPercentage: p.usedPercentage,
        allocations: p.allocations(),
      })),
      username: this.auth.username,
      settings: { ...this.#settings },
    };
  }
}

/** n of `edge-<n>` or `ipaddresspool-<n>` (0 for an id without a number) */
function numberOf(id: string): number {
  const n = /-(\d+)$/.exec(id)?.[1];
  return n === undefined ? 0 : Number(n);
}

export interface StateDump {
  edges: { id: string; version: number; tenant: string | null; name: string | null; bytes: number }[];
  scopes: ScopeInfo[];
  pools: {
    id: string;
    name: string;
    scopeId: string;
    ipPoolType: string;
    totalAddressCount: number;
    usedAddressCount: number;
    usedPercentage: number;
    allocations: AllocationRecord[];
  }[];
  username: string;
  settings: SimulatorSettings;
}

/**
 * An edge from the state file or the control API, as the manager's model; errors name where it
 * came from.
 */
export function parseEdge(xml: string, path: string): EdgeModel {
  let doc: EdgeDocument;
  let model: EdgeModel;
  try {
    doc = EdgeDocument.parse(xml);
    model = edgeModelOf(xml);
  } catch (cause) {
    throw new SimulatorInputError(path, cause instanceof Error ? cause.message : String(cause), { cause });
  }
  if (!isEdgeId(doc.id)) throw new SimulatorInputError(path, `id ${JSON.stringify(doc.id)} is not edge-<n>`);
  const version = doc.getField("version");
  if (version !== undefined && !/^\d+$/.test(version.trim())) {
    throw new SimulatorInputError(path, `version ${JSON.stringify(version)} is not an integer`);
  }
  return model;
}
