/**
 * What a `plan` or `apply` costs the machine (issue 32 item 5), measured beside a reference build
 * of an earlier commit in the same run, runs alternating between the two builds: CPU time and wall
 * time vary with the machine and with what else runs on it, a ratio measured side by side much
 * less. Three cases, each manager a simulator in a child process:
 * - `plan` of M edges in sync (a manager of M edges): wall time, Node's start-up included;
 * - `apply` of N drifted edges with no added latency (a manager of N edges): CPU time (user +
 *   system) of this build over the reference's;
 * - the same `apply` at L ms per call and C at once: wall time against the ideal bound (2N+1
 *   calls: one list page, a GET and a PUT per edge) × L / C.
 * Each run checks its answer (plan finds nothing, apply corrects every edge): the figures of a
 * wrong answer are worth nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { buildCli, runBuiltCli, writeCliManifests, type CliRun } from "./lib/cli-process.ts";
import { CREDENTIALS, DESIRED_TENANT, DRIFTED_TENANT, simulatorState, sum } from "./lib/fixtures.ts";
import { referenceBuild, type ReferenceBuild } from "./lib/reference-build.ts";
import { atLeast, atMost, exactly, ResultBuilder, type BenchResult } from "./lib/result.ts";
import { startSimulatorProcess, type SimulatorControl } from "./lib/simulator-process.ts";
import { median } from "./lib/stats.ts";
import { processCpuSeconds } from "./lib/process-cpu.ts";
import { totalsByRoute } from "../test/support/calls.ts";

export interface CliCostOptions {
  /** the commit measured beside this build; undefined: this build alone (no ratio) */
  reference: string | undefined;
  /** plan of `edges` edges in sync: wall */
  plan: { edges: number; runs: number };
  /** apply of `edges` drifted edges, on a manager with those edges */
  apply: { edges: number };
  /** apply's runs with no added latency: CPU */
  cpu: { runs: number };
  /** apply's runs at `latencyMs` per call and `concurrency` at once: wall against the bound */
  efficiency: { runs: number; latencyMs: number; concurrency: number };
  targets: { cpuRatio: number; planWallMs: number; efficiency: number };
}

/** The build the issue compares with (issue 32): its CPU for the same apply is the yardstick. */
export const REFERENCE_COMMIT = "e9439a7";
const TARGETS = { cpuRatio: 0.6, planWallMs: 2_000, efficiency: 0.9 };

export const CLI_COST_FULL: CliCostOptions = {
  reference: REFERENCE_COMMIT,
  plan: { edges: 2000, runs: 5 },
  apply: { edges: 1000 },
  cpu: { runs: 5 },
  efficiency: { runs: 3, latencyMs: 50, concurrency: 16 },
  targets: TARGETS,
};

export const CLI_COST_QUICK: CliCostOptions = {
  reference: REFERENCE_COMMIT,
  plan: { edges: 400, runs: 2 },
  apply: { edges: 200 },
  cpu: { runs: 2 },
  efficiency: { runs: 1, latencyMs: 50, concurrency: 16 },
  targets: TARGETS,
};

/** One build under measurement. */
interface Build {
  label: string;
  /** its dist/cli/main.js; undefined: this checkout's */
  cli: string | undefined;
}

/** One run of a build, and the CPU the simulator spent answering it (undefined where /proc cannot tell). */
type Run = CliRun & { simulatorCpuMs?: number | undefined };

/** Every run of one case, by build label. */
type Runs = Map<string, Run[]>;

/** A manager with its edges, the manifests that name each, and the builds that run against it. */
interface Fixture {
  control: SimulatorControl;
  /** the simulator's process */
  pid: number;
  file: string;
  edges: number;
  builds: Build[];
}

