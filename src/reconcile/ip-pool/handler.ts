/**
 * The IPPoolAllocations kind, one pass of the common contract (reconcile/kind.ts): observe the pool in its
 * scope's shared list, decide who owns it, list its allocations; plan (plan.ts); release
 * each stray due with one DELETE, guarded at the moment of the call (assertReleasable). The
 * allocation list that decided the releases is the pre-write read: a pass is one list plus the
 * DELETEs. The list is read again only when an answer says it changed under us (a 409, or "not
 * allocated": 120056), and then each release still to come is decided again on the fresh list,
 * and a DELETE is sent only for the allocation planned (releaseTarget: the same id and note on
 * the address): an address released by someone else, or allocated again to someone new, is not
 * released, in `run` and in a one-shot `apply --release-strays` alike.
 */
import { formatRef } from "../../api/refs.ts";
import type { IPPoolAllocations } from "../../api/types.ts";
import type { Allocation, IpPool } from "../../nsx/types.ts";
import type { Failure } from "../conditions.ts";
import type { ConflictIndex } from "../conflicts.ts";
import type { ManagerConnection } from "../connections.ts";
import { hasNsxCode, ReconcileError } from "../errors.ts";
import { assertReleasable, planIpPool, releaseTarget, type PoolObservation } from "./plan.ts";
import type { PassContext, PassHandler } from "../kind.ts";
import type { ReleaseAction } from "./actions.ts";
import { resolvePool, type PoolConfig, type PoolSelection } from "./spec.ts";
import { conflictError } from "../state.ts";
import { POOL_STATE } from "./state.ts";

interface PoolTarget {
  config: PoolConfig;
  connection: ManagerConnection;
  index: ConflictIndex;
  /** the pool the selection names, once the first look found it */
  pool: IpPool | undefined;
  /** an older object that may own the pool, while that cannot be decided: releases are held */
  ownerUndecided: Failure | undefined;
}

export const ipPoolPass: PassHandler<IPPoolAllocations, PoolTarget, PoolObservation, ReleaseAction> = {
  async prepare(ctx) {
    const config = resolvePool(ctx.object);
    const { id, name, scope } = config.pool;
    const selection = id ?? `named ${JSON.stringify(name)} in scope ${scope}`;
    const index = await ctx.state.assertOwnTarget(ctx.object, `pool ${selection}`);
    const connection = await ctx.state.connectDependent(ctx.object, config.manager);
    return { config, connection, index, pool: undefined, ownerUndecided: undefined };
  },
  async observe(target, ctx) {
    // the pool and its owner are decided on the first look; a fresh read lists the allocations again
    target.pool ??= await ownPool(target, ctx);
    const allocations = await listAllocations(target, target.pool, ctx);
    return { pool: target.pool, allocations };
  },
  plan: (target, observed, ctx) =>
    planIpPool({
      config: target.config,
      observed,
      previous: ctx.object.status,
      now: ctx.now,
      generation: ctx.generation,
      oneShot: ctx.state.oneShot,
      writesBlockedBy: ctx.writesBlockedBy ?? target.ownerUndecided,
    }),
  async execute(action, { target }, ctx) {
    assertReleasable(target.config.allowed, action);
    const api = target.connection.api;
    const { released, answer } = await api.releaseAddress(action.poolId, action.managerIp, {
      signal: ctx.signal,
    });
    if (released) return "done";
    const message = `release of ${action.ip} from ${action.poolId}: the manager answered ${answer}, not true`;
    return { refused: { reason: "ReleaseFailed", message } };
  },
  rereadOn: {
    NSX_ERR_CONFLICT: "retry",
    NSX_ERR_NOT_ALLOCATED: { refuse: "ReleaseFailed", says: "the manager answered that it is not allocated" },
  },
  targetOf: releaseTarget,
  describe: (action) => `release of ${action.ip} from ${action.poolId}`,
};

/** The pool the selection names, and that no older object owns; an undecided owner blocks releases. */
async function ownPool(target: PoolTarget, ctx: PassContext<IPPoolAllocations>): Promise<IpPool> {
  const { config, connection, index } = target;
  const pool = selectPool(
    await ctx.state.of(POOL_STATE).poolList(connection, config.pool.scope),
    config.pool,
  );
  const ownership = await ctx.state.of(POOL_STATE).poolOwnership(index, ctx.object, pool, connection);
  if (ownership.owner !== undefined)
    throw conflictError(`pool ${pool.objectId} (${pool.name})`, ownership.owner);
  if (ownership.undecided !== undefined) {
    const message = `${formatRef(ownership.undecided)} is older and selects its pool by name in a scope that cannot be listed now: it may own ${pool.objectId}, so nothing is released until that is decided`;
    target.ownerUndecided = { reason: "ConflictUndecided", message };
  }
  return pool;
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

async function listAllocations(
  target: PoolTarget,
  pool: IpPool,
  ctx: PassContext<IPPoolAllocations>,
): Promise<Allocation[]> {
  try {
    return await target.connection.api.listAllocations(pool.objectId, { signal: ctx.signal });
  } catch (error) {
    if (!hasNsxCode(error, "NSX_ERR_NOT_FOUND")) throw error;
    // the list named a pool that is gone: list again next time
    ctx.state.of(POOL_STATE).forgetPoolLists(target.connection);
    throw poolNotFound(`pool ${pool.objectId}: ${error.message}`, error);
  }
}

function poolNotFound(message: string, cause?: unknown): ReconcileError {
  return new ReconcileError({ reason: "PoolNotFound", message, cause });
}
