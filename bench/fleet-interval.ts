/**
 * `run` over a fleet at a short sync interval, started with no status (issues 23, 32): one manager
 * (a simulator process) with 2000 edges, all already as declared, an EdgeTenant per edge with
 * `syncInterval: 10s`, from a directory of manifests, served by the real Operator in a child process
 * whose peak RSS is its own (lib/fleet-case.ts says what is measured, and when). The start must
 * take the edge list for what it shows (at most 20 manager calls in its first 30 s, every status
 * written within 10 s) and an out-of-band change made 3 s after the start must be corrected within
 * 10 s; then steady state is counted. Run at the defaults (--full-read-interval 1 h within
 * --full-reads-per-minute 7: a 2000-edge manager's edges each read once per 4h46m, 3 or 4 per 30 s)
 * and at 4 h.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DESIRED_TENANT,
  managersFleetObjects,
  simulatorState,
  type FleetOptions,
  type ManagerCaps,
} from "./lib/fixtures.ts";
import { runFleetCase, type FleetTargets, type FleetTiming } from "./lib/fleet-case.ts";
import { exactly, ResultBuilder, type BenchResult } from "./lib/result.ts";
import type { ScaleChildStart } from "./lib/scale-protocol.ts";
import { startSimulatorProcess, type SimulatorProcess } from "./lib/simulator-process.ts";
import { runInCaseLimit, writeManifests } from "./scale.ts";

export interface FleetIntervalCase {
  managers: number;
  source: "memory" | "directory";
  /** the operator's --full-read-interval; default its default (1 h, within --full-reads-per-minute 7) */
  fullReadIntervalMs?: number;
  /** run the operator in a memory cgroup with the Deployment's limit (scale.ts runInCaseLimit) */
  inDeploymentLimit?: boolean;
  targets: FleetTargets;
}

export interface FleetIntervalOptions {
  /** the benchmark's name in the results */
  name: string;
  cases: readonly FleetIntervalCase[];
  timing: FleetTiming;
  caps: ManagerCaps;
  concurrency: number;
}

export const HOUR = 3_600_000;

/** What issue 32 asks of 2000 EdgeTenants on one manager. */
const TARGETS_2000: FleetTargets = {
  firstWindowCallsPerManager: 20,
  steadyMs: 10_000,
  startDriftToPutMs: 10_000,
  callsPerManagerInWindow: 12,
  driftToPutMs: 15_000,
};

/** Each manager's caps, as the scale benchmark sets them, and the operator's workers: one setting for every fleet case. */
export const FLEET_CAPS: ManagerCaps = { maxConcurrentRequests: 16, requestsPerSecond: 1_000 };
export const FLEET_CONCURRENCY = 32;

export const FLEET_TIMING: FleetTiming = {
  edges: 2000,
  syncIntervalSeconds: 10,
  startDriftAtMs: 3_000,
  firstWindowMs: 30_000,
  windowStartMs: 30_000,
  windowMs: 30_000,
  syncTimeoutMs: 300_000,
  putTimeoutMs: 60_000,
};

export const FLEET_INTERVAL_FULL: FleetIntervalOptions = {
  name: "fleet-interval",
  cases: [
    { managers: 1, source: "directory", targets: TARGETS_2000 },
    { managers: 1, source: "directory", fullReadIntervalMs: 4 * HOUR, targets: TARGETS_2000 },
  ],
  timing: FLEET_TIMING,
  caps: FLEET_CAPS,
  concurrency: FLEET_CONCURRENCY,
};

export const FLEET_INTERVAL_QUICK: FleetIntervalOptions = {
  ...FLEET_INTERVAL_FULL,
  cases: [{ managers: 1, source: "directory", targets: TARGETS_2000 }],
  timing: { ...FLEET_TIMING, edges: 200, windowMs: 10_000, syncTimeoutMs: 120_000 },
};

