/**
 * Carries a plan out through ManagerApi: observe (read), plan, then act with a fresh read right
 * before each write, and plan again on it. The edge is read again right before its PUT, and the
 * PUT sends that fresh document with only `<tenant>` changed; the allocations are listed again
 * right before releasing, and only addresses still allocated and still due are released. A 409
 * means someone else changed the object: re-read and retry, a bounded number of times. In
 * `plan` mode nothing is written.
 */
import type { EdgeTenantStatus, IPPoolAllocationsStatus } from "../api/types.ts";
import type { EdgeDocument } from "../nsx/edge-document.ts";
import { tryParseIp, formatIp } from "../nsx/ip.ts";
import type { Allocation, CallOptions, IpPool, ManagerApi } from "../nsx/types.ts";
import type { ReconcileEvent } from "./conditions.ts";
import { edgeTenantStatus, planEdgeTenant, type EdgeTenantPlanInput } from "./edge-tenant.ts";
import { isConcurrentModification, isNotFound, ReconcileError } from "./errors.ts";
import { assertReleasable, ipPoolStatus, planIpPool, type IpPoolPlanInput } from "./ip-pool.ts";
import { plannedActions, type PlannedAction, type ReleaseAction, type SetTenantAction } from "./plan.ts";
import { resolveEdgeTenant, resolvePool, type PoolSelection } from "./spec.ts";

export type ExecutionMode = "plan" | "apply";

export interface ExecuteOptions {
  mode: ExecutionMode;
  /** tries of one write that the manager answers 409, each after a fresh read */
  maxAttempts: number;
  signal?: AbortSignal | undefined;
}

export interface EdgeTenantExecution {
  planned: PlannedAction[];
  status: EdgeTenantStatus;
  /** the tenant writes the manager accepted */
  corrections: SetTenantAction[];
}

export interface PoolExecution {
  planned: PlannedAction[];
  status: IPPoolAllocationsStatus;
  /** the planner's events (PoolExhausted) */
  events: ReconcileEvent[];
  /** the releases the manager confirmed */
  releases: ReleaseAction[];
  /** releases that failed; `error` when the call threw (the remaining releases were then not tried) */
  failures: ReleaseFailure[];
  requeueAfterMs: number | undefined;
}

export interface ReleaseFailure {
  action: ReleaseAction;
  message: string;
  error?: unknown;
}

type EdgeInput = Omit<EdgeTenantPlanInput, "observed">;
type PoolInput = Omit<IpPoolPlanInput, "observed">;

export async function executeEdgeTenant(
  api: ManagerApi,
  input: EdgeInput,
  options: ExecuteOptions,
): Promise<EdgeTenantExecution> {
  const { edgeId } = resolveEdgeTenant(input.object);
  const call: CallOptions = { signal: options.signal };
  const first = { ...input, observed: observeEdge(edgeId, await readEdge(api, edgeId, call)) };
  const plan = planEdgeTenant(first);
  const planned = plannedActions(plan.actions, plan.withheld);
  if (plan.actions.length === 0) return { planned, status: plan.status, corrections: [] };
  if (options.mode === "plan")
    return { planned, status: edgeTenantStatus(first, { corrected: false }), corrections: [] };

  for (let attempt = 1; ; attempt++) {
    const fresh = await readEdge(api, edgeId, call);
    const again = { ...input, observed: observeEdge(edgeId, fresh) };
    const action = planEdgeTenant(again).actions[0];
    // someone else set the tenant meanwhile: nothing left to write
    if (action === undefined)
      return { planned, status: edgeTenantStatus(again, { corrected: false }), corrections: [] };
    try {
      await api.putEdge(edgeId, fresh.clone().setTenant(action.to), call);
      return { planned, status: edgeTenantStatus(again, { corrected: true }), corrections: [action] };
    } catch (error) {
      if (!isConcurrentModification(error)) throw error;
      if (attempt >= options.maxAttempts) throw retriesExhausted(`PUT edge ${edgeId}`, attempt, error);
    }
  }
}

/** The pool a selection names in its scope's list; PoolNotFound or AmbiguousPool otherwise. */
export function selectPool(pools: readonly IpPool[], selection: PoolSelection): IpPool {
  const where = `scope ${selection.scope} (${pools.length} pool${pools.length === 1 ? "" : "s"} listed)`;
  if (selection.id !== undefined) {
    const pool = pools.find((p) => p.objectId === selection.id);
    if (pool === undefined) throw notFound(`pool ${selection.id} is not in ${where}`);
    return pool;
  }
  const matches = pools.filter((p) => p.name === selection.name);
  if (matches.length === 0) throw notFound(`no pool named ${JSON.stringify(selection.name)} in ${where}`);
  if (matches.length > 1) {
    const ids = matches.map((p) => p.objectId).join(", ");
    const message = `${matches.length} pools are named ${JSON.stringify(selection.name)} in ${where}: ${ids}; select one by spec.pool.id`;
    throw new ReconcileError({ reason: "AmbiguousPool", message });
  }
  return matches[0] as IpPool;
}

