/**
 * A third kind, for tests only, added by following docs/adding-a-kind.md: it sets an edge's
 * default firewall action (`<features><firewall><defaultPolicy><action>`) by the same GET and PUT
 * as an EdgeTenant. This file is its actions.ts: its action, its change list and its effects.
 * Nothing outside this folder and the registry entry (registry.ts) describes it, and the report,
 * the events, the metrics, `plan`'s output and the simulator's audit handle it all the same.
 */
import type { EdgeTenant } from "../../../src/api/types.ts";
import { changeReasons, type KindEffects } from "../../../src/reconcile/effects.ts";

/** Write the default action of an edge's firewall (GET, change it, PUT the whole document). */
export interface SetFirewallDefaultAction {
  type: "setFirewallDefault";
  edgeId: string;
  from: string | undefined;
  to: string;
}

/** A kind in src/ documents its reasons in docs/troubleshooting.md; a test-only kind has no page to be documented on. */
const REASONS = changeReasons("UpdatedEdgeFirewallDefault");

export const FIREWALL_DEFAULT_EFFECTS: KindEffects<SetFirewallDefaultAction, "firewallDefaults", EdgeTenant> =
  {
    // its objects are EdgeTenant-shaped (handler.ts), but a kind of its own
    kind: "FirewallDefault",
    actions: {
      setFirewallDefault: {
        change: "firewallDefaults",
        record: ({ edgeId, from, to }) => ({ edgeId, from, to }),
        event: (action) => ({
          type: "Normal",
          reason: REASONS.UpdatedEdgeFirewallDefault,
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
    },
    changeLists: {
      firewallDefaults: {
        metric: {
          name: "nsxv_edge_firewall_default_corrections_total",
          help: "Edge default firewall actions the operator wrote back to the declared value",
        },
        noun: "firewall default",
      },
    },
    changeReasons: Object.values(REASONS),
    view: { target: (object) => object.spec.edgeId, claimed: (object) => `edge ${object.spec.edgeId}` },
  };
