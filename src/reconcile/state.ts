/**
 * What the handlers share across passes: the reconciler's options, the desired-state store, the
 * manager connections, when each object was last observed, the conflict index per kind (rebuilt
 * only when the store's revision moves), who names which NSXManager; where the source requires
 * it, a Secret's credentials go only where and as the Secret allows (binding.ts). Each kind's own
 * caches and options are its state (KindStateKey: edge-tenant/state.ts, ip-pool/state.ts,
 * nsx-manager/state.ts), held here without being known.
 */
import { formatRef, managerRefOf, objectKey, refOf, type ObjectRef } from "../api/refs.ts";
import {
  DEPENDENT_KINDS,
  type DependentKind,
  type DependentObject,
  type NSXManager,
  type NsxvObject,
  SKIP_RESTORE_ANNOTATION,
} from "../api/types.ts";
import type { Clock } from "../util/clock.ts";
import { withDefaults } from "../util/options.ts";
import { assertBound } from "./binding.ts";
import { allowsNamespace, hasAuthority, namespaceNotAllowed, type NamespaceLabels } from "./authority.ts";
import { ConflictIndex, type ClaimOf } from "./conflicts.ts";
import type { ManagerConnection, ManagerConnections } from "./connections.ts";
import { ReconcileError } from "./errors.ts";
import { resolveManager, syncIntervalMsOf } from "./spec.ts";
import type { DesiredStateStore } from "./store.ts";

export type ExecutionMode = "plan" | "apply";

/**
 * Ready keeps an observation for this many sync intervals while the operator cannot observe, and
 * for STALE_AFTER_MIN_MS at least (a manager that answers just within its 30 s timeout is not blind).
 */
export const STALE_AFTER_SYNC_INTERVALS = 2;
export const STALE_AFTER_MIN_MS = 30_000;
/** A pass may always wait this long on the manager for its observation, even one that starts late. */
export const MIN_OBSERVE_WAIT_MS = 2_000;

/** The reconciler's options over their defaults: what ReconcilerState and the kinds' states are made from. */
export type ReconcilerSettings = Required<Omit<ReconcilerOptions, "oneShot">> &
  Pick<ReconcilerOptions, "oneShot">;

/**
 * A kind's own state: its caches, its options and what it remembers of its objects, declared by
 * the kind (edge-tenant/state.ts, ip-pool/state.ts, nsx-manager/state.ts) and found by this key
 * (`ctx.state.of(key)`): the shared state holds it without knowing it.
 */
export interface KindStateKey<S, O extends object = object> {
  /** the kind that declares it: its options are `kinds[kind]` of the reconciler's options */
  kind: string;
  /** its options' defaults (a kind without options: `{}`) */
  defaults: O;
  create(settings: ReconcilerSettings, options: O): S;
  /** an object is gone: what is kept of it goes (any kind's object: an NSXManager's too) */
  forget?(state: S, ref: ObjectRef): void;
}

/** What a dependent kind is to the NSXManager its objects name (the part of its check: manager-check.ts). */
export interface DependentRole {
  kind: DependentKind;
  /**
   * its objects observe from the check (the EdgeTenants: the edge list it reads): the check runs
   * at the shortest sync interval of the live ones
   */
  pacesCheck?: boolean;
  /** an object of the kind needs its manager's Secrets kept against deletion (an EdgeTenant with a restore pending) */
  needsSecrets?(object: DependentObject): boolean;
  /** what an object of the kind claims on its manager (conflicts.ts): two that claim the same conflict */
  claim(object: DependentObject): string | undefined;
}

