/**
 * Steady-state economy: the manager calls of one resync pass when everything is in sync. The
 * fleet is converged by a first pass of the Operator (drifted edges, strays), then a second pass
 * over every object, with the statuses the first one wrote, is counted per route. Ideal, and the
 * target: the edge list's pages, no GET (a new operator counts each edge's safety-net full read from
 * its first look at it), one allocation list per IPPoolAllocations, one pool list per manager and
 * scope; zero writes.
 */
import { DRIFTED_TENANT, minimalSteadyStateCalls, sum, type FleetOptions } from "./lib/fixtures.ts";
import { startFleetRun } from "./lib/fleet-run.ts";
import { exactly, ResultBuilder, type BenchResult } from "./lib/result.ts";

export interface SteadyStateBenchOptions {
  fleet: FleetOptions;
  timeoutMs: number;
}

export const STEADY_STATE_FULL: SteadyStateBenchOptions = {
  fleet: { edges: 500, pools: 100, allowedPerPool: 5, straysPerPool: 3, edgeTenant: DRIFTED_TENANT },
  timeoutMs: 120_000,
};

export const STEADY_STATE_QUICK: SteadyStateBenchOptions = {
  fleet: { edges: 40, pools: 10, allowedPerPool: 3, straysPerPool: 2, edgeTenant: DRIFTED_TENANT },
  timeoutMs: 60_000,
};

const WRITES = ["putEdge", "releaseAddress", "allocate"];

export async function benchSteadyState(options: SteadyStateBenchOptions): Promise<BenchResult> {
  const result = new ResultBuilder("steady-state");
  const { fleet } = options;
  const run = await startFleetRun({
    fleet,
    caps: { maxConcurrentRequests: 16, requestsPerSecond: 1_000_000 },
    latencyMs: 0,
    concurrency: 32,
  });
  try {
    const converge = await run.pass({
      timeoutMs: options.timeoutMs,
      changes: fleet.edges + fleet.pools * fleet.straysPerPool,
    });
    const steady = await run.pass({ timeoutMs: options.timeoutMs });
    const label = `${fleet.edges} EdgeTenants, ${fleet.pools} IPPoolAllocations, 1 manager`;
    // a new operator counts each object's full read from its first look at it: none is due in its first pass
    const ideal = minimalSteadyStateCalls(fleet, 0);
    const writes = WRITES.reduce((n, route) => n + (steady.calls[route] ?? 0), 0);
    const add = (metric: string, value: number, unit: string, want?: number) =>
      result.add({
        case: label,
        metric,
        value,
        unit,
        ...(want !== undefined ? { target: exactly(value, want) } : {}),
      });
    add(
      "converged before (corrections + releases)",
      converge.tenantCorrections + converge.releases,
      "changes",
      fleet.edges + fleet.pools * fleet.straysPerPool,
    );
    add("edge list pages per pass", steady.calls["listEdges"] ?? 0, "calls", ideal["listEdges"]);
    add("getEdge per pass", steady.calls["getEdge"] ?? 0, "calls", ideal["getEdge"]);
    add("listAllocations per pass", steady.calls["listAllocations"] ?? 0, "calls", ideal["listAllocations"]);
    add("listPools per pass", steady.calls["listPools"] ?? 0, "calls", ideal["listPools"]);
    add("writes per pass", writes, "calls", 0);
    add("calls per pass", sum(steady.calls), "calls", sum(ideal));
    add("pass time (L=0)", steady.elapsedMs, "ms");
    result.detail("converge", {
      calls: converge.calls,
      errors: converge.errors.slice(0, 10),
      elapsedMs: converge.elapsedMs,
    });
    result.detail("steady", {
      calls: steady.calls,
      ideal,
      errors: steady.errors.slice(0, 10),
      elapsedMs: steady.elapsedMs,
    });
  } finally {
    await run.close();
  }
  result.note(
    "A first Operator pass converges the fleet; a second Operator over the same source (statuses kept; " +
      "its 30 s pool-list cache and its edge list empty, as after a restart) is counted per route by the simulator. " +
      "Its EdgeTenants are decided by the edge list; the safety net reads none of them in full: an operator counts " +
      "each object's next full read (at its phase of fullReadInterval, 1 h) from its first look at it, so that a " +
      "start never bunches them.",
  );
  return result.build();
}
