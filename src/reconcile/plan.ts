/**
 * What the planners decide, as data: the actions to carry out, the ones withheld (by policy,
 * grace period, cap or one-shot mode) with why, and the shape `plan` prints. Shared by the two
 * planners, the executor and the report.
 */
import type { Action } from "./actions.ts";
import type { RestoreTenantAction, SetTenantAction } from "./edge-tenant/actions.ts";
import type { AnyAction } from "./effects.ts";
import type { ReleaseAction } from "./ip-pool/actions.ts";

/** Every kind's actions: derived from the registry of effects (actions.ts). */
export type { Action, ReleaseAction, RestoreTenantAction, SetTenantAction };

/** An action that is not carried out this pass, and why (`Observe`, a grace period, a cap, ...). */
export interface Withheld<A extends AnyAction = Action> {
  action: A;
  why: string;
}

/**
 * A planned action that a fresh read (after a 409 or a "not allocated") no longer wanted, and
 * why; `heldBack` when what it was to change is still there, as something else the next pass
 * decides about (an address allocated again to a new machine), rather than done by someone else.
 */
export interface DroppedAction<A extends AnyAction = Action> {
  action: A;
  why: string;
  heldBack: boolean;
}

/** One line of `plan` output: an action, carried out (or, in plan mode, to be) unless withheld. */
export interface PlannedAction<A extends AnyAction = Action> {
  action: A;
  /** why it is not carried out; absent when it is */
  withheld?: string;
}

export function plannedActions<A extends AnyAction>(
  actions: readonly A[],
  withheld: readonly Withheld<A>[],
): PlannedAction<A>[] {
  return [
    ...actions.map((action) => ({ action })),
    ...withheld.map((w) => ({ action: w.action, withheld: w.why })),
  ];
}
