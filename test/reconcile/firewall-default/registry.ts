/**
 * The registry entry of the test-only firewall-default kind: the built-in kinds' effects
 * (reconcile/actions.ts, KIND_EFFECTS) and this kind's, as its line there would add it for a kind
 * in src/.
 */
import { KIND_EFFECTS } from "../../../src/reconcile/actions.ts";
import { registryOf, type EffectRegistry } from "../../../src/reconcile/effects.ts";
import { FIREWALL_DEFAULT_EFFECTS } from "./actions.ts";

export const WITH_FIREWALL_DEFAULT: EffectRegistry = registryOf([...KIND_EFFECTS, FIREWALL_DEFAULT_EFFECTS]);
