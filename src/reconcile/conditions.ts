/**
 * Status conditions (metav1.Condition) and the one closed list of reasons, for conditions and
 * Events alike. Ready says the declared state of the current generation holds on the manager as
 * last observed: True only when the latest observation matched the current generation's spec.
 * Synced says the last reconcile ran without error and without holding anything back
 * (Crossplane); Reconciling and Stalled are present only while True, as kstatus (Flux, Argo CD)
 * reads them. A condition keeps its lastTransitionTime while its status does not change. Every
 * failure becomes conditions and one event through `failureConditions`, so no caller repeats an
 * error block.
 */
import type { Condition, ConditionStatus } from "../api/types.ts";
import { boundText } from "../util/bounded-text.ts";
import { formatTime } from "../util/clock.ts";

/**
 * The CRDs' bound of a condition's message (characters): a status with a longer one is refused
 * whole by the API server (HTTP 422), so setConditions cuts there, whatever a message quotes.
 */
export const CONDITION_MESSAGE_MAX_LENGTH = 32_768;

/**
 * The most of one value a manager supplied (a tenant, an edge's name, an allocation's note, a
 * pool's name, a UUID, an error) that goes into status, a condition's message or an Event: a
 * manager can send anything, and one oversized value must not get every status write refused.
 * Cut with a marker and a hash of the whole (boundText), so a value recorded cut compares equal
 * to the same value cut again, and unequal to any other.
 */
export const MANAGER_VALUE_MAX_LENGTH = 1_024;

/** A value from the manager as it may go into status, a message or an Event. */
export function managerValue(text: string): string {
  return boundText(text, MANAGER_VALUE_MAX_LENGTH);
}

/** What a failed (or held) pass reports: one condition reason, one event. */
export interface Failure {
  reason: FailureReason;
  message: string;
}

export const CONDITION_TYPES = [
  "Ready",
  "Synced",
  "Reconciling",
  "Stalled",
  "PoolExhausted",
  "OriginalTenantLost",
  "Insecure",
  "EdgeListUnavailable",
] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

/**
 * Present only while True: kstatus treats their presence as the signal; Insecure,
 * OriginalTenantLost and EdgeListUnavailable are warnings, not states.
 */
const ONLY_WHILE_TRUE: ReadonlySet<string> = new Set<ConditionType>([
  "Reconciling",
  "Stalled",
  "OriginalTenantLost",
  "Insecure",
  "EdgeListUnavailable",
]);

/**
 * Reasons a failure can carry: Synced=False (and Ready, Stalled where they apply) and a Warning
 * event with the same reason. A reason says why (what a person has to fix), never which call
 * failed: a 503 needs the same fix on a GET as on a PUT, and the message names the call.
 */
