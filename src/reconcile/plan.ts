/**
 * What the planners decide, as data: the actions to carry out, the ones withheld (by policy,
 * grace period, cap or one-shot mode) with why, and the shape `plan` prints. Shared by the two
 * planners, the executor and the report.
 */

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

/** Release one allocated address of a pool. */
export interface ReleaseAction {
  type: "releaseAddress";
  poolId: string;
  /** canonical text (RFC 5952 for IPv6): what status and events show, and what is compared */
  ip: string;
  /** the text as the manager listed it: what the DELETE path carries */
  managerIp: string;
  /**
   * the allocation's id as the manager listed it: the release is of this allocation, and only
   * while the address still carries it (a re-allocated address is another allocation)
   */
  allocationId?: string;
  note?: string;
  /** RFC 3339; when this allocation was first seen stray */
  firstSeen: string;
}

export type Action = SetTenantAction | RestoreTenantAction | ReleaseAction;

/** An action that is not carried out this pass, and why (`Observe`, a grace period, a cap, ...). */
export interface Withheld<A extends Action = Action> {
  action: A;
  why: string;
}

/**
 * A planned action that a fresh read (after a 409 or a "not allocated") no longer wanted, and
 * why; `heldBack` when what it was to change is still there, as something else the next pass
 * decides about (an address allocated again to a new machine), rather than done by someone else.
 */
export interface DroppedAction<A extends Action = Action> {
  action: A;
  why: string;
  heldBack: boolean;
}

/** One line of `plan` output: an action, carried out (or, in plan mode, to be) unless withheld. */
export interface PlannedAction {
  action: Action;
  /** why it is not carried out; absent when it is */
  withheld?: string;
}

export function plannedActions(actions: readonly Action[], withheld: readonly Withheld[]): PlannedAction[] {
  return [
    ...actions.map((action) => ({ action })),
    ...withheld.map((w) => ({ action: w.action, withheld: w.why })),
  ];
}
