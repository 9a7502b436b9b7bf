/**
 * Sick managers stall only themselves (issues 21, 30): S managers are sick, each with K
 * EdgeTenants: hung (a TCP server that accepts connections and never answers: every request
 * waits out its timeout) or slow (the simulator, answering every call just under the timeout, so
 * the circuit breaker never trips). A healthy manager (the simulator, in a child process) gets a
 * new drifted EdgeTenant at several moments of the run: the first while the workers are taken by
 * the sick managers' objects, the others later (after the breaker opened on the hung ones).
 * Measured: how long each new EdgeTenant waits for its correction (the worst of them: "at any
 * moment"), and how many of the sick managers' objects say they cannot reach their manager by
 * the end. Each case runs the real Operator (WorkQueue, Controller, the shared reconcile) over a
 * memory source, with the client's real timeouts, at the operator's default concurrency (4, 2 per
 * manager). And what the bulkhead costs a single manager: the time to correct N drifted edges
 * with the default share of the workers, and with all of them.
 */
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import {
  API_VERSION,
  type EdgeTenant,
  type NSXManager,
  type NsxvObject,
  type Secret,
} from "../src/api/types.ts";
import { defaultConcurrencyPerManager } from "../src/operator/operator.ts";
import { startSimulator } from "../src/simulator/index.ts";
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
import { atMost, ResultBuilder, type BenchResult } from "./lib/result.ts";
import { startSimulatorProcess } from "./lib/simulator-process.ts";
import { startOperator } from "./lib/wiring.ts";

export interface HungManagerCase {
  /** sick managers at once */
  sick: number;
  /** hung: never answers; slow: answers every call just under its timeout */
  kind: "hung" | "slow";
}

export interface HungManagerBenchOptions {
  cases: readonly HungManagerCase[];
  /** EdgeTenants on each sick manager */
  sickTenants: number;
  /** spec.requestTimeoutSeconds of every NSXManager (the client's default is 30) */
  requestTimeoutSeconds: number;
  /** the controller's workers (the operator's default is 4) */
  concurrency: number;
  /** when each new EdgeTenant arrives on the healthy manager, from the operator's start */
  arrivalsMs: readonly number[];
  /** per arrival: the longest wait for its correction */
  timeoutMs: number;
  /** the single-manager fleet of the cost measurement, at `latencyMs` per call, given at most `timeoutMs` */
  cost: { fleet: FleetOptions; latencyMs: number; timeoutMs: number };
}

/** The figure: a healthy manager's new EdgeTenant is corrected within this, at any moment. */
const CORRECTED_WITHIN_MS = 5_000;

const costFleet = (edges: number): FleetOptions => ({
  edges,
  pools: 0,
  allowedPerPool: 0,
  straysPerPool: 0,
  edgeTenant: DRIFTED_TENANT,
});

export const HUNG_MANAGER_FULL: HungManagerBenchOptions = {
  cases: [1, 2, 4, 8].flatMap((sick): HungManagerCase[] => [
    { sick, kind: "hung" },
    ...(sick > 1 ? [{ sick, kind: "slow" } as const] : []),
  ]),
  sickTenants: 4,
  // the 30 s default makes a case last minutes; 10 s keeps every rule (3 timeouts open the breaker)
  requestTimeoutSeconds: 10,
  concurrency: 4,
  // while the workers hold the sick managers' first passes, after a round of timeouts, after the breaker opened
  arrivalsMs: [1_000, 12_000, 35_000],
  timeoutMs: 60_000,
  cost: { fleet: costFleet(200), latencyMs: 200, timeoutMs: 300_000 },
};

export const HUNG_MANAGER_QUICK: HungManagerBenchOptions = {
  ...HUNG_MANAGER_FULL,
  cases: [
    { sick: 4, kind: "hung" },
    { sick: 4, kind: "slow" },
  ],
  requestTimeoutSeconds: 2,
  arrivalsMs: [500, 3_000],
  timeoutMs: 20_000,
  cost: { fleet: costFleet(20), latencyMs: 200, timeoutMs: 60_000 },
};

