/**
 * The EdgeTenant planner, pure: from the resolved spec, the manager the edge lives on, what was
 * read of the edge, the previous status and `now`, decide whether the tenant is written, and what
 * status follows from what became of that. Two rules keep Restore on delete honest:
 * - record before you act: when the run keeps status (the operator, not a one-shot `apply`),
 *   the tenant the edge carries before the first correction (and the restore finalizer, for
 *   deletionPolicy Restore) is recorded in one pass, and the correction is made in the next, so
 *   that no crash or lost answer between the write and the record loses it;
 *   In a cluster a Restore correction also waits until the NSXManager holds its Secrets against
 *   deletion (their in-use finalizer, NSXManagerStatus.heldSecrets), so that the restore can read
 *   them whatever goes first and whichever replica does it;
 * - an original belongs to one edge of one manager (`originalTenantOf`): while a Restore object
 *   remembers one, its spec may not move to another edge or manager (the pass stalls with
 *   EdgeMoved); an Orphan object that moves forgets it.
 */
import type { ObjectRef } from "../../api/refs.ts";
import type { EdgeShapeStatus, EdgeTenantStatus, OriginalTenantSource } from "../../api/types.ts";
import { formatTime } from "../../util/clock.ts";
import { boundOptional } from "../../util/bounded-text.ts";
import {
  failureUpdates,
  findCondition,
  managerValue,
  MANAGER_VALUE_MAX_LENGTH,
  setConditions,
  syncedUpdates,
  type ConditionUpdate,
  type Failure,
  type ReconcileEvent,
} from "../conditions.ts";
import type { ActionResults, KindPlan, Settled } from "../kind.ts";
import { omitUndefined } from "../../util/options.ts";
import type { SetTenantAction } from "./actions.ts";
import { allows } from "../policy.ts";
import type { EdgeTenantConfig } from "./spec.ts";

/** The parts of the edge the planner reads. */
export interface EdgeObservation {
  edgeId: string;
  name?: string | undefined;
  version?: number | undefined;
  /** undefined when the edge has no `<tenant>` */
  tenant?: string | undefined;
  /** read in full (GET), or seen in the manager's edge list: a write is planned on a read only */
  via: "read" | "list";
  /** when a list observation was made (the list's fetch); a read is made now */
  observedAtMs?: number | undefined;
  /** a full read's shape, remembered in status until the next full read */
  shape?: EdgeShapeStatus | undefined;
}

export interface EdgeTenantPlanInput {
  config: EdgeTenantConfig;
  /** the manager the edge lives on: its NSXManager's name and its normalized URL */
  manager: { name: string; url: string };
  observed: EdgeObservation;
  previous: EdgeTenantStatus | undefined;
  now: Date;
  /** metadata.generation of the object */
  generation: number | undefined;
  /** why every write is blocked (the desired state is uncertain): the correction is withheld */
  writesBlockedBy?: Failure | undefined;
  /** the run keeps status between passes (the operator): the original is recorded before the first write */
  recordsOriginal: boolean;
  /** the object holds the restore finalizer */
  finalizerPresent: boolean;
  /** why the status the object had may have been lost (a status file set aside), when it may */
  statusLost?: string | undefined;
  /** the tenant the edge list showed before this pass read the edge in full, when it looked there first */
  listedTenant?: string | undefined;
  /**
   * For a Restore object in a cluster: whether its NSXManager holds its Secrets against deletion
   * yet; while it does not, the correction waits, and the manager (`manager`) is asked to.
   * Undefined: nothing to wait for (Orphan, or Secrets of manifest files).
   */
  secretsHold?: { held: boolean; manager: ObjectRef } | undefined;
}

/** Reconciling while a recorded original waits for its correction: come back at once. */
const AT_ONCE_MS = 0;
/** Reconciling while the manager's Secrets are not held yet: its pass is asked for, come back soon. */
const HOLD_WAIT_MS = 1_000;

