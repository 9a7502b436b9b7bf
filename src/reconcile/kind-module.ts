/**
 * A kind as the reconciler runs it: one module per kind (edge-tenant/kind.ts, ip-pool/kind.ts,
 * nsx-manager/kind.ts), registered in kinds.ts. Its passes follow the one contract (kind.ts,
 * pass.ts); the rest says what differs between kinds around a pass: how a failure reads, what a
 * pass remembers, which finalizer it holds. What its actions do outside the pass (events, change
 * lists, counters, CLI lines, edge fields) is its actions.ts, gathered in actions.ts.
 */
import type { ObjectRef } from "../api/refs.ts";
import type { NsxvObject } from "../api/types.ts";
import type { ConditionUpdate, ReconcileEvent } from "./conditions.ts";
import type { PassContext } from "./kind.ts";
import type { ManagerCheckPart } from "./manager-check.ts";
import type { PassRun } from "./pass.ts";
import type { ObjectStatus, SecretFinalizerChange } from "./report.ts";
import type { ReconcilerState } from "./state.ts";

/** One pass of a kind over an object: runPass of one of its handlers. */
export type RunPass<T extends NsxvObject> = (ctx: PassContext<T>) => Promise<PassRun>;

/** A kind's module: its passes, and how a failure reads on it. */
export interface KindModule<T extends NsxvObject> {
  /** one pass over a live object */
  reconcile: RunPass<T>;
  /** Ready is the kind's own check (the NSXManager): a failure sets Ready=False with its reason */
  readyFollowsFailure?: boolean;
  /**
   * the kind's resync is how changes are found (the NSXManager's check reads the edge list that
   * wakes its EdgeTenants): it goes ahead of routine work like an event, never behind a start's
   */
  resyncFindsChanges?: boolean;
  /** what a failure tells of the object besides conditions (the NSXManager: reachable, authenticated) */
  failureFacts?: (error: unknown) => Partial<ObjectStatus>;
  /**
   * remembers what a pass learnt (undefined error: it went through) that a later pass needs, and
   * says how soon that pass must come (the NSXManager: credentials refused, its Secret read again soon)
   */
  remember?: (object: T, error: unknown, state: ReconcilerState, nowMs: number) => number | undefined;
  /**
   * how long a live pass should wait before it calls the manager (the NSXManager: its credentials
   * were refused and its Secret has not changed since): the pass is skipped, its status kept, and
   * it comes back then. Undefined: pass now.
   */
  waitBeforeCall?: (object: T, state: ReconcilerState, nowMs: number) => Promise<number | undefined>;
  /**
   * other objects to reconcile now given this pass's status (the NSXManager: its dependents when
   * its Ready changed, so that they say at once what a manager now known down, or back, means)
   */
  wakesOnReadyChange?: (object: T, status: ObjectStatus | undefined, state: ReconcilerState) => ObjectRef[];
  /**
   * conditions that follow from the spec alone, set on every pass whatever it got to, with their
   * events (the NSXManager: Insecure)
   */
  specConditions?: (object: T) => { updates: ConditionUpdate[]; events: ReconcileEvent[] };
  /**
   * Secrets the object holds against deletion, where the store's Secrets can be held (the
   * NSXManager: its own, while a restore may need them): on every pass, whatever it got to
   */
  secretHolds?: (
    object: T,
    state: ReconcilerState,
  ) => Promise<{ held: string[]; changes: SecretFinalizerChange[] }>;
  /** a dependent kind's part of its NSXManager's check (manager-check.ts): what its objects observe from */
  managerCheck?: ManagerCheckPart;
  /** lets go of what the kind holds for an object that is gone (the NSXManager: its client is closed) */
  forget?: (ref: ObjectRef, state: ReconcilerState) => Promise<void>;
  /** a kind that acts on delete holds objects with this finalizer while they want it */
  finalizer?: {
    name: string;
    /** whether a live object holds the finalizer now */
    wanted(object: T, state: ReconcilerState): boolean;
    finalize: RunPass<T>;
    /** what a failure of finalize was doing, for its message */
    doing: string;
  };
}