export interface ReconcilerOptions {
  store: DesiredStateStore;
  connections: ManagerConnections;
  /** default realClock; its timers bound how long a pass waits on a manager (PassContext.keptUntilMs) */
  clock?: Pick<Clock, "now" | "setTimer">;
  /** "plan": observe and plan only, no writes; default "apply" */
  mode?: ExecutionMode;
  /** set for a one-shot run (the CLI): no grace period can be observed, see IpPoolPlanInput */
  oneShot?: OneShot;
  /** resync of objects without spec.syncInterval (and of NSXManagers); default 300000 (5 min) */
  defaultSyncIntervalMs?: number;
  /** resyncs are spread by ±this fraction; default 0.1 */
  jitterFraction?: number;
  /** [0, 1); default Math.random */
  random?: () => number;
  /** tries of a write answered 409, each after a fresh read; default 3 */
  maxAttempts?: number;
  /**
   * each kind's options by kind, over the defaults its state declares (KindStateKey): typed by
   * the registry of kinds (kinds.ts, KindOptions), which the reconciler takes (ReconcilerDeps)
   */
  kinds?: { readonly [kind: string]: object | undefined };
}

/** What a one-shot run (`plan`, `apply`) was asked. */
export interface OneShot {
  /** release strays without the grace period one pass cannot wait out */
  releaseStrays: boolean;
  /** read every edge in full instead of taking the manager's edge list for what it shows (--full-read) */
  fullRead?: boolean;
}

export class ReconcilerState {
  readonly store: DesiredStateStore;
  readonly connections: ManagerConnections;
  readonly mode: ExecutionMode;
  readonly maxAttempts: number;
  readonly oneShot: OneShot | undefined;
  readonly clock: Pick<Clock, "now" | "setTimer">;
  /** object key → when its last successful observation was (what a stale Ready is judged by) */
  readonly #observedAtMs = new Map<string, number>();
  /** object key → when this replica first looked at it (an earlier observation, and a full read, count from then) */
  readonly #trackedSinceMs = new Map<string, number>();
  readonly #defaultSyncIntervalMs: number;
  readonly #jitterFraction: number;
  readonly #random: () => number;
  /** who names which NSXManager, and the store revision it was built at (dependentsOf) */
  #dependentRefs: { revision: string; byManager: Map<string, ObjectRef[]> } | undefined;
  /** NSXManager key → its check interval, and the store revision it was worked out at */
  readonly #checkIntervals = new Map<string, { revision: string; ms: number | undefined }>();
  /** the conflict index per kind and the store revision it was built at */
  readonly #indexes = new Map<DependentKind, { revision: string; index: Promise<ConflictIndex> }>();
  /** each kind's own state, made on first use (KindStateKey) */
  readonly #kinds = new Map<KindStateKey<unknown>, unknown>();
  readonly #settings: ReconcilerSettings;
  /** what a dependent object claims on its manager, by its kind's role */
  readonly #claimOf: ClaimOf;

  /** what each dependent kind is to its NSXManager (kinds.ts: the parts of its check) */
  readonly dependentRoles: readonly DependentRole[];

  constructor(options: ReconcilerSettings, dependentRoles: readonly DependentRole[]) {
    this.#settings = options;
    this.dependentRoles = dependentRoles;
    const roles = new Map(dependentRoles.map((role) => [role.kind, role]));
    this.#claimOf = (object) => roles.get(object.kind)?.claim(object);
    this.store = options.store;
    this.connections = options.connections;
    this.mode = options.mode;
    this.maxAttempts = options.maxAttempts;
    this.oneShot = options.oneShot;
    this.clock = options.clock;
    this.#defaultSyncIntervalMs = options.defaultSyncIntervalMs;
    this.#jitterFraction = options.jitterFraction;
    this.#random = options.random;
  }

