/**
 * A hung manager stalls only itself (issue 21): one manager is frozen (a TCP server that accepts
 * connections and never answers), K EdgeTenants use it, and a new EdgeTenant on a healthy manager
 * (the simulator, in a child process) arrives once the operator's workers are busy. Measured: how
 * long the new EdgeTenant waits for its correction, and how long the frozen manager's NSXManager
 * keeps a status that is not Ready=False, with the bulkhead and the circuit breaker and without
 * either (the operator before issue 21). Each case runs the real Operator (WorkQueue, Controller,
 * the shared reconcile) over a memory source, with the client's real timeouts. And what the
 * bulkhead costs a single manager: the time to correct N drifted edges with the default share of the
 * workers, and with all of them.
 */
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { API_VERSION, type EdgeTenant, type NSXManager, type Secret } from "../src/api/types.ts";
import { defaultConcurrencyPerManager } from "../src/operator/operator.ts";
import {
  credentialsSecret,
  CREDENTIALS,
  DESIRED_TENANT,
  DRIFTED_TENANT,
  fleetObjects,
  NAMESPACE,
  simulatorState,
  type FleetOptions,
} from "./lib/fixtures.ts";
import { MemorySource } from "../test/support/memory-source.ts";
import { ResultBuilder, type BenchResult } from "./lib/result.ts";
import { startSimulatorProcess } from "./lib/simulator-process.ts";
import { startOperator } from "./lib/wiring.ts";

export interface HungManagerCase {
  label: string;
  /** false: one manager may hold every worker */
  bulkhead: boolean;
  /** false: circuitBreakerFailures 0 */
  breaker: boolean;
}

export interface HungManagerBenchOptions {
  cases: readonly HungManagerCase[];
  /** EdgeTenants on the frozen manager */
  frozenTenants: number;
  /** spec.requestTimeoutSeconds of both NSXManagers (the client's default is 30) */
  requestTimeoutSeconds: number;
  /** the controller's workers (the operator's default is 4) */
  concurrency: number;
  /** when the new EdgeTenant arrives, after the operator started */
  lateAfterMs: number;
  /** per case: the longest wait for the new EdgeTenant */
  timeoutMs: number;
  /** the single-manager fleet of the cost measurement, at `latencyMs` per call */
  cost: { fleet: FleetOptions; latencyMs: number };
}

const CASES: readonly HungManagerCase[] = [
  { label: "defaults (bulkhead, circuit breaker)", bulkhead: true, breaker: true },
  { label: "no bulkhead, no breaker (as before issue 21)", bulkhead: false, breaker: false },
];

const costFleet = (edges: number): FleetOptions => ({
  edges,
  pools: 0,
  allowedPerPool: 0,
  straysPerPool: 0,
  edgeTenant: DRIFTED_TENANT,
});

export const HUNG_MANAGER_FULL: HungManagerBenchOptions = {
  cases: CASES,
  frozenTenants: 8,
  requestTimeoutSeconds: 30,
  concurrency: 4,
  lateAfterMs: 1_000,
  timeoutMs: 300_000,
  cost: { fleet: costFleet(200), latencyMs: 200 },
};

export const HUNG_MANAGER_QUICK: HungManagerBenchOptions = {
  ...HUNG_MANAGER_FULL,
  requestTimeoutSeconds: 2,
  timeoutMs: 60_000,
  cost: { fleet: costFleet(20), latencyMs: 200 },
};

export async function benchHungManager(options: HungManagerBenchOptions): Promise<BenchResult> {
  const result = new ResultBuilder("hung-manager");
  for (const c of options.cases) {
    const run = await runCase(c, options);
    const label = `${c.label}: K=${options.frozenTenants} timeout=${options.requestTimeoutSeconds}s workers=${options.concurrency}`;
    result.add({
      case: label,
      metric: "new EdgeTenant on the healthy manager: corrected after",
      value: run.lateMs,
      unit: "ms",
    });
    const corrected = run.lateMs < options.timeoutMs ? 1 : 0;
    result.add({ case: label, metric: "new EdgeTenant corrected", value: corrected, unit: "bool" });
    result.add({
      case: label,
      metric: "frozen NSXManager Ready=False after start",
      value: run.frozenNotReadyMs,
      unit: "ms",
    });
    result.detail(c.label, run);
  }
  await measureCost(result, options);
  result.note(
    "The frozen manager accepts TCP connections and never answers; every request to it waits out " +
      "spec.requestTimeoutSeconds. The new EdgeTenant is added lateAfterMs after the operator starts, " +
      "when the workers have taken the frozen manager's objects; its time runs from that add to its PUT. " +
      "A time equal to the case's timeout means it never happened within it.",
  );
  result.note(
    "Cost: one manager (the simulator, L ms per call, the NSXManager's default caps: 8 requests at once, " +
      "20 per second) and N drifted EdgeTenants, timed from the operator's start until every edge is " +
      "corrected, with the default share of the workers and with all of them: where the manager's latency " +
      "binds rather than its rate, a single manager gets half the throughput unless " +
      "--concurrency-per-manager equals --concurrency.",
  );
  return result.build();
}