export async function executeIpPool(
  api: ManagerApi,
  pool: IpPool,
  input: PoolInput,
  options: ExecuteOptions,
): Promise<PoolExecution> {
  const call: CallOptions = { signal: options.signal };
  const first = { ...input, observed: { pool, allocations: await listAllocations(api, pool, call) } };
  const plan = planIpPool(first);
  const planned = plannedActions(plan.actions, plan.withheld);
  const result = { planned, releases: [], failures: [], requeueAfterMs: plan.requeueAfterMs };
  if (plan.actions.length === 0) return { ...result, status: plan.status, events: plan.events };
  if (options.mode === "plan") return { ...result, ...ipPoolStatus(first, []) };

  // list again right before releasing: release only what is still allocated and still due
  const fresh = { ...input, observed: { pool, allocations: await listAllocations(api, pool, call) } };
  const again = planIpPool(fresh);
  const firstPlanned = new Set(plan.actions.map((a) => a.ip));
  const { allowed } = resolvePool(input.object);
  const releases: ReleaseAction[] = [];
  const failures: ReleaseFailure[] = [];
  for (const action of again.actions.filter((a) => firstPlanned.has(a.ip))) {
    try {
      const outcome = await releaseWithRetry(api, pool, action, options, () =>
        assertReleasable(allowed, action),
      );
      if (outcome === "released") releases.push(action);
      else if (outcome === "refused") {
        failures.push({
          action,
          message: `release of ${action.ip} from ${pool.objectId}: the manager answered false`,
        });
      }
    } catch (error) {
      // a systemic failure (transport, rights): stop here rather than repeat it for every address
      failures.push({ action, message: error instanceof Error ? error.message : String(error), error });
      break;
    }
  }
  return {
    planned,
    ...ipPoolStatus(fresh, releases),
    releases,
    failures,
    requeueAfterMs: again.requeueAfterMs,
  };
}

/** One DELETE; on 409, list again and retry while the address is still allocated. */
async function releaseWithRetry(
  api: ManagerApi,
  pool: IpPool,
  action: ReleaseAction,
  options: ExecuteOptions,
  guard: () => void,
): Promise<"released" | "refused" | "gone"> {
  const call: CallOptions = { signal: options.signal };
  for (let attempt = 1; ; attempt++) {
    if (attempt > 1) {
      const allocations = await listAllocations(api, pool, call);
      if (!allocations.some((a) => canonical(a.ipAddress) === action.ip)) return "gone";
    }
    guard();
    try {
      return (await api.releaseAddress(pool.objectId, action.managerIp, call)) ? "released" : "refused";
    } catch (error) {
      if (!isConcurrentModification(error)) throw error;
      if (attempt >= options.maxAttempts) {
        throw retriesExhausted(`release of ${action.ip} from ${pool.objectId}`, attempt, error);
      }
    }
  }
}

async function readEdge(api: ManagerApi, edgeId: string, call: CallOptions): Promise<EdgeDocument> {
  try {
    return await api.getEdge(edgeId, call);
  } catch (error) {
    if (isNotFound(error)) throw notFound(`edge ${edgeId}: ${error.message}`, "EdgeNotFound", error);
    throw error;
  }
}

async function listAllocations(api: ManagerApi, pool: IpPool, call: CallOptions): Promise<Allocation[]> {
  try {
    return await api.listAllocations(pool.objectId, call);
  } catch (error) {
    if (isNotFound(error)) throw notFound(`pool ${pool.objectId}: ${error.message}`, "PoolNotFound", error);
    throw error;
  }
}

function observeEdge(edgeId: string, doc: EdgeDocument): EdgeTenantPlanInput["observed"] {
  return { edgeId, name: doc.name, version: doc.version, tenant: doc.tenant };
}

function canonical(text: string): string {
  const parsed = tryParseIp(text);
  return parsed === undefined ? text : formatIp(parsed);
}

function notFound(
  message: string,
  reason: "EdgeNotFound" | "PoolNotFound" = "PoolNotFound",
  cause?: unknown,
) {
  return new ReconcileError({ reason, message, cause });
}

function retriesExhausted(what: string, attempts: number, cause: unknown): ReconcileError {
  const message = `${what}: the manager answered 409 (concurrent modification) ${attempts} times, each after a fresh read; giving up for this pass`;
  return new ReconcileError({ reason: "ConcurrentModification", message, cause });
}
