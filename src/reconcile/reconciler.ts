/**
 * `reconcile(ref)`: everything the operator decides for one object, shared by the Kubernetes
 * operator (called by the controller's workers) and the cluster-less CLI (`plan`/`apply`: one
 * call per object of a directory). It reads the object from the store, talks to the manager
 * through the executor, and returns a report: the next status, the events, what changed on the
 * manager, the plan, and when to come back. It never writes status, records events or touches a
 * queue: the caller hands the report to the status sink, the event recorder and the metrics.
 */
import {
  DEFAULTS,
  type EdgeTenant,
  type IPPoolAllocations,
  type NSXManager,
  type NsxvObject,
} from "../api/types.ts";
import { NsxApiError, NsxError } from "../nsx/errors.ts";
import type { IpPool } from "../nsx/types.ts";
import { realClock, type Clock } from "../util/clock.ts";
import { failureConditions, formatTime, setConditions, type ConditionContext } from "./conditions.ts";
import { ConflictIndex } from "./conflicts.ts";
import type { ManagerConnection, ManagerConnections } from "./connections.ts";
import { isUnavailable, ReconcileError, toFailure } from "./errors.ts";
import {
  executeEdgeTenant,
  executeIpPool,
  selectPool,
  type ExecuteOptions,
  type ExecutionMode,
} from "./executor.ts";
import { omitUndefined } from "./plan.ts";
import { isPaused } from "./policy.ts";
import { PoolListCache } from "./pool-lists.ts";
import {
  conflictError,
  correctionEvent,
  releaseEvent,
  releaseFailure,
  toReport,
  type Draft,
  type ObjectStatus,
  type ReconcileOutcome,
  type ReconcileReport,
} from "./report.ts";
import { resolveEdgeTenant, resolveManager, resolvePool } from "./spec.ts";
import { formatRef, refOf, type DesiredStateStore, type ObjectRef } from "./store.ts";

export interface ReconcilerDeps {
  store: DesiredStateStore;
  connections: ManagerConnections;
  /** default realClock */
  clock?: Pick<Clock, "now">;
  /** "plan": observe and plan only, no writes; default "apply" */
  mode?: ExecutionMode;
  /** set for a one-shot run (the CLI): no grace period can be observed, see IpPoolPlanInput */
  oneShot?: { releaseStrays: boolean };
  /** resync of objects without spec.syncInterval (and of NSXManagers); default 300000 (5 min) */
  defaultSyncIntervalMs?: number;
  /** resyncs are spread by ±this fraction; default 0.1 */
  jitterFraction?: number;
  /** [0, 1); default Math.random */
  random?: () => number;
  /** lifetime of a shared pool list; default 30000, Infinity for a one-shot pass */
  poolListTtlMs?: number;
  /** tries of a write answered 409; default 3 */
  maxAttempts?: number;
}

export const DEFAULT_RECONCILER_OPTIONS = Object.freeze({
  clock: realClock,
  random: Math.random,
  mode: "apply" as ExecutionMode,
  defaultSyncIntervalMs: 300_000,
  jitterFraction: 0.1,
  poolListTtlMs: 30_000,
  maxAttempts: 3,
});

export type { ReconcileChanges, ReconcileOutcome, ReconcileReport } from "./report.ts";

export type Reconcile = (ref: ObjectRef, options?: { signal?: AbortSignal }) => Promise<ReconcileReport>;

type DependentKind = "EdgeTenant" | "IPPoolAllocations";

/** One pass over one object. */
interface Pass {
  object: NsxvObject;
  now: Date;
  context: ConditionContext;
  execute: ExecuteOptions;
}