export async function benchCliCost(options: CliCostOptions): Promise<BenchResult> {
  const result = new ResultBuilder("cli-cost");
  const reference = options.reference === undefined ? undefined : await referenceBuild(options.reference);
  await buildCli();
  const builds: Build[] = [{ label: "this build", cli: undefined }];
  if (reference?.available === true) builds.push({ label: reference.commit, cli: reference.cli });
  const dir = mkdtempSync(join(tmpdir(), "nsxv-cli-cost-"));
  try {
    const plan = { edges: options.plan.edges, file: join(dir, "plan.yaml"), builds };
    await withManager(plan, options, (f) => planCase(result, f, options));
    const apply = { edges: options.apply.edges, file: join(dir, "apply.yaml"), builds };
    await withManager(apply, options, async (f) => {
      await cpuCase(result, f, options);
      await efficiencyCase(result, f, options);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  describeReference(result, reference);
  return result.build();
}

/** `cases` against a simulator of `edges` edges, all as declared, named by the manifests in `file` */
async function withManager(
  fixture: Omit<Fixture, "control" | "pid">,
  o: CliCostOptions,
  cases: (f: Fixture) => Promise<void>,
): Promise<void> {
  const { edges, file } = fixture;
  const fleet = { edges, pools: 0, allowedPerPool: 0, straysPerPool: 0, edgeTenant: DESIRED_TENANT };
  const sim = await startSimulatorProcess({ state: simulatorState(fleet) });
  try {
    // the rate never binds: 2001 calls in 6 s are a third of it
    writeCliManifests(file, sim.url, edges, {
      maxConcurrentRequests: o.efficiency.concurrency,
      requestsPerSecond: 1000,
    });
    await cases({ ...fixture, control: sim.control, pid: sim.pid });
  } finally {
    await sim.close();
  }
}

async function planCase(result: ResultBuilder, f: Fixture, o: CliCostOptions): Promise<void> {
  const label = `plan, ${f.edges} edges in sync`;
  const load = loadavg()[0] ?? 0;
  const runs = await alternate(f.builds, o.plan.runs, (build) => cli(["plan", "-f", f.file], [0], build));
  const wall = median(wallsOf(runs, "this build"));
  result.add({
    case: label,
    metric: "wall, this build (median)",
    value: wall,
    unit: "ms",
    target: atMost(wall, o.targets.planWallMs, " ms"),
  });
  addMedians(result, label, runs, "wall", { besides: true });
  addMedians(result, label, runs, "CPU");
  result.add({ case: label, metric: "load average (1 min) before", value: load, unit: "load" });
  result.detail(label, detailsOf(runs));
}

async function cpuCase(result: ResultBuilder, f: Fixture, o: CliCostOptions): Promise<void> {
  const label = `apply, ${f.edges} drifted edges, no added latency`;
  const runs = await alternate(f.builds, o.cpu.runs, (build) => correct(f, build));
  const cpu = median(cpusOf(runs, "this build"));
  result.add({ case: label, metric: "CPU, this build (median)", value: cpu, unit: "ms" });
  const reference = f.builds[1];
  const ratio = reference === undefined ? Number.NaN : cpu / median(cpusOf(runs, reference.label));
  if (reference !== undefined)
    result.add({
      case: label,
      metric: `CPU, ${reference.label} (median)`,
      value: median(cpusOf(runs, reference.label)),
      unit: "ms",
    });
  result.add({
    case: label,
    metric: `CPU, this build / ${o.reference ?? "reference"}`,
    value: ratio,
    unit: "ratio",
    target: atMost(ratio, o.targets.cpuRatio),
  });
  addMedians(result, label, runs, "wall");
  addSimulatorCpu(result, label, runs);
  result.detail(label, detailsOf(runs));
}

async function efficiencyCase(result: ResultBuilder, f: Fixture, o: CliCostOptions): Promise<void> {
  const { latencyMs, concurrency } = o.efficiency;
  const label = `apply, ${f.edges} drifted edges, L=${latencyMs}ms C=${concurrency}`;
  // the edge list's pages (1024 edges a page), then a GET and a PUT per edge
  const minimalCalls = 2 * f.edges + Math.max(1, Math.ceil(f.edges / 1024));
  const boundMs = (minimalCalls * latencyMs) / concurrency;
  const calls = new Map<string, Record<string, number>>();
  await f.control.settings({ latencyMs });
  let runs: Runs;
  try {
    runs = await alternate(f.builds, o.efficiency.runs, async (build) => {
      const corrected = await correct(f, build);
      calls.set(build.label, corrected.calls);
      return corrected;
    });
  } finally {
    await f.control.settings({ latencyMs: 0 });
  }
  const made = sum(calls.get("this build") ?? { none: Number.NaN });
  result.add({
    case: label,
    metric: "manager calls",
    value: made,
    unit: "calls",
    target: exactly(made, minimalCalls),
  });
  result.add({ case: label, metric: "ideal bound (2N+1 calls x L / C)", value: boundMs, unit: "ms" });
  for (const build of f.builds) {
    const wall = median(wallsOf(runs, build.label));
    result.add({ case: label, metric: `wall, ${build.label} (median)`, value: wall, unit: "ms" });
    const efficiency = boundMs / wall;
    result.add({
      case: label,
      metric: `efficiency, ${build.label}`,
      value: efficiency,
      unit: "ratio",
      ...(build.cli === undefined ? { target: atLeast(efficiency, o.targets.efficiency) } : {}),
    });
  }
  addSimulatorCpu(result, label, runs);
  result.detail(label, { ...detailsOf(runs), calls: Object.fromEntries(calls), boundMs });
}

/**
 * `runs` rounds of `step` for each build, the order swapped every round (this, reference; then
 * reference, this): a machine that slows down during the case weighs on both alike.
 */
async function alternate(
  builds: readonly Build[],
  rounds: number,
  step: (build: Build) => Promise<Run>,
): Promise<Runs> {
  const runs: Runs = new Map(builds.map((b) => [b.label, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) runs.get(build.label)?.push(await step(build));
  }
  return runs;
}

/**
 * Edges edge-1..N drifted out of band, then `apply` by `build`, which must correct each of them:
 * exit 0, one PUT per edge. The run, and the manager calls it made.
 */
async function correct(f: Fixture, build: Build): Promise<Run & { calls: Record<string, number> }> {
  const { edges } = f;
  await drift(f.control, edges);
  await f.control.resetCounters();
  const simulatorBefore = processCpuSeconds(f.pid);
  const run = await cli(["apply", "-f", f.file], [0], build);
  const simulatorAfter = processCpuSeconds(f.pid);
  const simulatorCpuMs =
    simulatorBefore === undefined || simulatorAfter === undefined
      ? undefined
      : (simulatorAfter - simulatorBefore) * 1000;
  const calls = totalsByRoute(await f.control.counters());
  if ((calls["putEdge"] ?? 0) !== edges) {
    throw new Error(`apply by ${build.label} made ${calls["putEdge"] ?? 0} PUTs, not ${edges}`);
  }
  return { ...run, calls, simulatorCpuMs };
}

/** edge-1..N given another tenant through the simulator's control API, 32 at a time */
async function drift(control: SimulatorControl, edges: number): Promise<void> {
  const ids = Array.from({ length: edges }, (_, i) => `edge-${i + 1}`);
  for (let at = 0; at < ids.length; at += 32) {
    await Promise.all(ids.slice(at, at + 32).map((id) => control.changeEdge(id, { tenant: DRIFTED_TENANT })));
  }
}

/** `build` runs it: required, so that no case runs one build where it means the other */
async function cli(args: string[], exitCodes: readonly number[], build: Build): Promise<CliRun> {
  const run = await runBuiltCli(args, {
    env: { NSX_USERNAME: CREDENTIALS.username, NSX_PASSWORD: CREDENTIALS.password },
    ...(build.cli !== undefined ? { cli: build.cli } : {}),
  });
  if (!exitCodes.includes(run.code ?? -1)) {
    throw new Error(`${args[0]} by ${build.label} exited ${String(run.code)}: ${run.output.slice(-800)}`);
  }
  return run;
}

const wallsOf = (runs: Runs, label: string): number[] => (runs.get(label) ?? []).map((r) => r.wallMs);
const cpusOf = (runs: Runs, label: string): number[] => (runs.get(label) ?? []).map((r) => r.cpuMs);

/** the median of each build, side by side; `besides`: only the other builds' (this one's is reported with its target) */
function addMedians(
  result: ResultBuilder,
  label: string,
  runs: Runs,
  what: "wall" | "CPU",
  options: { besides?: boolean } = {},
): void {
  for (const build of runs.keys()) {
    if (options.besides === true && build === "this build") continue;
    const values = what === "wall" ? wallsOf(runs, build) : cpusOf(runs, build);
    result.add({ case: label, metric: `${what}, ${build} (median)`, value: median(values), unit: "ms" });
  }
}

/**
 * What the simulator spent answering each build's runs (median): the CLI waits on it, so a wall
 * time above the CLI's own CPU is the simulator's (one thread, the CLI on the other core).
 */
function addSimulatorCpu(result: ResultBuilder, label: string, runs: Runs): void {
  for (const [build, list] of runs) {
    const cpus = list.flatMap((r) => (r.simulatorCpuMs === undefined ? [] : [r.simulatorCpuMs]));
    if (cpus.length === 0) continue;
    result.add({ case: label, metric: `simulator CPU, ${build} (median)`, value: median(cpus), unit: "ms" });
  }
}

function detailsOf(runs: Runs): Record<string, unknown> {
  return Object.fromEntries(
    [...runs].map(([label, list]) => [
      label,
      { wallMs: list.map((r) => Math.round(r.wallMs)), cpuMs: list.map((r) => Math.round(r.cpuMs)) },
    ]),
  );
}

function describeReference(result: ResultBuilder, reference: ReferenceBuild | undefined): void {
  result.note(
    "`node dist/cli/main.js plan|apply -f FILE` in a child process (wall: process start to exit, Node's start-up " +
      "included; CPU: user + system of the CLI's process, read at its exit), the simulator in another (edges of " +
      "~35 KB); the NSXManager's caps 16 requests at once and 1000/s. Each case runs this build and the reference " +
      "in turn, the order swapped every round; apply's edges are drifted through the simulator's control API " +
      "before each run, and every run must correct all of them (plan: find nothing).",
  );
  if (reference === undefined) return;
  if (reference.available) {
    result.note(
      `Reference: commit ${reference.commit}, checked out as a git worktree under .cache/cli-reference/ with its own npm ci and tsc build.`,
    );
  } else {
    result.note(`Reference ${reference.commit} could not be built, so no ratio: ${reference.reason}`);
  }
}
