/**
 * What a manager's edge list tells its EdgeTenants, pure: one summary per edge, with its tenant
 * and version, decides which EdgeTenants need a pass now (the others are in sync as the list
 * shows them, and their own passes read the list without a call). An EdgeTenant is woken when
 * the list does not show its edge (a read confirms it is gone), when its edge's tenant differs from
 * the one it must carry and it may write (the pass reads the edge in full and corrects it), or
 * when the tenant differs from what its status last reported (an Observe object reports it). When
 * the list could not be read, every one is woken: each reads its edge, as before lists were used.
 * Objects being deleted, paused or stalled (a person must act first) are left alone.
 */
import { refOf, type ObjectRef } from "../api/refs.ts";
import type { EdgeTenant } from "../api/types.ts";
import { findCondition, managerValue } from "./conditions.ts";
import type { EdgeListState } from "./edge-lists.ts";
import { allows, isPaused } from "./policy.ts";
import { resolveEdgeTenant, type EdgeTenantConfig } from "./spec.ts";

export function edgeTenantsToWake(edgeTenants: readonly EdgeTenant[], state: EdgeListState): ObjectRef[] {
  const woken: ObjectRef[] = [];
  for (const object of edgeTenants) {
    if (object.metadata.deletionTimestamp !== undefined || isPaused(object.metadata)) continue;
    // stalled (an invalid spec, a conflict, a moved edge): a person acts first, the list cannot help
    if (findCondition(object.status?.conditions, "Stalled")?.status === "True") continue;
    if (state.list === undefined || needsPass(object, state.list.byId.get(object.spec?.edgeId)))
      woken.push(refOf(object));
  }
  return woken;
}

function needsPass(object: EdgeTenant, summary: { tenant?: string } | undefined): boolean {
  let config: EdgeTenantConfig;
  try {
    config = resolveEdgeTenant(object);
  } catch {
    return false; // a spec the pass refuses until it changes: its own pass has said so
  }
  if (summary === undefined) return true;
  const listed = summary.tenant ?? "";
  if (allows(config.policy, "updateEdge") && listed !== config.tenant) return true;
  // status keeps the tenant cut as it shows it: compare the summary cut the same way
  return managerValue(listed) !== (object.status?.observedTenant ?? "");
}