export async function benchHungManager(options: HungManagerBenchOptions): Promise<BenchResult> {
  const result = new ResultBuilder("hung-manager");
  for (const c of options.cases) {
    const run = await runCase(c, options);
    const label = `${c.sick} ${c.kind} manager${c.sick === 1 ? "" : "s"} x ${options.sickTenants} EdgeTenants, timeout ${options.requestTimeoutSeconds}s, workers ${options.concurrency}`;
    const worst = Math.max(...run.arrivalsMs);
    result.add({
      case: label,
      metric: "new EdgeTenant on a healthy manager: corrected after (worst)",
      value: worst,
      unit: "ms",
      target: atMost(worst, CORRECTED_WITHIN_MS, "ms"),
    });
    result.add({
      case: label,
      metric: "new EdgeTenants corrected",
      value: run.arrivalsMs.filter((ms) => ms < options.timeoutMs).length,
      unit: `of ${options.arrivalsMs.length}`,
    });
    if (c.kind === "hung")
      result.add({
        case: label,
        metric: "sick managers' objects saying so at the end",
        value: run.sayingSo,
        unit: `of ${c.sick * (options.sickTenants + 1)}`,
      });
    result.detail(label, run);
  }
  await measureCost(result, options);
  result.note(
    "A hung manager accepts TCP connections and never answers; a slow one (the simulator) answers every " +
      "call 1 s before spec.requestTimeoutSeconds, so its breaker never opens. Each new EdgeTenant is " +
      "added at its arrival time (from the operator's start) on the healthy manager, its edge drifted; its " +
      "time runs from that add to its PUT (a first correction is two passes: the record, then the write). " +
      "A time equal to the case's timeout means it never happened within it. Objects saying so: the sick " +
      "managers' NSXManagers and EdgeTenants whose Ready is False or Unknown at the end of the case.",
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
  /** per arrival: ms from its add to its correction */
  arrivalsMs: number[];
  /** the sick managers' objects whose Ready is not True at the end */
  sayingSo: number;
  reconcileErrors: number;
  errors: string[];
}

/** Sick managers of the case, each an NSXManager with `sickTenants` EdgeTenants, and how to stop them. */
async function sickManagers(
  c: HungManagerCase,
  o: HungManagerBenchOptions,
): Promise<{ objects: NsxvObject[]; secrets: Secret[]; close: () => Promise<void> }> {
  const servers: { url: string; close(): Promise<void> }[] = [];
  for (let i = 0; i < c.sick; i++) {
    servers.push(
      c.kind === "hung"
        ? await startFrozenServer()
        : await startSimulator({
            state: { credentials: { ...CREDENTIALS }, edges: [{ generate: { count: o.sickTenants } }] },
            settings: { latencyMs: o.requestTimeoutSeconds * 1000 - 1000 },
          }),
    );
  }
  const objects = servers.flatMap((server, i) => [
    manager(`sick-${i + 1}`, server.url, o.requestTimeoutSeconds),
    ...Array.from({ length: o.sickTenants }, (_, t) =>
      tenant(`sick-${i + 1}-${t + 1}`, `sick-${i + 1}`, `edge-${t + 1}`),
    ),
  ]);
  return {
    objects,
    secrets: servers.map((_, i) => secret(`sick-${i + 1}`)),
    close: async () => void (await Promise.all(servers.map((s) => s.close()))),
  };
}

async function runCase(c: HungManagerCase, o: HungManagerBenchOptions): Promise<CaseRun> {
  const sick = await sickManagers(c, o);
  const arrivals = o.arrivalsMs.length;
  const sim = await startSimulatorProcess({
    state: {
      credentials: { ...CREDENTIALS },
      edges: [{ generate: { count: arrivals, tenant: DRIFTED_TENANT } }],
    },
  });
  const source = new MemorySource({
    // the sick managers and their objects come first: they take the workers first
    objects: [...sick.objects, manager("healthy", sim.url, o.requestTimeoutSeconds)],
    secrets: [...sick.secrets, secret("healthy")],
    record: false,
  });
  const op = startOperator({
    source,
    concurrency: o.concurrency,
    // no resync during the case: only what a change or a failure queues
    syncIntervalMs: 3_600_000,
  });
  const startMs = performance.now();
  try {
    const arrivalsMs: number[] = [];
    for (let a = 0; a < arrivals; a++) {
      const due = (o.arrivalsMs[a] as number) - (performance.now() - startMs);
      if (due > 0) await sleep(due);
      const corrections = op.probe.tenantCorrections;
      const addedMs = performance.now();
      source.change(tenant(`new-${a + 1}`, "healthy", `edge-${a + 1}`));
      while (op.probe.tenantCorrections === corrections && performance.now() - addedMs < o.timeoutMs)
        await sleep(20);
      arrivalsMs.push(Math.round(Math.min(performance.now() - addedMs, o.timeoutMs)));
    }
    const sayingSo = sick.objects.filter((object) => {
      const status = source.statusOf({ kind: object.kind, namespace: NAMESPACE, name: object.metadata.name });
      const ready = status?.conditions?.find((x) => x.type === "Ready");
      return ready !== undefined && ready.status !== "True";
    }).length;
    return {
      arrivalsMs,
      sayingSo,
      reconcileErrors: op.probe.reconcileErrors,
      errors: op.probe.errors.slice(0, 5),
    };
  } finally {
    await op.stop();
    await Promise.all([sim.close(), sick.close()]);
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
      while (op.probe.tenantCorrections < fleet.edges && performance.now() - startMs < o.cost.timeoutMs)
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
