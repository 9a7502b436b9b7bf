/**
 * Everything the simulator holds: edges (each with its serialized text cached per version, so a
 * GET of a 5 MB edge costs no serialization), pools and scopes, credentials and tokens, settings,
 * the faults, counters and audit. Routes and the control API are thin layers over this class,
 * and tests running the simulator in-process may call it directly.
 */
import { EdgeDocument } from "../nsx/edge-document.ts";
import { createHash } from "node:crypto";
import { Audit, Counters } from "./audit.ts";
import {
  EdgeModelError,
  edgeModelOf,
  followDerivedSummary,
  modelsEqualExcept,
  renderEdgeModel,
  replaceChild,
  setChildText,
  type EdgeModel,
} from "./edge-model.ts";
import { AuthStore, DEFAULT_CREDENTIALS, type Credentials } from "./auth.ts";
import { FaultSet } from "./faults.ts";
import { SimulatorInputError } from "./input.ts";
import {
  GLOBAL_SCOPE,
  Pool,
  type AllocateResult,
  type AllocationRecord,
  type ManagerIdentity,
  type ScopeInfo,
} from "./pools.ts";
import { DEFAULT_SETTINGS, type SimulatorSettings } from "./settings.ts";
import { validateStateInput, type SimulatorStateInput, type ValidatedPool } from "./state-file.ts";

export interface StoredEdge {
  readonly id: string;
  readonly version: number;
  readonly doc: EdgeDocument;
  /** doc.serialize(), computed once when stored */
  readonly text: string;
  /** text as UTF-8, what a GET sends */
  readonly bytes: Buffer;
}

/**
 * Children of `<edge>` a PUT may leave out or change without losing anything: spec 4.2 (tenant,
 * description, version) and the summary, which the manager derives and never takes from a client.
 */
export const PUT_IGNORED_FIELDS: ReadonlySet<string> = new Set([
  "tenant",
  "description",
  "version",
  "edgeSummary",
]);

export type PutEdgeResult =
  | { ok: true; edge: StoredEdge }
  | { ok: false; reason: "missing" }
  | { ok: false; reason: "stale"; storedVersion: number; sentVersion: number }
  | { ok: false; reason: "unmodelled"; message: string };

export interface AllocationRequest {
  mode: "ALLOCATE" | "RESERVE";
  /** required for RESERVE */
  ipAddress?: string;
  note?: string;
}

/** The simulator's clock: the wall clock plus an offset that the control API can advance. */
export class SimulatorClock {
  #offsetMs = 0;
  now(): number {
    return Date.now() + this.#offsetMs;
  }
  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}

export interface StateOverrides {
  credentials?: Credentials;
  settings?: Partial<SimulatorSettings>;
}

export class SimulatorState {
  settings: SimulatorSettings;
  readonly clock = new SimulatorClock();
  readonly manager: ManagerIdentity;
  readonly auth: AuthStore;
  readonly faults = new FaultSet();
  readonly counters = new Counters();
  readonly audit = new Audit();
  readonly #edges = new Map<string, StoredEdge>();
  readonly #pools = new Map<string, Pool>();
  readonly #scopes = new Map<string, ScopeInfo>([[GLOBAL_SCOPE.id, GLOBAL_SCOPE]]);

