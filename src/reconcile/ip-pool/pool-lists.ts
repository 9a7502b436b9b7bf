/**
 * The pool list of a manager and scope, fetched once and shared by every object that needs it:
 * a pass over N IPPoolAllocations objects of one manager lists the pools once, not N times.
 * Concurrent requests for the same list share one fetch; a failed fetch is not kept. The
 * lifetime is a parameter: the CLI keeps lists for its one pass (`ttlMs: Infinity`), the
 * operator for a short while (default 30 s) so that pool changes are seen soon enough.
 */
import type { IpPool, ManagerApi } from "../../nsx/types.ts";
import { realClock, type Clock } from "../../util/clock.ts";
import { withDefaults } from "../../util/options.ts";

export interface PoolListCacheOptions {
  /** how long a fetched list is served, from when it arrived; Infinity = as long as the cache lives. Default 30000 */
  ttlMs?: number;
  /** default realClock */
  clock?: Pick<Clock, "now">;
}

export const POOL_LIST_DEFAULTS = Object.freeze({ ttlMs: 30_000, clock: realClock });

interface Entry {
  list: Promise<readonly IpPool[]>;
  /** undefined while the fetch runs */
  fetchedAtMs: number | undefined;
}

export class PoolListCache {
  readonly #ttlMs: number;
  readonly #clock: Pick<Clock, "now">;
  readonly #entries = new Map<string, Entry>();

  constructor(options: PoolListCacheOptions = {}) {
    const o = withDefaults(POOL_LIST_DEFAULTS, options);
    this.#ttlMs = o.ttlMs;
    this.#clock = o.clock;
  }

  /** `managerKey` names the manager and its client (a new Secret, a new key): lists never cross clients. */
  get(managerKey: string, api: ManagerApi, scope: string): Promise<readonly IpPool[]> {
    const key = `${managerKey}\n${scope}`;
    const cached = this.#entries.get(key);
    if (cached !== undefined && (cached.fetchedAtMs === undefined || this.#fresh(cached.fetchedAtMs))) {
      return cached.list;
    }
    const entry: Entry = { list: api.listPools(scope), fetchedAtMs: undefined };
    this.#entries.set(key, entry);
    entry.list.then(
      () => {
        entry.fetchedAtMs = this.#clock.now();
      },
      () => {
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
      },
    );
    return entry.list;
  }

  /** Forget a list (a pool that was listed turned out not to exist), or every list of a manager. */
  invalidate(managerKey: string, scope?: string): void {
    for (const key of this.#entries.keys()) {
      if (scope === undefined ? key.startsWith(`${managerKey}\n`) : key === `${managerKey}\n${scope}`) {
        this.#entries.delete(key);
      }
    }
  }

  #fresh(fetchedAtMs: number): boolean {
    return this.#clock.now() - fetchedAtMs < this.#ttlMs;
  }
}
