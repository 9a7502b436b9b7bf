/**
 * The report a reconcile returns, and the pure helpers that build it: events for what changed on
 * the manager, drift found (its counter and its event), the "did the status change" comparison
 * that decides whether there is anything to write. Everything a caller does with a pass (write
 * status, record events and metrics, requeue) is read from the report, never worked out again.
 */
import type { ObjectRef } from "../api/refs.ts";
import type { NsxvObject } from "../api/types.ts";
import { EFFECTS, type ChangeListName } from "./actions.ts";
import { findCondition, managerValue, setConditions, type ReconcileEvent } from "./conditions.ts";
import { effectOf, type AnyAction, type ChangeRecord, type EffectRegistry } from "./effects.ts";
import type { ReconcileError } from "./errors.ts";
import type { DroppedAction, PlannedAction } from "./plan.ts";
import { sameJson } from "../util/same-json.ts";

export type ObjectStatus = NonNullable<NsxvObject["status"]>;

/**
 * How a pass ended: done (come back after requeueAfterMs, or only when the object changes), or
 * failed (retried after a backoff that never exceeds maxBackoffMs, the object's resync interval).
 * A retry comes back as an event; a routine come-back behind events.
 */
export type Outcome =
  | {
      type: "done";
      requeueAfterMs?: number | undefined;
      /**
       * the come-back is routine (a resync, the safety net's read, Ready's staleness check): it
       * waits behind events (a change, a new object, drift a manager's list shows)
       */
      routine?: boolean | undefined;
    }
  | { type: "failed"; error: ReconcileError; maxBackoffMs: number };

/**
 * What was changed on the manager, in the change lists the kinds declare (`tenantCorrections`,
 * `releases`: actions.ts), each change recorded as its action's effect says; every list is there,
 * empty when nothing of it changed.
 */
export type ReconcileChanges = Record<ChangeListName, ChangeRecord[]>;

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
  const changes = draft.changes ?? changesOf([]);
  const drift = driftOf(object?.status, draft.status, changes);
  return {
    ref,
    object,
    status: statusChanged(object?.status, draft.status) ? draft.status : undefined,
    events: [...(draft.events ?? []), ...drift.events],
    changes,
    driftDetected: drift.detected,
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

/** Whether the next status differs from the current one (undefined: nothing to write). */
function statusChanged(current: ObjectStatus | undefined, next: ObjectStatus | undefined): boolean {
  return next !== undefined && !sameJson(next, current ?? {});
}

/**
 * Drift this pass found where the previous status showed none: changes made, or Ready saying the
 * manager differs. A change has its own event; drift left in place (Observe, a grace period,
 * writes blocked) gets a Drifted one.
 */
function driftOf(
  current: ObjectStatus | undefined,
  next: ObjectStatus | undefined,
  changes: ReconcileChanges,
): { detected: boolean; events: ReconcileEvent[] } {
  const wasDrifted = DRIFT_REASONS.has(findCondition(current?.conditions, "Ready")?.reason ?? "");
  const ready = findCondition(next?.conditions, "Ready");
  const madeChanges = Object.values(changes).some((list) => list.length > 0);
  const detected = !wasDrifted && (madeChanges || DRIFT_REASONS.has(ready?.reason ?? ""));
  const events: ReconcileEvent[] =
    detected && !madeChanges && ready?.reason === "Drifted"
      ? [{ type: "Warning", reason: "Drifted", message: ready.message }]
      : [];
  return { detected, events };
}

/**
 * What the actions carried out changed on the manager, as the report and the metrics count it:
 * each in its effect's change list (`registry`: the built-in one but in tests of a new kind).
 */
export function changesOf(done: readonly AnyAction[], registry: EffectRegistry = EFFECTS): ReconcileChanges {
  const changes: Record<string, ChangeRecord[]> = {};
  for (const list of Object.keys(registry.changeLists)) changes[list] = [];
  for (const action of done) {
    const effect = effectOf(registry, action);
    (changes[effect.change] ??= []).push(effect.record(action));
  }
  return changes as ReconcileChanges;
}

/** The Normal event of a change made on the manager, as its effect says. */
export function changeEvent(action: AnyAction, registry: EffectRegistry = EFFECTS): ReconcileEvent {
  return effectOf(registry, action).event(action);
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
