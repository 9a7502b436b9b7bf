/**
 * The EdgeTenant kind's part of its NSXManager's check (reconcile/manager-check.ts): the
 * manager's edge list, read once per check (one call per 1024 edges) and what the live EdgeTenants
 * observe from; it wakes those it shows drifted or missing, and counts as observed those it shows
 * as their status says. A list that fails for its own reasons (a 403, a bad page) leaves the
 * manager Ready, with EdgeListUnavailable, and the EdgeTenants read their edges one by one.
 */
import { formatDuration } from "../../api/duration.ts";
import { refOf } from "../../api/refs.ts";
import {
  RESTORE_FINALIZER,
  type DependentObject,
  type EdgeTenant,
  type NSXManager,
} from "../../api/types.ts";
import { managerValue, type ConditionUpdate, type ReconcileEvent } from "../conditions.ts";
import { hasNsxCode } from "../errors.ts";
import type { PassContext } from "../kind.ts";
import type { ManagerCheck, ManagerCheckPart, PartVerdict } from "../manager-check.ts";
import { edgeClaim } from "./claim.ts";
import { edgeTenantsToWake } from "./edge-list-plan.ts";
import type { EdgeList, EdgeListState, ListReuse } from "./edge-lists.ts";
import { EDGE_TENANT_STATE } from "./state.ts";

/** Answers to the edge list that fail the check itself; any other failure of the list (a 403, a bad page) is the list's own. */
const CHECK_FAILURES = ["NSX_ERR_UNAUTHORIZED", "NSX_ERR_CONNECTION", "NSX_ERR_UNAVAILABLE"] as const;

/** The EdgeTenants among a manager's dependents that are not being deleted: whose edges its list shows. */
export function liveEdgeTenants(dependents: readonly DependentObject[]): EdgeTenant[] {
  return dependents.filter(
    (o): o is EdgeTenant => o.kind === "EdgeTenant" && o.metadata.deletionTimestamp === undefined,
  );
}

export const edgeListCheck: ManagerCheckPart = {
  kind: "EdgeTenant",
  claim: edgeClaim,
  pacesCheck: true,
  // an original tenant to write back on delete: the manager's Secrets are kept until it is
  needsSecrets: (object) =>
    object.kind === "EdgeTenant" &&
    object.status?.originalTenant !== undefined &&
    (object.metadata.finalizers ?? []).includes(RESTORE_FINALIZER),
  prepare(dependents, ctx) {
    ctx.state.of(EDGE_TENANT_STATE).countedEdgeTenants(refOf(ctx.object), liveEdgeTenants(dependents).length);
  },
  async observe(dependents, check, ctx) {
    const edgeTenants = liveEdgeTenants(dependents);
    const listed = edgeTenants.length === 0 ? undefined : await refreshEdgeList(check, ctx);
    const edgeList = listed?.state;
    const summaries = [...(edgeList?.list?.byId.values() ?? [])];
    const vsmUuid = summaries.find((s) => s.vsmUuid !== undefined)?.vsmUuid;
    return {
      // a list this check read answers it; another NSXManager's sent that one's credentials, not these
      answered: edgeList?.list !== undefined && listed?.own === true,
      vsmUuid: vsmUuid === undefined ? undefined : managerValue(vsmUuid),
      verdict: (planning) => listVerdict(edgeTenants, edgeList, planning),
    };
  },
};

/**
 * One list per real manager: a list that another NSXManager naming the same manager (reached the
 * same verified way) fetched within most of this check's interval serves this check too, so a
 * manager several NSXManager objects name is listed once per interval, not once per object.
 */
function reuseOf(check: ManagerCheck): ListReuse {
  return { for: check.connection.key, withinMs: Math.floor(check.resyncMs * 0.9) };
}

/**
 * The manager's edge list, fetched now (or one another NSXManager naming the same manager fetched
 * lately: `own` false): what its EdgeTenants observe from. A failure that says the manager refused
 * the credentials or did not answer is the check's own failure; any other (a 403 on the list, a
 * bad page) is the list's, kept as the reason its EdgeTenants read one by one.
 */
