/**
 * One fleet started cold, as fleet-interval and ceiling run it: M managers (a simulator process
 * each) with N edges each, all already as declared, and an EdgeTenant per edge with
 * `syncInterval`, served by the real Operator in a child process (scale-child.ts) on a source the
 * caller prepared (memory, a directory of manifests, a real API server), with no status at the
 * start. Measured, in this order:
 * - the start: every manager's calls in the first `firstWindowMs`; an edge changed out of band
 *   `startDriftAtMs` after the operator started, timed to its PUT (events go ahead of start-up
 *   work); steady: every object's first status written;
 * - steady state, from `windowStartMs` after the start (or once steady, if later): over
 *   `windowMs`, the operator's CPU, the manager calls per manager (list pages, full reads),
 *   passes and status writes, and the API server's requests when there is one;
 * - an edge changed out of band in steady state, timed to its PUT; the operator's peak RSS.
 */
import type { ChildProcess } from "node:child_process";
import { totalsByRoute } from "../../test/support/calls.ts";
import { DRIFTED_TENANT, sum } from "./fixtures.ts";
import { atMost, exactly, ResultBuilder } from "./result.ts";
import { forkScaleChild, next, now, sleep, stopChild, waitForPut } from "./scale-driver.ts";
import type { ScaleChildReport, ScaleChildStart, ScaleSynced } from "./scale-protocol.ts";
import type { SimulatorProcess } from "./simulator-process.ts";

const MIB = 2 ** 20;

/** The targets of one case; a figure without a target is still reported. */
export interface FleetTargets {
  /** manager calls per manager in the first window */
  firstWindowCallsPerManager?: number;
  /** start → every object's first status written */
  steadyMs?: number;
  /** out-of-band change at startDriftAtMs → its PUT */
  startDriftToPutMs?: number;
  /** the operator's CPU over the steady window */
  windowCpuSeconds?: number;
  callsPerManagerInWindow?: number;
  driftToPutMs?: number;
  peakRssMiB?: number;
}

export interface FleetTiming {
  /** edges per manager */
  edges: number;
  syncIntervalSeconds: number;
  /** the change made during start-up, after the operator started */
  startDriftAtMs: number;
  /** calls counted from the start for this long */
  firstWindowMs: number;
  /** steady-state window: starts this long after the start, at the earliest */
  windowStartMs: number;
  windowMs: number;
  /** give up on a first pass after this long */
  syncTimeoutMs: number;
  /** wait for a drift's PUT at most this long */
  putTimeoutMs: number;
}

export interface FleetCaseRun {
  result: ResultBuilder;
  label: string;
  sims: readonly SimulatorProcess[];
  start: ScaleChildStart;
  timing: FleetTiming;
  targets: FleetTargets;
  /** `node` of the operator child (a memory cgroup's wrapper); default this one's */
  execPath?: string | undefined;
  /** the API server's request counters by verb and resource, when there is one */
  apiServerRequests?: () => Promise<Record<string, number>>;
}

