/**
 * `reconcile(ref)`: everything the operator decides for one object, shared by the Kubernetes
 * operator (called by the controller's workers) and the cluster-less CLI (`plan`/`apply`: one
 * call per object of a directory). It reads the object once, runs the pass of its kind (its module
 * in kinds.ts, each the same contract: kind.ts, pass.ts), and composes the report here, once:
 * the next status, the events, what changed on the manager, the plan, the outcome. A failure
 * becomes conditions and one Warning event in this file only. It never writes status, records
 * events or touches a queue: the caller forwards the report.
 */
import { formatDuration } from "../api/duration.ts";
import { managerRefOf, refOf, type ObjectRef } from "../api/refs.ts";
import { PAUSED_ANNOTATION, type NSXManagerStatus, type NsxvObject } from "../api/types.ts";
import { formatTime, realClock } from "../util/clock.ts";
import {
  failureUpdates,
  findCondition,
  observedReady,
  setConditions,
  type ConditionUpdate,
  type Failure,
  type ReconcileEvent,
} from "./conditions.ts";
import { hasNsxCode, ObservationExpiredError, ReconcileError } from "./errors.ts";
import type { PassContext, Settled } from "./kind.ts";
import type { KindModule } from "./kind-module.ts";
import { KIND_OPTION_DEFAULTS, MANAGER_CHECK_PARTS, moduleOf, type KindOptions } from "./kinds.ts";
import type { PassRun } from "./pass.ts";
import { omitUndefined, withDefaults } from "../util/options.ts";
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
import { MIN_OBSERVE_WAIT_MS, ReconcilerState, type ReconcilerOptions } from "./state.ts";

/** The reconciler's options: each kind's typed by the registry of kinds (kinds.ts). */
export type ReconcilerDeps = ReconcilerOptions & { kinds?: KindOptions };

export const RECONCILER_DEFAULTS = Object.freeze({
  clock: realClock,
  random: Math.random,
  mode: "apply" as const,
  defaultSyncIntervalMs: 300_000,
  jitterFraction: 0.1,
  maxAttempts: 3,
  kinds: KIND_OPTION_DEFAULTS,
});

export type Reconcile = (ref: ObjectRef, options?: { signal?: AbortSignal }) => Promise<ReconcileReport>;

