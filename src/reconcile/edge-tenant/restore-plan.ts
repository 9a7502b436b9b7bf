/**
 * Restore on delete, pure: what deleting an EdgeTenant that holds the restore finalizer does.
 * The original tenant goes back to the edge it was read from (status.originalTenantOf), never to
 * whatever edge the spec names now, and only on the manager it was read on. Nothing is written,
 * and the object goes at once, when the object says so (Orphan now, Observe, paused, the
 * nsxv.io/skip-restore annotation), when there is nothing to restore (never corrected, or the
 * original was lost), or when another live object owns that edge now; each says why in an Event.
 */
import { formatRef, managerOfLabel, refOf, type ObjectRef } from "../../api/refs.ts";
import { SKIP_RESTORE_ANNOTATION, type EdgeTenant } from "../../api/types.ts";
import type { ReconcileEvent } from "../conditions.ts";
import { findCondition } from "../conditions.ts";
import type { EdgeObservation } from "./plan.ts";
import type { KindPlan } from "../kind.ts";
import type { RestoreTenantAction } from "../plan.ts";
import { allows, isPaused } from "../policy.ts";
import { resolveEdgeTenant, type EdgeTenantConfig } from "../spec.ts";

export type RestoreDecision =
  /** let the object go without a write, with this event */
  | { type: "skip"; event: ReconcileEvent }
  | {
      type: "restore";
      /** the object's spec with the edge and manager the original was read on */
      config: EdgeTenantConfig;
      original: string;
      /** the manager's URL when the original was read; undefined for a status older than that record */
      managerURL: string | undefined;
    };

/**
 * What deleting the object does, before anything is read; `owner` holds the original's edge now,
 * if anyone does; `managerPaused` when its NSXManager carries the pause annotation.
 */
export function restoreDecision(
  object: EdgeTenant,
  owner: ObjectRef | undefined,
  managerPaused = false,
): RestoreDecision {
  const ref = formatRef(refOf(object));
  // Normal: nothing to restore, or none of this object's business; Warning: a remembered original is left unwritten
  const skip = (type: ReconcileEvent["type"], why: string): RestoreDecision => ({
    type: "skip",
    event: {
      type,
      reason: type === "Normal" ? "RestoreSkipped" : "RestoreAbandoned",
      message: `${ref} goes without restoring a tenant: ${why}`,
    },
  });
  let config: EdgeTenantConfig;
  try {
    config = resolveEdgeTenant(object);
  } catch (error) {
    return skip("Warning", `its spec cannot be read (${(error as Error).message})`);
  }
  const status = object.status;
  const of = status?.originalTenantOf;
  const edgeId = of?.edgeId ?? config.edgeId;
  const original = status?.originalTenant;
  if (object.metadata.annotations?.[SKIP_RESTORE_ANNOTATION] === "true") {
    const what =
      original === undefined
        ? ""
        : ` the original tenant ${JSON.stringify(original)} of ${edgeId} is not written back;`;
    return skip(
      "Warning",
      `annotation ${SKIP_RESTORE_ANNOTATION} is "true":${what} the edge keeps the tenant it has`,
    );
  }
  if (config.deletionPolicy !== "Restore")
    return skip("Normal", `deletionPolicy is ${config.deletionPolicy}`);
  if (!allows(config.policy, "updateEdge"))
    return skip("Normal", `managementPolicy ${config.policy} writes nothing, on delete either`);
  if (isPaused(object.metadata) || managerPaused) {
    const whose = managerPaused ? " on its NSXManager" : "";
    return skip(
      "Warning",
      `annotation nsxv.io/paused is "true"${whose}: no manager calls, on delete either; ${edgeId} keeps the tenant it has`,
    );
  }
  if (original === undefined) {
    const lost = findCondition(status?.conditions, "OriginalTenantLost");
    return lost?.status === "True"
      ? skip("Warning", `the original tenant of ${edgeId} is not known (${lost.message})`)
      : skip("Normal", `the operator never corrected ${edgeId}: nothing to restore`);
  }
  if (owner !== undefined)
    return skip(
      "Normal",
      `${edgeId} is owned by ${formatRef(owner)} now: its tenant is that object's to decide`,
    );
  const managerName = of?.manager ?? config.managerName;
  const manager = managerOfLabel(refOf(object).namespace, managerName);
  return {
    type: "restore",
    config: { ...config, edgeId, manager, managerName },
    original,
    managerURL: of?.managerURL,
  };
}

/**
 * The restore's plan once the edge was read (undefined when the decision was to skip).
 * `restoredByUs`: this operator wrote that restore already (its finalizer's removal lost a race,
 * and the pass runs again): the object goes with nothing more said, its Event was RestoredEdgeTenant.
 */
export function planRestore(
  decision: RestoreDecision,
  observed: EdgeObservation | undefined,
  restoredByUs = false,
): KindPlan<RestoreTenantAction> {
  if (decision.type === "skip" || observed === undefined) {
    const events = decision.type === "skip" ? [decision.event] : [];
    return { actions: [], withheld: [], settle: () => ({ events, finalized: true }) };
  }
  const { edgeId } = decision.config;
  const from = observed.tenant;
  if ((from ?? "") === decision.original) {
    const message = `${edgeId} already carries its original tenant ${JSON.stringify(decision.original)}: nothing to write`;
    const events: ReconcileEvent[] = restoredByUs
      ? []
      : [{ type: "Normal", reason: "RestoreSkipped", message }];
    return { actions: [], withheld: [], settle: () => ({ events, finalized: true }) };
  }
  const action: RestoreTenantAction = { type: "restoreTenant", edgeId, from, to: decision.original };
  return {
    actions: [action],
    withheld: [],
    // restored, or found already restored by a fresh read after a 409: the object may go
    settle: (results, failure) => ({
      events: [],
      finalized: failure === undefined && results.refused.length === 0,
    }),
  };
}
