/**
 * `reconcile(ref)`: everything the operator decides for one object, shared by the Kubernetes
 * operator (called by the controller's workers) and the cluster-less CLI (`plan`/`apply`: one
 * call per object of a directory). It reads the object once, runs the pass of its kind (a row of
 * KIND_HANDLERS, each the same contract: kind.ts, pass.ts), and composes the report here, once:
 * the next status, the events, what changed on the manager, the plan, the outcome. A failure
 * becomes conditions and one Warning event in this file only. It never writes status, records
 * events or touches a queue: the caller forwards the report.
 */
import { type ObjectRef } from "../api/refs.ts";
import { RESTORE_FINALIZER, type Kind, type NsxvObject } from "../api/types.ts";
import { realClock } from "../util/clock.ts";
import {
  failureConditions,
  observedReady,
  setConditions,
  type ConditionUpdate,
  type Failure,
  type ReconcileEvent,
} from "./conditions.ts";
import { edgeTenantPass, restorePass } from "./edge-tenant.ts";
import { hasNsxCode, ReconcileError } from "./errors.ts";
import { ipPoolPass } from "./ip-pool.ts";
import type { PassContext, PassHandler } from "./kind.ts";
import { insecureConditions, managerFacts, nsxManagerPass } from "./nsx-manager.ts";
import { runPass, type PassRun } from "./pass.ts";
import { omitUndefined, type Action } from "./plan.ts";
import { isPaused } from "./policy.ts";
import {
  changeEvent,
  changesOf,
  toReport,
  type Draft,
  type ObjectStatus,
  type ReconcileReport,
} from "./report.ts";
import { syncIntervalMsOf } from "./spec.ts";
import { managerRefOf, ReconcilerState, type ReconcilerOptions } from "./state.ts";

export type { ReconcilerOptions as ReconcilerDeps } from "./state.ts";

export const DEFAULT_RECONCILER_OPTIONS = Object.freeze({
  clock: realClock,
  random: Math.random,
  mode: "apply" as const,
  defaultSyncIntervalMs: 300_000,
  jitterFraction: 0.1,
  poolListTtlMs: 30_000,
  maxAttempts: 3,
});

export type Reconcile = (ref: ObjectRef, options?: { signal?: AbortSignal }) => Promise<ReconcileReport>;

type RunPass<T extends NsxvObject> = (ctx: PassContext<T>) => Promise<PassRun>;

/** A kind's row: its passes, and how a failure reads on it. */
interface KindHandler<T extends NsxvObject> {
  /** one pass over a live object */
  reconcile: RunPass<T>;
  /** Ready is the kind's own check (the NSXManager): a failure sets Ready=False with its reason */
  readyFollowsFailure?: boolean;
  /** what a failure tells of the object besides conditions (the NSXManager: reachable, authenticated) */
  failureFacts?: (error: unknown) => Partial<ObjectStatus>;
  /**
   * conditions that follow from the spec alone, set on every pass whatever it got to, with their
   * events (the NSXManager: Insecure)
   */
  specConditions?: (object: T) => { updates: ConditionUpdate[]; events: ReconcileEvent[] };
  /** a kind that acts on delete holds objects with this finalizer while they want it */
  finalizer?: {
    name: string;
    wanted(object: T): boolean;
    finalize: RunPass<T>;
    /** what a failure of finalize was doing, for its message */
    doing: string;
  };
}

const pass =
  <T extends NsxvObject, Target, Observation, A extends Action>(
    handler: PassHandler<T, Target, Observation, A>,
  ) =>
  (ctx: PassContext<T>): Promise<PassRun> =>
    runPass(handler, ctx) as Promise<PassRun>;

/** One row per kind: a kind added later is a new row, not a new path. */
const KIND_HANDLERS: { [K in Kind]: KindHandler<Extract<NsxvObject, { kind: K }>> } = {
  NSXManager: {
    reconcile: pass(nsxManagerPass),
    readyFollowsFailure: true,
    failureFacts: managerFacts,
    specConditions: insecureConditions,
  },
  EdgeTenant: {
    reconcile: pass(edgeTenantPass),
    finalizer: {
      name: RESTORE_FINALIZER,
      wanted: (object) => object.spec?.deletionPolicy === "Restore",
      finalize: pass(restorePass),
      doing: "restoring the original tenant before the object goes",
    },
  },
  IPPoolAllocations: { reconcile: pass(ipPoolPass) },
};