export function createReconciler(options: ReconcilerDeps): Reconcile {
  const o = withDefaults(RECONCILER_DEFAULTS, options);
  const state = new ReconcilerState(o, MANAGER_CHECK_PARTS);
  const { store } = o;

  return async function reconcile(ref, callOptions = {}) {
    const object = await store.get(ref);
    if (object === undefined || object.kind !== ref.kind) return gone(ref);
    const module = moduleOf(object.kind);
    const { finalizer } = module;
    const deleting = object.metadata.deletionTimestamp !== undefined;
    const finalizerPresent =
      finalizer !== undefined && (object.metadata.finalizers ?? []).includes(finalizer.name);
    // going with nothing to do on delete (orphan)
    if (deleting && !finalizerPresent) return gone(ref);
    const ctx: PassContext = {
      object,
      now: new Date(o.clock.now()),
      generation: object.metadata.generation,
      signal: callOptions.signal,
      writesBlockedBy: store.writesBlockedBy?.(ref),
      statusLost: store.statusLost?.(ref),
      state,
    };
    const draft = await passDraft(module, ctx);
    await holdSecrets(module, ctx, draft);
    if (finalizer !== undefined) {
      // a live object's finalizer follows what it wants; a deleting one's goes once finalize says so
      const present = deleting ? draft.finalized !== true : finalizer.wanted(object, state);
      draft.finalizer = present === finalizerPresent ? undefined : { name: finalizer.name, present };
    }
    return toReport(ref, object, draft);
  };

  /** The object is gone: nothing is remembered of it, and its kind lets go of what it held (a manager's client). */
  async function gone(ref: ObjectRef): Promise<ReconcileReport> {
    state.forgetObject(ref);
    await moduleOf(ref.kind).forget?.(ref, state);
    return toReport(ref, undefined, { outcome: { type: "done" } });
  }

  /**
   * The pass an object gets: a deleting one its finalizer's (it holds it: reconcile checked), a
   * paused one none, one whose kind says to wait none yet, else its kind's pass.
   */
  async function passDraft(module: KindModule<NsxvObject>, ctx: PassContext): Promise<Draft> {
    const { object } = ctx;
    const { finalizer } = module;
    if (object.metadata.deletionTimestamp !== undefined && finalizer !== undefined)
      return compose(module, ctx, await finalizer.finalize(ctx), finalizer.doing);
    const pausedBy = await pauseOf(object);
    if (pausedBy !== undefined) return paused(ctx, pausedBy);
    const waitMs = await module.waitBeforeCall?.(object, state, ctx.now.getTime());
    if (waitMs !== undefined) return { outcome: { type: "done", requeueAfterMs: waitMs } };
    ctx.observeByMs = observeBy(ctx);
    return compose(module, ctx, await module.reconcile(ctx));
  }

  /** The Secrets the object holds against deletion, where the store's can be held: in the draft's status. */
  async function holdSecrets(module: KindModule<NsxvObject>, ctx: PassContext, draft: Draft): Promise<void> {
    if (module.secretHolds === undefined || store.secretsHoldable !== true) return;
    const holds = await module.secretHolds(ctx.object, state);
    if (holds.changes.length > 0) draft.secretFinalizers = holds.changes;
    const { heldSecrets: _before, ...base } = (draft.status ?? ctx.object.status ?? {}) as NSXManagerStatus;
    draft.status = holds.held.length > 0 ? { ...base, heldSecrets: holds.held } : base;
  }

  /** Why the object makes no manager calls now: its own pause, or its NSXManager's. */
  async function pauseOf(object: NsxvObject): Promise<string | undefined> {
    if (isPaused(object.metadata)) return `annotation ${PAUSED_ANNOTATION} is "true"`;
    if (object.kind === "NSXManager") return undefined;
    const ref = managerRefOf(object);
    const manager = ref === undefined ? undefined : await store.get(ref);
    return ref !== undefined && manager !== undefined && isPaused(manager.metadata)
      ? `its NSXManager ${ref.namespace}/${ref.name} carries ${PAUSED_ANNOTATION}: "true"`
      : undefined;
  }

  /**
   * The report of a pass: the plan's settled state for what the actions came to, and a failure
   * (what ended the pass, and every action the manager refused) composed into conditions and one
   * Warning event, here and nowhere else.
   */
  async function compose(
    module: KindModule<NsxvObject>,
    ctx: PassContext,
    run: PassRun,
    doing?: string,
  ): Promise<Draft> {
    const { object } = ctx;
    const failure = failureOf(run, doing);
    const rememberedMs = module.remember?.(object, run.error, state, ctx.now.getTime()) ?? Infinity;
    const settled = run.latest?.settle(run.results, failure);
    if (run.latest !== undefined) recordObservations(ctx, settled);
    const { status, events } = statusAndEvents(module, ctx, { run, settled, failure });
    const wake = [...(settled?.wake ?? []), ...(module.wakesOnReadyChange?.(object, status, state) ?? [])];
    const routineMs = routineComeBackMs(ctx, status, failure === undefined ? settled : undefined);
    const comeBackMs = Math.min(routineMs, rememberedMs);
    const requeueAfterMs = Math.min(comeBackMs, run.latest?.requeueAfterMs ?? Infinity);
    const draft: Draft = {
      status,
      events,
      changes: changesOf(run.results.done),
      planned: run.planned,
      ...settledFacts(settled),
      ...(wake.length > 0 ? { wake } : {}),
      outcome: { type: "done", requeueAfterMs, ...routineOf(module, requeueAfterMs === routineMs) },
    };
    return failure === undefined ? draft : failedDraft(module, ctx, draft, { failure, comeBackMs });
  }

  /**
   * The next status and the events of a pass: each change made, the settled plan's, the failure's
   * Warning (on the status the object had, when the plan settled none), the spec's conditions.
   */
  function statusAndEvents(
    module: KindModule<NsxvObject>,
    ctx: PassContext,
    {
      run,
      settled,
      failure,
    }: { run: PassRun; settled: Settled | undefined; failure: ReconcileError | undefined },
  ): { status: ObjectStatus | undefined; events: ReconcileEvent[] } {
    const events: ReconcileEvent[] = [
      ...run.results.done.map((action) => changeEvent(action)),
      ...(settled?.events ?? []),
    ];
    let status = settled?.status;
    if (failure !== undefined) {
      status ??= failedStatus(module, ctx, failure, run.error);
      events.push({ type: "Warning", reason: failure.reason, message: failure.message });
    }
    const fromSpec = module.specConditions?.(ctx.object);
    if (fromSpec !== undefined && status !== undefined) {
      status = { ...status, conditions: setConditions(status.conditions, fromSpec.updates, ctx) };
      events.unshift(...fromSpec.events);
    }
    return { status, events };
  }

  /**
   * A failed pass's draft: its manager checked now when the failure says it is down, and retried
   * after a backoff, but a Conflict, which the other object going away settles (that queues this
   * one again): it comes back as a routine pass would.
   */
  async function failedDraft(
    module: KindModule<NsxvObject>,
    ctx: PassContext,
    draft: Draft,
    { failure, comeBackMs }: { failure: ReconcileError; comeBackMs: number },
  ): Promise<Draft> {
    const manager = await managerToCheck(ctx.object, failure);
    if (manager !== undefined) draft.wake = [...(draft.wake ?? []), manager];
    if (failure.reason !== "Conflict") {
      draft.outcome = { type: "failed", error: failure, maxBackoffMs: comeBackMs };
      return draft;
    }
    if (failure.owner !== undefined) draft.conflictOwner = failure.owner;
    draft.outcome = { type: "done", requeueAfterMs: comeBackMs, ...routineOf(module, true) };
    return draft;
  }

  /**
   * A plan was made on an observation: the manager was seen (now, or when its edge list was read),
   * and so were the other objects that observation showed as their status says.
   */
  function recordObservations(ctx: PassContext, settled: Settled | undefined): void {
    const nowMs = ctx.now.getTime();
    state.observed(refOf(ctx.object), settled?.observedAtMs ?? nowMs);
    const also = settled?.alsoObserved;
    for (const ref of also?.refs ?? []) state.observed(ref, also?.atMs ?? nowMs);
  }

  /**
   * The routine come-back of a pass: when another observation follows the object (its manager's
   * list: `settled` of a pass that went through), only when its own due work is (the safety net's
   * read); else at its resync, or before it when Ready's kept observation would go stale first.
   */
  function routineComeBackMs(ctx: PassContext, status: ObjectStatus | undefined, settled?: Settled): number {
    const { object } = ctx;
    return settled?.followedForMs ?? Math.min(resyncOf(object), staleCheckInMs(ctx, status ?? object.status));
  }

  /**
   * A dependent's call refused or unanswered while its manager's status still says it is fine:
   * the manager is checked now, not at its next resync, so that its status tells the other
   * dependents to wait instead of each timing out in turn.
   */
  async function managerToCheck(object: NsxvObject, failure: ReconcileError): Promise<ObjectRef | undefined> {
    if (object.kind === "NSXManager" || !saysManagerIsDown(failure)) return undefined;
    const ref = managerRefOf(object);
    const manager = ref === undefined ? undefined : await store.get(ref);
    const fine =
      manager?.kind === "NSXManager" &&
      manager.status?.reachable !== false &&
      manager.status?.authenticated !== false;
    return fine ? ref : undefined;
  }

  /** The status of a pass that failed before it observed: the failure on the status it had. */
  function failedStatus(
    module: KindModule<NsxvObject>,
    ctx: PassContext,
    failure: ReconcileError,
    thrown: unknown,
  ): ObjectStatus {
    const base = { ...ctx.object.status, ...module.failureFacts?.(thrown) } as ObjectStatus;
    const ready = module.readyFollowsFailure
      ? ({ type: "Ready", status: "False", reason: failure.reason, message: failure.message } as const)
      : readyWhileBlind(ctx, failure);
    const updates = [...failureUpdates(failure), ...(ready === undefined ? [] : [ready])];
    return {
      ...base,
      observedGeneration: ctx.generation,
      conditions: setConditions(base.conditions, updates, ctx),
    };
  }

  /**
   * Ready of a pass that could not observe (`cause` says why): the latest observation of this
   * generation stands while it is recent (undefined: left as it is), so a blip does not flap it;
   * past staleAfterMs (two sync intervals, 30 s at least) it is Unknown, with the cause and when
   * the last observation was, so GitOps tools stop reading Current while the operator is blind;
   * and at once when the cause is the object's NSXManager (ManagerNotReady: missing, its Secret
   * unusable, or its own check found the manager unreachable or refusing the credentials): nothing
   * of it can be confirmed until the manager is back. Without an observation of this generation,
   * Ready is False with the cause: never True for a generation that was not applied.
   */
  function readyWhileBlind(
    ctx: PassContext,
    cause: { reason: Failure["reason"] | "ReconcilePaused"; message: string },
  ): ConditionUpdate | undefined {
    const { object } = ctx;
    const ready = findCondition(object.status?.conditions, "Ready");
    const blind =
      ready !== undefined && ready.observedGeneration === ctx.generation && ready.status === "Unknown";
    // fields named: a failure is an Error, whose message a spread would not copy
    if (!blind && observedReady(object.status?.conditions, ctx.generation) === undefined) {
      return { type: "Ready", status: "False", reason: cause.reason, message: cause.message };
    }
    const ref = refOf(object);
    const nowMs = ctx.now.getTime();
    const lastMs = state.observedOrTrackedSinceMs(ref, nowMs);
    const boundMs = state.staleAfterMs(intervalOf(object));
    const managerUnusable = cause.reason === "ManagerNotReady";
    // cut at the expiry: stale by definition, whenever the pass began
    const expired = cause instanceof ObservationExpiredError;
    if (!blind && !managerUnusable && !expired && nowMs - lastMs <= boundMs) return undefined;
    const observedMs = state.lastObservedMs(ref);
    const since =
      observedMs === undefined ? "since before the operator started" : `since ${formatTime(observedMs)}`;
    const kept = managerUnusable
      ? "its NSXManager cannot be used, so none is kept"
      : `Ready is kept for ${formatDuration(boundMs)}`;
    const message = `no observation of the manager ${since} (${kept}): ${cause.message}`;
    return { type: "Ready", status: "Unknown", reason: cause.reason, message };
  }

  /**
   * When Ready's kept observation of this generation expires (undefined: Ready keeps none, as
   * after a failed check of an NSXManager, or Unknown already): the last observation by this
   * replica (or when it started looking) plus staleAfterMs.
   */
  function keptUntilMs(ctx: PassContext, status: ObjectStatus | undefined): number | undefined {
    if (observedReady(status?.conditions, ctx.generation) === undefined) return undefined;
    const sinceMs = state.observedOrTrackedSinceMs(refOf(ctx.object), ctx.now.getTime());
    return sinceMs + state.staleAfterMs(intervalOf(ctx.object));
  }

  /**
   * How long a live pass may wait on the manager for its observation: until Ready's kept one
   * expires, so that a hung manager is cut there and Ready turns Unknown on time; a pass that
   * starts late (queued behind others) still gets MIN_OBSERVE_WAIT_MS. A one-shot run keeps no Ready.
   */
  function observeBy(ctx: PassContext): number | undefined {
    if (state.oneShot !== undefined) return undefined;
    const keptUntil = keptUntilMs(ctx, ctx.object.status);
    return keptUntil === undefined ? undefined : Math.max(keptUntil, ctx.now.getTime() + MIN_OBSERVE_WAIT_MS);
  }

  /**
   * The per-object staleness timer: a pass comes MIN_OBSERVE_WAIT_MS before Ready's kept
   * observation expires (at least a second from now), whatever the resync or backoff would do, and
   * is cut at the expiry when the manager does not answer. Infinity when Ready keeps none.
   */
  function staleCheckInMs(ctx: PassContext, status: ObjectStatus | undefined): number {
    const keptUntil = state.oneShot === undefined ? keptUntilMs(ctx, status) : undefined;
    if (keptUntil === undefined) return Infinity;
    return Math.max(1_000, keptUntil - MIN_OBSERVE_WAIT_MS - ctx.now.getTime());
  }

  /**
   * No manager calls while the object or its NSXManager is paused. Ready stays as the latest
   * observation of this generation left it while that is recent, then turns Unknown (the operator
   * does not look); with none, the manager's state is unknown and Ready is False. The pass comes
   * back when the observation goes stale.
   */
  function paused(ctx: PassContext, why: string): Draft {
    const previous = ctx.object.status;
    const message = `${why}: no manager calls until it is removed`;
    const cause = { reason: "ReconcilePaused", message } as const;
    const updates: ConditionUpdate[] = [
      { type: "Synced", status: "False", ...cause },
      { type: "Reconciling", remove: true },
      { type: "Stalled", remove: true },
    ];
    const ready = readyWhileBlind(ctx, cause);
    if (ready !== undefined) updates.push(ready);
    const keptUntil = ready === undefined ? keptUntilMs(ctx, previous) : undefined;
    const staleInMs = keptUntil === undefined ? undefined : keptUntil - ctx.now.getTime();
    const conditions = setConditions(previous?.conditions, updates, ctx);
    return {
      status: { ...previous, observedGeneration: ctx.generation, conditions },
      outcome: {
        type: "done",
        ...(staleInMs !== undefined ? { requeueAfterMs: Math.max(0, staleInMs) + 1, routine: true } : {}),
      },
    };
  }

  /** How often the object is looked at: its sync interval, an NSXManager's check interval. */
  function intervalOf(object: NsxvObject): number | undefined {
    return object.kind === "NSXManager" ? state.checkIntervalMs(object) : syncIntervalMsOf(object);
  }

  function resyncOf(object: NsxvObject): number {
    return state.resync(intervalOf(object));
  }
}

