/**
 * Restore on delete, pure: what deleting an EdgeTenant that holds the restore finalizer does.
 * The original tenant goes back to the edge it was read from (status.originalTenantOf), never to
 * whatever edge the spec names now, and only on the manager it was read on. Nothing is written,
 * and the object goes at once, when the object says so (Orphan now, Observe, paused, the
 * nsxv.io/skip-restore annotation), when there is nothing to restore (never corrected, or the
 * original was lost), or when another live object owns that edge now; each says why in an Event.
 */
import { formatRef, managerOfLabel, refOf, type ObjectRef } from "../../api/refs.ts";
import { SKIP_RESTORE_ANNOTATION, type EdgeTenant, type OriginalTenantSource } from "../../api/types.ts";
import type { ReconcileEvent } from "../conditions.ts";
import { findCondition } from "../conditions.ts";
import type { EdgeObservation } from "./plan.ts";
import type { KindPlan } from "../kind.ts";
import { EDGE_TENANT_REASONS, type RestoreTenantAction } from "./actions.ts";
import { allows, isPaused } from "../policy.ts";
import { resolveEdgeTenant, type EdgeTenantConfig } from "./spec.ts";

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

/** Why the object goes without a write: Normal when nothing was to be written, Warning when a remembered original is left. */
interface Skip {
  type: ReconcileEvent["type"];
  why: string;
}

/** What the rules for skipping a restore look at. */
interface RestoreContext {
  object: EdgeTenant;
  config: EdgeTenantConfig;
  /** the edge the original was read from (the spec's, for a status older than that record) */
  edgeId: string;
  original: string | undefined;
  managerPaused: boolean;
}

/** The object says no restore, asked in this order; the first that applies decides. */
const SKIP_RULES: readonly ((c: RestoreContext) => Skip | undefined)[] = [
  ({ object, original, edgeId }) => {
    if (object.metadata.annotations?.[SKIP_RESTORE_ANNOTATION] !== "true") return undefined;
    const what =
      original === undefined
        ? ""
        : ` the original tenant ${JSON.stringify(original)} of ${edgeId} is not written back;`;
    return {
      type: "Warning",
      why: `annotation ${SKIP_RESTORE_ANNOTATION} is "true":${what} the edge keeps the tenant it has`,
    };
  },
  ({ config }) =>
    config.deletionPolicy === "Restore"
      ? undefined
      : { type: "Normal", why: `deletionPolicy is ${config.deletionPolicy}` },
  ({ config }) =>
    allows(config.policy, "updateEdge")
      ? undefined
      : { type: "Normal", why: `managementPolicy ${config.policy} writes nothing, on delete either` },
  ({ object, managerPaused, edgeId }) => {
    if (!isPaused(object.metadata) && !managerPaused) return undefined;
    const whose = managerPaused ? " on its NSXManager" : "";
    return {
      type: "Warning",
      why: `annotation nsxv.io/paused is "true"${whose}: no manager calls, on delete either; ${edgeId} keeps the tenant it has`,
    };
  },
];

/** No original to write back: lost (a Warning) or never recorded, the edge never corrected. */
function unknownOriginal(object: EdgeTenant, edgeId: string): Skip {
  const lost = findCondition(object.status?.conditions, "OriginalTenantLost");
  return lost?.status === "True"
    ? { type: "Warning", why: `the original tenant of ${edgeId} is not known (${lost.message})` }
    : { type: "Normal", why: `the operator never corrected ${edgeId}: nothing to restore` };
}

/** The decision to skip: its Event says why. */
function skipped(object: EdgeTenant, { type, why }: Skip): RestoreDecision {
  return {
    type: "skip",
    event: {
      type,
      reason: type === "Normal" ? EDGE_TENANT_REASONS.RestoreSkipped : "RestoreAbandoned",
      message: `${formatRef(refOf(object))} goes without restoring a tenant: ${why}`,
    },
  };
}

/**
 * What deleting the object does, before anything is read; `owner` holds the original's edge now,
 * if anyone does; `managerPaused` when its NSXManager carries the pause annotation.
 */
export function restoreDecision(
  object: EdgeTenant,
  owner: ObjectRef | undefined,
  managerPaused = false,
): RestoreDecision {
  let config: EdgeTenantConfig;
  try {
    config = resolveEdgeTenant(object);
  } catch (error) {
    return skipped(object, { type: "Warning", why: `its spec cannot be read (${(error as Error).message})` });
  }
  const of = object.status?.originalTenantOf;
  const edgeId = of?.edgeId ?? config.edgeId;
  const original = object.status?.originalTenant;
  for (const rule of SKIP_RULES) {
    const skip = rule({ object, config, edgeId, original, managerPaused });
    if (skip !== undefined) return skipped(object, skip);
  }
  if (original === undefined) return skipped(object, unknownOriginal(object, edgeId));
  if (owner !== undefined)
    return skipped(object, {
      type: "Normal",
      why: `${edgeId} is owned by ${formatRef(owner)} now: its tenant is that object's to decide`,
    });
  return restoreOn(object, config, { tenant: original, of });
}

/** The restore, on the edge and manager the original was read on (the spec's, for a status older than that record). */
function restoreOn(
  object: EdgeTenant,
  config: EdgeTenantConfig,
  original: { tenant: string; of: OriginalTenantSource | undefined },
): RestoreDecision {
  const { of } = original;
  const edgeId = of?.edgeId ?? config.edgeId;
  const managerName = of?.manager ?? config.managerName;
  const manager = managerOfLabel(refOf(object).namespace, managerName);
  return {
    type: "restore",
    config: { ...config, edgeId, manager, managerName },
    original: original.tenant,
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
      : [{ type: "Normal", reason: EDGE_TENANT_REASONS.RestoreSkipped, message }];
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