async function refreshEdgeList(
  check: ManagerCheck,
  ctx: PassContext<NSXManager>,
): Promise<{ state: EdgeListState | undefined; own: boolean }> {
  const { edgeLists } = ctx.state.of(EDGE_TENANT_STATE);
  const { connection } = check;
  let list: EdgeList | undefined;
  try {
    list = await edgeLists.refresh(
      connection.sharedKey,
      connection.api,
      { signal: ctx.signal },
      reuseOf(check),
    );
  } catch (error) {
    if (CHECK_FAILURES.some((code) => hasNsxCode(error, code))) throw error;
  }
  return { state: edgeLists.latest(connection.sharedKey), own: list?.fetchedFor === connection.key };
}

/**
 * What the list tells: Ready's phrases (edges listed, or why not; the safety net's cycle), the
 * list's error in status with EdgeListUnavailable and a Warning when it starts, the EdgeTenants to
 * wake now, and those it shows as their status says, observed when it was read.
 */
function listVerdict(
  edgeTenants: readonly EdgeTenant[],
  observed: EdgeListState | undefined,
  ctx: PassContext<NSXManager>,
): PartVerdict {
  const edgeList: EdgeListState | undefined =
    observed?.error === undefined ? observed : { error: managerValue(observed.error) };
  const conditions = [edgeListCondition(edgeList)];
  if (edgeList === undefined) return { conditions, wake: [] };
  const count = edgeList.list?.byId.size;
  const listed =
    count !== undefined
      ? `${count} edge${count === 1 ? "" : "s"} listed`
      : `the edge list failed (${edgeList.error}): its EdgeTenants read their edges one by one until it works`;
  const events: ReconcileEvent[] =
    edgeList.error !== undefined && ctx.object.status?.edgeListError === undefined
      ? [
          {
            type: "Warning",
            reason: "EdgeListUnavailable",
            message: `the edge list failed: ${edgeList.error}`,
          },
        ]
      : [];
  const { wake, shown } = edgeTenantsToWake(edgeTenants, edgeList);
  const fetchedAtMs = edgeList.list?.fetchedAtMs;
  return {
    seen: [listed, fullReadsOf(edgeTenants, edgeList, ctx)].filter((s) => s !== undefined),
    status: edgeList.error === undefined ? {} : { edgeListError: edgeList.error },
    conditions,
    events,
    wake,
    ...(fetchedAtMs === undefined ? {} : { alsoObserved: { refs: shown, atMs: fetchedAtMs } }),
  };
}

/**
 * How often the safety net reads each of the manager's edges in full, when the operator runs and
 * its list was read: the full-read interval, or the longer cycle its budget of reads a minute
 * makes (full-read-schedule.ts), with why.
 */
function fullReadsOf(
  edgeTenants: readonly EdgeTenant[],
  edgeList: EdgeListState,
  ctx: PassContext<NSXManager>,
): string | undefined {
  const { state } = ctx;
  // while the list fails, every EdgeTenant reads its edge at each pass: no safety net to tell of
  if (state.oneShot !== undefined || edgeList.list === undefined) return undefined;
  const edgeState = state.of(EDGE_TENANT_STATE);
  const cycleMs = edgeState.fullReadCycleMsOf(refOf(ctx.object));
  const every = `each edge read in full every ${formatDuration(cycleMs)}`;
  if (cycleMs <= edgeState.fullReadIntervalMs) return every;
  return `${every} (${edgeState.fullReadsPerMinute} full reads a minute at most, over ${edgeTenants.length} EdgeTenants)`;
}

/**
 * `EdgeListUnavailable=True` while the manager's edge list cannot be used (refused, or past what
 * one list may cost): the manager is still Ready, and its EdgeTenants read their edges one by one.
 */
function edgeListCondition(edgeList: EdgeListState | undefined): ConditionUpdate {
  if (edgeList?.error === undefined) return { type: "EdgeListUnavailable", remove: true };
  const message = `the edge list failed: ${edgeList.error}; its EdgeTenants read their edges one by one until it works (tried again at every check)`;
  return { type: "EdgeListUnavailable", status: "True", reason: "EdgeListUnavailable", message };
}
