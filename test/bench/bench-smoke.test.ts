/**
 * Each benchmark of bench/ at a tiny size: proves that it runs end to end (simulator and operator
 * child processes included) and returns results of the right shape. Not a timed test: no
 * duration is asserted, only the shape, and the correctness figures a benchmark relies on
 * (the fleet converged, a pass in sync wrote nothing).
 */
import { describe, expect, it } from "vitest";
import { benchCliFootprint } from "../../bench/cli-footprint.ts";
import { benchClientThroughput } from "../../bench/client-throughput.ts";
import { benchConvergence } from "../../bench/convergence.ts";
import { benchEdgeDocument } from "../../bench/edge-document.ts";
import { benchHungManager, HUNG_MANAGER_QUICK } from "../../bench/hung-manager.ts";
import { benchFleetCli, FLEET_CLI_QUICK } from "../../bench/fleet-cli.ts";
import { benchFleetInterval, FLEET_INTERVAL_QUICK } from "../../bench/fleet-interval.ts";
import { HOSTILE_TEXTS } from "../../bench/lib/hostile-manifests.ts";
import { benchManifestInput } from "../../bench/manifest-input.ts";
import { DRIFTED_TENANT } from "../../bench/lib/fixtures.ts";
import type { BenchResult } from "../../bench/lib/result.ts";
import { formatTable, resultRows } from "../../bench/lib/table.ts";
import { benchScale, SCALE_QUICK } from "../../bench/scale.ts";
import { benchSteadyState } from "../../bench/steady-state.ts";

interface Case {
  name: string;
  reason: string;
  run: () => Promise<BenchResult>;
  /** metrics every case of the result must report (by the case's label when they differ) */
  metrics: string[] | ((caseLabel: string) => string[]);
  /** metric → value it must have in every case that reports it (correctness, never a duration) */
  exact?: Record<string, number>;
}

const tinyFleet = (edges: number, pools: number, straysPerPool: number) => ({
  edges,
  pools,
  allowedPerPool: 2,
  straysPerPool,
  edgeTenant: DRIFTED_TENANT,
});

