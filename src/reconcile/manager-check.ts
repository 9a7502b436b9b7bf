/**
 * What a dependent kind asks of its NSXManager's check: its part (a kind module's `managerCheck`,
 * registered in kinds.ts), run by the NSXManager's pass (nsx-manager/handler.ts) for the objects
 * of the kind that name the manager, without that pass knowing the kind. A part reads what its
 * objects observe from with the check's connection (the EdgeTenants: the manager's edge list; the
 * IPPoolAllocations: the pools of the global scope, then shared), and says what that read tells
 * of the manager (Ready's message, conditions, events) and of its objects (whom to wake).
 */
import type { ObjectRef } from "../api/refs.ts";
import type { DependentObject, NSXManager, NSXManagerStatus } from "../api/types.ts";
import type { ConditionUpdate, ReconcileEvent } from "./conditions.ts";
import type { ManagerConnection } from "./connections.ts";
import type { PassContext, Settled } from "./kind.ts";
import type { DependentRole } from "./state.ts";

/** The check a part runs in. */
export interface ManagerCheck {
  connection: ManagerConnection;
  /** when the check comes back (spread); a list another check read within most of it is reused */
  resyncMs: number;
}

/** What a part's read tells the check, once planned. */
export interface PartVerdict {
  /** phrases of Ready's message after "reachable and authenticated: " (`3 edges listed`) */
  seen?: string[];
  /** fields of the manager's status it sets (`edgeListError`) */
  status?: Partial<NSXManagerStatus>;
  conditions?: ConditionUpdate[];
  events?: ReconcileEvent[];
  /** objects of the kind to reconcile now (an edge the list shows drifted) */
  wake?: ObjectRef[];
  /** objects of the kind the read observed as their status says, and when */
  alsoObserved?: Settled["alsoObserved"];
}

/** What a part read for the check. */
export interface PartObservation {
  /** a call with the check's own credentials answered: the manager is reachable and accepts them */
  answered: boolean;
  /** the UUID the manager reported there, if any */
  vsmUuid?: string | undefined;
  /** what the read tells (pure): previous status and generation from `ctx` */
  verdict(ctx: PassContext<NSXManager>): PartVerdict;
}

export interface ManagerCheckPart extends DependentRole {
  /** when no part's read answered the check, this part's read (with no object of its kind) is the check */
  answersCheck?: boolean;
  /** before any call (the check may fail to connect): what the part counts of its objects */
  prepare?(dependents: readonly DependentObject[], ctx: PassContext<NSXManager>): void;
  /**
   * reads what the kind's objects that name the manager (`dependents`, deleting ones included)
   * observe from; with none, reads nothing unless `asCheck` (no other part's read answered)
   */
  observe(
    dependents: readonly DependentObject[],
    check: ManagerCheck,
    ctx: PassContext<NSXManager>,
    asCheck: boolean,
  ): Promise<PartObservation>;
}