export function planEdgeTenant(input: EdgeTenantPlanInput): KindPlan<SetTenantAction> {
  const drift = driftOf(input);
  const moved = movedFrom(input);
  const writesBlockedBy = blockedBy(input, moved);
  const original = originalOf(input, moved);
  const lost = lostOriginal(input, original);
  const { policyWithholds, why } = withholding(input, writesBlockedBy);
  const step = stepOf(input, { drift, why, original, lost });
  // what a read shows, never a list's summary (cut as status shows it): a list's drift is read first
  const recordedNow = step === "record" && input.observed.via === "read";
  const awaitingHold = step === "awaitHold";
  const holding = awaitingHold
    ? `NSXManager ${input.manager.name} first holds its Secrets against deletion (finalizer nsxv.io/in-use), so that a restore on delete can read them whatever goes first`
    : undefined;
  const withheldWhy = why ?? (step === "record" ? RECORDING : holding);
  const recorded = recordedOriginal(input, original, recordedNow ? drift : undefined);
  const pending = recordedNow
    ? `the original tenant ${quote(drift?.from)} is recorded; the correction follows`
    : holding;
  const decision = { drift, writesBlockedBy, why: withheldWhy, pending, recorded, lost };
  // the NSXManager is asked to hold its Secrets
  const wake = awaitingHold && input.secretsHold !== undefined ? { wake: [input.secretsHold.manager] } : {};
  return {
    ...correction(drift, withheldWhy),
    observeFully: observesFully(input, { step, policyWithholds }),
    requeueAfterMs: recordedNow ? AT_ONCE_MS : awaitingHold ? HOLD_WAIT_MS : undefined,
    settle: (results, failure) => ({ ...settle(input, decision, results, failure), ...wake }),
  };
}

/** The correction made, or withheld and why. */
function correction(
  drift: SetTenantAction | undefined,
  why: string | undefined,
): Pick<KindPlan<SetTenantAction>, "actions" | "withheld"> {
  if (drift === undefined) return { actions: [], withheld: [] };
  if (why === undefined) return { actions: [drift], withheld: [] };
  return { actions: [], withheld: [{ action: drift, why }] };
}

/**
 * Why the correction is withheld whatever else: the management policy, or what blocks every write
 * (`held: …`).
 */
function withholding(
  input: EdgeTenantPlanInput,
  writesBlockedBy: Failure | undefined,
): { policyWithholds: string | undefined; why: string | undefined } {
  if (!allows(input.config.policy, "updateEdge")) {
    const policyWithholds = `managementPolicy ${input.config.policy}: not changed`;
    return { policyWithholds, why: policyWithholds };
  }
  return {
    policyWithholds: undefined,
    why: writesBlockedBy === undefined ? undefined : `held: ${writesBlockedBy.message}`,
  };
}

/**
 * The list's summary decides nothing it would write: a correction (or its record) is planned on a
 * read; and when the last pass saw drift it meant to correct (it recorded the original first, or
 * its write failed), a list that lags must not call it settled: a read does.
 */
function observesFully(
  input: EdgeTenantPlanInput,
  pass: { step: Step; policyWithholds: string | undefined },
): boolean {
  if (input.observed.via !== "list" || pass.step === "awaitHold") return false;
  const wouldAct = pass.step === "record" || pass.step === "correct";
  return wouldAct || (pass.policyWithholds === undefined && sawDriftToCorrect(input));
}

/** Why the correction waits a pass: record before you act (the original, and the finalizer Restore needs). */
const RECORDING = "the tenant it carries now is recorded first (status.originalTenant)";

/** A move under a remembered original blocks writes as an uncertain desired state does. */
function blockedBy(input: EdgeTenantPlanInput, moved: Failure | undefined): Failure | undefined {
  if (input.writesBlockedBy !== undefined) return input.writesBlockedBy;
  return input.config.deletionPolicy === "Restore" ? moved : undefined;
}

type Step = "inSync" | "withheld" | "record" | "awaitHold" | "correct";

/**
 * What this pass does about the edge: nothing (no drift), withhold the correction (`why`), record
 * the original (and the finalizer Restore needs) before the first write, wait for the NSXManager
 * to hold its Secrets, or correct.
 */
function stepOf(
  input: EdgeTenantPlanInput,
  d: {
    drift: SetTenantAction | undefined;
    why: string | undefined;
    original: OriginalRecord | undefined;
    lost: string | undefined;
  },
): Step {
  if (d.drift === undefined) return "inSync";
  if (d.why !== undefined) return "withheld";
  const unrecorded =
    d.original === undefined || (input.config.deletionPolicy === "Restore" && !input.finalizerPresent);
  if (input.recordsOriginal && d.lost === undefined && unrecorded) return "record";
  const hold = input.secretsHold;
  return hold !== undefined && !hold.held ? "awaitHold" : "correct";
}

/**
 * The original as status keeps it after this pass: the first record stays (a later pass that only
 * adds the finalizer keeps it), else the tenant the read shows when this pass records it (`recording`,
 * the drift it corrects next), on the edge and manager it acts on.
 */
function recordedOriginal(
  input: EdgeTenantPlanInput,
  original: OriginalRecord | undefined,
  recording: SetTenantAction | undefined,
): OriginalRecord | undefined {
  if (original !== undefined || recording === undefined) return original;
  return { tenant: recording.from ?? "", of: sourceOf(input) };
}

