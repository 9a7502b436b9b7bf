/**
 * What a manager's edge list tells its EdgeTenants, pure: one summary per edge, with its tenant
 * and version, decides which EdgeTenants need a pass now; the others the list shows as their
 * status says (in sync, or an Observe object's drift as reported), and it observed them: they need
 * no pass of their own (the mirror of an informer: the list wakes exactly those whose edge
 * changed). An EdgeTenant is woken when the list does not show its edge (a read confirms it is
 * gone), when its edge's tenant differs from the one it must carry and it may write (the pass
 * reads the edge in full and corrects it), or when the tenant differs from what its status last
 * reported (an Observe object reports it). When the list could not be read, every one is woken:
 * each reads its edge, as before lists were used. Objects being deleted, paused or stalled (a
 * person must act first) are left alone, and so are those the operator has not looked at yet:
 * their arrival queued them.
 */
import { refOf, type ObjectRef } from "../../api/refs.ts";
import { UNOBSERVED_GENERATION, type EdgeTenant } from "../../api/types.ts";
import type { EdgeSummary } from "../../nsx/types.ts";
import { findCondition, managerValue } from "../conditions.ts";
import type { EdgeListState } from "./edge-lists.ts";
import { allows, isPaused } from "../policy.ts";
import { resolveEdgeTenant, type EdgeTenantConfig } from "./spec.ts";

export interface EdgeListVerdict {
  /** need a pass now */
  wake: ObjectRef[];
  /** shown by the list as their status says: observed when the list was read */
  shown: ObjectRef[];
}

export function edgeTenantsToWake(edgeTenants: readonly EdgeTenant[], state: EdgeListState): EdgeListVerdict {
  const verdict: EdgeListVerdict = { wake: [], shown: [] };
  for (const object of edgeTenants) {
    if (leftAlone(object)) continue;
    const summary = state.list?.byId.get(object.spec?.edgeId);
    if (summary !== undefined && listShows(object, summary)) verdict.shown.push(refOf(object));
    else if (state.list === undefined || needsPass(object, summary) === true)
      verdict.wake.push(refOf(object));
  }
  return verdict;
}

/**
 * Deleted, paused, stalled (an invalid spec, a conflict, a moved edge: a person acts first, the
 * list cannot help), or not looked at yet (its arrival queued it).
 */
function leftAlone(object: EdgeTenant): boolean {
  return (
    object.metadata.deletionTimestamp !== undefined ||
    isPaused(object.metadata) ||
    findCondition(object.status?.conditions, "Stalled")?.status === "True" ||
    (object.status?.observedGeneration ?? UNOBSERVED_GENERATION) === UNOBSERVED_GENERATION
  );
}

/**
 * The list's summary of the object's edge shows what its status says, and nothing for a pass to
 * do: the tenant it must carry (or, when it may not write, the tenant its status reports).
 */
export function listShows(object: EdgeTenant, summary: Pick<EdgeSummary, "tenant">): boolean {
  return needsPass(object, summary) === false;
}

/** true: a pass must look; false: the list shows what status says; undefined: a spec no pass accepts (its pass said so) */
function needsPass(
  object: EdgeTenant,
  summary: Pick<EdgeSummary, "tenant"> | undefined,
): boolean | undefined {
  let config: EdgeTenantConfig;
  try {
    config = resolveEdgeTenant(object);
  } catch {
    return undefined; // a spec the pass refuses until it changes: its own pass has said so
  }
  if (summary === undefined) return true;
  const listed = summary.tenant ?? "";
  if (allows(config.policy, "updateEdge") && listed !== config.tenant) return true;
  // status keeps the tenant cut as it shows it: compare the summary cut the same way
  return managerValue(listed) !== (object.status?.observedTenant ?? "");
}
