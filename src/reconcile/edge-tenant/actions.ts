/**
 * The EdgeTenant kind's actions, and what each does as the rest of the operator sees it (reconcile/effects.ts):
 * a correction writes `<tenant>` (GET, change it, PUT the whole document), a restore writes back the
 * tenant the edge carried before the first correction. Both are counted as tenant corrections.
 */
import { managerValue } from "../conditions.ts";
import type { ActionEffects, ChangeList, CliLine } from "../effects.ts";

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

export const EDGE_TENANT_CHANGES = {
  tenantCorrections: {
    metric: {
      name: "nsxv_edge_tenant_corrections_total",
      help: "Edge tenant values the operator wrote back to the declared value",
    },
    noun: "tenant correction",
  },
} as const satisfies Record<string, ChangeList>;

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

export const EDGE_TENANT_EFFECTS: ActionEffects<EdgeTenantAction> = {
  setTenant: {
    change: "tenantCorrections",
    record: tenantRecord,
    event: (action) => ({
      type: "Normal",
      reason: "UpdatedEdgeTenant",
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
      reason: "RestoredEdgeTenant",
      message: `tenant of ${action.edgeId} restored from ${quoted(action.from)} to ${quoted(action.to)} before the object goes`,
    }),
    target: (action) => action.edgeId,
    cli: tenantLine,
    edgeFields: ["tenant"],
  },
};
