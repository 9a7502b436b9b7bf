/**
 * The registry of effects (reconcile/effects.ts, registryOf): what the kinds' lines in actions.ts
 * make of their declarations, and the bugs it says at once rather than letting a later kind
 * silently replace an earlier one's row.
 */
import { describe, expect, it } from "vitest";
import { KINDS } from "../../src/api/types.ts";
import { CHANGE_REASONS, EFFECTS, KIND_EFFECTS } from "../../src/reconcile/actions.ts";
import { changeReasons, kindViewOf, registryOf, type KindEffects } from "../../src/reconcile/effects.ts";
import { FIREWALL_DEFAULT_EFFECTS } from "./firewall-default/actions.ts";

describe("registryOf", () => {
  it("gathers the kinds' actions, change lists (in the kinds' order), reasons and views", () => {
    expect(Object.keys(EFFECTS.actions).sort()).toEqual(["releaseAddress", "restoreTenant", "setTenant"]);
    // the order of the report's lists, of plan's summary and of the counters
    expect(Object.keys(EFFECTS.changeLists)).toEqual(["tenantCorrections", "releases"]);
    expect([...CHANGE_REASONS].sort()).toEqual([
      "AllocationReplaced",
      "ReleasedAddress",
      "RestoreSkipped",
      "RestoredEdgeTenant",
      "UpdatedEdgeTenant",
    ]);
    // a kind of KINDS whose effects are not registered would fail plan's output on its first object
    expect(Object.keys(EFFECTS.views).sort()).toEqual([...KINDS].sort());
  });

  it.each([
    {
      reason: "a second kind of the same name",
      twin: { ...FIREWALL_DEFAULT_EFFECTS, kind: "EdgeTenant" },
      message: /two kinds declare the kind EdgeTenant/,
    },
    {
      reason: "an action type another kind declared",
      twin: {
        ...FIREWALL_DEFAULT_EFFECTS,
        actions: { setTenant: FIREWALL_DEFAULT_EFFECTS.actions.setFirewallDefault },
      },
      message: /two kinds declare the action type setTenant/,
    },
    {
      reason: "a change list another kind declared",
      twin: {
        ...FIREWALL_DEFAULT_EFFECTS,
        changeLists: { releases: FIREWALL_DEFAULT_EFFECTS.changeLists.firewallDefaults },
      },
      message: /two kinds declare the change list releases/,
    },
    {
      reason: "a change reason another kind declared",
      twin: { ...FIREWALL_DEFAULT_EFFECTS, changeReasons: Object.values(changeReasons("ReleasedAddress")) },
      message: /two kinds declare the change reason ReleasedAddress/,
    },
  ])("refuses $reason", ({ twin, message }) => {
    expect(() => registryOf([...KIND_EFFECTS, twin as KindEffects<never, string, never>])).toThrow(message);
  });

  it("says at once that no kind shows an object of an unregistered kind", () => {
    expect(() => kindViewOf(EFFECTS, "FirewallDefault")).toThrow(
      /no kind registers how to show a FirewallDefault/,
    );
    expect(kindViewOf(registryOf([...KIND_EFFECTS, FIREWALL_DEFAULT_EFFECTS]), "FirewallDefault")).toBe(
      FIREWALL_DEFAULT_EFFECTS.view,
    );
  });
});
