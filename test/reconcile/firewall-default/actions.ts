/**
 * A third kind, for tests only, added by following docs/adding-a-kind.md: it sets an edge's
 * default firewall action (`<features><firewall><defaultPolicy><action>`) by the same GET and PUT
 * as an EdgeTenant. This file is its actions.ts: its action, its change list and its effects.
 * Nothing outside this folder and the registry entry (registry.ts) describes it, and the report,
 * the events, the metrics, `plan`'s output and the simulator's audit handle it all the same.
 */
import type { EventReason } from "../../../src/reconcile/conditions.ts";
import type { ActionEffects, ChangeList } from "../../../src/reconcile/effects.ts";

/** Write the default action of an edge's firewall (GET, change it, PUT the whole document). */
export interface SetFirewallDefaultAction {
  type: "setFirewallDefault";
  edgeId: string;
  from: string | undefined;
  to: string;
}

export const FIREWALL_DEFAULT_CHANGES = {
  firewallDefaults: {
    metric: {
      name: "nsxv_edge_firewall_default_corrections_total",
      help: "Edge default firewall actions the operator wrote back to the declared value",
    },
    noun: "firewall default",
  },
} as const satisfies Record<string, ChangeList>;

/**
 * A kind in src/ adds its reason to CHANGE_REASONS (reconcile/conditions.ts) and documents it in
 * docs/troubleshooting.md; a test-only kind has no page to be documented on.
 */
const REASON = "UpdatedEdgeFirewallDefault" as EventReason;

export const FIREWALL_DEFAULT_EFFECTS: ActionEffects<SetFirewallDefaultAction> = {
  setFirewallDefault: {
    change: "firewallDefaults",
    record: ({ edgeId, from, to }) => ({ edgeId, from, to }),
    event: (action) => ({
      type: "Normal",
      reason: REASON,
      message: `default firewall action of ${action.edgeId} changed from ${action.from ?? "(none)"} to ${action.to}`,
    }),
    target: (action) => action.edgeId,
    cli: (action) => ({
      sign: "~",
      subject: ["firewall default: ", { quoted: action.from }, " → ", { quoted: action.to }],
      done: "corrected",
      observed: "(observe only: not changed)",
      notDone: "not changed",
    }),
    edgeFields: ["features.firewall.defaultPolicy.action"],
  },
};
