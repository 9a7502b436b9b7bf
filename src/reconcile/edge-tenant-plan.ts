/**
 * The EdgeTenant planner, pure: from the resolved spec, what was read of the edge, the previous
 * status and `now`, decide whether the tenant must be written and what status follows. The
 * handler calls it on the read that decides the write, and again after a 409's fresh read.
 */
import type { EdgeTenantStatus } from "../api/types.ts";
import {
  failureUpdates,
  setConditions,
  syncedUpdates,
  type ConditionUpdate,
  type Failure,
} from "./conditions.ts";
import { formatTime } from "../util/clock.ts";
import { omitUndefined, type SetTenantAction, type Withheld } from "./plan.ts";
import { allows } from "./policy.ts";
import type { EdgeTenantConfig } from "./spec.ts";

/** The parts of the edge document the planner reads. */
export interface EdgeObservation {
  edgeId: string;
  name?: string | undefined;
  version?: number | undefined;
  /** undefined when the document has no `<tenant>` */
  tenant?: string | undefined;
}

export interface EdgeTenantPlanInput {
  config: EdgeTenantConfig;
  observed: EdgeObservation;
  previous: EdgeTenantStatus | undefined;
  now: Date;
  /** metadata.generation of the object */
  generation: number | undefined;
  /** the desired state is uncertain (a manifest that does not load): the correction is withheld */
  hold?: Failure | undefined;
}

export interface EdgeTenantPlan {
  /** at most one setTenant */
  actions: SetTenantAction[];
  /** the correction not carried out this pass, and why (Observe, a hold) */
  withheld: Withheld<SetTenantAction>[];
  /** the status once `actions` are carried out */
  status: EdgeTenantStatus;
}

/** What became of the planned correction, for the status. */
export interface EdgeOutcome {
  corrected: boolean;
  /** the correction was tried and failed */
  failure?: Failure;
}

export function planEdgeTenant(input: EdgeTenantPlanInput): EdgeTenantPlan {
  const drift = driftOf(input);
  const held = drift === undefined ? undefined : heldBecause(input);
  const actions = drift === undefined || held !== undefined ? [] : [drift];
  const withheld = drift === undefined || held === undefined ? [] : [{ action: drift, why: held }];
  return { actions, withheld, status: edgeTenantStatus(input, { corrected: actions.length > 0 }) };
}

/**
 * The status after this pass: `corrected` when the setTenant was carried out, otherwise the
 * status of what was observed (Ready=False Drifted while the tenant differs, for plan mode,
 * Observe, a hold or a failed write; the message says what would change and why it did not).
 */
export function edgeTenantStatus(input: EdgeTenantPlanInput, outcome: EdgeOutcome): EdgeTenantStatus {
  const { config, observed, previous, now, generation } = input;
  const drift = driftOf(input);
  const corrected = outcome.corrected && drift !== undefined;
  const edge = observed.name === undefined ? observed.edgeId : `${observed.edgeId} (${observed.name})`;
  let ready: ConditionUpdate;
  if (drift === undefined) {
    ready = {
      type: "Ready",
      status: "True",
      reason: "InSync",
      message: `${edge} has tenant ${quote(config.tenant)}`,
    };
  } else if (corrected) {
    const message = `tenant of ${edge} corrected from ${quote(drift.from)} to ${quote(drift.to)}`;
    ready = { type: "Ready", status: "True", reason: "InSync", message };
  } else {
    const why =
      outcome.failure !== undefined
        ? `the correction failed: ${outcome.failure.message}`
        : (heldBecause(input) ?? "a correction is planned");
    const message = `${edge} has tenant ${quote(drift.from)}, spec.tenant is ${quote(drift.to)}: would set it to ${quote(drift.to)} (${why})`;
    ready = { type: "Ready", status: "False", reason: "Drifted", message };
  }
  const synced = outcome.failure !== undefined ? failureUpdates(outcome.failure) : syncedUpdates(input.hold);
  return omitUndefined({
    observedGeneration: generation,
    edgeName: observed.name,
    edgeVersion: observed.version,
    observedTenant: corrected ? drift.to : observed.tenant,
    // the first correction records what the edge carried before: what Restore writes back
    originalTenant: previous?.originalTenant ?? (corrected ? (drift.from ?? "") : undefined),
    lastCorrectionTime: corrected ? formatTime(now) : previous?.lastCorrectionTime,
    conditions: setConditions(previous?.conditions, [ready, ...synced], { now, generation }),
  });
}

/** Why a correction is not made this pass (policy, hold), or undefined when it may be. */
function heldBecause(input: EdgeTenantPlanInput): string | undefined {
  const { policy } = input.config;
  if (!allows(policy, "updateEdge")) return `managementPolicy ${policy}: not changed`;
  if (input.hold !== undefined) return `held: ${input.hold.message}`;
  return undefined;
}

/** The setTenant that would bring the edge in line, or undefined when it is; an absent `<tenant>` counts as "". */
function driftOf(input: EdgeTenantPlanInput): SetTenantAction | undefined {
  const { edgeId, tenant } = input.config;
  const from = input.observed.tenant;
  if ((from ?? "") === tenant) return undefined;
  return { type: "setTenant", edgeId, from, to: tenant };
}

function quote(text: string | undefined): string {
  return text === undefined ? "(none)" : JSON.stringify(text);
}
