/**
 * The registry of effects: every kind's actions gathered, one row per action type (effects.ts
 * says what a row holds). `EFFECTS` must have a row for each type of the `Action` union
 * (plan.ts): an action a kind adds without describing it does not compile, rather than being
 * counted, announced and printed as some other change.
 */
import { EDGE_TENANT_CHANGES, EDGE_TENANT_EFFECTS } from "./edge-tenant/actions.ts";
import { effectRows, type ActionEffects, type EffectRegistry } from "./effects.ts";
import { IP_POOL_CHANGES, IP_POOL_EFFECTS } from "./ip-pool/actions.ts";
import type { Action } from "./plan.ts";

const ROWS: ActionEffects<Action> = { ...EDGE_TENANT_EFFECTS, ...IP_POOL_EFFECTS };

const CHANGE_LISTS = { ...EDGE_TENANT_CHANGES, ...IP_POOL_CHANGES };

/** The change lists of a report, by name (`tenantCorrections`, `releases`). */
export type ChangeListName = keyof typeof CHANGE_LISTS;

/** The built-in registry: the operator's, the CLI's and the simulator's. */
export const EFFECTS: EffectRegistry = Object.freeze({
  actions: Object.freeze(effectRows(ROWS)),
  changeLists: Object.freeze(CHANGE_LISTS),
});
