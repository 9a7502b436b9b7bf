/**
 * The objects and the simulator state the benchmarks run on: one NSXManager (with its caps) and
 * its Secret, EdgeTenants for edges generated with another tenant (drift), and IPPoolAllocations
 * for pools that hold allowed addresses and strays. Pool i has the range 10.(i/256).(i%256).1-250;
 * allowed addresses sit at .10 upwards, strays at .100 upwards.
 */
import {
  API_VERSION,
  type EdgeTenant,
  type IPPoolAllocations,
  type NSXManager,
  type NsxvObject,
  type Secret,
} from "../../src/api/types.ts";
import type { PoolInput, SimulatorStateInput } from "../../src/simulator/index.ts";

export const NAMESPACE = "bench";
export const MANAGER_NAME = "nsx";
export const CREDENTIALS = { username: "admin", password: "default" } as const;
export const DESIRED_TENANT = "tenant-a";
export const DRIFTED_TENANT = "drifted";

export interface FleetOptions {
  /** edges `edge-1..edge-N`, each with an EdgeTenant */
  edges: number;
  /** pools `ipaddresspool-1..M`, each with an IPPoolAllocations */
  pools: number;
  /** allowed addresses allocated in each pool (kept) */
  allowedPerPool: number;
  /** allocated addresses outside spec.allowed in each pool (released) */
  straysPerPool: number;
  /** tenant of the generated edges; DRIFTED_TENANT for drift, DESIRED_TENANT for a converged fleet */
  edgeTenant: string;
  /** firewall rules of each generated edge; the generator's default (20, ~35 KB) when undefined */
  firewallRules?: number;
}

export interface ManagerCaps {
  maxConcurrentRequests: number;
  requestsPerSecond: number;
}

function octets(i: number): string {
  if (i < 1 || i > 65_535) throw new RangeError(`pool number ${i} is outside 1..65535`);
  return `10.${Math.floor(i / 256)}.${i % 256}`;
}

export function poolId(i: number): string {
  return `ipaddresspool-${i}`;
}

export function simulatorState(fleet: FleetOptions): SimulatorStateInput {
  const pools: PoolInput[] = [];
  for (let i = 1; i <= fleet.pools; i++) {
    const net = octets(i);
    const allocations = [
      ...Array.from({ length: fleet.allowedPerPool }, (_, k) => ({
        ip: `${net}.${10 + k}`,
        note: `vm-${k}`,
      })),
      ...Array.from({ length: fleet.straysPerPool }, (_, k) => ({
        ip: `${net}.${100 + k}`,
        note: `gone-${k}`,
      })),
    ];
    pools.push({
      id: poolId(i),
      name: `pool-${i}`,
      ranges: [{ start: `${net}.1`, end: `${net}.250` }],
      allocations,
    });
  }
  // the state file allows at most 10 000 edges per generate entry
  const edges = [];
  for (let idStart = 1; idStart <= fleet.edges; idStart += 10_000) {
    const count = Math.min(10_000, fleet.edges - idStart + 1);
    const rules = fleet.firewallRules !== undefined ? { firewallRules: fleet.firewallRules } : {};
    edges.push({ generate: { count, idStart, tenant: fleet.edgeTenant, ...rules } });
  }
  return { credentials: { ...CREDENTIALS }, edges, pools };
}

export function managerObject(url: string, caps: ManagerCaps): NSXManager {
  return {
    apiVersion: API_VERSION,
    kind: "NSXManager",
    metadata: { name: MANAGER_NAME, namespace: NAMESPACE, generation: 1 },
    spec: {
      url,
      credentialsSecretRef: { name: "nsx-credentials" },
      maxConcurrentRequests: caps.maxConcurrentRequests,
      requestsPerSecond: caps.requestsPerSecond,
    },
  };
}

export function credentialsSecret(): Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "nsx-credentials", namespace: NAMESPACE },
    stringData: { ...CREDENTIALS },
  };
}

export function edgeTenantObject(i: number): EdgeTenant {
  return {
    apiVersion: API_VERSION,
    kind: "EdgeTenant",
    metadata: { name: `edge-${i}`, namespace: NAMESPACE, generation: 1 },
    spec: { managerRef: { name: MANAGER_NAME }, edgeId: `edge-${i}`, tenant: DESIRED_TENANT },
  };
}