export const FAILURE_REASONS = [
  "ReconcileError",
  "ManagerNotReady",
  "Conflict",
  "InvalidSpec",
  "EdgeNotFound",
  "PoolNotFound",
  "AmbiguousPool",
  "Unauthorized",
  "Unreachable",
  "ReleaseFailed",
  "ConcurrentModification",
  // the desired state is uncertain: every write is blocked (PassContext.writesBlockedBy)
  "SourceInvalid",
  "ConflictUndecided",
  // a remembered original tenant belongs to another edge or manager than the spec names now
  "EdgeMoved",
  // the credentials Secret does not name the manager's URL: its credentials are not sent there
  "CredentialsNotBound",
  // a read of an edge that is not a whole edge, or lost what its last read had: never written back
  "IncompleteEdge",
  // read twice, both reads older than the manager's edge list: never written back
  "StaleRead",
  // the object names an NSXManager of another namespace that does not allow its namespace
  "NamespaceNotAllowed",
  // the API server refused the status a pass wrote (HTTP 422 or 413): a minimal one says so
  "StatusRefused",
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/**
 * A reason only Normal Events carry, never a condition: a change made on the manager, or one
 * decided against as the pass went (RestoreSkipped, AllocationReplaced). Each kind declares its
 * own beside its actions (effects.ts, `changeReasons`); the registry (actions.ts) lists them all
 * as CHANGE_REASONS. Branded, so that an Event's reason is either one of the closed lists here
 * or one a kind declared, never a string made up on the spot.
 */
export type ChangeReason = string & { readonly changeReason: true };

/**
 * Reasons of NSXManager `Insecure=True` and of its Warning event: a connection that anyone on the
 * network path can read or change (nsx/client-options.ts, insecureTransport).
 */
export const INSECURE_REASONS = ["InsecureSkipVerify", "PlainHTTP"] as const;
export type InsecureReason = (typeof INSECURE_REASONS)[number];

/** The closed list of condition and Warning event reasons (CamelCase); the kinds' change reasons are the registry's. */
export const REASONS = [
  // Ready
  "Available",
  "InSync",
  "Drifted",
  "ReleasesPending",
  "CorrectionPending",
  // Synced
  "ReconcileSuccess",
  "ReconcilePaused",
  // PoolExhausted
  "PoolExhausted",
  "AddressesAvailable",
  // OriginalTenantLost, and its Warning
  "StatusLost",
  // a Warning: an object goes while an original it remembered is deliberately not written back
  "RestoreAbandoned",
  // a Warning: a manager's edge list could not be read; its EdgeTenants read their edges one by one
  "EdgeListUnavailable",
  ...INSECURE_REASONS,
  ...FAILURE_REASONS,
] as const;
export type Reason = (typeof REASONS)[number];

/**
 * The reasons a Warning Event carries: every failure, and drift, a full pool or an insecure
 * connection when it starts (a Normal one carries a kind's ChangeReason). An Event's reason is
 * its condition's reason, so one name finds both.
 */
export const EVENT_REASONS = [
  "Drifted",
  "PoolExhausted",
  "StatusLost",
  "RestoreAbandoned",
  "EdgeListUnavailable",
  ...INSECURE_REASONS,
  ...FAILURE_REASONS,
] as const;
/** An Event's reason: one of EVENT_REASONS, or a change reason a kind declared. */
export type EventReason = (typeof EVENT_REASONS)[number] | ChangeReason;

/** Failures that need a person: Stalled=True while they last. */
const STALLING: ReadonlySet<FailureReason> = new Set<FailureReason>([
  "InvalidSpec",
  "Conflict",
  "SourceInvalid",
  "EdgeMoved",
  "CredentialsNotBound",
  "NamespaceNotAllowed",
]);

/** Ready reasons that record an observation of the manager; the others record a failure or a pause. */
const OBSERVATION_REASONS: ReadonlySet<string> = new Set<Reason>([
  "Available",
  "InSync",
  "Drifted",
  "ReleasesPending",
  "CorrectionPending",
]);

export interface ReconcileEvent {
  type: "Normal" | "Warning";
  reason: EventReason;
  message: string;
}

export type ConditionUpdate =
  | { type: ConditionType; status: ConditionStatus; reason: Reason; message: string }
  | { type: ConditionType; remove: true };

export interface ConditionContext {
  now: Date;
  /** metadata.generation of the object, copied to each condition written */
  generation: number | undefined;
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * The previous conditions with the updates applied: a type not updated is kept as it was; an
 * updated one keeps its lastTransitionTime when its status did not change; Reconciling and
 * Stalled are dropped unless True. Order is stable (CONDITION_TYPES, then others as they were),
 * so an unchanged status compares equal and is not written again.
 */
export function setConditions(
  previous: readonly Condition[] | undefined,
  updates: readonly ConditionUpdate[],
  context: ConditionContext,
): Condition[] {
  const byType = new Map((previous ?? []).map((c) => [c.type, c]));
  for (const update of updates) {
    if ("remove" in update || (ONLY_WHILE_TRUE.has(update.type) && update.status !== "True")) {
      byType.delete(update.type);
      continue;
    }
    const old = byType.get(update.type);
    const next: Condition = {
      type: update.type,
      status: update.status,
      reason: update.reason,
      message: boundText(update.message, CONDITION_MESSAGE_MAX_LENGTH),
      lastTransitionTime: old?.status === update.status ? old.lastTransitionTime : formatTime(context.now),
    };
    if (context.generation !== undefined) next.observedGeneration = context.generation;
    byType.set(update.type, next);
  }
  const known: readonly string[] = CONDITION_TYPES;
  const ordered = CONDITION_TYPES.flatMap((type) => byType.get(type) ?? []);
  return [...ordered, ...[...byType.values()].filter((c) => !known.includes(c.type))];
}

/**
 * The previous Ready when it records an observation of the manager made for this generation:
 * the latest observation still holds, whatever this pass could not do. Undefined otherwise (a
 * new generation, a Ready set by a failure or a pause, or none).
 */
export function observedReady(
  previous: readonly Condition[] | undefined,
  generation: number | undefined,
): Condition | undefined {
  const ready = findCondition(previous, "Ready");
  if (ready === undefined || !OBSERVATION_REASONS.has(ready.reason)) return undefined;
  return ready.observedGeneration === generation ? ready : undefined;
}

/** Synced=False with the failure's reason, Stalled while it needs a person, Reconciling dropped. */
export function failureUpdates(failure: Failure): ConditionUpdate[] {
  const { reason, message } = failure;
  return [
    { type: "Synced", status: "False", reason, message },
    STALLING.has(reason)
      ? { type: "Stalled", status: "True", reason, message }
      : { type: "Stalled", remove: true },
    { type: "Reconciling", remove: true },
  ];
}

/** Synced and Stalled after a pass that observed the manager: in sync, or its writes blocked by `writesBlockedBy`. */
export function syncedUpdates(writesBlockedBy: Failure | undefined): ConditionUpdate[] {
  if (writesBlockedBy !== undefined) return failureUpdates(writesBlockedBy);
  return [
    { type: "Synced", status: "True", reason: "ReconcileSuccess", message: "" },
    { type: "Stalled", remove: true },
    { type: "Reconciling", remove: true },
  ];
}
