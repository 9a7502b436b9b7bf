/**
 * The IPPoolAllocations handler: observe (the pool in its scope's shared list, then its
 * allocations), plan (ip-pool-plan.ts), act (one DELETE per stray due). The allocation list that
 * decided the releases is the pre-write read: a pass is one list plus the DELETEs. The list is
 * read again only when an answer says it changed under us: a 409, or "not allocated" (120056).
 * Each DELETE is guarded at the moment of the call (assertReleasable). In plan mode nothing is
 * released.
 */
import { formatRef } from "../api/refs.ts";
import type { IPPoolAllocations } from "../api/types.ts";
import { NsxError } from "../nsx/errors.ts";
import type { Allocation, CallOptions, IpPool, ManagerApi } from "../nsx/types.ts";
import { formatIp, tryParseIp } from "../util/ip.ts";
import type { Failure, ReconcileEvent } from "./conditions.ts";
import { hasNsxCode, ReconcileError, retriesExhausted } from "./errors.ts";
import {
  allocationIdentity,
  assertReleasable,
  CAPPED_REQUEUE_MS,
  planIpPool,
  sameAllocation,
  type AllocationIdentity,
} from "./ip-pool-plan.ts";
import { plannedActions, type ReleaseAction } from "./plan.ts";
import { failedDraft, releaseEvent, type Draft } from "./report.ts";
import { resolvePool, type PoolConfig, type PoolSelection } from "./spec.ts";
import { conflictError, type Pass, type ReconcilerState } from "./state.ts";

export async function reconcileIpPool(pass: Pass<IPPoolAllocations>, state: ReconcilerState): Promise<Draft> {
  const config = resolvePool(pass.object);
  const selection =
    config.pool.id ?? `named ${JSON.stringify(config.pool.name)} in scope ${config.pool.scope}`;
  const index = await state.assertOwnTarget(pass.object, `pool ${selection}`);
  const connection = await state.connectDependent(pass.object, config.managerName);
  const pool = selectPool(await state.poolList(connection, config.pool.scope), config.pool);
  const ownership = await state.poolOwnership(index, pass.object, pool, connection);
  if (ownership.owner !== undefined)
    throw conflictError(`pool ${pool.objectId} (${pool.name})`, ownership.owner);
  const undecided: Failure | undefined =
    ownership.undecided === undefined
      ? undefined
      : {
          reason: "ConflictUndecided",
          message: `${formatRef(ownership.undecided)} is older and selects its pool by name in a scope that cannot be listed now: it may own ${pool.objectId}, so nothing is released until that is decided`,
        };
  const call: CallOptions = { signal: pass.signal };
  const allocations = await listAllocations(connection.api, pool, call).catch((error: unknown) => {
    // the list named a pool that is gone: list again next time
    if (error instanceof ReconcileError && error.reason === "PoolNotFound") state.forgetPoolLists(connection);
    throw error;
  });
  const plan = planIpPool({
    config,
    observed: { pool, allocations },
    previous: pass.object.status,
    now: pass.now,
    generation: pass.context.generation,
    oneShot: state.oneShot,
    hold: pass.hold ?? undecided,
  });
  const planned = plannedActions(plan.actions, plan.withheld);
  const act = plan.actions.length > 0 && state.mode === "apply";
  const result = act
    ? await releaseAll(connection.api, pool, plan.actions, config, state.maxAttempts, call)
    : undefined;
  const releases = result?.released ?? [];
  const reallocated = result?.reallocated ?? [];
  const { status, events } = plan.statusAfter(releases, result?.failure, result?.vanished);
  // a re-allocated address is decided again soon, as the new allocation it is
  const requeueAfterMs = reallocated.length > 0 ? CAPPED_REQUEUE_MS : (plan.requeueAfterMs ?? Infinity);
  const draft: Draft = {
    status,
    events: [...releases.map(releaseEvent), ...reallocated, ...events],
    changes: {
      tenantCorrections: [],
      releases: releases.map(({ poolId, ip, note }) =>
        note === undefined ? { poolId, ip } : { poolId, ip, note },
      ),
    },
    pool: {
      poolId: pool.objectId,
      usedAddressCount: status.usedAddressCount ?? 0,
      totalAddressCount: pool.totalAddressCount,
      strays: status.strayCount ?? 0,
    },
    planned,
    outcome: {
      type: "done",
      requeueAfterMs: Math.min(state.resync(config.syncIntervalMs), requeueAfterMs),
    },
  };
  if (result?.failure === undefined) return draft;
  const failed = failedDraft(pass, result.failure, {
    base: status,
    resyncMs: state.resync(config.syncIntervalMs),
  });
  return { ...draft, ...failed, events: [...(draft.events ?? []), ...(failed.events ?? [])] };
}

/** The pool a selection names in its scope's list; PoolNotFound or AmbiguousPool otherwise. */
export function selectPool(pools: readonly IpPool[], selection: PoolSelection): IpPool {
  const where = `scope ${selection.scope} (${pools.length} pool${pools.length === 1 ? "" : "s"} listed)`;
  if (selection.id !== undefined) {
    const pool = pools.find((p) => p.objectId === selection.id);
    if (pool === undefined) throw poolNotFound(`pool ${selection.id} is not in ${where}`);
    return pool;
  }
  const matches = pools.filter((p) => p.name === selection.name);
  if (matches.length === 0) throw poolNotFound(`no pool named ${JSON.stringify(selection.name)} in ${where}`);
  if (matches.length > 1) {
    const ids = matches.map((p) => p.objectId).join(", ");
    const message = `${matches.length} pools are named ${JSON.stringify(selection.name)} in ${where}: ${ids}; select one by spec.pool.id`;
    throw new ReconcileError({ reason: "AmbiguousPool", message });
  }
  return matches[0] as IpPool;
}

