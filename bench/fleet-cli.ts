/**
 * `plan` and `apply` over a fleet, list first (issue 23): the built CLI in a child process against
 * a simulator in another, the manager's calls counted per route by the simulator. Three steps on
 * one simulator: `plan` of the converged fleet (the edge list's pages, which are also the
 * NSXManager's check, no GET), then a few edges changed out of band (the simulator's control API)
 * and `plan` again, which must name exactly those, then `apply`, which corrects them with a GET and
 * a PUT each (2N + the list's pages: the fewest calls); a last `plan` must find nothing. A plan that names other edges than the drifted ones
 * throws: the figures of a wrong answer are worth nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCli, runBuiltCli, writeCliManifests, type CliRun } from "./lib/cli-process.ts";
import { CREDENTIALS, DESIRED_TENANT, DRIFTED_TENANT, simulatorState, sum } from "./lib/fixtures.ts";
import { EDGE_LIST_PAGE_SIZE } from "../src/reconcile/edge-tenant/edge-lists.ts";
import { atMost, exactly, ResultBuilder, type BenchResult } from "./lib/result.ts";
import { totalsByRoute } from "../test/support/calls.ts";
import { startSimulatorProcess, type SimulatorControl } from "./lib/simulator-process.ts";
import { median } from "./lib/stats.ts";

export interface FleetCliOptions {
  edges: number;
  /** edges changed out of band before the second plan (ids within 1..edges) */
  drifted: readonly number[];
  /** runs of the converged plan; the median wall time is reported */
  planRuns: number;
  targets: { convergedPlanWallMs: number };
}

const TARGETS = { convergedPlanWallMs: 2_000 };

export const FLEET_CLI_FULL: FleetCliOptions = {
  edges: 2000,
  drifted: [7, 512, 1024, 1025, 2000],
  planRuns: 5,
  targets: TARGETS,
};

export const FLEET_CLI_QUICK: FleetCliOptions = {
  edges: 200,
  drifted: [1, 50, 200],
  planRuns: 1,
  targets: TARGETS,
};

/** The answer of `plan -o json` that this benchmark reads. */
interface PlanJson {
  summary: { tenantCorrections: number; errors: number };
  objects: { kind: string; changes: { type: string; edgeId?: string }[] }[];
}

export class WrongPlanError extends Error {
  readonly code = "BENCH_WRONG_PLAN";
  constructor(message: string) {
    super(message);
    this.name = "WrongPlanError";
  }
}

