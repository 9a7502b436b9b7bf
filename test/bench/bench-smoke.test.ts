/**
 * The in-process benchmarks of bench/ at a tiny size (smoke.ts says what is checked).
 */
import { benchClientThroughput } from "../../bench/client-throughput.ts";
import { benchConvergence } from "../../bench/convergence.ts";
import { benchEdgeDocument } from "../../bench/edge-document.ts";
import { benchSteadyState } from "../../bench/steady-state.ts";
import { smokeTest, tinyFleet } from "./smoke.ts";

smokeTest([
  {
    name: "EdgeDocument",
    reason:
      "parse, setTenant, serialize and the round trip are each summarised by median and p95; the 25 KB steady state compares the scan with the whole tree",
    run: () => benchEdgeDocument({ sizesBytes: [64 * 1024], warmup: 1, runs: 3, budgetMs: 300 }),
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
]);
