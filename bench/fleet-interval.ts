/**
 * `run` over a fleet at a short sync interval, list first (issue 23): M managers (a simulator
 * process each) with N edges each, an EdgeTenant per edge with `syncInterval`, served by the real
 * Operator in a child process (lib/scale-child.ts, memory source) whose peak RSS is its own. After
 * the first pass (every object's status written) and some intervals to settle (two in a bench run), the managers' calls
 * are counted for a window of steady state; then edges are changed out of band on their managers,
 * one after another, and the time from the change to the simulator counting the correcting PUT is
 * measured (the NSXManager's next list shows the drift and wakes the EdgeTenant: GET + PUT).
 */
import type { ChildProcess } from "node:child_process";
import {
  DESIRED_TENANT,
  DRIFTED_TENANT,
  simulatorState,
  sum,
  type FleetOptions,
  type ManagerCaps,
} from "./lib/fixtures.ts";
import { atMost, exactly, ResultBuilder, type BenchResult } from "./lib/result.ts";
import { next, now, sleep, startScaleChild, stopChild, waitForPut } from "./lib/scale-driver.ts";
import type { ScaleChildReport, ScaleChildStart } from "./lib/scale-protocol.ts";
import { totalsByRoute } from "../test/support/calls.ts";
import { startSimulatorProcess, type SimulatorProcess } from "./lib/simulator-process.ts";
import { median } from "./lib/stats.ts";
import { runInCaseLimit } from "./scale.ts";

const MIB = 2 ** 20;

export interface FleetIntervalCase {
  managers: number;
  /** run the operator in a memory cgroup with the Deployment's limit (scale.ts runInCaseLimit) */
  inDeploymentLimit?: boolean;
}

export interface FleetIntervalOptions {
  cases: readonly FleetIntervalCase[];
  /** edges (and EdgeTenants) per manager */
  edges: number;
  /** every EdgeTenant's spec.syncInterval, in seconds */
  syncIntervalSeconds: number;
  /** sync intervals to settle after the first pass, before the window (the smoke test: none) */
  settleIntervals: number;
  /** the window of steady state whose calls are counted */
  windowMs: number;
  /** edges changed out of band, one after another, each timed to its PUT */
  drifts: number;
  caps: ManagerCaps;
  concurrency: number;
  syncTimeoutMs: number;
  targets: { callsPerManagerInWindow: number; driftToPutMs: number };
}

export const FLEET_INTERVAL_FULL: FleetIntervalOptions = {
  cases: [{ managers: 1 }, { managers: 8 }, { managers: 8, inDeploymentLimit: true }],
  edges: 2000,
  syncIntervalSeconds: 10,
  settleIntervals: 2,
  windowMs: 30_000,
  drifts: 3,
  // the scale benchmark's caps: the first pass reads every edge in full (no full read yet)
  caps: { maxConcurrentRequests: 16, requestsPerSecond: 1_000 },
  concurrency: 32,
  syncTimeoutMs: 600_000,
  targets: { callsPerManagerInWindow: 40, driftToPutMs: 15_000 },
};

export const FLEET_INTERVAL_QUICK: FleetIntervalOptions = {
  ...FLEET_INTERVAL_FULL,
  cases: [{ managers: 1 }, { managers: 2 }],
  edges: 200,
  windowMs: 10_000,
  drifts: 1,
  syncTimeoutMs: 120_000,
};

export async function benchFleetInterval(options: FleetIntervalOptions): Promise<BenchResult> {
  const result = new ResultBuilder("fleet-interval");
  const most = Math.max(...options.cases.map((c) => c.managers));
  // in sync; edges without user firewall rules (~10 KB) to keep eight simulators small
  const fleet: FleetOptions = {
    edges: options.edges,
    pools: 0,
    allowedPerPool: 0,
    straysPerPool: 0,
    edgeTenant: DESIRED_TENANT,
    firewallRules: 0,
  };
  const sims = await Promise.all(
    Array.from({ length: most }, () => startSimulatorProcess({ state: simulatorState(fleet) })),
  );
  try {
    for (const c of options.cases) {
      const label = `${c.managers} manager${c.managers === 1 ? "" : "s"} x ${options.edges} EdgeTenants, syncInterval ${options.syncIntervalSeconds}s`;
      await runInCaseLimit(result, label, c.inDeploymentLimit, async (caseLabel, execPath) => {
        try {
          await runCase(result, caseLabel, sims.slice(0, c.managers), fleet, options, execPath);
        } catch (error) {
          // an operator that runs out of memory in the limit is a figure too: the next case still runs
          const message = error instanceof Error ? error.message : String(error);
          result.add({
            case: caseLabel,
            metric: "ran to the end",
            value: 0,
            unit: "bool",
            target: exactly(0, 1),
          });
          result.note(`${caseLabel}: ${message}`);
        }
      });
    }
  } finally {
    await Promise.all(sims.map((s) => s.close()));
  }
  result.note(
    `Operator (memory source, ${options.concurrency} workers) and each simulator in their own process; caps ` +
      `${options.caps.maxConcurrentRequests} concurrent, ${options.caps.requestsPerSecond} requests/s per manager. First pass: ` +
      "until every object's status was written once; it reads every edge in full (no object has a full read yet). " +
      `Steady state: after ${options.settleIntervals} intervals to settle, every manager's calls counted for ${options.windowMs / 1000} s ` +
      "(per manager and interval: the list's pages, the pool check, and the safety net's full reads, spread over fullReadInterval, 1 h). " +
      "Drift → PUT: an edge's tenant changed through a simulator's control API, timed to the simulator counting the PUT (polled every 5 ms).",
  );
  return result.build();
}

