/**
 * The EdgeTenant planner, pure: from the object, what was read of the edge, the previous status
 * and `now`, decide whether the tenant must be written and what status follows. The executor
 * calls it twice when it writes (on the first read and again on the read right before the PUT).
 */
import type { EdgeTenant, EdgeTenantStatus } from "../api/types.ts";
import { formatTime, setConditions, type ConditionUpdate } from "./conditions.ts";
import { omitUndefined, type SetTenantAction, type Withheld } from "./plan.ts";
import { allows } from "./policy.ts";
import { resolveEdgeTenant } from "./spec.ts";

/** The parts of the edge document the planner reads. */
export interface EdgeObservation {
  edgeId: string;
  name?: string | undefined;
  version?: number | undefined;
  /** undefined when the document has no `<tenant>` */
  tenant?: string | undefined;
}

export interface EdgeTenantPlanInput {
  object: EdgeTenant;
  observed: EdgeObservation;
  previous: EdgeTenantStatus | undefined;
  now: Date;
}

export interface EdgeTenantPlan {
  /** at most one setTenant */
  actions: SetTenantAction[];
  /** the correction the policy does not allow (Observe) */
  withheld: Withheld<SetTenantAction>[];
  /** the status once `actions` are carried out */
  status: EdgeTenantStatus;
}

export function planEdgeTenant(input: EdgeTenantPlanInput): EdgeTenantPlan {
  const config = resolveEdgeTenant(input.object);
  const drift = driftOf(input);
  if (drift === undefined)
    return { actions: [], withheld: [], status: edgeTenantStatus(input, { corrected: false }) };
  if (!allows(config.policy, "updateEdge")) {
    const why = `managementPolicy ${config.policy}: the tenant is not changed`;
    return {
      actions: [],
      withheld: [{ action: drift, why }],
      status: edgeTenantStatus(input, { corrected: false }),
    };
  }
  return { actions: [drift], withheld: [], status: edgeTenantStatus(input, { corrected: true }) };
}

/**
 * The status after this pass: `corrected` when the setTenant was carried out, otherwise the
 * status of what was observed (Ready=False Drifted while the tenant differs, for plan mode and
 * Observe; the message says what would change).
 */
export function edgeTenantStatus(
  input: EdgeTenantPlanInput,
  outcome: { corrected: boolean },
): EdgeTenantStatus {
  const { object, observed, previous, now } = input;
  const drift = driftOf(input);
  const corrected = outcome.corrected && drift !== undefined;
  const config = resolveEdgeTenant(object);
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
    const held = allows(config.policy, "updateEdge")
      ? "a correction is planned"
      : `managementPolicy ${config.policy}: not changed`;
    const message = `${edge} has tenant ${quote(drift.from)}, spec.tenant is ${quote(drift.to)}: would set it to ${quote(drift.to)} (${held})`;
    ready = { type: "Ready", status: "False", reason: "Drifted", message };
  }
  const generation = object.metadata.generation;
  return omitUndefined({
    observedGeneration: generation,
    edgeName: observed.name,
    edgeVersion: observed.version,
    observedTenant: corrected ? drift.to : observed.tenant,
    lastCorrectionTime: corrected ? formatTime(now) : previous?.lastCorrectionTime,
    conditions: setConditions(
      previous?.conditions,
      [
        ready,
        { type: "Synced", status: "True", reason: "ReconcileSuccess", message: "" },
        { type: "Stalled", remove: true },
        { type: "Reconciling", remove: true },
      ],
      { now, generation },
    ),
  });
}

/** The setTenant that would bring the edge in line, or undefined when it is; an absent `<tenant>` counts as "". */
function driftOf(input: EdgeTenantPlanInput): SetTenantAction | undefined {
  const { edgeId, tenant } = resolveEdgeTenant(input.object);
  const from = input.observed.tenant;
  if ((from ?? "") === tenant) return undefined;
  return { type: "setTenant", edgeId, from, to: tenant };
}

function quote(text: string | undefined): string {
  return text === undefined ? "(none)" : JSON.stringify(text);
}