/** A come-back that is the routine one (resync, staleness, safety net) waits behind events, but for a kind whose resync finds changes. */
function routineOf(module: KindModule<NsxvObject>, isRoutine: boolean): { routine?: true } {
  return isRoutine && module.resyncFindsChanges !== true ? { routine: true } : {};
}

/** What the settled plan tells besides status and events: the pool, the finalizer, whom to wake, notes, dropped actions. */
function settledFacts(
  settled: Settled | undefined,
): Pick<Draft, "pool" | "finalized" | "wake" | "notes" | "dropped"> {
  if (settled === undefined) return {};
  const { pool, finalized, wake = [], notes = [], dropped = [] } = settled;
  return omitUndefined({
    pool,
    finalized,
    wake: wake.length > 0 ? wake : undefined,
    notes: notes.length > 0 ? notes : undefined,
    dropped: dropped.length > 0 ? dropped : undefined,
  });
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

/** The manager refused the credentials or rights, or did not answer: what its own check should learn now. */
function saysManagerIsDown(error: ReconcileError): boolean {
  const codes = [
    "NSX_ERR_UNAUTHORIZED",
    "NSX_ERR_FORBIDDEN",
    "NSX_ERR_CONNECTION",
    "NSX_ERR_UNAVAILABLE",
  ] as const;
  return codes.some((code) => hasNsxCode(error.cause, code));
}