async function runCase(
  result: ResultBuilder,
  label: string,
  sims: readonly SimulatorProcess[],
  fleet: FleetOptions,
  options: FleetIntervalOptions,
  execPath: string | undefined,
): Promise<void> {
  const intervalMs = options.syncIntervalSeconds * 1000;
  const start: ScaleChildStart = {
    source: { type: "memory" },
    url: sims[0]?.url ?? "",
    fleet,
    caps: options.caps,
    concurrency: options.concurrency,
    syncIntervalMs: intervalMs,
    syncTimeoutMs: options.syncTimeoutMs,
    managers: { urls: sims.map((s) => s.url), edgeSyncInterval: `${options.syncIntervalSeconds}s` },
  };
  const { child, synced } = await startScaleChild(start, execPath);
  try {
    const add = (metric: string, value: number, unit: string, target?: ReturnType<typeof atMost>) =>
      result.add({ case: label, metric, value, unit, ...(target ? { target } : {}) });
    add("first pass (all objects)", synced.ms, "ms");
    add("first pass complete", synced.ok ? 1 : 0, "bool", exactly(synced.ok ? 1 : 0, 1));

    await sleep(options.settleIntervals * intervalMs);
    await Promise.all(sims.map((s) => s.control.resetCounters()));
    await sleep(options.windowMs);
    assertAlive(child, "in the steady state");
    const perSim = await Promise.all(sims.map(async (s) => totalsByRoute(await s.control.counters())));
    const calls: Record<string, number> = {};
    for (const c of perSim)
      for (const [route, n] of Object.entries(c)) calls[route] = (calls[route] ?? 0) + n;
    const perManager = sum(calls) / sims.length;
    const intervals = options.windowMs / intervalMs;
    add(
      `manager calls in ${options.windowMs / 1000} s, per manager`,
      perManager,
      "calls",
      atMost(perManager, options.targets.callsPerManagerInWindow),
    );
    add("manager calls per interval, all managers", sum(calls) / intervals, "calls");
    add(
      "edge list pages, per manager and interval",
      (calls["listEdges"] ?? 0) / sims.length / intervals,
      "calls",
    );
    add(
      "full reads (GET), per manager and interval",
      (calls["getEdge"] ?? 0) / sims.length / intervals,
      "calls",
    );
    const writes = (calls["putEdge"] ?? 0) + (calls["releaseAddress"] ?? 0);
    add("writes in steady state", writes, "calls", exactly(writes, 0));

    const latencies = await driftToPut(sims, options);
    const worst = Math.max(...latencies.map((l) => l ?? Number.NaN));
    add("drift → PUT (median)", median(latencies.map((l) => l ?? Number.NaN)), "ms");
    add("drift → PUT (worst)", worst, "ms", atMost(worst, options.targets.driftToPutMs, " ms"));

    assertAlive(child, "during the steady state and the drifts");
    child.send("report");
    const after = await next<ScaleChildReport>(child, "report", 60_000);
    add("peak RSS", after.maxRssBytes / MIB, "MiB");
    add("live heap (after a full GC)", (after.liveHeapBytes ?? Number.NaN) / MIB, "MiB");
    add("peak V8 heap (total)", after.peakHeapTotalBytes / MIB, "MiB");
    add("V8 heap limit (Node's choice)", after.heapSizeLimitBytes / MIB, "MiB");
    result.detail(label, { calls, perSim, latencies, synced, after, errors: after.errors });
  } finally {
    await stopChild(child);
  }
}

/** Changes `options.drifts` edges out of band, on managers in turn: each one's ms to its PUT (undefined: none came). */
async function driftToPut(
  sims: readonly SimulatorProcess[],
  options: FleetIntervalOptions,
): Promise<(number | undefined)[]> {
  const latencies: (number | undefined)[] = [];
  for (let d = 0; d < options.drifts; d++) {
    const sim = sims[d % sims.length];
    if (sim === undefined) break;
    // spread over the fleet, never the same edge twice
    const edge = 1 + ((d * 797) % options.edges);
    await sim.control.resetCounters();
    const t0 = now();
    await sim.control.changeEdge(`edge-${edge}`, { tenant: DRIFTED_TENANT });
    const putAt = await waitForPut(sim.control, options.targets.driftToPutMs * 3);
    latencies.push(putAt === undefined ? undefined : putAt - t0);
  }
  return latencies;
}

/** The operator child must still run for its figures to mean anything (in a memory limit, it may have been killed). */
function assertAlive(child: ChildProcess, when: string): void {
  if (child.exitCode !== null || child.signalCode !== null || !child.connected)
    throw new Error(
      `the operator exited ${when} (exit code ${String(child.exitCode)}, signal ${String(child.signalCode)}; out of memory when its log says so)`,
    );
}