export async function runFleetCase(run: FleetCaseRun): Promise<void> {
  const { result, label, sims, timing, targets } = run;
  const add = (metric: string, value: number, unit: string, target?: ReturnType<typeof atMost>) =>
    result.add({ case: label, metric, value, unit, ...(target ? { target } : {}) });
  const within = (value: number, limit: number | undefined, unit = "") =>
    limit === undefined ? undefined : atMost(value, limit, unit);

  await Promise.all(sims.map((s) => s.control.resetCounters()));
  const child = forkScaleChild(run.start, run.execPath);
  try {
    const synced = next<ScaleSynced>(child, "synced", timing.syncTimeoutMs + 60_000);
    synced.catch(() => undefined);
    const startedAt = await next<number>(child, "started", 120_000);
    const first = sims[0] as SimulatorProcess;
    const [startDrift, firstCalls, steady] = await Promise.all([
      driftAt(first, startedAt + timing.startDriftAtMs, 1, timing.putTimeoutMs),
      sleepUntil(startedAt + timing.firstWindowMs).then(() => callsOf(sims)),
      synced.then((s) => ({ ...s, at: now() })),
    ]);
    const perManagerFirst = sum(firstCalls) / sims.length;
    add(
      `manager calls in the first ${timing.firstWindowMs / 1000} s, per manager`,
      perManagerFirst,
      "calls",
      within(perManagerFirst, targets.firstWindowCallsPerManager),
    );
    add(
      `full reads (GET) in the first ${timing.firstWindowMs / 1000} s, per manager`,
      (firstCalls["getEdge"] ?? 0) / sims.length,
      "calls",
    );
    const startDriftMs = startDrift ?? Number.NaN;
    add(
      `drift made ${timing.startDriftAtMs / 1000} s after start → PUT`,
      startDriftMs,
      "ms",
      within(startDriftMs, targets.startDriftToPutMs, " ms"),
    );
    const steadyMs = steady.ok ? steady.at - startedAt : Number.NaN;
    add("start → every status written", steadyMs, "ms", within(steadyMs, targets.steadyMs, " ms"));
    add("first pass complete", steady.ok ? 1 : 0, "bool", exactly(steady.ok ? 1 : 0, 1));

    await sleepUntil(Math.max(startedAt + timing.windowStartMs, now()));
    const window = await steadyWindow(run, child);
    const intervals = timing.windowMs / (timing.syncIntervalSeconds * 1000);
    const seconds = `${timing.windowMs / 1000} s`;
    add(
      `operator CPU in ${seconds} of steady state`,
      window.cpuSeconds,
      "s",
      within(window.cpuSeconds, targets.windowCpuSeconds, " s"),
    );
    const perManager = sum(window.calls) / sims.length;
    add(
      `manager calls in ${seconds}, per manager`,
      perManager,
      "calls",
      within(perManager, targets.callsPerManagerInWindow),
    );
    add(
      "edge list pages, per manager and interval",
      (window.calls["listEdges"] ?? 0) / sims.length / intervals,
      "calls",
    );
    add(`full reads (GET) in ${seconds}, per manager`, (window.calls["getEdge"] ?? 0) / sims.length, "calls");
    const writes = (window.calls["putEdge"] ?? 0) + (window.calls["releaseAddress"] ?? 0);
    add("manager writes in steady state", writes, "calls", exactly(writes, 0));
    add(`passes (reconciles) in ${seconds}`, window.passes, "passes");
    add(`status writes in ${seconds}`, window.statusWrites, "writes");
    if (window.apiServer !== undefined)
      add("API server requests per interval", sum(window.apiServer) / intervals, "requests");

    const drift = await driftAt(first, now(), 1 + Math.floor(timing.edges / 2), timing.putTimeoutMs);
    const driftMs = drift ?? Number.NaN;
    add("drift in steady state → PUT", driftMs, "ms", within(driftMs, targets.driftToPutMs, " ms"));

    assertAlive(child, "during the steady state and the drifts");
    child.send("report");
    const after = await next<ScaleChildReport>(child, "report", 60_000);
    const peakMiB = after.maxRssBytes / MIB;
    add("peak RSS", peakMiB, "MiB", within(peakMiB, targets.peakRssMiB, " MiB"));
    add("live heap (after a full GC)", (after.liveHeapBytes ?? Number.NaN) / MIB, "MiB");
    add("V8 heap limit (Node's choice)", after.heapSizeLimitBytes / MIB, "MiB");
    result.detail(label, {
      firstCalls,
      window,
      startDriftMs: startDrift,
      driftMs: drift,
      steadyMs,
      after,
      errors: after.errors,
    });
  } finally {
    await stopChild(child);
  }
}

interface WindowFigures {
  cpuSeconds: number;
  calls: Record<string, number>;
  passes: number;
  statusWrites: number;
  apiServer: Record<string, number> | undefined;
}

/** The steady-state window: what the operator, the managers and the API server did in it. */
async function steadyWindow(run: FleetCaseRun, child: ChildProcess): Promise<WindowFigures> {
  const { sims } = run;
  await Promise.all(sims.map((s) => s.control.resetCounters()));
  const before = await figures(child);
  const apiBefore = await run.apiServerRequests?.();
  await sleep(run.timing.windowMs);
  const after = await figures(child);
  const calls = await callsOf(sims);
  const apiAfter = await run.apiServerRequests?.();
  assertAlive(child, "in the steady state");
  return {
    cpuSeconds: after.cpuSeconds - before.cpuSeconds,
    calls,
    passes: after.reconciled - before.reconciled,
    statusWrites: after.statusWrites - before.statusWrites,
    apiServer:
      apiAfter === undefined || apiBefore === undefined ? undefined : difference(apiAfter, apiBefore),
  };
}

function figures(child: ChildProcess): Promise<ScaleChildReport> {
  const figures = next<ScaleChildReport>(child, "figures", 30_000);
  child.send("figures");
  return figures;
}

async function callsOf(sims: readonly SimulatorProcess[]): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  for (const s of sims)
    for (const [route, n] of Object.entries(totalsByRoute(await s.control.counters())))
      calls[route] = (calls[route] ?? 0) + n;
  return calls;
}

/** Changes edge-`edge` of `sim` out of band at `atMs` (epoch): ms to the simulator counting its PUT (undefined: none came). */
async function driftAt(
  sim: SimulatorProcess,
  atMs: number,
  edge: number,
  timeoutMs: number,
): Promise<number | undefined> {
  await sleepUntil(atMs);
  const puts = putsOf(await sim.control.counters());
  const t0 = now();
  await sim.control.changeEdge(`edge-${edge}`, { tenant: DRIFTED_TENANT });
  const putAt = await waitForPut(sim.control, timeoutMs, puts);
  return putAt === undefined ? undefined : putAt - t0;
}

function putsOf(counters: Record<string, Record<string, number>>): number {
  return Object.values(counters["putEdge"] ?? {}).reduce((a, b) => a + b, 0);
}

function sleepUntil(epochMs: number): Promise<void> {
  return sleep(Math.max(0, epochMs - now()));
}

function difference(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(after)) {
    const d = n - (before[key] ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}

/** The operator child must still run for its figures to mean anything (in a memory limit, it may have been killed). */
export function assertAlive(child: ChildProcess, when: string): void {
  if (child.exitCode !== null || child.signalCode !== null || !child.connected)
    throw new Error(
      `the operator exited ${when} (exit code ${String(child.exitCode)}, signal ${String(child.signalCode)}; out of memory when its log says so)`,
    );
}