  /** Validates the input (errors name the field) and builds the state from it. */
  constructor(input: SimulatorStateInput | undefined = undefined, overrides: StateOverrides = {}) {
    const valid = validateStateInput(input ?? {});
    this.settings = { ...DEFAULT_SETTINGS, ...valid.settings, ...overrides.settings };
    this.auth = new AuthStore(
      overrides.credentials ?? valid.credentials ?? DEFAULT_CREDENTIALS,
      valid.auditor,
    );
    const vsmUuid = valid.vsmUuid ?? "420D3C54-5E36-8D1A-9F41-2C6B7A3E9B10";
    this.manager = { vsmUuid, nodeId: uuidFrom(vsmUuid) };
    for (const scope of valid.scopes) this.#scopes.set(scope.id, scope);
    for (const edge of valid.edges) {
      const doc = parseEdge(edge.text(), edge.path);
      if (this.#edges.has(doc.id))
        throw new SimulatorInputError(edge.path, `a second edge with id ${doc.id}`);
      this.upsertEdge(doc);
    }
    for (const pool of valid.pools) this.addPool(pool);
  }

  // ---- edges

  edge(id: string): StoredEdge | undefined {
    return this.#edges.get(id);
  }

  edges(): StoredEdge[] {
    return [...this.#edges.values()];
  }

  /**
   * The PUT of spec 4.2, as a manager stores it: the sent document becomes the edge's model (its
   * formatting is not kept; GETs answer in the manager's format), except that the stored
   * description and summary stay, the summary's derived fields follow the edge, and the version
   * becomes the stored one plus one. A sent document whose information differs from the stored
   * one outside PUT_IGNORED_FIELDS is stored as sent and audited as lost content.
   */
  putEdge(id: string, sent: EdgeDocument): PutEdgeResult {
    const stored = this.#edges.get(id);
    if (stored === undefined) return { ok: false, reason: "missing" };
    let next: EdgeModel;
    try {
      next = edgeModelOf(sent.serialize());
    } catch (error) {
      if (error instanceof EdgeModelError) return { ok: false, reason: "unmodelled", message: error.message };
      throw error;
    }
    const sentVersion = sent.version;
    if (this.settings.rejectStaleVersion && sentVersion !== undefined && sentVersion < stored.version) {
      return { ok: false, reason: "stale", storedVersion: stored.version, sentVersion };
    }
    const current = edgeModelOf(stored.text);
    if (!modelsEqualExcept(current, next, PUT_IGNORED_FIELDS)) {
      this.audit.addViolation({
        kind: "lostContent",
        edgeId: id,
        time: new Date(this.clock.now()).toISOString(),
        storedVersion: stored.version,
        sentVersion,
        message:
          sentVersion !== undefined && sentVersion < stored.version
            ? `PUT based on version ${sentVersion} overwrote version ${stored.version}`
            : "the sent document differs from the stored one outside tenant, description and version",
      });
    }
    for (const kept of ["description", "edgeSummary"]) {
      replaceChild(
        next,
        kept,
        current.children.find((c) => c.name === kept),
      );
    }
    setChildText(next, "version", String(stored.version + 1));
    return { ok: true, edge: this.#storeModel(next) };
  }

  /** An out-of-band change (another client, the UI): sets top-level fields and raises the version. */
  changeEdge(id: string, fields: Record<string, string>): StoredEdge | undefined {
    const stored = this.#edges.get(id);
    if (stored === undefined) return undefined;
    // EdgeDocument.setField refuses what a field cannot be (a name that is no XML name, a repeated field)
    const changed = stored.doc.clone();
    for (const [name, value] of Object.entries(fields)) if (name !== "version") changed.setField(name, value);
    changed.setField("version", fields.version ?? String(stored.version + 1));
    return this.#storeModel(edgeModelOf(changed.serialize()));
  }

  #storeModel(model: EdgeModel): StoredEdge {
    followDerivedSummary(model);
    return this.#store(EdgeDocument.parse(renderEdgeModel(model, { pretty: this.settings.prettyXml })));
  }

  /** Adds an edge, or replaces one as another client would (its version then rises). */
  upsertEdge(doc: EdgeDocument): StoredEdge {
    const stored = this.#edges.get(doc.id);
    const version = doc.version;
    const next = doc.clone();
    if (stored !== undefined) next.setField("version", String(Math.max(version ?? 0, stored.version + 1)));
    else if (version === undefined) next.setField("version", "1");
    return this.#store(next);
  }

  #store(doc: EdgeDocument): StoredEdge {
    const text = doc.serialize();
    const edge: StoredEdge = {
      id: doc.id,
      version: doc.version ?? 1,
      doc,
      text,
      bytes: Buffer.from(text, "utf8"),
    };
    this.#edges.set(edge.id, edge);
    return edge;
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
    return pool;
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
      settings: { ...this.settings },
    };
  }
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

/** An edge from the state file or the control API; errors name where it came from. */
export function parseEdge(xml: string, path: string): EdgeDocument {
  let doc: EdgeDocument;
  try {
    doc = EdgeDocument.parse(xml);
  } catch (cause) {
    throw new SimulatorInputError(path, cause instanceof Error ? cause.message : String(cause), { cause });
  }
  try {
    edgeModelOf(xml);
  } catch (cause) {
    if (cause instanceof EdgeModelError) throw new SimulatorInputError(path, cause.message, { cause });
    throw cause;
  }
  if (!/^edge-\d+$/.test(doc.id))
    throw new SimulatorInputError(path, `id ${JSON.stringify(doc.id)} is not edge-<n>`);
  const version = doc.getField("version");
  if (version !== undefined && !/^\d+$/.test(version.trim())) {
    throw new SimulatorInputError(path, `version ${JSON.stringify(version)} is not an integer`);
  }
  return doc;
}

/** a stable node UUID derived from the manager's */
function uuidFrom(seed: string): string {
  const h = createHash("sha256").update(seed).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
