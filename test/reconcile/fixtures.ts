/**
 * Builders shared by the reconcile tests: times, object metadata, a manager's error, and a fake
 * manager (an object literal implementing ManagerApi over in-memory state, with a call log and
 * injectable faults). Each kind's builders are in its folder's fixtures.ts (edge-tenant/,
 * ip-pool/, nsx-manager/).
 */
import type { ObjectMeta } from "../../src/api/types.ts";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import { NsxApiError } from "../../src/nsx/errors.ts";
import type { Allocation, EdgeSummary, IpPool, ManagerApi, ReleaseAnswer } from "../../src/nsx/types.ts";
import type { Failure } from "../../src/reconcile/conditions.ts";
import type { KindPlan, Settled } from "../../src/reconcile/kind.ts";
import type { Action } from "../../src/reconcile/plan.ts";

export const T0 = new Date("2024-05-01T12:00:00Z");
export const at = (ms: number): Date => new Date(T0.getTime() + ms);
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;

export type Meta = Partial<ObjectMeta>;

export function meta(overrides: Meta = {}): ObjectMeta {
  return {
    name: "obj",
    namespace: "ns",
    generation: 1,
    creationTimestamp: "2024-01-01T00:00:00Z",
    ...overrides,
  };
}

export function apiError(
  status: number,
  method = "PUT",
  path = "/api/4.0/edges/edge-1",
  errorCode?: string,
): NsxApiError {
  return new NsxApiError({
    status,
    method,
    path,
    errors: [
      { details: `status ${status} from the fake`, ...(errorCode === undefined ? {} : { errorCode }) },
    ],
  });
}

export interface FakeState {
  edges: Map<string, string>;
  /** what the edge list shows instead of the edges, by id (a manager whose summaries lag) */
  staleSummaries?: Map<string, EdgeSummary>;
  pools: Map<string, IpPool[]>;
  allocations: Map<string, Allocation[]>;
}

/**
 * Faults: each call pops the first entry of its list (an Error to throw, or for release the
 * answer: false for "false", or what the manager said).
 */
export interface FakeFaults {
  getEdge?: Error[];
  putEdge?: Error[];
  listPools?: Error[];
  listAllocations?: Error[];
  releaseAddress?: (Error | false | ReleaseAnswer)[];
  listEdges?: Error[];
}

export interface FakeManager {
  api: ManagerApi & { close(): Promise<void>; destroy(): Promise<void> };
  state: FakeState;
  faults: FakeFaults;
  /** one entry per call: `getEdge edge-1`, `releaseAddress ipaddresspool-1 10.0.0.5`, ... */
  calls: string[];
  /** the documents PUT, as sent */
  puts: EdgeDocument[];
  /** run before each call's effect (after it is logged): e.g. change the state between two reads */
  before?: (call: string) => void;
  /** while set, every call waits for it before it is logged (a manager that hangs: a promise that never settles) */
  hold?: Promise<void>;
  closed: boolean;
}

export function fakeManager(
  init: {
    edges?: Record<string, string>;
    pools?: Record<string, IpPool[]>;
    allocations?: Record<string, Allocation[]>;
    faults?: FakeFaults;
  } = {},
): FakeManager {
  const fake: FakeManager = {
    state: {
      edges: new Map(Object.entries(init.edges ?? {})),
      pools: new Map(Object.entries(init.pools ?? {})),
      allocations: new Map(Object.entries(init.allocations ?? {})),
    },
    faults: init.faults ?? {},
    calls: [],
    puts: [],
    closed: false,
    api: {
      async getEdge(edgeId) {
        await fake.hold;
        enter(`getEdge ${edgeId}`, "getEdge");
        const xml = fake.state.edges.get(edgeId);
        if (xml === undefined) throw apiError(404, "GET", `/api/4.0/edges/${edgeId}`, "202");
        return EdgeDocument.parse(xml);
      },
      async putEdge(edgeId, doc) {
        await fake.hold;
        enter(`putEdge ${edgeId}`, "putEdge");
        fake.puts.push(doc.clone());
        const next = doc.clone().setField("version", String((doc.version ?? 0) + 1));
        fake.state.edges.set(edgeId, next.serialize());
      },
      async listPools(scope) {
        await fake.hold;
        enter(`listPools ${scope}`, "listPools");
        return structuredClone(fake.state.pools.get(scope) ?? []);
      },
      async listAllocations(poolId) {
        await fake.hold;
        enter(`listAllocations ${poolId}`, "listAllocations");
        const list = fake.state.allocations.get(poolId);
        if (list === undefined)
          throw apiError(400, "GET", `/api/2.0/services/ipam/pools/${poolId}/ipaddresses`, "120054");
        return structuredClone(list);
      },
      async releaseAddress(poolId, ip) {
        await fake.hold;
        const answer = enter(`releaseAddress ${poolId} ${ip}`, "releaseAddress");
        if (answer === false) return { released: false, answer: "false" };
        if (answer !== undefined) return answer;
        const list = fake.state.allocations.get(poolId) ?? [];
        fake.state.allocations.set(
          poolId,
          list.filter((a) => a.ipAddress !== ip),
        );
        return { released: true, answer: "true" };
      },
      async listEdges() {
        await fake.hold;
        enter("listEdges", "listEdges");
        return [...fake.state.edges.entries()].map(([id, xml]) => {
          const stale = fake.state.staleSummaries?.get(id);
          if (stale !== undefined) return structuredClone(stale);
          const doc = EdgeDocument.parse(xml);
          return omitUndefinedSummary({ id, name: doc.name, tenant: doc.tenant, revision: doc.version });
        });
      },
      async close() {
        fake.closed = true;
      },
      async destroy() {
        fake.closed = true;
      },
    },
  };
  function enter(call: string, kind: keyof FakeFaults): false | ReleaseAnswer | undefined {
    fake.calls.push(call);
    fake.before?.(call);
    const fault = fake.faults[kind]?.shift();
    if (fault instanceof Error) throw fault;
    return fault;
  }
  return fake;
}

/** calls whose text starts with the prefix */
export function count(calls: readonly string[], prefix: string): number {
  return calls.filter((c) => c.startsWith(prefix)).length;
}

/** What a plan settles to when every action it planned was carried out. */
export function allDone<A extends Action>(plan: KindPlan<A>, failure?: Failure): Settled {
  return plan.settle({ done: [...plan.actions], dropped: [], refused: [] }, failure);
}

/** What a plan settles to when these of its actions were carried out (none: `[]`). */
export function onlyDone<A extends Action>(
  plan: KindPlan<A>,
  done: readonly A[],
  failure?: Failure,
): Settled {
  return plan.settle({ done: [...done], dropped: [], refused: [] }, failure);
}

function omitUndefinedSummary(summary: EdgeSummary): EdgeSummary {
  return Object.fromEntries(Object.entries(summary).filter(([, v]) => v !== undefined)) as EdgeSummary;
}
