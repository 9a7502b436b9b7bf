/**
 * The registry of effects: every kind's effects (its actions.ts: pure data, no handler), one line
 * per kind. The `Action` union, the change lists' names and the change reasons are derived from
 * it, so a kind's actions are registered by this line alone: an action a kind adds without
 * describing it does not compile, rather than being counted, announced and printed as some other
 * change. The kinds' modules (their handlers) are registered in kinds.ts.
 */
import { EDGE_TENANT_EFFECTS } from "./edge-tenant/actions.ts";
import { registryOf, type ActionOf, type ChangeListOf, type EffectRegistry } from "./effects.ts";
import { IP_POOL_EFFECTS } from "./ip-pool/actions.ts";
import { NSX_MANAGER_EFFECTS } from "./nsx-manager/actions.ts";

export const KIND_EFFECTS = [NSX_MANAGER_EFFECTS, EDGE_TENANT_EFFECTS, IP_POOL_EFFECTS] as const;

type Registered = (typeof KIND_EFFECTS)[number];

/** Every kind's actions. */
export type Action = ActionOf<Registered>;

/** The change lists of a report, by name (`tenantCorrections`, `releases`). */
export type ChangeListName = ChangeListOf<Registered>;

/** The built-in registry: the operator's, the CLI's and the simulator's. */
export const EFFECTS: EffectRegistry = registryOf(KIND_EFFECTS);

/** The reasons of the Normal events the kinds give (docs/troubleshooting.md names each). */
export const CHANGE_REASONS = EFFECTS.changeReasons;
