/**
 * The invariants every fault and bad-input test checks against the manager simulator, in one
 * place: no edge PUT lost content, no allowed address was released, nothing was written when
 * nothing should have been, and the calls stayed within what the retry budgets allow. The bounds
 * are derived from the client's maxRetries, the executor's maxAttempts and the work queue's
 * backoff, not picked per test.
 */
import { expect } from "vitest";
import { AddressSet } from "../../src/api/address-set.ts";
import type { Kind } from "../../src/api/types.ts";
import { BACKOFF_DEFAULTS } from "../../src/controller/rate-limiter.ts";
import type { ApiRoute, RunningSimulator } from "../../src/simulator/index.ts";
import { callsByRoute } from "../support/calls.ts";

export function assertNoLostContent(sim: RunningSimulator): void {
  const { violations, dropped } = sim.state.audit.snapshot();
  expect(violations, "edge PUTs whose document lost content (simulator audit)").toEqual([]);
  expect(dropped, "audit entries dropped: the audit would be incomplete").toBe(0);
}

/** No release in the simulator's audit is of an address `allowed` (spec.allowed syntax) contains. */
export function assertNoAllowedReleased(sim: RunningSimulator, allowed: readonly string[]): void {
  const set = AddressSet.parse(allowed);
  const released = sim.state.audit.snapshot().releases.filter((r) => set.has(r.ip));
  expect(released, `releases of addresses in ${JSON.stringify(allowed)}`).toEqual([]);
}

/** No PUT and no DELETE reached the manager (whatever it answered). */
export function assertNoWrites(sim: RunningSimulator): void {
  const calls = callsByRoute(sim);
  expect(
    { putEdge: calls.putEdge?.total ?? 0, releaseAddress: calls.releaseAddress?.total ?? 0 },
    "writes sent to the manager",
  ).toEqual({ putEdge: 0, releaseAddress: 0 });
}

export interface RetryBudget {
  /** the client's repeats after a call's first attempt (ManagerClientOptions.maxRetries) */
  maxRetries: number;
  /** the handlers' tries of one write answered 409 (ReconcilerDeps.maxAttempts) */
  maxAttempts: number;
}

/**
 * The most calls per route one reconcile pass of an object can make, from the handlers'
 * structure: an EdgeTenant reads once, PUTs, and reads again only after a 409 (so at most one read
 * per PUT attempt); a pool lists its scope and its allocations once, DELETEs, and lists again only
 * after a 409 (at most tries - 1 times per address) or a "not allocated" answer (once); an
 * NSXManager lists its scope. Every call may take 1 + maxRetries attempts (a write repeats only
 * when it provably was not acted on, which the bound includes).
 */
export function maxCallsPerPass(
  kind: Kind,
  budget: RetryBudget,
  options: { releases?: number } = {},
): Partial<Record<ApiRoute, number>> {
  const attempts = 1 + budget.maxRetries;
  const tries = budget.maxAttempts;
  const releases = options.releases ?? 0;
  switch (kind) {
    case "NSXManager":
      return { listPools: attempts };
    case "EdgeTenant":
      return { getEdge: tries * attempts, putEdge: tries * attempts };
    case "IPPoolAllocations":
      return {
        listPools: attempts,
        listAllocations: (1 + releases * Math.max(tries - 1, 1)) * attempts,
        releaseAddress: releases * tries * attempts,
      };
  }
}

/**
 * The most passes of one key within `windowMs` of its first failure: the work queue retries after
 * base, 2 base, 4 base, ... (ExponentialBackoff), so k retries need base * (2^k - 1) ms.
 */
export function maxPassesWithin(
  windowMs: number,
  baseDelayMs: number = BACKOFF_DEFAULTS.baseDelayMs,
): number {
  return 1 + Math.floor(Math.log2(1 + windowMs / baseDelayMs));
}

/**
 * Every route's calls are at most `passes` times the per-pass bound of the kinds that call it
 * (each kind with its own number of passes).
 */
export function assertCallsWithin(
  sim: RunningSimulator,
  budget: RetryBudget,
  passes: Partial<Record<Kind, { passes: number; releases?: number }>>,
): void {
  const bound: Partial<Record<ApiRoute, number>> = {};
  for (const [kind, { passes: n, releases }] of Object.entries(passes)) {
    const perPass = maxCallsPerPass(kind as keyof typeof passes, budget, { releases: releases ?? 0 });
    for (const [route, calls] of Object.entries(perPass)) {
      const key = route as ApiRoute;
      bound[key] = (bound[key] ?? 0) + n * calls;
    }
  }
  const calls = callsByRoute(sim);
  for (const route of ["getEdge", "putEdge", "listPools", "listAllocations", "releaseAddress"] as const) {
    const made = calls[route]?.total ?? 0;
    expect(
      made,
      `${route}: ${made} calls, bound ${bound[route] ?? 0} (${JSON.stringify(passes)})`,
    ).toBeLessThanOrEqual(bound[route] ?? 0);
  }
}
