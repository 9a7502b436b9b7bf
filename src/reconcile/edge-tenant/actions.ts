/**
 * The EdgeTenant kind's actions, and what each does as the rest of the operator sees it (reconcile/effects.ts):
 * a correction writes `<tenant>` (GET, change it, PUT the whole document), a restore writes back the
 * tenant the edge carried before the first correction. Both are counted as tenant corrections.
 * Pure data, registered in reconcile/actions.ts.
 */
import type { EdgeTenant } from "../../api/types.ts";
import { managerValue } from "../conditions.ts";
import { changeReasons, type ActionEffects, type CliLine, type KindEffects } from "../effects.ts";

/** Write the tenant of an edge (GET, change `<tenant>`, PUT the whole document). */
export interface SetTenantAction {
  type: "setTenant";
  edgeId: string;
  /** undefined when the edge document has no `<tenant>` */
  from: string | undefined;
  to: string;
}

/** Write back the tenant an edge carried before the first correction (deleting with deletionPolicy Restore). */
export interface RestoreTenantAction {
  type: "restoreTenant";
  edgeId: string;
  /** undefined when the edge document has no `<tenant>` */
  from: string | undefined;
  to: string;
}

export type EdgeTenantAction = SetTenantAction | RestoreTenantAction;

/** The reasons of its Normal events (RestoreSkipped: an object goes with nothing of ours to restore). */
export const EDGE_TENANT_REASONS = changeReasons("UpdatedEdgeTenant", "RestoredEdgeTenant", "RestoreSkipped");

const quoted = (tenant: string | undefined) =>
  tenant === undefined ? "(none)" : JSON.stringify(managerValue(tenant));

const tenantLine = (action: EdgeTenantAction): CliLine => ({
  sign: "~",
  subject: ["tenant: ", { quoted: action.from }, " → ", { quoted: action.to }],
  done: "corrected",
  observed: "(observe only: not changed)",
  notDone: "not changed",
});

const tenantRecord = ({ edgeId, from, to }: EdgeTenantAction) => ({ edgeId, from, to });

const EFFECTS: ActionEffects<EdgeTenantAction> = {
  setTenant: {
    change: "tenantCorrections",
    record: tenantRecord,
    event: (action) => ({
      type: "Normal",
      reason: EDGE_TENANT_REASONS.UpdatedEdgeTenant,
      message: `tenant of ${action.edgeId} changed from ${quoted(action.from)} to ${quoted(action.to)}`,
    }),
    target: (action) => action.edgeId,
    cli: tenantLine,
    edgeFields: ["tenant"],
  },
  restoreTenant: {
    change: "tenantCorrections",
    record: tenantRecord,
    event: (action) => ({
      type: "Normal",
      reason: EDGE_TENANT_REASONS.RestoredEdgeTenant,
      message: `tenant of ${action.edgeId} restored from ${quoted(action.from)} to ${quoted(action.to)} before the object goes`,
    }),
    target: (action) => action.edgeId,
    cli: tenantLine,
    edgeFields: ["tenant"],
  },
};

export const EDGE_TENANT_EFFECTS: KindEffects<EdgeTenantAction, "tenantCorrections", EdgeTenant> = {
  kind: "EdgeTenant",
  actions: EFFECTS,
  changeLists: {
    tenantCorrections: {
      metric: {
        name: "nsxv_edge_tenant_corrections_total",
        help: "Edge tenant values the operator wrote back to the declared value",
      },
      noun: "tenant correction",
    },
  },
  changeReasons: Object.values(EDGE_TENANT_REASONS),
  view: {
    target: (object, status) => {
      // the edge list's summary has both: plan shows them without reading the edge
      const { edgeName, edgeVersion } = status ?? {};
      const about = [edgeName, edgeVersion === undefined ? undefined : `version ${edgeVersion}`].filter(
        (part) => part !== undefined,
      );
      return about.length === 0 ? object.spec.edgeId : `${object.spec.edgeId} (${about.join(", ")})`;
    },
    claimed: (object) => `edge ${object.spec.edgeId}`,
    observedVia: (status) => status?.observedVia,
  },
};