export async function benchFleetInterval(options: FleetIntervalOptions): Promise<BenchResult> {
  const result = new ResultBuilder(options.name);
  const { timing } = options;
  // in sync; edges without user firewall rules (~10 KB) to keep eight simulators small
  const fleet: FleetOptions = {
    edges: timing.edges,
    pools: 0,
    allowedPerPool: 0,
    straysPerPool: 0,
    edgeTenant: DESIRED_TENANT,
    firewallRules: 0,
  };
  for (const c of options.cases) {
    const fullRead = formatHours(c.fullReadIntervalMs ?? HOUR);
    const label = `${c.managers} manager${c.managers === 1 ? "" : "s"} x ${timing.edges}, ${c.source}, full reads every ${fullRead}`;
    // fresh simulators per case: an edge changed in one case is not drifted in the next
    const sims = await Promise.all(
      Array.from({ length: c.managers }, () => startSimulatorProcess({ state: simulatorState(fleet) })),
    );
    try {
      await runInCaseLimit(result, label, c.inDeploymentLimit, async (caseLabel, execPath) => {
        try {
          await runCase(result, caseLabel, sims, fleet, c, options, execPath);
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
    } finally {
      await Promise.all(sims.map((s) => s.close()));
    }
  }
  result.note(
    `Operator (${options.concurrency} workers) and each simulator in their own process; caps ` +
      `${options.caps.maxConcurrentRequests} concurrent, ${options.caps.requestsPerSecond} requests/s per manager; ` +
      `every EdgeTenant with syncInterval ${timing.syncIntervalSeconds}s, no status at the start. ` +
      `Start: every manager's calls in the first ${timing.firstWindowMs / 1000} s; an edge changed out of band ` +
      `${timing.startDriftAtMs / 1000} s after the operator started, timed to the simulator counting its PUT; ` +
      "steady once every object's first status is written. Steady state: from " +
      `${timing.windowStartMs / 1000} s after the start (or once steady, if later), ${timing.windowMs / 1000} s of ` +
      "the operator's CPU (user + system of its process), the managers' calls (the list's pages, which are the " +
      "manager's check, and the safety net's full reads, spread over --full-read-interval), passes and status " +
      "writes; then an edge changed out of band, timed to its PUT. The safety net's full reads are edges x window / " +
      "cycle, the cycle --full-read-interval or, past --full-reads-per-minute (default 7), edges / 7 minutes: " +
      "2000 edges at 1 h would be about 17 per 30 s, more than the 12 calls asked of a manager in 30 s with its " +
      "list's 6 pages; within the budget, once per 4h46m, 3 or 4 (and as many at 4 h).",
  );
  return result.build();
}

async function runCase(
  result: ResultBuilder,
  label: string,
  sims: readonly SimulatorProcess[],
  fleet: FleetOptions,
  c: FleetIntervalCase,
  options: FleetIntervalOptions,
  execPath: string | undefined,
): Promise<void> {
  const { timing } = options;
  const interval = `${timing.syncIntervalSeconds}s`;
  const urls = sims.map((s) => s.url);
  const dir = c.source === "directory" ? await mkdtemp(join(tmpdir(), "nsxv-bench-fleet-")) : undefined;
  try {
    if (dir !== undefined)
      await writeManifests(dir, managersFleetObjects(urls, options.caps, timing.edges, interval), 100);
    const start: ScaleChildStart = {
      source: dir === undefined ? { type: "memory" } : { type: "directory", dir },
      url: urls[0] ?? "",
      fleet,
      caps: options.caps,
      concurrency: options.concurrency,
      syncIntervalMs: timing.syncIntervalSeconds * 1000,
      syncTimeoutMs: timing.syncTimeoutMs,
      managers: { urls, edgeSyncInterval: interval },
      ...(c.fullReadIntervalMs !== undefined ? { fullReadIntervalMs: c.fullReadIntervalMs } : {}),
    };
    await runFleetCase({ result, label, sims, start, timing, targets: c.targets, execPath });
  } finally {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  }
}

export function formatHours(ms: number): string {
  return `${ms / HOUR}h`;
}