export function createReconciler(deps: ReconcilerDeps): Reconcile {
  const options = { ...DEFAULT_RECONCILER_OPTIONS, ...omitUndefined(deps) };
  const { store, connections, clock } = options;
  const poolLists = new PoolListCache({ ttlMs: options.poolListTtlMs, clock });
  /** the conflict index per kind and the store revision it was built at */
  const indexes = new Map<DependentKind, { revision: number; index: Promise<ConflictIndex> }>();
  /** pool name → its id (null: the name is not unique) per pool list, while the list is cached */
  const poolIdsByName = new WeakMap<readonly IpPool[], Map<string, string | null>>();

  /** Built again only when the store's revision of the kind moved (every time without revisions). */
  function conflictIndex(kind: DependentKind): Promise<ConflictIndex> {
    const revision = store.revision?.(kind);
    const cached = indexes.get(kind);
    if (revision !== undefined && cached?.revision === revision) return cached.index;
    // the revision is read before listing: a change during the list moves it, and the next call builds again
    const index = Promise.resolve(store.list(kind)).then((objects) => ConflictIndex.build(objects));
    if (revision !== undefined) {
      indexes.set(kind, { revision, index });
      index.catch(() => {
        if (indexes.get(kind)?.index === index) indexes.delete(kind);
      });
    }
    return index;
  }

  const resync = (intervalMs: number | undefined): number => {
    const base = intervalMs ?? options.defaultSyncIntervalMs;
    return Math.round(base * (1 + (options.random() * 2 - 1) * options.jitterFraction));
  };

  async function connect(manager: NSXManager): Promise<ManagerConnection> {
    const config = resolveManager(manager);
    const { namespace } = refOf(manager);
    const credentials = await store.getSecret(namespace, config.credentialsSecret);
    const ca = config.ca === undefined ? undefined : await store.getSecret(namespace, config.ca.secret);
    return connections.resolve(manager, { credentials, ca });
  }

  /** The connection of a dependent's manager; ManagerNotReady when it is missing, failed auth, or cannot be built. */
  async function connectDependent(object: EdgeTenant | IPPoolAllocations, managerName: string) {
    const ref: ObjectRef = { kind: "NSXManager", namespace: refOf(object).namespace, name: managerName };
    const notReady = (why: string, cause?: unknown) =>
      new ReconcileError({ reason: "ManagerNotReady", message: `${formatRef(ref)}: ${why}`, cause });
    const manager = await store.get(ref);
    if (manager?.kind !== "NSXManager") throw notReady("not found");
    if (manager.status?.authenticated === false) throw notReady("authentication failed (see its status)");
    // its own check could not reach it: every call of a dependent would wait out the same timeout
    if (manager.status?.reachable === false) throw notReady("unreachable (see its status)");
    try {
      return await connect(manager);
    } catch (error) {
      if (error instanceof ReconcileError) throw notReady(error.message, error);
      throw error;
    }
  }

  async function reconcileManager(pass: Pass, manager: NSXManager): Promise<Draft> {
    resolveManager(manager);
    const previous = manager.status;
    const lastCheckedTime = formatTime(pass.now);
    let pools: readonly IpPool[];
    try {
      const connection = await connect(manager);
      pools = await poolLists.get(connection.key, connection.api, DEFAULTS.poolScope);
    } catch (error) {
      const facts = { ...previous, ...managerFacts(error), lastCheckedTime };
      return failed(pass, error, facts, { ready: "false" });
    }
    const message = `reachable and authenticated: ${pools.length} pool${pools.length === 1 ? "" : "s"} in ${DEFAULTS.poolScope}`;
    const conditions = setConditions(
      previous?.conditions,
      [
        { type: "Ready", status: "True", reason: "Available", message },
        { type: "Synced", status: "True", reason: "ReconcileSuccess", message: "" },
        { type: "Stalled", remove: true },
        { type: "Reconciling", remove: true },
      ],
      pass.context,
    );
    const status = {
      observedGeneration: pass.context.generation,
      reachable: true,
      authenticated: true,
      lastCheckedTime,
      conditions,
    };
    return { status, outcome: { type: "done", requeueAfterMs: resync(undefined) } };
  }

  async function reconcileEdgeTenant(pass: Pass, object: EdgeTenant): Promise<Draft> {
    const config = resolveEdgeTenant(object);
    const winner = (await conflictIndex("EdgeTenant")).winnerOver(object);
    if (winner !== undefined) throw conflictError(`edge ${config.edgeId}`, winner);
    const connection = await connectDependent(object, config.managerName);
    const input = { object, previous: object.status, now: pass.now };
    const result = await executeEdgeTenant(connection.api, input, pass.execute);
    const tenantCorrections = result.corrections.map(({ edgeId, from, to }) => ({ edgeId, from, to }));
    return {
      status: result.status,
      events: tenantCorrections.map(correctionEvent),
      changes: { tenantCorrections, releases: [] },
      planned: result.planned,
      outcome: { type: "done", requeueAfterMs: resync(config.syncIntervalMs) },
    };
  }

  async function reconcilePool(pass: Pass, object: IPPoolAllocations): Promise<Draft> {
    const config = resolvePool(object);
    const index = await conflictIndex("IPPoolAllocations");
    const target =
      config.pool.id ?? `named ${JSON.stringify(config.pool.name)} in scope ${config.pool.scope}`;
    const winner = index.winnerOver(object);
    if (winner !== undefined) throw conflictError(`pool ${target}`, winner);
    const connection = await connectDependent(object, config.managerName);
    const pool = selectPool(
      await poolLists.get(connection.key, connection.api, config.pool.scope),
      config.pool,
    );
    const owner = await poolOwner(index, object, pool, connection);
    if (owner !== undefined) throw conflictError(`pool ${pool.objectId} (${pool.name})`, owner);

    const input = { object, previous: object.status, now: pass.now, oneShot: options.oneShot };
    const result = await executeIpPool(connection.api, pool, input, pass.execute).catch((error: unknown) => {
      // the list named a pool that is gone: list again next time
      if (error instanceof ReconcileError && error.reason === "PoolNotFound")
        poolLists.invalidate(connection.key);
      throw error;
    });
    const releases = result.releases.map(({ poolId, ip, note }) =>
      note === undefined ? { poolId, ip } : { poolId, ip, note },
    );
    const events = [...releases.map(releaseEvent), ...result.events];
    const draft = { events, changes: { tenantCorrections: [], releases }, planned: result.planned };
    if (result.failures.length > 0) {
      const { failure, error } = releaseFailure(result.failures);
      const { conditions, event } = failureConditions(result.status.conditions, failure, pass.context);
      const status = { ...result.status, conditions };
      return {
        ...draft,
        status,
        events: [...events, event],
        outcome: { type: "error", error, terminal: false },
      };
    }
    const interval = resync(config.syncIntervalMs);
    const requeueAfterMs = Math.min(interval, result.requeueAfterMs ?? Infinity);
    return { ...draft, status: result.status, outcome: { type: "done", requeueAfterMs } };
  }

  /** The older object whose selection resolves to the same pool as this one's, if any. */
  async function poolOwner(
    index: ConflictIndex,
    object: IPPoolAllocations,
    pool: IpPool,
    connection: ManagerConnection,
  ) {
    const lists = new Map<string, readonly IpPool[] | undefined>();
    for (const other of index.poolsOnSameManager(object)) {
      const scope = other.spec.pool.scope ?? DEFAULTS.poolScope;
      if (other.spec.pool.name === undefined || lists.has(scope)) continue;
      // an unreadable scope of another object must not block this one: its objects stay unresolved
      lists.set(scope, await poolLists.get(connection.key, connection.api, scope).catch(() => undefined));
    }
    return index.poolWinner(object, pool.objectId, (other) => {
      const { id, name, scope = DEFAULTS.poolScope } = other.spec.pool;
      if (id !== undefined) return id;
      const list = lists.get(scope);
      return list === undefined || name === undefined ? undefined : (idsByName(list).get(name) ?? undefined);
    });
  }

  function idsByName(list: readonly IpPool[]): Map<string, string | null> {
    let ids = poolIdsByName.get(list);
    if (ids === undefined) {
      ids = new Map();
      for (const pool of list) ids.set(pool.name, ids.has(pool.name) ? null : pool.objectId);
      poolIdsByName.set(list, ids);
    }
    return ids;
  }

  function paused(pass: Pass): Draft {
    const previous = pass.object.status;
    const message = `annotation nsxv.io/paused is "true": no manager calls until it is removed`;
    const conditions = setConditions(
      previous?.conditions,
      [
        { type: "Synced", status: "False", reason: "ReconcilePaused", message },
        { type: "Reconciling", remove: true },
        { type: "Stalled", remove: true },
      ],
      pass.context,
    );
    return { status: { ...previous, conditions }, outcome: { type: "done", requeueAfterMs: undefined } };
  }

  function failed(
    pass: Pass,
    error: unknown,
    base: ObjectStatus = { ...pass.object.status },
    options: { ready?: "keep" | "false" } = {},
  ): Draft {
    const failure = toFailure(error);
    const { conditions, event } = failureConditions(base.conditions, failure, pass.context, options);
    const status = { ...base, observedGeneration: pass.context.generation, conditions };
    const reported = error instanceof Error ? error : new ReconcileError({ ...failure, cause: error });
    // a conflict is settled by the other object going away: look again on the resync, not on a backoff
    const outcome: ReconcileOutcome =
      failure.reason === "Conflict"
        ? { type: "done", requeueAfterMs: resync(undefined) }
        : { type: "error", error: reported, terminal: failure.terminal };
    return { status, events: [event], outcome };
  }

  return async function reconcile(ref, callOptions = {}) {
    const object = await store.get(ref);
    if (object === undefined || object.kind !== ref.kind || object.metadata.deletionTimestamp !== undefined) {
      // gone or going: nothing on the manager is deleted (orphan); a manager's client is closed
      if (ref.kind === "NSXManager") await connections.forget(ref.namespace, ref.name);
      return toReport(ref, undefined, { outcome: { type: "done", requeueAfterMs: undefined } });
    }
    const now = new Date(clock.now());
    const pass: Pass = {
      object,
      now,
      context: { now, generation: object.metadata.generation },
      execute: { mode: options.mode, maxAttempts: options.maxAttempts, signal: callOptions.signal },
    };
    let draft: Draft;
    try {
      if (isPaused(object.metadata)) draft = paused(pass);
      else if (object.kind === "NSXManager") draft = await reconcileManager(pass, object);
      else if (object.kind === "EdgeTenant") draft = await reconcileEdgeTenant(pass, object);
      else draft = await reconcilePool(pass, object);
    } catch (error) {
      draft = failed(pass, error);
    }
    return toReport(ref, object.status, draft);
  };
}

/** What a failed check tells of the manager; a failure before any call (a Secret) tells nothing. */
function managerFacts(error: unknown): { reachable?: boolean; authenticated?: boolean } {
  if (isUnavailable(error)) return { reachable: false };
  if (error instanceof NsxApiError) return { reachable: true, authenticated: error.status !== 401 };
  // a 2xx whose body was unusable: the credentials were accepted
  if (error instanceof NsxError) return { reachable: true, authenticated: true };
  return {};
}