export function createReconciler(options: ReconcilerOptions): Reconcile {
  const o = { ...DEFAULT_RECONCILER_OPTIONS, ...omitUndefined(options) };
  const state = new ReconcilerState(o);
  const { store, connections } = o;

  return async function reconcile(ref, callOptions = {}) {
    const object = await store.get(ref);
    const handler =
      object === undefined ? undefined : (KIND_HANDLERS[object.kind] as KindHandler<NsxvObject>);
    const deleting = object?.metadata.deletionTimestamp !== undefined;
    const finalizer = handler?.finalizer;
    const held = finalizer !== undefined && (object?.metadata.finalizers ?? []).includes(finalizer.name);
    if (object === undefined || handler === undefined || object.kind !== ref.kind || (deleting && !held)) {
      // gone, or going with nothing to do on delete (orphan); a manager's client is closed
      if (ref.kind === "NSXManager") await connections.forget(ref.namespace, ref.name);
      return toReport(ref, undefined, { outcome: { type: "done" } });
    }
    const now = new Date(o.clock.now());
    const ctx: PassContext = {
      object,
      now,
      generation: object.metadata.generation,
      signal: callOptions.signal,
      hold: store.uncertainty?.(ref),
      statusLost: store.statusLost?.(ref),
      state,
    };
    let draft: Draft;
    if (deleting && finalizer !== undefined) {
      draft = compose(handler, ctx, await finalizer.finalize(ctx), finalizer.doing);
    } else if (isPaused(object.metadata)) draft = paused(ctx);
    else draft = compose(handler, ctx, await handler.reconcile(ctx));
    if (finalizer !== undefined) {
      // a live object's finalizer follows what it wants; a deleting one's goes once finalize says so
      const present = deleting ? draft.finalized !== true : finalizer.wanted(object);
      draft.finalizer = present === held ? undefined : { name: finalizer.name, present };
    }
    return toReport(ref, object, draft);
  };

  /**
   * The report of a pass: the plan's settled state for what the actions came to, and a failure
   * (what ended the pass, and every action the manager refused) composed into conditions and one
   * Warning event, here and nowhere else.
   */
  function compose(handler: KindHandler<NsxvObject>, ctx: PassContext, run: PassRun, doing?: string): Draft {
    const { object } = ctx;
    const failure = failureOf(run, doing);
    const settled = run.latest?.settle(run.results, failure);
    const events: ReconcileEvent[] = [...run.results.done.map(changeEvent), ...(settled?.events ?? [])];
    let status = settled?.status;
    if (failure !== undefined) {
      if (status === undefined) status = failedStatus(handler, ctx, failure, run.error);
      events.push({ type: "Warning", reason: failure.reason, message: failure.message });
    }
    const fromSpec = handler.specConditions?.(object);
    if (fromSpec !== undefined && status !== undefined) {
      status = { ...status, conditions: setConditions(status.conditions, fromSpec.updates, ctx) };
      events.unshift(...fromSpec.events);
    }
    const draft: Draft = {
      status,
      events,
      changes: changesOf(run.results.done),
      ...(settled?.pool !== undefined ? { pool: settled.pool } : {}),
      planned: run.planned,
      finalized: settled?.finalized,
      outcome: {
        type: "done",
        requeueAfterMs: Math.min(resyncOf(object), run.latest?.requeueAfterMs ?? Infinity),
      },
    };
    if (failure === undefined) return draft;
    // a dependent's call refused: its manager is checked now, not at its next resync
    if (object.kind !== "NSXManager" && isRefusal(failure))
      draft.wake = [managerRefOf(object, object.spec.managerRef.name)];
    // a Conflict is settled by the other object going away, which queues this one again
    if (failure.reason === "Conflict") {
      if (failure.owner !== undefined) draft.conflictOwner = failure.owner;
      draft.outcome = { type: "done", requeueAfterMs: resyncOf(object) };
    } else draft.outcome = { type: "failed", error: failure, maxBackoffMs: resyncOf(object) };
    return draft;
  }

  /** The status of a pass that failed before it observed: the failure on the status it had. */
  function failedStatus(
    handler: KindHandler<NsxvObject>,
    ctx: PassContext,
    failure: ReconcileError,
    thrown: unknown,
  ): ObjectStatus {
    const base = { ...ctx.object.status, ...handler.failureFacts?.(thrown) } as ObjectStatus;
    const ready: ConditionUpdate | undefined = handler.readyFollowsFailure
      ? { type: "Ready", status: "False", reason: failure.reason, message: failure.message }
      : undefined;
    const { conditions } = failureConditions(base.conditions, failure, ctx, ready);
    return { ...base, observedGeneration: ctx.generation, conditions };
  }

  function resyncOf(object: NsxvObject): number {
    return state.resync(object.kind === "NSXManager" ? undefined : syncIntervalMsOf(object));
  }
}

/** What ended the pass and what the manager refused, as one failure; undefined when all went through. */
function failureOf(run: PassRun, doing: string | undefined): ReconcileError | undefined {
  const refusals: Failure[] = run.results.refused.map((r) => r.failure);
  const thrown = run.error === undefined ? undefined : ReconcileError.from(run.error);
  const first = thrown ?? refusals[0];
  if (first === undefined) return undefined;
  const messages = [...refusals.map((r) => r.message), ...(thrown === undefined ? [] : [thrown.message])];
  const message = `${doing === undefined ? "" : `${doing}: `}${messages.join("; ")}`;
  if (thrown === undefined) return new ReconcileError({ reason: first.reason, message });
  if (message === thrown.message) return thrown;
  return new ReconcileError({
    reason: thrown.reason,
    message,
    terminal: thrown.terminal,
    cause: thrown.cause ?? thrown,
    ...(thrown.owner !== undefined ? { owner: thrown.owner } : {}),
  });
}

function isRefusal(error: ReconcileError): boolean {
  return hasNsxCode(error.cause, "NSX_ERR_UNAUTHORIZED") || hasNsxCode(error.cause, "NSX_ERR_FORBIDDEN");
}

/**
 * No manager calls while paused. Ready stays as the latest observation of this generation left
 * it; with none (paused before this generation was observed) the manager's state is unknown,
 * so Ready is False.
 */
function paused(ctx: PassContext): Draft {
  const previous = ctx.object.status;
  const message = `annotation nsxv.io/paused is "true": no manager calls until it is removed`;
  const updates: ConditionUpdate[] = [
    { type: "Synced", status: "False", reason: "ReconcilePaused", message },
    { type: "Reconciling", remove: true },
    { type: "Stalled", remove: true },
  ];
  if (observedReady(previous?.conditions, ctx.generation) === undefined) {
    updates.push({ type: "Ready", status: "False", reason: "ReconcilePaused", message });
  }
  const conditions = setConditions(previous?.conditions, updates, ctx);
  return {
    status: { ...previous, observedGeneration: ctx.generation, conditions },
    outcome: { type: "done" },
  };
}
