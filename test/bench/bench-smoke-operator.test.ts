/**
 * The benchmarks of bench/ that run the operator in a child process or beside a frozen manager, at a tiny size (smoke.ts says what is checked).
 */
import { benchHungManager, HUNG_MANAGER_QUICK } from "../../bench/hung-manager.ts";
import { benchCeiling, CEILING_QUICK, CEILING_TARGETS } from "../../bench/ceiling.ts";
import { benchFleetInterval, FLEET_INTERVAL_QUICK } from "../../bench/fleet-interval.ts";
import { benchScale, SCALE_QUICK } from "../../bench/scale.ts";
import { smokeTest, tinyFleet } from "./smoke.ts";

smokeTest([
  {
    name: "FleetInterval",
    reason:
      "run started with no status at a 10 s interval: the start's calls and a change made during it, steady-state CPU, calls, passes and status writes, an out-of-band change timed to its PUT",
    run: () =>
      benchFleetInterval({
        ...FLEET_INTERVAL_QUICK,
        cases: [{ managers: 2, source: "directory", targets: {} }],
        timing: {
          ...FLEET_INTERVAL_QUICK.timing,
          edges: 6,
          startDriftAtMs: 500,
          firstWindowMs: 2_000,
          windowStartMs: 2_000,
          windowMs: 2_000,
          syncTimeoutMs: 30_000,
          putTimeoutMs: 20_000,
        },
      }),
    metrics: [
      "manager calls in the first 2 s, per manager",
      "first pass complete",
      "operator CPU in 2 s of steady state",
      "manager calls in 2 s, per manager",
      "passes (reconciles) in 2 s",
      "status writes in 2 s",
      "manager writes in steady state",
      "drift in steady state → PUT",
      "peak RSS",
    ],
    exact: { "first pass complete": 1, "manager writes in steady state": 0 },
  },
  {
    name: "Ceiling",
    reason:
      "the ceiling's run (8 managers in full, 2 here) with the issue's targets as target columns: steady, CPU and calls in the window, drift, peak RSS",
    run: () =>
      benchCeiling({
        ...CEILING_QUICK,
        cases: [
          { managers: 2, source: "directory", fullReadIntervalMs: 4 * 3_600_000, targets: CEILING_TARGETS },
        ],
        timing: {
          ...CEILING_QUICK.timing,
          edges: 6,
          startDriftAtMs: 500,
          firstWindowMs: 2_000,
          windowStartMs: 2_000,
          windowMs: 2_000,
          syncTimeoutMs: 30_000,
          putTimeoutMs: 20_000,
        },
      }),
    metrics: [
      "start → every status written",
      "drift made 0.5 s after start → PUT",
      "operator CPU in 2 s of steady state",
      "manager calls in 2 s, per manager",
      "drift in steady state → PUT",
      "peak RSS",
    ],
    exact: { "first pass complete": 1, "manager writes in steady state": 0 },
  },
  {
    name: "HungManager",
    reason:
      "new EdgeTenants on a healthy manager are timed beside hung and slow ones, the hung ones' objects counted, and a single manager's pass with each share",
    run: () =>
      benchHungManager({
        ...HUNG_MANAGER_QUICK,
        cases: [
          { sick: 2, kind: "hung" },
          { sick: 2, kind: "slow" },
        ],
        sickTenants: 2,
        requestTimeoutSeconds: 2,
        arrivalsMs: [300, 1_500],
        timeoutMs: 20_000,
        cost: { fleet: tinyFleet(4, 0, 0), latencyMs: 5, timeoutMs: 20_000 },
      }),
    metrics: (label) =>
      label.startsWith("1 manager")
        ? ["converged, 2 per manager", "converged, 4 per manager", "edges corrected, 4 per manager"]
        : label.includes("hung")
          ? [
              "new EdgeTenant on a healthy manager: corrected after (worst)",
              "new EdgeTenants corrected",
              "sick managers' objects saying so at the end",
            ]
          : ["new EdgeTenant on a healthy manager: corrected after (worst)", "new EdgeTenants corrected"],
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
]);
