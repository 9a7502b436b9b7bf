/**
 * The registry entry of the test-only firewall-default kind: the built-in effects (reconcile's
 * EFFECTS) and this kind's, as reconcile/actions.ts gathers a kind's in src/.
 */
import { EFFECTS } from "../../../src/reconcile/actions.ts";
import { effectRows, type EffectRegistry } from "../../../src/reconcile/effects.ts";
import { FIREWALL_DEFAULT_CHANGES, FIREWALL_DEFAULT_EFFECTS } from "./actions.ts";

export const WITH_FIREWALL_DEFAULT: EffectRegistry = {
  actions: { ...EFFECTS.actions, ...effectRows(FIREWALL_DEFAULT_EFFECTS) },
  changeLists: { ...EFFECTS.changeLists, ...FIREWALL_DEFAULT_CHANGES },
};