const CASES: Case[] = [
  {
    name: "EdgeDocument",
    reason:
      "parse, setTenant, serialize and the round trip are each summarised by median and p95; the 25 KB steady state compares the scan with the whole tree",
    run: () => benchEdgeDocument({ sizesBytes: [64 * 1024], warmup: 1, runs: 3, budgetMs: 2_000 }),
    metrics: (label) =>
      label.endsWith("x1000")
        ? ["scan per edge (median)", "whole tree per edge (median)", "scan / whole tree"]
        : [
            "parse median",
            "parse p95",
            "setTenant median",
            "serialize median",
            "roundTrip median",
            "roundTrip p95",
          ],
  },
  {
    name: "CliFootprint",
    reason: "the built CLI corrects a drifted edge in a child process whose peak RSS and wall time are read",
    run: () => benchCliFootprint({ cases: [{ label: "1 edge", edges: 1 }], runs: 1 }),
    metrics: ["peak RSS", "wall", "edges corrected", "lost-content PUTs"],
    exact: { "edges corrected": 1, "lost-content PUTs": 0 },
  },
  {
    name: "FleetCli",
    reason:
      "plan of a converged fleet reads the list, plan names exactly the edges drifted out of band, apply corrects them",
    run: () => benchFleetCli({ ...FLEET_CLI_QUICK, edges: 12, drifted: [2, 12] }),
    metrics: (label) =>
      label.startsWith("plan")
        ? ["manager calls", "getEdge calls", "wall (median)", "CPU, user + system (median)"]
        : [
            "plan names exactly the drifted edges",
            "apply: manager calls",
            "apply: edges corrected (PUTs)",
            "edges left drifted after apply",
            "lost-content PUTs",
          ],
    exact: {
      // the fewest: the list's one page answers the manager's check; apply adds a GET and a PUT per drifted edge
      "manager calls": 1,
      "apply: manager calls": 1 + 2 * 2,
      "getEdge calls": 0,
      "plan names exactly the drifted edges": 1,
      "apply: edges corrected (PUTs)": 2,
      "edges left drifted after apply": 0,
      "lost-content PUTs": 0,
    },
  },
  {
    name: "FleetInterval",
    reason:
      "run at a 10 s interval: the first pass, steady-state calls counted on the manager, an out-of-band change timed to its PUT",
    run: () =>
      benchFleetInterval({
        ...FLEET_INTERVAL_QUICK,
        cases: [{ managers: 2 }],
        edges: 6,
        windowMs: 2_000,
        drifts: 1,
        syncTimeoutMs: 30_000,
      }),
    metrics: [
      "first pass complete",
      "manager calls in 2 s, per manager",
      "writes in steady state",
      "drift → PUT (worst)",
      "peak RSS",
    ],
    exact: { "first pass complete": 1, "writes in steady state": 0 },
  },
  {
    name: "ManifestInput",
    reason:
      "plan of the built CLI refuses a hostile file unparsed and reads a mapping, each with peak RSS and wall time",
    run: () =>
      benchManifestInput({
        hostile: HOSTILE_TEXTS.filter((h) => h.name === "CompactSequences"),
        mappingKeys: [100],
        refusedRssOverBaselineMiB: 100,
        ordinaryObjects: 5,
        // over the 16Mi bound on one read, each file within the 4 MiB cap
        overBound: { files: 5, fileBytes: 3_500_000 },
      }),
    metrics: (label) =>
      label.startsWith("baseline")
        ? ["peak RSS", "wall"]
        : label.startsWith("ConfigMap")
          ? ["read", "peak RSS", "wall"]
          : label.includes("EdgeTenants")
            ? ["read", "CPU per object over baseline", "wall", "peak RSS"]
            : label.includes("files of")
              ? ["refused unread, the bound named", "peak RSS over baseline", "wall"]
              : ["refused before parsing", "peak RSS", "peak RSS over baseline", "wall"],
  },
  {
    name: "ClientThroughput",
    reason: "getEdge and listAllocations are measured over real HTTP at each concurrency",
    run: () =>
      benchClientThroughput({ concurrencies: [1, 2], allocations: 5, warmupMs: 50, durationMs: 150 }),
    metrics: ["throughput", "latency median", "latency p95"],
  },
  {
    name: "Convergence",
    reason:
      "a drifted fleet converges through the real Operator with the minimal calls counted and a bound computed",
    run: () =>
      benchConvergence({
        cases: [
          {
            label: "latency",
            fleet: tinyFleet(6, 2, 2),
            caps: { maxConcurrentRequests: 4, requestsPerSecond: 1_000_000 },
            latencyMs: 5,
            concurrency: 8,
            binds: "latency",
            cpuFloor: true,
          },
          {
            label: "rate",
            fleet: tinyFleet(4, 1, 1),
            caps: { maxConcurrentRequests: 4, requestsPerSecond: 100 },
            latencyMs: 0,
            concurrency: 8,
            binds: "rate",
            cpuFloor: false,
          },
        ],
        timeoutMs: 30_000,
      }),
    metrics: ["time", "converged", "calls measured", "calls minimal", "excess calls", "ideal bound"],
    exact: { converged: 1 },
  },
  {
    name: "SteadyState",
    reason: "a pass over a converged fleet is counted per route and makes no write",
    run: () => benchSteadyState({ fleet: tinyFleet(4, 2, 1), timeoutMs: 30_000 }),
    metrics: [
      "edge list pages per pass",
      "full reads due (safety net)",
      "getEdge per pass",
      "listAllocations per pass",
      "listPools per pass",
      "writes per pass",
    ],
    exact: {
      "writes per pass": 0,
      "edge list pages per pass": 1,
      "listAllocations per pass": 2,
      "listPools per pass": 1,
    },
  },
  {
    name: "HungManager",
    reason:
      "a new EdgeTenant on a healthy manager and the frozen manager's NSXManager are timed beside a frozen one, and a single manager's pass with each share",
    run: () =>
      benchHungManager({
        ...HUNG_MANAGER_QUICK,
        frozenTenants: 2,
        requestTimeoutSeconds: 1,
        lateAfterMs: 300,
        timeoutMs: 20_000,
        cost: { fleet: tinyFleet(4, 0, 0), latencyMs: 5 },
      }),
    metrics: (label) =>
      label.startsWith("1 manager")
        ? ["converged, 2 per manager", "converged, 4 per manager", "edges corrected, 4 per manager"]
        : [
            "new EdgeTenant on the healthy manager: corrected after",
            "new EdgeTenant corrected",
            "frozen NSXManager Ready=False after start",
          ],
  },
  {
    name: "Scale",
    reason: "the operator child reports its peak RSS and a change is timed for both cluster-less sources",
    run: () =>
      benchScale({
        ...SCALE_QUICK,
        cases: [
          { source: "memory", heapLimitMiB: 128 },
          { source: "memory", inDeploymentLimit: true },
          { source: "directory" },
        ],
        edges: 10,
        pools: 10,
        syncTimeoutMs: 30_000,
        changeTimeoutMs: 5_000,
      }),
    metrics: [
      "first pass (all objects)",
      "first pass complete",
      "peak RSS",
      "live heap (after a full GC)",
      "V8 heap limit (Node's choice)",
      "change → PUT seen",
    ],
    exact: { "first pass complete": 1 },
  },
];

describe("benchmarks at a tiny size", () => {
  it.each(CASES)("$name: $reason", { timeout: 90_000 }, async ({ name, run, metrics, exact = {} }) => {
    const result = await run();
    expect(result.name, name).toMatch(/^[a-z-]+$/);
    expect(result.measurements.length).toBeGreaterThan(0);
    for (const m of result.measurements) {
      expect(typeof m.value).toBe("number");
      expect(m.case).not.toBe("");
      expect(m.unit).not.toBe("");
      if (m.target !== undefined) expect(typeof m.target.met).toBe("boolean");
    }
    const cases = new Set(result.measurements.map((m) => m.case));
    for (const c of cases) {
      const here = result.measurements.filter((m) => m.case === c);
      for (const metric of typeof metrics === "function" ? metrics(c) : metrics)
        expect(
          here.map((m) => m.metric),
          `${c}: ${metric}`,
        ).toContain(metric);
      // in the cases that report the metric (the metrics above say which must)
      for (const [metric, value] of Object.entries(exact)) {
        const found = here.find((m) => m.metric === metric);
        if (found !== undefined) expect(found.value, `${c}: ${metric}`).toBe(value);
      }
    }
    // the printed table has a header, a rule and one row per measurement
    expect(formatTable(resultRows([result])).split("\n")).toHaveLength(result.measurements.length + 2);
  });
});