  /** A kind's own state: its caches and what it remembers, made from its options on first use. */
  of<S>(key: KindStateKey<S>): S {
    if (!this.#kinds.has(key)) {
      const options = withDefaults(key.defaults, this.#settings.kinds[key.kind]);
      this.#kinds.set(key, key.create(this.#settings, options));
    }
    return this.#kinds.get(key) as S;
  }

  /**
   * How long Ready may keep an observation while passes fail to observe: two sync intervals (the
   * default interval when undefined), 30 s at least. Past it, Ready is Unknown: the operator is blind.
   */
  staleAfterMs(intervalMs: number | undefined): number {
    return Math.max(
      STALE_AFTER_MIN_MS,
      STALE_AFTER_SYNC_INTERVALS * (intervalMs ?? this.#defaultSyncIntervalMs),
    );
  }

  /** An observation of the object's manager succeeded at `atMs` (a read, or the manager's list). */
  observed(ref: ObjectRef, atMs: number): void {
    const key = objectKey(ref);
    if ((this.#observedAtMs.get(key) ?? -Infinity) < atMs) this.#observedAtMs.set(key, atMs);
  }

  /** When the last successful observation of the object was, since the operator started. */
  lastObservedMs(ref: ObjectRef): number | undefined {
    return this.#observedAtMs.get(objectKey(ref));
  }

  /**
   * What the age of the object's Ready counts from: its last observation by this replica, else
   * when this replica first looked at it (`nowMs` on the first call). A Ready written before a
   * restart or a new leader is as recent as that, so they do not turn every Ready stale at once,
   * and one that cannot be confirmed is stale within the same bound.
   */
  observedOrTrackedSinceMs(ref: ObjectRef, nowMs: number): number {
    return this.#observedAtMs.get(objectKey(ref)) ?? this.trackedSinceMs(ref, nowMs);
  }

  /** When this replica first looked at the object (`nowMs` on the first call). */
  trackedSinceMs(ref: ObjectRef, nowMs: number): number {
    const key = objectKey(ref);
    const tracked = this.#trackedSinceMs.get(key);
    if (tracked !== undefined) return tracked;
    this.#trackedSinceMs.set(key, nowMs);
    return nowMs;
  }

  /** The object is gone: nothing to remember of it. */
  forgetObject(ref: ObjectRef): void {
    this.#observedAtMs.delete(objectKey(ref));
    this.#trackedSinceMs.delete(objectKey(ref));
    this.#checkIntervals.delete(objectKey(ref));
    for (const [key, kindState] of this.#kinds) key.forget?.(kindState, ref);
  }

  /** When to look again: the interval (the default when undefined), spread by the jitter. */
  resync(intervalMs: number | undefined): number {
    const base = intervalMs ?? this.#defaultSyncIntervalMs;
    return Math.round(base * (1 + (this.#random() * 2 - 1) * this.#jitterFraction));
  }

  /**
   * Built again only when the store's revision of the kind, of NSXManagers or of namespaces moved
   * (every time without revisions): conflicts are decided per real manager and by authority,
   * which the NSXManagers (their URLs, their status, whom they allow) and namespaces' labels tell.
   */
  conflictIndex(kind: DependentKind): Promise<ConflictIndex> {
    // authority is in the managers' status, which their revision does not follow: a few managers, read each time
    const managers = this.store.list("NSXManager");
    const revisions = [
      this.store.revision?.(kind),
      this.store.revision?.("NSXManager"),
      this.store.namespaceLabels === undefined ? 0 : this.store.namespacesRevision?.(),
      managers.map((m) => ((m.status as NSXManager["status"])?.authenticated === true ? "1" : "0")).join(""),
    ];
    const revision = revisions.includes(undefined) ? undefined : revisions.join("/");
    const cached = this.#indexes.get(kind);
    if (revision !== undefined && cached?.revision === revision) return cached.index;
    // the revisions are read before listing: a change during the list moves them, and the next call builds again
    const byRef = new Map(managers.map((m) => [objectKey(refOf(m)), m as NSXManager]));
    const labels = this.namespaceLabels;
    const authority = (object: DependentObject): boolean => {
      const ref = managerRefOf(object);
      const manager = ref === undefined ? undefined : byRef.get(objectKey(ref));
      return hasAuthority(manager, refOf(object).namespace, labels);
    };
    const index = Promise.resolve(
      ConflictIndex.build(this.store.list(kind), managers, authority, this.#claimOf),
    );
    if (revision !== undefined) {
      this.#indexes.set(kind, { revision, index });
      index.catch(() => {
        if (this.#indexes.get(kind)?.index === index) this.#indexes.delete(kind);
      });
    }
    return index;
  }

  /** A namespace's labels, as the store knows them (none where it knows none: a directory). */
  readonly namespaceLabels: NamespaceLabels = (namespace) => this.store.namespaceLabels?.(namespace);

  /**
   * NamespaceNotAllowed when the object's NSXManager does not serve its namespace; else the
   * Conflict error when another object owns this object's edge or pool as written, on the same
   * real manager: one with authority where this one has none, or an older one.
   */
  async assertOwnTarget(object: DependentObject, target: string): Promise<ConflictIndex> {
    // an object its manager does not serve is told so first: it claims nothing there
    const managerRef = managerRefOf(object);
    const named = managerRef === undefined ? undefined : await this.store.get(managerRef);
    if (managerRef !== undefined && named?.kind === "NSXManager")
      if (!allowsNamespace(named, refOf(object).namespace, this.namespaceLabels))
        throw namespaceNotAllowed(refOf(object), managerRef);
    const index = await this.conflictIndex(object.kind);
    const winner = index.winnerOver(object);
    const realManager = index.managerOf(object);
    if (winner !== undefined) {
      const what = realManager === undefined ? target : `${target} of ${realManager}`;
      const outranked = !index.hasAuthority(refOf(object)) && index.hasAuthority(winner);
      throw conflictError(what, winner, outranked ? managerRefOf(object) : undefined);
    }
    return index;
  }

  /**
   * The client of a manager, built from its spec and Secrets; `fresh` reads the Secrets where
   * they live now (the manager's own check) rather than from a cache. Where the store requires
   * it, the credentials Secret must allow the manager's URL and how it is verified (binding.ts),
   * or no client is built: CredentialsNotBound.
   */
  async connect(manager: NSXManager, options: { fresh?: boolean } = {}): Promise<ManagerConnection> {
    const config = resolveManager(manager);
    const { namespace } = refOf(manager);
    const credentials = await this.store.getSecret(namespace, config.credentialsSecret, options);
    if (credentials !== undefined && this.store.secretBindingRequired === true)
      assertBound(credentials, `${namespace}/${config.credentialsSecret}`, formatRef(refOf(manager)), config);
    const ca =
      config.ca === undefined ? undefined : await this.store.getSecret(namespace, config.ca.secret, options);
    return this.connections.resolve(manager, { credentials, ca });
  }

  /**
   * The connection of a dependent's manager (`ref`); NamespaceNotAllowed when that NSXManager is
   * in another namespace that it does not share with the object's, ManagerNotReady when it is
   * missing, failed its check, or cannot be built.
   */
  async connectDependent(
    object: DependentObject,
    ref: ObjectRef,
    options: { restoring?: boolean } = {},
  ): Promise<ManagerConnection> {
    const notReady = (why: string, cause?: unknown) =>
      new ReconcileError({ reason: "ManagerNotReady", message: `${formatRef(ref)}: ${why}`, cause });
    const manager = await this.store.get(ref);
    if (manager?.kind !== "NSXManager") throw notReady("not found");
    if (!allowsNamespace(manager, refOf(object).namespace, this.namespaceLabels))
      throw namespaceNotAllowed(refOf(object), ref);
    if (manager.status?.authenticated === false) throw notReady("its last check failed to authenticate");
    // its own check could not reach it: every call of a dependent would wait out the same timeout
    if (manager.status?.reachable === false) throw notReady("its last check could not reach it");
    try {
      return await this.connect(manager);
    } catch (error) {
      if (!(error instanceof ReconcileError)) throw error;
      // a restore keeps the credentials the operator holds: its Secret may have gone first
      const held = options.restoring === true ? this.connections.held(ref.namespace, ref.name) : undefined;
      if (held !== undefined) return held;
      const restart =
        options.restoring === true
          ? `; the operator holds no credentials of it (none since it started): recreate the Secret, or annotate this object ${SKIP_RESTORE_ANNOTATION}: "true" to let it go without restoring`
          : "";
      throw notReady(`${error.message}${restart}`, error);
    }
  }

  /**
   * The EdgeTenants and IPPoolAllocations that name this NSXManager and that it allows (those of
   * its namespace, and of the namespaces it shares with), those being deleted included: an object
   * it does not allow holds nothing of it, not even its in-use finalizer.
   */
  dependentsOf(manager: NSXManager): DependentObject[] {
    const key = objectKey(refOf(manager));
    const serves = (object: NsxvObject): boolean =>
      allowsNamespace(manager, refOf(object).namespace, this.namespaceLabels);
    const named = this.#namedBy()?.get(key);
    const objects: NsxvObject[] = [];
    for (const ref of named ?? []) {
      const object = this.store.get(ref);
      // a store that answers later: listed below
      if (object instanceof Promise) return this.#dependentsListed(key, serves);
      if (object !== undefined && serves(object)) objects.push(object);
    }
    return named === undefined ? this.#dependentsListed(key, serves) : (objects as DependentObject[]);
  }

  /** dependentsOf by a look at every dependent, when the store keeps no revisions or answers later */
  #dependentsListed(key: string, serves: (object: NsxvObject) => boolean): DependentObject[] {
    return DEPENDENT_KINDS.flatMap((kind) => this.store.list(kind)).filter((object) => {
      const ref = managerRefOf(object);
      return ref !== undefined && objectKey(ref) === key && serves(object);
    }) as DependentObject[];
  }

  /**
   * NSXManager key → the refs of the dependents that name it, built again only when the store's
   * revision of the dependent kinds moves (a manager's check runs every interval over thousands of
   * them; a status write leaves it as it is); undefined without revisions.
   */
  #namedBy(): Map<string, ObjectRef[]> | undefined {
    const revisions = DEPENDENT_KINDS.map((kind) => this.store.revision?.(kind));
    if (revisions.includes(undefined)) return undefined;
    const revision = revisions.join("/");
    if (this.#dependentRefs?.revision === revision) return this.#dependentRefs.byManager;
    const byManager = new Map<string, ObjectRef[]>();
    for (const kind of DEPENDENT_KINDS)
      for (const object of this.store.list(kind)) {
        const named = managerRefOf(object);
        if (named === undefined) continue;
        const key = objectKey(named);
        let refs = byManager.get(key);
        if (refs === undefined) byManager.set(key, (refs = []));
        refs.push(refOf(object));
      }
    this.#dependentRefs = { revision, byManager };
    return byManager;
  }

  /**
   * How often an NSXManager is checked (and its edge list read): the shortest sync interval of its
   * EdgeTenants, undefined for the default. Its Ready goes stale by the same interval.
   */
  checkIntervalMs(manager: NSXManager): number | undefined {
    // asked several times a pass: kept while no spec, manager or namespace moves
    const revision = [
      ...DEPENDENT_KINDS.map((kind) => this.store.revision?.(kind)),
      this.store.revision?.("NSXManager"),
      this.store.namespaceLabels === undefined ? 0 : this.store.namespacesRevision?.(),
    ];
    const at = revision.includes(undefined) ? undefined : revision.join("/");
    const key = objectKey(refOf(manager));
    const kept = this.#checkIntervals.get(key);
    if (at !== undefined && kept?.revision === at) return kept.ms;
    let ms: number | undefined;
    // the objects that observe from the check: its interval is the shortest of theirs
    const paced = new Set(
      this.dependentRoles.filter((role) => role.pacesCheck === true).map((role) => role.kind),
    );
    for (const object of this.dependentsOf(manager)) {
      if (!paced.has(object.kind) || object.metadata.deletionTimestamp !== undefined) continue;
      const interval = syncIntervalMsOf(object);
      if (interval !== undefined) ms = Math.min(ms ?? Infinity, interval);
    }
    if (at !== undefined) this.#checkIntervals.set(key, { revision: at, ms });
    return ms;
  }
}

/**
 * The Conflict error of an object that does not own its target; `unauthorized`: the object has
 * no authority through this NSXManager, which is why the owner wins whatever its age.
 */
export function conflictError(target: string, winner: ObjectRef, unauthorized?: ObjectRef): ReconcileError {
  const why =
    unauthorized === undefined
      ? "which is older"
      : `whose NSXManager accepted its credentials, while ${formatRef(unauthorized)} has none accepted (missing, not bound to it, refused, or not yet checked) or does not allow this namespace`;
  const message = `${target} is owned by ${formatRef(winner)}, ${why}; this object acts on nothing until that one is gone`;
  return new ReconcileError({ reason: "Conflict", message, owner: winner });
}
