/**
 * The EdgeTenant handler: observe (GET the edge), plan (edge-tenant-plan.ts), act (PUT the
 * document just read with only `<tenant>` changed). The GET that decided the write is the
 * pre-write read: a correction is exactly GET + PUT. A 409 means someone else changed the edge
 * since: read it again, plan again on that read, and retry a bounded number of times. In plan
 * mode nothing is written.
 */
import type { EdgeTenant } from "../api/types.ts";
import type { EdgeDocument } from "../nsx/edge-document.ts";
import type { CallOptions, ManagerApi } from "../nsx/types.ts";
import { edgeTenantStatus, planEdgeTenant, type EdgeTenantPlanInput } from "./edge-tenant-plan.ts";
import { hasNsxCode, ReconcileError, retriesExhausted } from "./errors.ts";
import { plannedActions } from "./plan.ts";
import { correctionEvent, failedDraft, type Draft } from "./report.ts";
import { resolveEdgeTenant } from "./spec.ts";
import type { Pass, ReconcilerState } from "./state.ts";

export async function reconcileEdgeTenant(pass: Pass<EdgeTenant>, state: ReconcilerState): Promise<Draft> {
  const config = resolveEdgeTenant(pass.object);
  await state.assertOwnTarget(pass.object, `edge ${config.edgeId}`);
  const { api } = await state.connectDependent(pass.object, config.managerName);
  const call: CallOptions = { signal: pass.signal };
  let doc = await readEdge(api, config.edgeId, call);
  const observe = (d: EdgeDocument): EdgeTenantPlanInput => ({
    config,
    observed: { edgeId: config.edgeId, name: d.name, version: d.version, tenant: d.tenant },
    previous: pass.object.status,
    now: pass.now,
    generation: pass.context.generation,
    hold: pass.hold,
  });
  let input = observe(doc);
  let plan = planEdgeTenant(input);
  const planned = plannedActions(plan.actions, plan.withheld);
  const done = (corrected: boolean): Draft => {
    const corrections = corrected ? plan.actions.map(({ edgeId, from, to }) => ({ edgeId, from, to })) : [];
    return {
      status: edgeTenantStatus(input, { corrected }),
      events: corrections.map(correctionEvent),
      changes: { tenantCorrections: corrections, releases: [] },
      planned,
      outcome: { type: "done", requeueAfterMs: state.resync(config.syncIntervalMs) },
    };
  };
  if (plan.actions.length === 0 || state.mode === "plan") return done(false);

  for (let attempt = 1; ; attempt++) {
    const action = plan.actions[0];
    // someone else set the tenant meanwhile: nothing left to write
    if (action === undefined) return done(false);
    try {
      await api.putEdge(config.edgeId, doc.clone().setTenant(action.to), call);
      return done(true);
    } catch (thrown) {
      const retry = hasNsxCode(thrown, "NSX_ERR_CONFLICT") && attempt < state.maxAttempts;
      if (!retry) {
        const error = hasNsxCode(thrown, "NSX_ERR_CONFLICT")
          ? retriesExhausted(`PUT edge ${config.edgeId}`, attempt, thrown)
          : ReconcileError.from(thrown);
        // what this pass observed stands: the edge is drifted, and the write failed
        const base = edgeTenantStatus(input, { corrected: false, failure: error });
        return {
          ...failedDraft(pass, error, { base, resyncMs: state.resync(config.syncIntervalMs) }),
          planned,
        };
      }
    }
    doc = await readEdge(api, config.edgeId, call);
    input = observe(doc);
    plan = planEdgeTenant(input);
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