interface Releases {
  /** the releases the manager confirmed */
  released: ReleaseAction[];
  /** planned addresses a fresh list no longer shows: released by someone else meanwhile */
  vanished: string[];
  /** planned releases not made: a fresh list shows another allocation on the address */
  reallocated: ReconcileEvent[];
  /** what kept the others from being released; undefined when all went through */
  failure?: ReconcileError;
}

/**
 * Releases the planned strays one by one. An answer that concerns one address (false, "not
 * allocated" while still listed) is recorded and the next address is tried; an error that would
 * repeat for every address (transport, rights, a 409 storm) ends the pass.
 */
async function releaseAll(
  api: ManagerApi,
  pool: IpPool,
  actions: readonly ReleaseAction[],
  config: PoolConfig,
  maxAttempts: number,
  call: CallOptions,
): Promise<Releases> {
  const result: Releases = { released: [], vanished: [], reallocated: [] };
  const problems: string[] = [];
  let thrown: ReconcileError | undefined;
  for (const action of actions) {
    try {
      const outcome = await releaseOne(api, pool, action, config, maxAttempts, call);
      if (outcome === "released") result.released.push(action);
      else if (outcome === "vanished") result.vanished.push(action.ip);
      else if ("reallocated" in outcome)
        result.reallocated.push(reallocatedEvent(action, outcome.reallocated));
      else problems.push(`release of ${action.ip} from ${pool.objectId}: ${outcome.refused}`);
    } catch (error) {
      thrown = ReconcileError.from(error);
      problems.push(thrown.message);
      break;
    }
  }
  if (problems.length === 0) return result;
  const message = problems.join("; ");
  result.failure =
    thrown === undefined
      ? new ReconcileError({ reason: "ReleaseFailed", message })
      : new ReconcileError({
          reason: thrown.reason,
          message,
          terminal: thrown.terminal,
          cause: thrown.cause ?? thrown,
        });
  return result;
}

/** One DELETE, guarded; after a 409 or a "not allocated", the list is read again to see what holds. */
async function releaseOne(
  api: ManagerApi,
  pool: IpPool,
  action: ReleaseAction,
  config: PoolConfig,
  maxAttempts: number,
  call: CallOptions,
): Promise<"released" | "vanished" | { refused: string } | { reallocated: string }> {
  for (let attempt = 1; ; attempt++) {
    assertReleasable(config.allowed, action);
    try {
      const { released, answer } = await api.releaseAddress(pool.objectId, action.managerIp, call);
      return released ? "released" : { refused: `the manager answered ${answer}, not true` };
    } catch (error) {
      const rereadOn = ["NSX_ERR_CONFLICT", "NSX_ERR_NOT_ALLOCATED"];
      if (!(error instanceof NsxError) || !rereadOn.includes(error.code)) throw error;
      const conflict = error.code === "NSX_ERR_CONFLICT";
      if (conflict && attempt >= maxAttempts) {
        throw retriesExhausted(`release of ${action.ip} from ${pool.objectId}`, attempt, error);
      }
      const listed = (await listAllocations(api, pool, call)).find(
        (a) => canonical(a.ipAddress) === action.ip,
      );
      if (listed === undefined) return "vanished";
      // the address was released and allocated again meanwhile: another allocation, not the one planned
      const now = allocationIdentity(listed);
      if (!sameAllocation(action, now)) return { reallocated: describeIdentity(now) };
      if (!conflict)
        return { refused: `the manager answered that it is not allocated, yet lists it: ${error.message}` };
    }
  }
}

async function listAllocations(api: ManagerApi, pool: IpPool, call: CallOptions): Promise<Allocation[]> {
  try {
    return await api.listAllocations(pool.objectId, call);
  } catch (error) {
    if (!hasNsxCode(error, "NSX_ERR_NOT_FOUND")) throw error;
    throw poolNotFound(`pool ${pool.objectId}: ${error.message}`, error);
  }
}

function poolNotFound(message: string, cause?: unknown): ReconcileError {
  return new ReconcileError({ reason: "PoolNotFound", message, cause });
}

function canonical(text: string): string {
  const parsed = tryParseIp(text);
  return parsed === undefined ? text : formatIp(parsed);
}

function describeIdentity({ allocationId, note }: AllocationIdentity): string {
  const id = allocationId === undefined ? "no id" : `id ${allocationId}`;
  return note === undefined ? id : `${id}, note ${JSON.stringify(note)}`;
}

function reallocatedEvent(action: ReleaseAction, now: string): ReconcileEvent {
  const message = `${action.ip} of pool ${action.poolId} was not released: the manager now lists another allocation there (${now}) than the one planned (${describeIdentity(action)}); it is a new stray, whose grace period starts anew`;
  return { type: "Normal", reason: "AllocationReplaced", message };
}
