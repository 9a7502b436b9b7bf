/**
 * The EdgeTenant handler: observe (GET the edge), plan (edge-tenant-plan.ts), act (PUT the
 * document just read with only `<tenant>` changed). The GET that decided the write is the
 * pre-write read: a correction is exactly GET + PUT. A 409 means someone else changed the edge
 * since: read it again, decide again on that read, and retry a bounded number of times. In plan
 * mode nothing is written. `finalizeEdgeTenant` is what deleting an object with deletionPolicy
 * Restore does: the same GET + PUT, back to the tenant before the first correction.
 */
import { formatRef, refOf } from "../api/refs.ts";
import { RESTORE_FINALIZER, type EdgeTenant } from "../api/types.ts";
import type { EdgeDocument } from "../nsx/edge-document.ts";
import type { CallOptions, ManagerApi } from "../nsx/types.ts";
import type { ReconcileEvent } from "./conditions.ts";
import { edgeTenantStatus, planEdgeTenant, type EdgeTenantPlanInput } from "./edge-tenant-plan.ts";
import { hasNsxCode, ReconcileError, retriesExhausted } from "./errors.ts";
import { plannedActions } from "./plan.ts";
import { allows, isPaused } from "./policy.ts";
import { correctionEvent, failedDraft, type Draft } from "./report.ts";
import { resolveEdgeTenant } from "./spec.ts";
import type { Pass, ReconcilerState } from "./state.ts";

export async function reconcileEdgeTenant(pass: Pass<EdgeTenant>, state: ReconcilerState): Promise<Draft> {
  const config = resolveEdgeTenant(pass.object);
  await state.assertOwnTarget(pass.object, `edge ${config.edgeId}`);
  const { api } = await state.connectDependent(pass.object, config.managerName);
  const call: CallOptions = { signal: pass.signal };
  const observe = (d: EdgeDocument): EdgeTenantPlanInput => ({
    config,
    observed: { edgeId: config.edgeId, name: d.name, version: d.version, tenant: d.tenant },
    previous: pass.object.status,
    now: pass.now,
    generation: pass.context.generation,
    hold: pass.hold,
  });
  const doc = await readEdge(api, config.edgeId, call);
  let input = observe(doc);
  const first = planEdgeTenant(input);
  const planned = plannedActions(first.actions, first.withheld);
  const done = (corrected: boolean): Draft => {
    const corrections = corrected
      ? planEdgeTenant(input).actions.map(({ edgeId, from, to }) => ({ edgeId, from, to }))
      : [];
    return {
      status: edgeTenantStatus(input, { corrected }),
      events: corrections.map(correctionEvent),
      changes: { tenantCorrections: corrections, releases: [] },
      planned,
      outcome: { type: "done", requeueAfterMs: state.resync(config.syncIntervalMs) },
    };
  };
  const action = first.actions[0];
  if (action === undefined || state.mode === "plan") return done(false);
  try {
    const write = { api, edgeId: config.edgeId, call, maxAttempts: state.maxAttempts };
    // a fresh read after a 409 is planned again: someone else may have set the tenant meanwhile
    const written = await writeTenant(write, doc, action.to, (fresh) => {
      input = observe(fresh);
      return planEdgeTenant(input).actions[0]?.to;
    });
    return done(written);
  } catch (thrown) {
    const error = ReconcileError.from(thrown);
    // what this pass observed stands: the edge is drifted, and the write failed
    const base = edgeTenantStatus(input, { corrected: false, failure: error });
    return { ...failedDraft(pass, error, { base, resyncMs: state.resync(config.syncIntervalMs) }), planned };
  }
}

/**
 * Deleting an object that holds the restore finalizer: write back the tenant the edge carried
 * before the operator's first correction, then let the object go. Nothing is written (the
 * finalizer goes at once) for an Observe or paused object, one that never corrected the edge,
 * one whose deletionPolicy is not Restore any more, or when another object owns the edge now.
 * A failure keeps the finalizer, and the status says why.
 */
export async function finalizeEdgeTenant(pass: Pass<EdgeTenant>, state: ReconcilerState): Promise<Draft> {
  const object = pass.object;
  const release = (
    events: ReconcileEvent[] = [],
    restored?: { from: string | undefined; to: string },
  ): Draft => {
    const tenantCorrections = restored === undefined ? [] : [{ edgeId: object.spec.edgeId, ...restored }];
    return {
      finalizer: { name: RESTORE_FINALIZER, present: false },
      events,
      changes: { tenantCorrections, releases: [] },
      outcome: { type: "done" },
    };
  };
  let config;
  try {
    config = resolveEdgeTenant(object);
  } catch {
    return release(); // a spec the operator cannot use names no edge to restore
  }
  const original = object.status?.originalTenant;
  const writes = allows(config.policy, "updateEdge") && !isPaused(object.metadata);
  if (!writes || config.deletionPolicy !== "Restore" || original === undefined) return release();
  // the index holds live objects only: another one claiming the edge decides its tenant now
  if ((await state.conflictIndex("EdgeTenant")).winnerOver(object) !== undefined) return release();
  try {
    const { api } = await state.connectDependent(object, config.managerName);
    const call: CallOptions = { signal: pass.signal };
    const doc = await readEdge(api, config.edgeId, call);
    const from = doc.tenant;
    if ((from ?? "") === original) return release();
    const write = { api, edgeId: config.edgeId, call, maxAttempts: state.maxAttempts };
    await writeTenant(write, doc, original, (fresh) =>
      (fresh.tenant ?? "") === original ? undefined : original,
    );
    const message = `tenant of ${config.edgeId} restored from ${JSON.stringify(from ?? "")} to ${JSON.stringify(original)} before ${formatRef(refOf(object))} goes`;
    return release([{ type: "Normal", reason: "RestoredEdgeTenant", message }], { from, to: original });
  } catch (thrown) {
    const error = ReconcileError.from(thrown);
    throw new ReconcileError({
      reason: error.reason,
      message: `restoring the original tenant before the object goes: ${error.message}`,
      cause: error.cause ?? error,
    });
  }
}

/**
 * PUTs `doc` with only its tenant set to `to`. After a 409 the edge is read again and `again`
 * says what to write on that read (undefined: nothing any more), up to `maxAttempts` PUTs.
 * True when a PUT was accepted.
 */
async function writeTenant(
  write: { api: ManagerApi; edgeId: string; call: CallOptions; maxAttempts: number },
  doc: EdgeDocument,
  to: string,
  again: (fresh: EdgeDocument) => string | undefined,
): Promise<boolean> {
  const { api, edgeId, call } = write;
  for (let attempt = 1, tenant: string | undefined = to, current = doc; ; attempt++) {
    if (tenant === undefined) return false;
    try {
      await api.putEdge(edgeId, current.clone().setTenant(tenant), call);
      return true;
    } catch (error) {
      if (!hasNsxCode(error, "NSX_ERR_CONFLICT")) throw error;
      if (attempt >= write.maxAttempts) throw retriesExhausted(`PUT edge ${edgeId}`, attempt, error);
    }
    current = await readEdge(api, edgeId, call);
    tenant = again(current);
  }
}

async function readEdge(api: ManagerApi, edgeId: string, call: CallOptions): Promise<EdgeDocument> {
  try {
    return await api.getEdge(edgeId, call);
  } catch (error) {
    if (!hasNsxCode(error, "NSX_ERR_NOT_FOUND")) throw error;
    throw new ReconcileError({
      reason: "EdgeNotFound",
      message: `edge ${edgeId}: ${error.message}`,
      cause: error,
    });
  }
}
