/**
 * The contract every kind follows, the same for each: a pass prepares (resolves the spec, checks
 * ownership, finds the manager), observes the manager, plans (pure: actions, withheld ones,
 * when to come back, and the state that follows from what became of the actions), and has each
 * action carried out by one shared helper (pass.ts) that, on an answer saying the manager changed
 * under it (a 409), observes again and plans again. A kind is a module (kind-module.ts) registered
 * in kinds.ts; a kind added later is a new module of these functions, not a new path.
 */
import type { ObjectRef } from "../api/refs.ts";
import type { NsxvObject } from "../api/types.ts";
import type { NsxErrorCode } from "../nsx/errors.ts";
import type { Failure, ReconcileEvent } from "./conditions.ts";
import type { AnyAction } from "./effects.ts";
import type { DroppedAction, Withheld } from "./plan.ts";
import type { ObjectStatus, PoolUsage } from "./report.ts";
import type { ReconcilerState } from "./state.ts";

/** What every step of one pass over one object is given. */
export interface PassContext<T extends NsxvObject = NsxvObject> {
  object: T;
  now: Date;
  /** metadata.generation of the object, copied to the conditions written */
  generation: number | undefined;
  signal: AbortSignal | undefined;
  /**
   * Why every write of this pass is blocked, when it is: the desired state is uncertain (a
   * manifest that does not load; store.writesBlockedBy). The pass observes and writes nothing.
   */
  writesBlockedBy: Failure | undefined;
  /** why the status the object had may have been lost, when it may (store.statusLost) */
  statusLost: string | undefined;
  /**
   * Until when this pass may wait on the manager for its observation: Ready keeps an earlier one
   * until then, and past it must not read as if the operator could see (undefined: Ready keeps
   * none, and the manager's own timeouts bound the wait). Writes are never cut.
   */
  observeByMs?: number | undefined;
  state: ReconcilerState;
}

/**
 * How much an observation must show: `first`, what the pass looks at first (it may be a summary
 * of the manager's list); `full`, everything a write is based on (after a 409, or when a plan
 * cannot decide from the first look).
 */
export type ObserveDepth = "first" | "full";

/** What became of a plan's actions. */
export interface ActionResults<A extends AnyAction> {
  /** carried out: the manager accepted them */
  done: A[];
  /** not carried out: a fresh observation no longer wanted them (someone else did it, or its target changed identity) */
  dropped: A[];
  /** refused by the manager for that action alone (a release answered false); the others went on */
  refused: { action: A; failure: Failure }[];
}

/** The state a plan leads to once its actions were carried out, or not. */
export interface Settled {
  /** the next status; undefined leaves the status as it is */
  status?: ObjectStatus | undefined;
  events: ReconcileEvent[];
  /** the pool of an IPPoolAllocations, as observed */
  pool?: PoolUsage;
  /** a deleting object's pass: its finalizer may go */
  finalized?: boolean;
  /** other objects this observation says need a pass now (the EdgeTenants a manager's edge list shows drifted) */
  wake?: ObjectRef[];
  /**
   * other objects this observation observed as well, and when (the EdgeTenants a manager's edge
   * list shows as their status says, when the list was read): their Ready is as recent as that
   */
  alsoObserved?: { refs: ObjectRef[]; atMs: number };
  /**
   * another observation follows the object and wakes it when what it observes changes (an
   * EdgeTenant's: its manager's edge list): it needs no resync, nor a check of Ready's staleness,
   * of its own; it comes back after this long only (its safety-net read)
   */
  followedForMs?: number;
  /** facts worth a debug line, nothing a person must act on (a summary the read did not confirm) */
  notes?: string[];
  /** when the observation settled here was made, when not now (the manager's edge list was read earlier) */
  observedAtMs?: number;
  /** planned actions a fresh read dropped, where the kind tells more than "no longer needed" */
  dropped?: DroppedAction[];
}

/** What a planner decides from one observation. Pure data and a pure function. */
export interface KindPlan<A extends AnyAction> {
  actions: A[];
  /** actions not carried out this pass, and why (Observe, a grace period, a cap, writes blocked, ...) */
  withheld: Withheld<A>[];
  /** the observation cannot decide: observe at depth `full` and plan again */
  observeFully?: boolean;
  /** come back before the resync: a stray becomes due, a recorded original waits for its write; 0 = at once */
  requeueAfterMs?: number | undefined;
  /** the status and events once `results` came of the actions; `failure` ended the pass */
  settle(results: ActionResults<A>, failure?: Failure): Settled;
}

/** A manager's answer to one action, when it did not throw. */
export type ExecuteOutcome = "done" | { refused: Failure };

/**
 * One kind of pass: over a live object, or over a deleting one that holds the kind's finalizer.
 * `Target` is what prepare found (the resolved spec, the connection), `Observation` what observe
 * read. Everything may throw; the reconciler turns what is thrown into status once.
 */
export interface PassHandler<T extends NsxvObject, Target, Observation, A extends AnyAction> {
  prepare(ctx: PassContext<T>): Promise<Target>;
  observe(target: Target, ctx: PassContext<T>, depth: ObserveDepth): Promise<Observation>;
  plan(target: Target, observed: Observation, ctx: PassContext<T>): KindPlan<A>;
  /**
   * carries out one action on what the plan that wants it was made on: `observed` is that
   * observation (a write sends back the document it read, changed), never a later one
   */
  execute(
    action: A,
    on: { target: Target; observed: Observation },
    ctx: PassContext<T>,
  ): Promise<ExecuteOutcome>;
  /**
   * Answers to an action after which a fresh observation decides. An action the fresh plan no
   * longer wants is dropped; one it still wants is tried again (`retry`: a 409, bounded by
   * maxAttempts), or reported as refused for the reason given (the manager said "not allocated"
   * of an address it still lists: asking again would get the same answer).
   */
  rereadOn: Partial<Record<NsxErrorCode, "retry" | RefusalAnswer>>;
  /** the key of what an action acts on: a planned action is found again in a fresh plan by it */
  targetOf(action: A): string;
  /** the action in a message: `PUT edge edge-1`, `release of 10.0.0.7 from ipaddresspool-1` */
  describe(action: A): string;
}

/** An answer that refuses the action when a fresh read still wants it: the failure's reason and what the manager said. */
export interface RefusalAnswer {
  refuse: Failure["reason"];
  says: string;
}
