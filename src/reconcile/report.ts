/**
 * The report a reconcile returns, and the pure helpers that build it: events for what changed on
 * the manager, drift found (its counter and its event), the "did the status change" comparison
 * that decides whether there is anything to write. Everything a caller does with a pass (write
 * status, record events and metrics, requeue) is read from the report, never worked out again.
 */
import type { ObjectRef } from "../api/refs.ts";
import type { NsxvObject } from "../api/types.ts";
import { findCondition, managerValue, setConditions, type ReconcileEvent } from "./conditions.ts";
import { omitUndefined } from "../util/options.ts";
import type { ReconcileError } from "./errors.ts";
import type { Action, DroppedAction, PlannedAction } from "./plan.ts";

export type ObjectStatus = NonNullable<NsxvObject["status"]>;

/**
 * How a pass ended: done (come back after requeueAfterMs, or only when the object changes), or
 * failed (retried after a backoff that never exceeds maxBackoffMs, the object's resync interval).
 */
export type Outcome =
  | { type: "done"; requeueAfterMs?: number | undefined }
  | { type: "failed"; error: ReconcileError; maxBackoffMs: number };

export interface TenantCorrection {
  edgeId: string;
  from: string | undefined;
  to: string;
}

export interface Release {
  poolId: string;
  ip: string;
  /** the allocation released: its id (when the manager lists one) and note */
  allocationId?: string;
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

/** Add (`present`) or remove the in-use finalizer of a Secret an NSXManager reads. */
export interface SecretFinalizerChange {
  namespace: string;
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
  /** objects to reconcile now: a dependent's manager whose call failed, the EdgeTenants its edge list shows drifted */
  wake: ObjectRef[];
  /** facts worth a debug line (a summary a read did not confirm) */
  notes: string[];
  /** the kind's finalizer to add to or remove from the object, when that must change */
  finalizer: FinalizerChange | undefined;
  /** Secrets whose in-use finalizer must change (an NSXManager's, held while a restore may need them): before the status says so */
  secretFinalizers: SecretFinalizerChange[];
  /** in a Conflict, the object that owns the edge or pool this one names */
  conflictOwner: ObjectRef | undefined;
  /** every action decided, withheld ones (Observe, grace period, ...) with why: `plan` prints it */
  planned: PlannedAction[];
  /** planned actions a fresh read dropped, with why, where the kind tells (a replaced allocation) */
  dropped: DroppedAction[];
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
  notes?: string[];
  finalizer?: FinalizerChange;
  secretFinalizers?: SecretFinalizerChange[];
  conflictOwner?: ObjectRef;
  planned?: PlannedAction[];
  dropped?: DroppedAction[];
  /** a deleting object's pass is done with it: its finalizer may go */
  finalized?: boolean | undefined;
  outcome: Outcome;
}

/** Ready reasons that mean the manager differs from the declared state. */
const DRIFT_REASONS: ReadonlySet<string> = new Set(["Drifted", "ReleasesPending", "CorrectionPending"]);

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
  // a correction has its own event; drift left in place (Observe, grace period, writes blocked) gets this one
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
    notes: draft.notes ?? [],
    finalizer: draft.finalizer,
    secretFinalizers: draft.secretFinalizers ?? [],
    conflictOwner: draft.conflictOwner,
    planned: draft.planned ?? [],
    dropped: draft.dropped ?? [],
    outcome: draft.outcome,
  };
}

/** What the actions carried out changed on the manager, as the report and the metrics count it. */
export function changesOf(done: readonly Action[]): ReconcileChanges {
  const changes: ReconcileChanges = { tenantCorrections: [], releases: [] };
  for (const action of done) {
    if (action.type === "releaseAddress") {
      const { poolId, ip, allocationId, note } = action;
      changes.releases.push(omitUndefined({ poolId, ip, allocationId, note }));
    } else changes.tenantCorrections.push({ edgeId: action.edgeId, from: action.from, to: action.to });
  }
  return changes;
}

/** The Normal event of each change made on the manager. */
export function changeEvent(action: Action): ReconcileEvent {
  if (action.type === "releaseAddress") {
    const note = action.note === undefined ? "" : ` (note ${JSON.stringify(managerValue(action.note))})`;
    const message = `released ${action.ip} from pool ${action.poolId}${note}`;
    return { type: "Normal", reason: "ReleasedAddress", message };
  }
  const from = action.from === undefined ? "(none)" : JSON.stringify(managerValue(action.from));
  const to = JSON.stringify(managerValue(action.to));
  return action.type === "restoreTenant"
    ? {
        type: "Normal",
        reason: "RestoredEdgeTenant",
        message: `tenant of ${action.edgeId} restored from ${from} to ${to} before the object goes`,
      }
    : {
        type: "Normal",
        reason: "UpdatedEdgeTenant",
        message: `tenant of ${action.edgeId} changed from ${from} to ${to}`,
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
 * The status to write when the one a pass wrote was refused as invalid (`why`: the store's
 * reason): the status the object had, which the next pass needs and nothing here loses, with
 * Synced=False saying so. A pass whose record was refused made no write that needed it (record
 * before you act), and the object is retried: it never freezes on a status it cannot store.
 */
export function statusAfterRefusal(object: NsxvObject | undefined, why: string, now: Date): ObjectStatus {
  const previous = object?.status;
  const message = `the API server refused the status this pass wrote (${managerValue(why)}): what it observed is not recorded, and nothing that needed a record first was written to the manager; the object is reconciled again after a backoff`;
  const conditions = setConditions(
    previous?.conditions,
    [{ type: "Synced", status: "False", reason: "StatusRefused", message }],
    { now, generation: object?.metadata.generation },
  );
  return { ...previous, conditions };
}
