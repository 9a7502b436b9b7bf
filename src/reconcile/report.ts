/**
 * The report a reconcile returns, and the pure helpers that build it: events for what changed on
 * the manager, drift found (its counter and its event), the "did the status change" comparison
 * that decides whether there is anything to write. Everything a caller does with a pass (write
 * status, record events and metrics, requeue) is read from the report, never worked out again.
 */
import type { ObjectRef } from "../api/refs.ts";
import type { NsxvObject } from "../api/types.ts";
import {
  failureConditions,
  findCondition,
  type ConditionContext,
  type ConditionUpdate,
  type ReconcileEvent,
} from "./conditions.ts";
import type { ReconcileError } from "./errors.ts";
import type { PlannedAction } from "./plan.ts";

export type ObjectStatus = NonNullable<NsxvObject["status"]>;

/** How a pass ended: done (come back after requeueAfterMs, or only when the object changes), or failed. */
export type Outcome =
  { type: "done"; requeueAfterMs?: number | undefined } | { type: "failed"; error: ReconcileError };

export interface TenantCorrection {
  edgeId: string;
  from: string | undefined;
  to: string;
}

export interface Release {
  poolId: string;
  ip: string;
  note?: string;
}

export interface ReconcileChanges {
  tenantCorrections: TenantCorrection[];
  releases: Release[];
}

/** A pool as this pass observed it: what its gauges show. */
export interface PoolUsage {
  poolId: string;
  usedAddressCount: number;
  totalAddressCount: number;
  strays: number;
}

/** Add a finalizer (the object wants its deletion held: `present`) or remove it (nothing left to do on delete). */
export interface FinalizerChange {
  name: string;
  present: boolean;
}

export interface ReconcileReport {
  ref: ObjectRef;
  /** the object as this pass read it (the one read of the pass); undefined when it is gone */
  object: NsxvObject | undefined;
  /** the next status; undefined when it equals the current one (nothing to write) */
  status: ObjectStatus | undefined;
  events: ReconcileEvent[];
  /** what was changed on the manager */
  changes: ReconcileChanges;
  /** this pass found drift where the previous status showed none */
  driftDetected: boolean;
  /** the pool of an IPPoolAllocations, when this pass observed it */
  pool: PoolUsage | undefined;
  /** NSXManagers to check now: a dependent's call was refused (401/403) */
  wake: ObjectRef[];
  /** the kind's finalizer to add to or remove from the object, when that must change */
  finalizer: FinalizerChange | undefined;
  /** in a Conflict, the object that owns the edge or pool this one names */
  conflictOwner: ObjectRef | undefined;
  /** every action decided, withheld ones (Observe, grace period, ...) with why: `plan` prints it */
  planned: PlannedAction[];
  outcome: Outcome;
}

/** A report before the comparison with the current status; absent fields are empty. */
export interface Draft {
  /** undefined: nothing to write */
  status?: ObjectStatus | undefined;
  events?: ReconcileEvent[];
  changes?: ReconcileChanges;
  pool?: PoolUsage;
  wake?: ObjectRef[];
  finalizer?: FinalizerChange;
  conflictOwner?: ObjectRef;
  planned?: PlannedAction[];
  outcome: Outcome;
}

/** Ready reasons that mean the manager differs from the declared state. */
const DRIFT_REASONS: ReadonlySet<string> = new Set(["Drifted", "ReleasesPending"]);

export function toReport(ref: ObjectRef, object: NsxvObject | undefined, draft: Draft): ReconcileReport {
  const current = object?.status;
  const changed =
    draft.status !== undefined &&
    JSON.stringify(canonical(draft.status)) !== JSON.stringify(canonical(current ?? {}));
  const changes = draft.changes ?? { tenantCorrections: [], releases: [] };
  const events = [...(draft.events ?? [])];
  const wasDrifted = DRIFT_REASONS.has(findCondition(current?.conditions, "Ready")?.reason ?? "");
  const ready = findCondition(draft.status?.conditions, "Ready");
  const madeChanges = changes.tenantCorrections.length > 0 || changes.releases.length > 0;
  const driftDetected = !wasDrifted && (madeChanges || DRIFT_REASONS.has(ready?.reason ?? ""));
  // a correction has its own event; drift left in place (Observe, grace period, a hold) gets this one
  if (driftDetected && !madeChanges && ready?.reason === "Drifted") {
    events.push({ type: "Warning", reason: "Drifted", message: ready.message });
  }
  return {
    ref,
    object,
    status: changed ? draft.status : undefined,
    events,
    changes,
    driftDetected,
    pool: draft.pool,
    wake: draft.wake ?? [],
    finalizer: draft.finalizer,
    conflictOwner: draft.conflictOwner,
    planned: draft.planned ?? [],
    outcome: draft.outcome,
  };
}

export function correctionEvent(c: TenantCorrection): ReconcileEvent {
  const from = c.from === undefined ? "(none)" : JSON.stringify(c.from);
  return {
    type: "Normal",
    reason: "UpdatedEdgeTenant",
    message: `tenant of ${c.edgeId} changed from ${from} to ${JSON.stringify(c.to)}`,
  };
}

export function releaseEvent(r: Release): ReconcileEvent {
  const note = r.note === undefined ? "" : ` (note ${JSON.stringify(r.note)})`;
  return {
    type: "Normal",
    reason: "ReleasedAddress",
    message: `released ${r.ip} from pool ${r.poolId}${note}`,
  };
}

/** JSON with object keys sorted and undefined dropped, so that key order does not count as a change */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, canonical(v)]),
  );
}

/**
 * The draft of a pass that failed: the status it had (or `base`, what the pass learnt before it
 * failed) with the failure's conditions (see failureConditions for Ready) and its event. A
 * Conflict is settled by the other object going away, which queues this one again (the sources
 * see to it): it is a done pass that looks again after `resyncMs`, not a retry with backoff.
 */
export function failedDraft(
  pass: { object: NsxvObject; context: ConditionContext },
  error: ReconcileError,
  options: { base?: ObjectStatus; ready?: ConditionUpdate; resyncMs: number },
): Draft {
  const base = options.base ?? { ...pass.object.status };
  const { conditions, event } = failureConditions(base.conditions, error, pass.context, options.ready);
  const status = { ...base, observedGeneration: pass.context.generation, conditions };
  if (error.reason === "Conflict") {
    const owner = error.owner === undefined ? {} : { conflictOwner: error.owner };
    return { status, events: [event], outcome: { type: "done", requeueAfterMs: options.resyncMs }, ...owner };
  }
  return { status, events: [event], outcome: { type: "failed", error } };
}