export async function benchFleetCli(options: FleetCliOptions): Promise<BenchResult> {
  const result = new ResultBuilder("fleet-cli");
  await buildCli();
  const fleet = { edges: options.edges, pools: 0, allowedPerPool: 0, straysPerPool: 0 };
  const sim = await startSimulatorProcess({
    state: simulatorState({ ...fleet, edgeTenant: DESIRED_TENANT }),
  });
  const dir = mkdtempSync(join(tmpdir(), "nsxv-fleet-cli-"));
  try {
    const manifests = join(dir, "fleet.yaml");
    // the manager's caps left at their defaults (20 requests/s), as a user's manifest has them
    writeCliManifests(manifests, sim.url, options.edges);
    const converged = `plan, ${options.edges} edges in sync`;
    const walls: number[] = [];
    const cpus: number[] = [];
    let calls: Record<string, number> = {};
    for (let run = 0; run < options.planRuns; run++) {
      const measured = await counted(sim.control, () => cli(["plan", "-f", manifests, "-o", "json"], [0]));
      walls.push(measured.run.wallMs);
      cpus.push(measured.run.cpuMs);
      calls = measured.calls;
      const named = namedEdges(measured.run);
      if (named.length > 0) throw new WrongPlanError(`plan of a converged fleet named ${named.join(", ")}`);
    }
    const convergedCalls = sum(calls);
    // the fewest: the list's pages, which also answer the manager's check
    const pages = Math.ceil(options.edges / EDGE_LIST_PAGE_SIZE);
    result.add({
      case: converged,
      metric: "manager calls",
      value: convergedCalls,
      unit: "calls",
      target: exactly(convergedCalls, pages),
    });
    result.add({ case: converged, metric: "getEdge calls", value: calls["getEdge"] ?? 0, unit: "calls" });
    const wall = median(walls);
    result.add({
      case: converged,
      metric: "wall (median)",
      value: wall,
      unit: "ms",
      target: atMost(wall, options.targets.convergedPlanWallMs, " ms"),
    });
    result.add({ case: converged, metric: "CPU, user + system (median)", value: median(cpus), unit: "ms" });
    result.detail("converged plan", { calls, wallsMs: walls, cpuMs: cpus });

    const driftedIds = options.drifted.map((i) => `edge-${i}`);
    for (const id of driftedIds) await sim.control.changeEdge(id, { tenant: DRIFTED_TENANT });
    const drifted = `${driftedIds.length} of ${options.edges} edges drifted out of band`;
    const plan = await counted(sim.control, () => cli(["plan", "-f", manifests, "-o", "json"], [2]));
    const named = namedEdges(plan.run);
    if (named.join(",") !== [...driftedIds].sort().join(","))
      throw new WrongPlanError(`plan named ${named.join(", ") || "nothing"}, not ${driftedIds.join(", ")}`);
    result.add({
      case: drifted,
      metric: "plan names exactly the drifted edges",
      value: 1,
      unit: "bool",
      target: exactly(1, 1),
    });
    result.add({ case: drifted, metric: "plan: manager calls", value: sum(plan.calls), unit: "calls" });
    result.add({ case: drifted, metric: "plan: wall", value: plan.run.wallMs, unit: "ms" });
    const apply = await counted(sim.control, () => cli(["apply", "-f", manifests], [0]));
    const applyCalls = sum(apply.calls);
    result.add({
      case: drifted,
      metric: "apply: manager calls",
      value: applyCalls,
      unit: "calls",
      target: exactly(applyCalls, pages + 2 * driftedIds.length),
    });
    result.add({
      case: drifted,
      metric: "apply: edges corrected (PUTs)",
      value: apply.calls["putEdge"] ?? 0,
      unit: "PUTs",
      target: exactly(apply.calls["putEdge"] ?? 0, driftedIds.length),
    });
    result.add({ case: drifted, metric: "apply: wall", value: apply.run.wallMs, unit: "ms" });
    const after = await counted(sim.control, () => cli(["plan", "-f", manifests, "-o", "json"], [0]));
    const left = namedEdges(after.run);
    result.add({
      case: drifted,
      metric: "edges left drifted after apply",
      value: left.length,
      unit: "edges",
      target: exactly(left.length, 0),
    });
    const audit = await sim.control.audit();
    result.add({
      case: drifted,
      metric: "lost-content PUTs",
      value: audit.violations.length,
      unit: "PUTs",
      target: exactly(audit.violations.length, 0),
    });
    result.detail("drifted", { edges: driftedIds, plan: plan.calls, apply: apply.calls, after: after.calls });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await sim.close();
  }
  result.note(
    "`node dist/cli/main.js plan|apply -f FILE` in a child process (wall: process start to exit, Node's start-up included), " +
      "the simulator in another (edges of ~35 KB); calls counted per route by the simulator. The NSXManager keeps the default caps " +
      "(20 requests/s). Converged: the edge list's pages (1024 a page), which are also the NSXManager's check; no GET, no pool list " +
      "(no IPPoolAllocations). Drifted: tenants changed through the simulator's control API; apply = list pages + a GET and a PUT " +
      "per drifted edge (2N + pages, the target).",
  );
  return result.build();
}

async function cli(args: string[], exitCodes: readonly number[]): Promise<CliRun> {
  const run = await runBuiltCli(args, {
    env: { NSX_USERNAME: CREDENTIALS.username, NSX_PASSWORD: CREDENTIALS.password },
  });
  if (!exitCodes.includes(run.code ?? -1))
    throw new Error(`${args[0]} exited ${String(run.code)}: ${run.output.slice(-800)}`);
  return run;
}

/** runs `step` with the simulator's counters reset before: its calls per route */
async function counted(
  control: SimulatorControl,
  step: () => Promise<CliRun>,
): Promise<{ run: CliRun; calls: Record<string, number> }> {
  await control.resetCounters();
  const run = await step();
  return { run, calls: totalsByRoute(await control.counters()) };
}

/** the edges `plan -o json` would set the tenant of, sorted */
function namedEdges(run: CliRun): string[] {
  const view = JSON.parse(run.output) as PlanJson;
  if (view.summary.errors > 0) throw new WrongPlanError(`plan reported ${view.summary.errors} errors`);
  return view.objects
    .flatMap((o) => o.changes)
    .filter((c) => c.type === "setTenant")
    .map((c) => c.edgeId ?? "?")
    .sort();
}
