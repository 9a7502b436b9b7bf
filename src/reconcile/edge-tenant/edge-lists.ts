/**
 * The manager's paged edge list, per manager client: one call per 1024 edges tells the tenant and
 * version of every edge, which is what decides which EdgeTenants need their edge read in full. The
 * mirror image of an informer's cache, for a system without watches: the NSXManager's pass
 * refreshes it once per interval, the EdgeTenants' passes read it. Kept per real manager, reached
 * the same verified way (ManagerConnection.sharedKey), not per NSXManager object: several objects
 * naming one manager share one list. Concurrent refreshes share one
 * fetch; a failed one (the client refuses a list past its bounds: maxEdgeListEdges,
 * maxEdgeListBytes) is kept as the reason its EdgeTenants are read one by one until the next. A
 * list is kept slim, whatever the manager sent: per edge its id, revision, and its name, tenant and
 * manager UUID cut as status shows them (managerValue), so what lists cost in memory is bounded too.
 * A page the same as at the last read of the list is not parsed again (nsx/edge-pages.ts): the
 * cost of a list every interval follows what changed on the manager.
 */
import { EdgePages } from "../../nsx/edge-pages.ts";
import type { CallOptions, EdgeSummary, ManagerApi } from "../../nsx/types.ts";
import { omitUndefined } from "../../util/options.ts";
import { managerValue } from "../conditions.ts";
import type { Clock } from "../../util/clock.ts";

/** The largest page a manager serves: the fewest calls. */
export const EDGE_LIST_PAGE_SIZE = 1024;

/** The edge list as one fetch saw it. */
export interface EdgeList {
  fetchedAtMs: number;
  /** who asked for the fetch (an NSXManager's client: ManagerConnection.key), when it was a check */
  fetchedFor?: string | undefined;
  byId: ReadonlyMap<string, EdgeSummary>;
}

/** A list another client of the same manager fetched within `withinMs` serves the check of `for`. */
export interface ListReuse {
  for: string;
  withinMs: number;
}

/** The latest fetch of a manager's list: the list, or why there is none. */
export type EdgeListState = { list: EdgeList; error?: undefined } | { list?: undefined; error: string };

export class EdgeListCache {
  readonly #clock: Pick<Clock, "now">;
  readonly #latest = new Map<string, EdgeListState>();
  readonly #fetching = new Map<string, Promise<EdgeList>>();
  /** each manager's pages at its last complete read */
  readonly #pages = new Map<string, EdgePages>();

  constructor(clock: Pick<Clock, "now">) {
    this.#clock = clock;
  }

  /**
   * Fetches every page now (the manager's pass) and keeps the result; rejects as the fetch did.
   * `reuse`: a list that another client of the same `key` (another NSXManager naming the same
   * manager) fetched for its check within `reuse.withinMs` is the result, with no call.
   */
  refresh(key: string, api: ManagerApi, call: CallOptions = {}, reuse?: ListReuse): Promise<EdgeList> {
    const latest = this.#latest.get(key)?.list;
    if (
      latest !== undefined &&
      reuse !== undefined &&
      latest.fetchedFor !== undefined &&
      latest.fetchedFor !== reuse.for &&
      this.#clock.now() - latest.fetchedAtMs < reuse.withinMs
    )
      return Promise.resolve(latest);
    let fetching = this.#fetching.get(key);
    if (fetching === undefined) {
      fetching = this.#fetch(key, api, call, reuse?.for).finally(() => this.#fetching.delete(key));
      this.#fetching.set(key, fetching);
    }
    return fetching;
  }

  /**
   * The manager accepted our write of an edge's tenant: the list shows it now, as the manager's
   * next list will (its version moved by an amount only a read tells).
   */
  wrote(key: string, edgeId: string, tenant: string): void {
    const list = this.#latest.get(key)?.list;
    const summary = list?.byId.get(edgeId);
    if (list === undefined || summary === undefined) return;
    const { revision: _unknown, ...rest } = summary;
    (list.byId as Map<string, EdgeSummary>).set(edgeId, { ...rest, tenant });
  }

  #pagesOf(key: string): EdgePages {
    let pages = this.#pages.get(key);
    if (pages === undefined) this.#pages.set(key, (pages = new EdgePages()));
    return pages;
  }

  /** What the last refresh of this manager's list got; undefined when none ran. */
  latest(key: string): EdgeListState | undefined {
    return this.#latest.get(key);
  }

  async #fetch(key: string, api: ManagerApi, call: CallOptions, fetchedFor?: string): Promise<EdgeList> {
    try {
      // slim as the pages come: a list never holds more of the manager's strings than it keeps;
      // a page the same as at the last read is taken from it, not parsed again
      const edges = await api.listEdges({
        ...call,
        pageSize: EDGE_LIST_PAGE_SIZE,
        keep: slim,
        pages: this.#pagesOf(key),
      });
      const list = { fetchedAtMs: this.#clock.now(), fetchedFor, byId: new Map(edges.map((e) => [e.id, e])) };
      this.#latest.set(key, { list });
      return list;
    } catch (error) {
      this.#latest.set(key, { error: error instanceof Error ? error.message : String(error) });
      throw error;
    }
  }
}

/**
 * What the passes read of a summary (the NSXManager's: the manager's UUID; an EdgeTenant's: the
 * rest), its strings cut as status keeps them:
 * compared with spec.tenant (at most 256 characters) a cut tenant is drift, which a read of the
 * edge settles, and compared with status.observedTenant it is what status shows.
 */
function slim(summary: EdgeSummary): EdgeSummary {
  const { id, name, tenant, revision, vsmUuid } = summary;
  const cut = (text: string | undefined) => (text === undefined ? undefined : managerValue(text));
  return omitUndefined({ id, name: cut(name), tenant: cut(tenant), revision, vsmUuid: cut(vsmUuid) });
}