/** The previous pass of this generation found the edge drifted and did not correct it (yet). */
function sawDriftToCorrect(input: EdgeTenantPlanInput): boolean {
  const ready = findCondition(input.previous?.conditions, "Ready");
  return (
    ready !== undefined &&
    ready.observedGeneration === input.generation &&
    (ready.reason === "CorrectionPending" || ready.reason === "Drifted")
  );
}

/** An original tenant and the edge and manager it was read on. */
interface OriginalRecord {
  tenant: string;
  of: OriginalTenantSource;
}

interface Decision {
  drift: SetTenantAction | undefined;
  writesBlockedBy: Failure | undefined;
  /** why the correction is not made this pass */
  why: string | undefined;
  /** a correction on its way (the original recorded, or the Secrets being held), said by Reconciling */
  pending: string | undefined;
  /** the original as status keeps it after this pass */
  recorded: OriginalRecord | undefined;
  /** why the original is not known, when it was lost */
  lost: string | undefined;
}

function settle(
  input: EdgeTenantPlanInput,
  decision: Decision,
  results: ActionResults<SetTenantAction>,
  failure: Failure | undefined,
): Settled {
  const { observed, previous, now, generation } = input;
  const { drift, recorded } = decision;
  const corrected = drift !== undefined && results.done.length > 0;
  return {
    status: omitUndefined({
      observedGeneration: generation,
      edgeName: boundOptional(observed.name, MANAGER_VALUE_MAX_LENGTH),
      // the manager raised the version with the write, and only the next read tells the new one
      edgeVersion: corrected ? undefined : observed.version,
      // shown, and compared with the list's summary cut the same way; originalTenant is kept whole: a restore writes it back
      observedTenant: corrected ? drift.to : boundOptional(observed.tenant, MANAGER_VALUE_MAX_LENGTH),
      originalTenant: recorded?.tenant,
      originalTenantOf: recorded?.of,
      lastCorrectionTime: corrected ? formatTime(now) : previous?.lastCorrectionTime,
      ...howObserved(input),
      conditions: setConditions(previous?.conditions, conditionUpdates(input, decision, corrected, failure), {
        now,
        generation,
      }),
    }),
    events: settleEvents(previous, decision),
    notes: listNotes(input),
    ...(observed.observedAtMs !== undefined ? { observedAtMs: observed.observedAtMs } : {}),
  };
}

/** Ready, Synced, Reconciling and OriginalTenantLost after the pass. */
function conditionUpdates(
  input: EdgeTenantPlanInput,
  decision: Decision,
  corrected: boolean,
  failure: Failure | undefined,
): ConditionUpdate[] {
  const { observed } = input;
  const edge =
    observed.name === undefined ? observed.edgeId : `${observed.edgeId} (${managerValue(observed.name)})`;
  const synced = failure !== undefined ? failureUpdates(failure) : syncedUpdates(decision.writesBlockedBy);
  const updates: ConditionUpdate[] = [readyUpdate(input, decision, { edge, corrected, failure }), ...synced];
  if (decision.pending !== undefined && failure === undefined) {
    const message = `${edge}: ${decision.pending}`;
    updates.push({ type: "Reconciling", status: "True", reason: "CorrectionPending", message });
  }
  const { lost } = decision;
  updates.push(
    lost === undefined
      ? { type: "OriginalTenantLost", remove: true }
      : { type: "OriginalTenantLost", status: "True", reason: "StatusLost", message: lost },
  );
  return updates;
}

/** Ready: in sync (or corrected now), else the drift left and why. */
function readyUpdate(
  input: EdgeTenantPlanInput,
  decision: Decision,
  pass: { edge: string; corrected: boolean; failure: Failure | undefined },
): ConditionUpdate {
  const { drift } = decision;
  const { edge, failure } = pass;
  if (drift === undefined || pass.corrected) {
    const message = pass.corrected
      ? `tenant of ${edge} corrected from ${quote(drift?.from)} to ${quote(drift?.to)}`
      : `${edge} has tenant ${quote(input.config.tenant)}`;
    return { type: "Ready", status: "True", reason: "InSync", message };
  }
  const why =
    failure !== undefined
      ? `the correction failed: ${failure.message}`
      : (decision.why ?? "a correction is planned");
  const message = `${edge} has tenant ${quote(drift.from)}, spec.tenant is ${quote(drift.to)}: would set it to ${quote(drift.to)} (${why})`;
  // a correction on its way (the original recorded, the write next) is not drift left in place
  const pending = decision.pending !== undefined && failure === undefined;
  return { type: "Ready", status: "False", reason: pending ? "CorrectionPending" : "Drifted", message };
}

