/**
 * What the IPPoolAllocations kind keeps across passes (its key in the reconciler's state,
 * state.ts's KindStateKey): the pool lists per manager and scope (fetched once, shared by every
 * object of the manager until they expire), and pool ids by name per list.
 */
import { SPEC_DEFAULTS, type IPPoolAllocations } from "../../api/types.ts";
import type { ObjectRef } from "../../api/refs.ts";
import type { IpPool } from "../../nsx/types.ts";
import type { ConflictIndex } from "../conflicts.ts";
import type { ManagerConnection } from "../connections.ts";
import type { KindStateKey, ReconcilerSettings } from "../state.ts";
import { POOL_LIST_DEFAULTS, PoolListCache } from "./pool-lists.ts";

/** Who owns a pool: another object (a conflict), or undecided while an older selection cannot be resolved. */
export interface PoolOwnership {
  owner?: ObjectRef;
  undecided?: ObjectRef;
}

/** The IPPoolAllocations kind's options (the reconciler's `kinds.IPPoolAllocations`). */
export interface PoolOptions {
  /** lifetime of a shared pool list; default 30000, Infinity for a one-shot pass */
  poolListTtlMs: number;
}

export class PoolState {
  readonly #poolLists: PoolListCache;
  /** pool name → its id (null: the name is not unique) per pool list, while the list is cached */
  readonly #poolIdsByName = new WeakMap<readonly IpPool[], Map<string, string | null>>();

  constructor(clock: ReconcilerSettings["clock"], options: PoolOptions) {
    this.#poolLists = new PoolListCache({ ttlMs: options.poolListTtlMs, clock });
  }

  /** The pools of a scope, shared by every object of the manager until the list expires. */
  poolList(connection: ManagerConnection, scope: string): Promise<readonly IpPool[]> {
    return this.#poolLists.get(connection.key, connection.api, scope);
  }

  /** A fresh list (the manager's own check): what the dependents then share. */
  refreshPoolList(connection: ManagerConnection, scope: string): Promise<readonly IpPool[]> {
    this.#poolLists.invalidate(connection.key, scope);
    return this.poolList(connection, scope);
  }

  /** Forget the lists of a manager: a pool that was listed turned out not to exist. */
  forgetPoolLists(connection: ManagerConnection): void {
    this.#poolLists.invalidate(connection.key);
  }

  /** Who owns `pool` among the pool objects of the same manager, once their selections resolve. */
  async poolOwnership(
    index: ConflictIndex,
    object: IPPoolAllocations,
    pool: IpPool,
    connection: ManagerConnection,
  ): Promise<PoolOwnership> {
    const lists = new Map<string, readonly IpPool[] | undefined>();
    for (const scope of index.nameScopes(object)) {
      // an unreadable scope leaves its objects undecided; it does not fail this object
      lists.set(scope, await this.poolList(connection, scope).catch(() => undefined));
    }
    return index.poolWinner(object, pool.objectId, (other) => {
      const { id, name, scope = SPEC_DEFAULTS.poolScope } = other.spec.pool;
      if (id !== undefined) return id;
      const list = lists.get(scope);
      if (list === undefined || name === undefined) return undefined;
      return this.#idsByName(list).get(name) ?? null;
    });
  }

  #idsByName(list: readonly IpPool[]): Map<string, string | null> {
    let ids = this.#poolIdsByName.get(list);
    if (ids === undefined) {
      ids = new Map();
      for (const pool of list) ids.set(pool.name, ids.has(pool.name) ? null : pool.objectId);
      this.#poolIdsByName.set(list, ids);
    }
    return ids;
  }
}

export const POOL_STATE: KindStateKey<PoolState, PoolOptions> = {
  kind: "IPPoolAllocations",
  defaults: Object.freeze({ poolListTtlMs: POOL_LIST_DEFAULTS.ttlMs }),
  create: (settings, options) => new PoolState(settings.clock, options),
};
