/**
 * The benchmarks of bench/ that run the operator in a child process or beside a frozen manager, at a tiny size (smoke.ts says what is checked).
 */
import { benchHungManager, HUNG_MANAGER_QUICK } from "../../bench/hung-manager.ts";
import { benchFleetInterval, FLEET_INTERVAL_QUICK } from "../../bench/fleet-interval.ts";
import { benchScale, SCALE_QUICK } from "../../bench/scale.ts";
import { smokeTest, tinyFleet } from "./smoke.ts";

smokeTest([
  {
    name: "FleetInterval",
    reason:
      "run at a 10 s interval: the first pass, steady-state calls counted on the manager, an out-of-band change timed to its PUT",
    run: () =>
      benchFleetInterval({
        ...FLEET_INTERVAL_QUICK,
        cases: [{ managers: 2 }],
        edges: 6,
        settleIntervals: 0,
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
]);