/** The Warnings a pass raises once, when what they tell starts. */
function settleEvents(previous: EdgeTenantStatus | undefined, decision: Decision): ReconcileEvent[] {
  const events: ReconcileEvent[] = [];
  const { writesBlockedBy: blocked, lost } = decision;
  // a move under a remembered original needs a person: said once, when it starts
  if (
    blocked?.reason === "EdgeMoved" &&
    findCondition(previous?.conditions, "Synced")?.reason !== "EdgeMoved"
  )
    events.push({ type: "Warning", reason: blocked.reason, message: blocked.message });
  if (lost !== undefined && findCondition(previous?.conditions, "OriginalTenantLost")?.status !== "True")
    events.push({ type: "Warning", reason: "StatusLost", message: lost });
  return events;
}

/** A read that shows another tenant than the edge list did: the list lags, said in the pass's notes. */
function listNotes(input: EdgeTenantPlanInput): string[] {
  const { observed, listedTenant } = input;
  if (observed.via !== "read" || listedTenant === undefined) return [];
  if (listedTenant === managerValue(observed.tenant ?? "")) return [];
  return [
    `the edge list showed ${observed.edgeId} with tenant ${quote(listedTenant)}, the read shows ${quote(observed.tenant)}: a summary that lags; the read decides`,
  ];
}

/** How the edge was observed, in status: a full read (now, and what it showed of the edge) or the list. */
function howObserved(input: EdgeTenantPlanInput): Partial<EdgeTenantStatus> {
  const { observed, previous, now } = input;
  if (observed.via === "list")
    return {
      observedVia: "EdgeList",
      lastFullReadTime: previous?.lastFullReadTime,
      edgeShape: previous?.edgeShape,
    };
  return {
    observedVia: "Read",
    lastFullReadTime: formatTime(now),
    edgeShape: observed.shape ?? previous?.edgeShape,
  };
}

/** The setTenant that would bring the edge in line, or undefined when it is; an absent `<tenant>` counts as "". */
function driftOf(input: EdgeTenantPlanInput): SetTenantAction | undefined {
  const { edgeId, tenant } = input.config;
  const from = input.observed.tenant;
  if ((from ?? "") === tenant) return undefined;
  return { type: "setTenant", edgeId, from, to: tenant };
}

/** The edge and manager this pass acts on, as an original's source. */
function sourceOf(input: EdgeTenantPlanInput): OriginalTenantSource {
  return { edgeId: input.config.edgeId, manager: input.manager.name, managerURL: input.manager.url };
}

/**
 * When the remembered original belongs to another edge or manager than the spec names now: the
 * failure that says so. A status recorded before originals were bound (no originalTenantOf)
 * belongs to the edge the spec names.
 */
function movedFrom(input: EdgeTenantPlanInput): Failure | undefined {
  const of = input.previous?.originalTenantOf;
  if (input.previous?.originalTenant === undefined || of === undefined) return undefined;
  const now = sourceOf(input);
  const changes: string[] = [];
  if (of.edgeId !== now.edgeId) changes.push(`spec.edgeId moved from ${of.edgeId} to ${now.edgeId}`);
  if (of.manager !== now.manager) changes.push(`spec.managerRef moved from ${of.manager} to ${now.manager}`);
  else if (of.managerURL !== now.managerURL)
    changes.push(`NSXManager ${now.manager} moved from ${of.managerURL} to ${now.managerURL}`);
  if (changes.length === 0) return undefined;
  const message = `${changes.join(", ")} while status.originalTenant remembers the tenant of ${of.edgeId} on ${of.managerURL} for deletionPolicy Restore: nothing is written; delete this object (it restores ${of.edgeId}) and create a new one, or move it back`;
  return { reason: "EdgeMoved", message };
}

/** The original this edge keeps: none when an Orphan object moved away from the edge it was read on. */
function originalOf(input: EdgeTenantPlanInput, moved: Failure | undefined): OriginalRecord | undefined {
  const tenant = input.previous?.originalTenant;
  if (tenant === undefined) return undefined;
  if (moved !== undefined && input.config.deletionPolicy !== "Restore") return undefined;
  return { tenant, of: input.previous?.originalTenantOf ?? sourceOf(input) };
}

/** Why the original is not known: the status it was kept in may have been lost, and none was recorded since. */
function lostOriginal(
  input: EdgeTenantPlanInput,
  original: { tenant: string } | undefined,
): string | undefined {
  if (original !== undefined) return undefined;
  const before = findCondition(input.previous?.conditions, "OriginalTenantLost");
  if (before?.status === "True") return before.message;
  if (input.statusLost === undefined) return undefined;
  return `${input.statusLost}: the tenant ${input.config.edgeId} carried before the operator's first correction is not known, so deletionPolicy Restore writes nothing on delete; recreate the object to start anew`;
}

function quote(text: string | undefined): string {
  return text === undefined ? "(none)" : JSON.stringify(managerValue(text));
}
