/**
 * The report a reconcile returns, and the pure helpers that build it: events for what changed on
 * the manager, the one failure a pass of releases reports, and the "did the status change"
 * comparison that decides whether there is anything to write.
 */
import type { NsxvObject } from "../api/types.ts";
import type { ReconcileEvent } from "./conditions.ts";
import { ReconcileError, toFailure, type Failure } from "./errors.ts";
import type { ReleaseFailure } from "./executor.ts";
import type { PlannedAction } from "./plan.ts";
import { formatRef, type ObjectRef } from "./store.ts";

export type ObjectStatus = NonNullable<NsxvObject["status"]>;

export type ReconcileOutcome =
  | {
      type: "done";
      /** come back after this long; undefined: only when the object changes */
      requeueAfterMs: number | undefined;
    }
  | {
      type: "error";
      error: Error;
      /** retry only when the object changes */
      terminal: boolean;
      /** when set, come back after this long rather than after the key's backoff */
      requeueAfterMs?: number;
    };

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

export interface ReconcileReport {
  ref: ObjectRef;
  /** the next status; undefined when it equals the current one (nothing to write) */
  status: ObjectStatus | undefined;
  events: ReconcileEvent[];
  /** what was changed on the manager (for metrics) */
  changes: ReconcileChanges;
  /** every action decided, withheld ones (Observe, grace period, ...) with why: `plan` prints it */
  planned: PlannedAction[];
  outcome: ReconcileOutcome;
}

/** A report before the comparison with the current status; absent fields are empty. */
export interface Draft {
  /** undefined: nothing to write (the object is gone) */
  status?: ObjectStatus;
  events?: ReconcileEvent[];
  changes?: ReconcileChanges;
  planned?: PlannedAction[];
  outcome: ReconcileOutcome;
}

export function toReport(ref: ObjectRef, current: ObjectStatus | undefined, draft: Draft): ReconcileReport {
  const changed =
    draft.status !== undefined &&
    JSON.stringify(canonical(draft.status)) !== JSON.stringify(canonical(current ?? {}));
  return {
    ref,
    status: changed ? draft.status : undefined,
    events: draft.events ?? [],
    changes: draft.changes ?? { tenantCorrections: [], releases: [] },
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

/**
 * The one failure of a pass whose releases did not all succeed: the reason of the call that
 * threw (it ended the pass: Unreachable, Unauthorized, ConcurrentModification, ...), otherwise
 * ReleaseFailed; the message names every address that was not released.
 */
export function releaseFailure(failures: readonly ReleaseFailure[]): { failure: Failure; error: Error } {
  const thrown = failures.find((f) => f.error !== undefined)?.error;
  const message = failures.map((f) => f.message).join("; ");
  const failure: Failure =
    thrown === undefined
      ? { reason: "ReleaseFailed", message, terminal: false }
      : { ...toFailure(thrown), message };
  return {
    failure,
    error: thrown instanceof Error ? thrown : new ReconcileError({ ...failure, cause: thrown }),
  };
}

/** The Conflict error of an object that does not own its target. */
export function conflictError(target: string, winner: ObjectRef): ReconcileError {
  const message = `${target} is owned by ${formatRef(winner)}, which is older; this object acts on nothing until that one is gone`;
  return new ReconcileError({ reason: "Conflict", message });
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