interface CaseRun {
  lateMs: number;
  frozenNotReadyMs: number;
  reconcileErrors: number;
  errors: string[];
}

async function runCase(c: HungManagerCase, o: HungManagerBenchOptions): Promise<CaseRun> {
  const frozen = await startFrozenServer();
  const sim = await startSimulatorProcess({
    state: { credentials: { ...CREDENTIALS }, edges: [{ generate: { count: 1, tenant: DRIFTED_TENANT } }] },
  });
  const source = new MemorySource({
    objects: [
      manager("frozen", frozen.url, o.requestTimeoutSeconds),
      manager("healthy", sim.url, o.requestTimeoutSeconds),
      ...Array.from({ length: o.frozenTenants }, (_, i) =>
        tenant(`frozen-${i + 1}`, "frozen", `edge-${i + 1}`),
      ),
    ],
    secrets: [secret("frozen"), secret("healthy")],
    record: false,
  });
  const op = startOperator({
    source,
    concurrency: o.concurrency,
    // no resync during the case: only the first passes count
    syncIntervalMs: 3_600_000,
    ...(c.bulkhead ? {} : { concurrencyPerManager: o.concurrency }),
    ...(c.breaker ? {} : { clientOptions: { circuitBreakerFailures: 0 } }),
  });
  const startMs = performance.now();
  const frozenRef = { kind: "NSXManager", namespace: NAMESPACE, name: "frozen" } as const;
  try {
    await sleep(o.lateAfterMs);
    const addedMs = performance.now();
    source.change(tenant("late", "healthy", "edge-1"));
    let frozenNotReadyMs = o.timeoutMs;
    let lateMs = o.timeoutMs;
    while (performance.now() - addedMs < o.timeoutMs) {
      const manager = await source.store.get(frozenRef);
      const ready = manager?.status?.conditions?.find((x) => x.type === "Ready");
      if (ready?.status === "False" && frozenNotReadyMs === o.timeoutMs)
        frozenNotReadyMs = performance.now() - startMs;
      if (op.probe.tenantCorrections > 0 && lateMs === o.timeoutMs) lateMs = performance.now() - addedMs;
      if (lateMs < o.timeoutMs && frozenNotReadyMs < o.timeoutMs) break;
      await sleep(50);
    }
    return {
      lateMs: Math.round(lateMs),
      frozenNotReadyMs: Math.round(frozenNotReadyMs),
      reconcileErrors: op.probe.reconcileErrors,
      errors: op.probe.errors.slice(0, 5),
    };
  } finally {
    await op.stop();
    await Promise.all([sim.close(), frozen.close()]);
  }
}

/** A single-manager fleet converged with the default share of the workers, then with all of them. */
async function measureCost(result: ResultBuilder, o: HungManagerBenchOptions): Promise<void> {
  const { fleet, latencyMs } = o.cost;
  const label = `1 manager, N=${fleet.edges} drifted L=${latencyMs}ms workers=${o.concurrency}`;
  for (const perManager of [defaultConcurrencyPerManager(o.concurrency), o.concurrency]) {
    const sim = await startSimulatorProcess({ state: simulatorState(fleet), settings: { latencyMs } });
    // the NSXManager's default caps: 8 requests at once, 20 per second
    const objects = fleetObjects(sim.url, { maxConcurrentRequests: 8, requestsPerSecond: 20 }, fleet);
    const source = new MemorySource({ objects, secrets: [credentialsSecret()], record: false });
    const startMs = performance.now();
    const op = startOperator({ source, concurrency: o.concurrency, concurrencyPerManager: perManager });
    try {
      while (op.probe.tenantCorrections < fleet.edges && performance.now() - startMs < o.timeoutMs)
        await sleep(20);
      const per = `${perManager} per manager`;
      const elapsedMs = Math.round(performance.now() - startMs);
      result.add({ case: label, metric: `converged, ${per}`, value: elapsedMs, unit: "ms" });
      result.add({
        case: label,
        metric: `edges corrected, ${per}`,
        value: op.probe.tenantCorrections,
        unit: "edges",
      });
    } finally {
      await op.stop();
      await sim.close();
    }
  }
}

function manager(name: string, url: string, requestTimeoutSeconds: number): NSXManager {
  return {
    apiVersion: API_VERSION,
    kind: "NSXManager",
    metadata: { name, namespace: NAMESPACE, generation: 1 },
    spec: { url, credentialsSecretRef: { name: `${name}-credentials` }, requestTimeoutSeconds },
  };
}

function secret(managerName: string): Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: `${managerName}-credentials`, namespace: NAMESPACE },
    stringData: { ...CREDENTIALS },
  };
}

function tenant(name: string, managerName: string, edgeId: string): EdgeTenant {
  return {
    apiVersion: API_VERSION,
    kind: "EdgeTenant",
    metadata: { name, namespace: NAMESPACE, generation: 1 },
    spec: { managerRef: { name: managerName }, edgeId, tenant: DESIRED_TENANT },
  };
}

/** A manager that accepts connections and never answers: every request waits out its timeout. */
async function startFrozenServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
