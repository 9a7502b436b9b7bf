/**
 * What the manager simulator was asked, counted from its counters (calls per route and answer
 * status): in-process from `sim.state.counters`, or from a snapshot read over its control API
 * (`GET /_simulator/counters`, as the benchmarks' simulator processes are read).
 */
import type { ApiRoute, CounterSnapshot, RunningSimulator } from "../../src/simulator/index.ts";

/** Calls per route, whatever the answer, from a counter snapshot. */
export function totalsByRoute(counters: CounterSnapshot): Record<string, number> {
  return Object.fromEntries(
    Object.entries(counters).map(([route, byStatus]) => [
      route,
      Object.values(byStatus).reduce((a, b) => a + b, 0),
    ]),
  );
}

/** Calls per route the simulator answered (or reset), whatever the answer. */
export function callsOf(sim: RunningSimulator): Record<string, number> {
  return totalsByRoute(sim.state.counters.snapshot());
}

/** Every call of one route, whatever its answer. */
export function callsTo(sim: RunningSimulator, route: ApiRoute): number {
  return callsOf(sim)[route] ?? 0;
}

/** Calls per route: the total and the count per answer status. */
export type RouteCalls = Record<string, { total: number; byStatus: Record<string, number> }>;

export function callsByRoute(sim: RunningSimulator): RouteCalls {
  const counters = sim.state.counters.snapshot();
  const totals = totalsByRoute(counters);
  return Object.fromEntries(
    Object.entries(counters).map(([route, byStatus]) => [route, { total: totals[route]!, byStatus }]),
  );
}