export function poolObject(
  i: number,
  fleet: Pick<FleetOptions, "allowedPerPool" | "straysPerPool">,
): IPPoolAllocations {
  const net = octets(i);
  return {
    apiVersion: API_VERSION,
    kind: "IPPoolAllocations",
    metadata: { name: `pool-${i}`, namespace: NAMESPACE, generation: 1 },
    spec: {
      managerRef: { name: MANAGER_NAME },
      pool: { id: poolId(i) },
      // the allowed addresses and a few more that are not allocated
      allowed: [`${net}.10-${net}.${10 + Math.max(fleet.allowedPerPool, 1) + 4}`],
      // released in the pass that finds them: the operator's path (no one-shot flag)
      release: { minStrayAge: "0s", maxPerSync: Math.max(fleet.straysPerPool, 1) },
    },
  };
}

/** Every object of the fleet, the NSXManager first. */
export function fleetObjects(url: string, caps: ManagerCaps, fleet: FleetOptions): NsxvObject[] {
  return [
    managerObject(url, caps),
    ...Array.from({ length: fleet.edges }, (_, i) => edgeTenantObject(i + 1)),
    ...Array.from({ length: fleet.pools }, (_, i) => poolObject(i + 1, fleet)),
  ];
}

/**
 * Several managers, `edges` EdgeTenants each: NSXManager `nsx-K` at `urls[K-1]` and EdgeTenants
 * `nsx-K-edge-I` for its edges edge-1..edge-N (each manager has its own), every EdgeTenant with
 * `syncInterval`, the NSXManagers first.
 */
export function managersFleetObjects(
  urls: readonly string[],
  caps: ManagerCaps,
  edges: number,
  syncInterval: string,
): NsxvObject[] {
  const managers = urls.map((url, k) => {
    const manager = managerObject(url, caps);
    return { ...manager, metadata: { ...manager.metadata, name: `${MANAGER_NAME}-${k + 1}` } };
  });
  const tenants = managers.flatMap((manager) =>
    Array.from({ length: edges }, (_, i): EdgeTenant => {
      const tenant = edgeTenantObject(i + 1);
      return {
        ...tenant,
        metadata: { ...tenant.metadata, name: `${manager.metadata.name}-edge-${i + 1}` },
        spec: { ...tenant.spec, managerRef: { name: manager.metadata.name }, syncInterval },
      };
    }),
  );
  return [...managers, ...tenants];
}

/** The pages of the manager's edge list the NSXManager's check reads (1024 edges a page; none without edges). */
export function edgeListPages(edges: number): number {
  return Math.ceil(edges / 1024);
}

/**
 * The fewest manager calls that converge the fleet: the edge list's pages (the NSXManager's
 * check); per edge a GET (no object has been read in full yet), which is also the pre-write read,
 * and per drifted edge its PUT; one pool list per manager and scope when there are pools (all are
 * in globalroot-0; the check reads it for them, or as the check itself without edges); per pool
 * one allocation list, which decides the releases, and one DELETE per stray.
 */
export function minimalConvergenceCalls(fleet: FleetOptions, driftedEdges: number): Record<string, number> {
  return {
    listEdges: edgeListPages(fleet.edges),
    // one read per edge, and for a first correction one more: the pass that records the original
    // tenant reads, and the pass that writes reads again (its pre-write read)
    getEdge: fleet.edges + driftedEdges,
    putEdge: driftedEdges,
    // the NSXManager's own check lists globalroot-0 for the pools, which share that list
    listPools: poolLists(fleet),
    listAllocations: fleet.pools,
    releaseAddress: fleet.pools * fleet.straysPerPool,
  };
}

/**
 * In sync: the edge list's pages, a GET only for the edges whose safety-net full read is due
 * (`fullReadsDue`), one allocation list per IPPoolAllocations, one pool list when there are pools
 * (or no edges); no writes.
 */
export function minimalSteadyStateCalls(fleet: FleetOptions, fullReadsDue: number): Record<string, number> {
  return {
    listEdges: edgeListPages(fleet.edges),
    getEdge: fullReadsDue,
    putEdge: 0,
    listPools: poolLists(fleet),
    listAllocations: fleet.pools,
    releaseAddress: 0,
  };
}

/** The NSXManager's check lists globalroot-0 when pools share it, or when no edge list answers the check. */
function poolLists(fleet: FleetOptions): number {
  return fleet.pools > 0 || fleet.edges === 0 ? 1 : 0;
}

export function sum(record: Record<string, number>): number {
  return Object.values(record).reduce((a, b) => a + b, 0);
}
