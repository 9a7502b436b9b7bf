/**
 * `reconcile(ref)`: everything the operator decides for one object, shared by the Kubernetes
 * operator (called by the controller's workers) and the cluster-less CLI (`plan`/`apply`: one
 * call per object of a directory). It reads the object once, hands it to the handler of its kind
 * (a table), and returns a report: the next status, the events, what changed on the manager,
 * drift found, the pool's usage, the plan, and the outcome. It never writes status, records
 * events or touches a queue: the caller forwards the report to the status sink, the event
 * recorder, the metrics and the queue.
 */
import type { ObjectRef } from "../api/refs.ts";
import { RESTORE_FINALIZER, type Kind, type NsxvObject } from "../api/types.ts";
import { realClock } from "../util/clock.ts";
import { observedReady, setConditions, type ConditionUpdate } from "./conditions.ts";
import { finalizeEdgeTenant, reconcileEdgeTenant } from "./edge-tenant.ts";
import { hasNsxCode, ReconcileError } from "./errors.ts";
import { reconcileIpPool } from "./ip-pool.ts";
import { reconcileNsxManager } from "./nsx-manager.ts";
import { omitUndefined } from "./plan.ts";
import { isPaused } from "./policy.ts";
import { failedDraft, toReport, type Draft, type ReconcileReport } from "./report.ts";
import { managerRefOf, ReconcilerState, type Pass, type ReconcilerOptions } from "./state.ts";

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

type Handler<T extends NsxvObject> = (pass: Pass<T>, state: ReconcilerState) => Promise<Draft>;

interface KindHandler<T extends NsxvObject> {
  /** one pass over a live object */
  reconcile: Handler<T>;
  /** a kind that acts on delete holds objects with this finalizer while they want it */
  finalizer?: { name: string; wanted(object: T): boolean; finalize: Handler<T> };
}

/** One handler per kind: a kind added later is a new row, not a new path. */
const HANDLERS: { [K in Kind]: KindHandler<Extract<NsxvObject, { kind: K }>> } = {
  NSXManager: { reconcile: reconcileNsxManager },
  EdgeTenant: {
    reconcile: reconcileEdgeTenant,
    finalizer: {
      name: RESTORE_FINALIZER,
      wanted: (object) => object.spec?.deletionPolicy === "Restore",
      finalize: finalizeEdgeTenant,
    },
  },
  IPPoolAllocations: { reconcile: reconcileIpPool },
};

export function createReconciler(options: ReconcilerOptions): Reconcile {
  const o = { ...DEFAULT_RECONCILER_OPTIONS, ...omitUndefined(options) };
  const state = new ReconcilerState(o);
  const { store, connections } = o;

  return async function reconcile(ref, callOptions = {}) {
    const object = await store.get(ref);
    const handler = object === undefined ? undefined : (HANDLERS[object.kind] as KindHandler<NsxvObject>);
    const deleting = object?.metadata.deletionTimestamp !== undefined;
    const finalizer = handler?.finalizer;
    const held = finalizer !== undefined && (object?.metadata.finalizers ?? []).includes(finalizer.name);
    if (object === undefined || object.kind !== ref.kind || (deleting && !held)) {
      // gone, or going with nothing to do on delete (orphan); a manager's client is closed
      if (ref.kind === "NSXManager") await connections.forget(ref.namespace, ref.name);
      return toReport(ref, undefined, { outcome: { type: "done" } });
    }
    const now = new Date(o.clock.now());
    const pass: Pass = {
      object,
      now,
      context: { now, generation: object.metadata.generation },
      signal: callOptions.signal,
      hold: store.uncertainty?.(ref),
    };
    let draft: Draft;
    try {
      if (deleting) draft = await (finalizer as NonNullable<typeof finalizer>).finalize(pass, state);
      else
        draft = isPaused(object.metadata)
          ? paused(pass)
          : await (handler as KindHandler<NsxvObject>).reconcile(pass, state);
    } catch (thrown) {
      const error = ReconcileError.from(thrown);
      draft = failedDraft(pass, error, { resyncMs: state.resync(undefined) });
      // a dependent's call refused: its manager is checked now, not at its next resync
      if (object.kind !== "NSXManager" && isRefusal(error))
        draft.wake = [managerRefOf(object, object.spec.managerRef.name)];
    }
    if (finalizer !== undefined) {
      // a live object's finalizer follows what it wants; a deleting one's goes once finalize says so
      const present = deleting ? draft.finalizer?.present !== false : finalizer.wanted(object);
      draft.finalizer = present === held ? undefined : { name: finalizer.name, present };
    }
    return toReport(ref, object, draft);
  };
}

function isRefusal(error: ReconcileError): boolean {
  return hasNsxCode(error.cause, "NSX_ERR_UNAUTHORIZED") || hasNsxCode(error.cause, "NSX_ERR_FORBIDDEN");
}

/**
 * No manager calls while paused. Ready stays as the latest observation of this generation left
 * it; with none (paused before this generation was observed) the manager's state is unknown,
 * so Ready is False.
 */
function paused(pass: Pass): Draft {
  const previous = pass.object.status;
  const message = `annotation nsxv.io/paused is "true": no manager calls until it is removed`;
  const updates: ConditionUpdate[] = [
    { type: "Synced", status: "False", reason: "ReconcilePaused", message },
    { type: "Reconciling", remove: true },
    { type: "Stalled", remove: true },
  ];
  if (observedReady(previous?.conditions, pass.context.generation) === undefined) {
    updates.push({ type: "Ready", status: "False", reason: "ReconcilePaused", message });
  }
  const conditions = setConditions(previous?.conditions, updates, pass.context);
  return {
    status: { ...previous, observedGeneration: pass.context.generation, conditions },
    outcome: { type: "done" },
  };
}
