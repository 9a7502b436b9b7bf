/**
 * Manager faults through the real reconcile path: the operator (operator.ts over a directory of
 * manifests) against the manager simulator, one fault per case. After each: the state converges
 * once the fault is spent; no PUT lost content and no allowed address was released (simulator
 * audit); the calls stay within the retry budgets; and the fault was visible in conditions
 * (Synced=False with the reason and the manager's words), Events and metrics.
 */
import { describe, expect, it } from "vitest";
import type { Kind } from "../../src/api/types.ts";
import type { ApiRoute, FaultSpec } from "../../src/simulator/index.ts";
import {
  assertCallsWithin,
  assertNoAllowedReleased,
  assertNoLostContent,
  maxPassesWithin,
} from "./invariants.ts";
import { ALLOWED, BUDGET, EDGE_BYTES, EDGE_ID, EDGE_TENANT, FaultRig, MANAGER, POOL, STRAYS } from "./rig.ts";
import { waitFor } from "../support/wait.ts";
import { callsByRoute } from "../support/calls.ts";

interface Visibility {
  /** the object whose status shows it; any object when absent */
  kind?: Kind;
  /** Synced=False with this reason */
  reason: string;
  /** parts of the condition's message; a Warning event carries the same reason and message */
  message: string[];
}

interface FaultCase {
  name: string;
  reason: string;
  faults: FaultSpec[];
  /** where the fault shows; absent: the fault is absorbed inside one pass (retries), no failure */
  visible?: Visibility;
  /** nsxv_manager_requests_total{route,status} samples that must be there, equal to the simulator's count when numeric */
  requests: { route: ApiRoute; status: string }[];
  /** what the simulator answered per route and status, exactly, once converged */
  exact?: Partial<Record<ApiRoute, Record<string, number>>>;
  /** each attempt took at least this long (latency faults): seen in the duration histogram */
  slowMs?: number;
  /**
   * NSXManager spec.requestTimeoutSeconds; default 1 (the CRD's minimum, which the cases beyond the
   * timeout wait out). The cases within it take 5: a slow answer stays within it by seconds, not by
   * the few hundred ms a loaded machine can take away.
   */
  requestTimeoutSeconds?: number;
}

const OBJECTS: Record<Kind, string> = {
  NSXManager: MANAGER,
  EdgeTenant: EDGE_TENANT,
  IPPoolAllocations: POOL,
};
const attempts = 1 + BUDGET.maxRetries;
/** the pass that records the edge's original tenant before its first correction reads it once more */
const RECORD_READS = 1;
const edgePath = "/api/4.0/edges/edge-1";
const allocationsPath = "/api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses";

const CASES: FaultCase[] = [
  {
    name: "latency spike within the request timeout",
    reason: "slow answers are only slow: no error, no extra call",
    faults: [{ route: "*", kind: "latency", latencyMs: 300, count: 6 }],
    requests: [{ route: "getEdge", status: "200" }],
    exact: { putEdge: { "204": 1 }, releaseAddress: { "200": 3 } },
    slowMs: 300,
    requestTimeoutSeconds: 5,
  },
  {
    name: "latency beyond the request timeout on edge reads",
    reason:
      "each attempt is abandoned at spec.requestTimeoutSeconds; the read is retried, then the pass fails",
    faults: [{ route: "getEdge", kind: "latency", latencyMs: 1_400, count: attempts }],
    visible: {
      kind: "EdgeTenant",
      reason: "Unreachable",
      message: [`GET ${edgePath}`, "no complete response within 1000 ms"],
    },
    requests: [{ route: "getEdge", status: "error" }],
  },
  {
    name: "burst of 503 on edge reads",
    reason:
      "a read is retried through 503s; once the retries are spent the pass fails as Unreachable with the manager's words",
    faults: [{ route: "getEdge", kind: "status", status: 503, count: attempts }],
    visible: {
      kind: "EdgeTenant",
      reason: "Unreachable",
      message: [
        `GET ${edgePath}: HTTP 503`,
        "Simulated fault: HTTP 503.",
        "errorCode 10020",
        "module vShield Edge",
      ],
    },
    requests: [{ route: "getEdge", status: "503" }],
    exact: { getEdge: { "503": attempts, "200": 1 + RECORD_READS }, putEdge: { "204": 1 } },
  },
  {
    name: "burst of 502 on allocation lists",
    reason: "the pool's list is retried through 502s, then the pass fails and nothing is released meanwhile",
    faults: [{ route: "listAllocations", kind: "status", status: 502, count: attempts }],
    visible: {
      kind: "IPPoolAllocations",
      reason: "Unreachable",
      message: [`GET ${allocationsPath}: HTTP 502`, "errorCode 100"],
    },
    requests: [{ route: "listAllocations", status: "502" }],
    exact: { releaseAddress: { "200": 3 } },
  },
  {
    name: "500 on the edge PUT",
    reason:
      "a failed write is not repeated blindly: the next pass reads again and writes once; a 500 is the manager's own error, not Unreachable",
    faults: [{ route: "putEdge", kind: "status", status: 500, count: 1 }],
    visible: {
      kind: "EdgeTenant",
      reason: "ReconcileError",
      message: [`PUT ${edgePath}: HTTP 500`, "errorCode 100", "module core-services"],
    },
    requests: [{ route: "putEdge", status: "500" }],
    exact: { putEdge: { "500": 1, "204": 1 } },
  },
  {
    name: "503 on a release",
    reason: "a failed DELETE stops the pass's releases; the next pass lists again and releases what is left",
    faults: [{ route: "releaseAddress", kind: "status", status: 503, count: 1 }],
    visible: {
      kind: "IPPoolAllocations",
      reason: "Unreachable",
      message: [`DELETE ${allocationsPath}/10.0.0.10: HTTP 503`],
    },
    requests: [{ route: "releaseAddress", status: "503" }],
    exact: { releaseAddress: { "503": 1, "200": 3 } },
  },
  {
    name: "connection reset before an edge read is answered",
    reason: "a reset read is retried; once the retries are spent the manager is reported unreachable",
    faults: [{ route: "getEdge", kind: "reset", count: attempts }],
    visible: {
      kind: "EdgeTenant",
      reason: "Unreachable",
      message: [`GET ${edgePath}: network error`],
    },
    requests: [{ route: "getEdge", status: "error" }],
    exact: { getEdge: { reset: attempts, "200": 1 + RECORD_READS }, putEdge: { "204": 1 } },
  },
  {
    name: "connection reset after the edge PUT was applied",
    reason:
      "the answer is lost but the write happened: it is not repeated, the next read finds the tenant right",
    faults: [{ route: "putEdge", kind: "reset", afterAction: true, count: 1 }],
    visible: {
      kind: "EdgeTenant",
      reason: "Unreachable",
      message: [`PUT ${edgePath}: network error`],
    },
    requests: [{ route: "putEdge", status: "error" }],
    exact: { putEdge: { reset: 1 } },
  },
  {
    name: "connection reset after a release was applied",
    reason: "the lost answer is not repeated; the next list no longer has the address",
    faults: [{ route: "releaseAddress", kind: "reset", afterAction: true, count: 1 }],
    visible: {
      kind: "IPPoolAllocations",
      reason: "Unreachable",
      message: [`DELETE ${allocationsPath}/10.0.0.10: network error`],
    },
    requests: [{ route: "releaseAddress", status: "error" }],
    exact: { releaseAddress: { reset: 1, "200": 2 } },
  },
  {
    name: "connection resets on the manager's own check (the pool list)",
    reason:
      "the manager is reported unreachable and its dependents wait for it instead of timing out one by one",
    faults: [{ route: "listPools", kind: "reset", count: attempts }],
    visible: {
      reason: "Unreachable",
      message: ["GET /api/2.0/services/ipam/pools/scope/globalroot-0: network error"],
    },
    requests: [{ route: "listPools", status: "error" }],
    exact: { putEdge: { "204": 1 }, releaseAddress: { "200": 3 } },
  },
  {
    name: "burst of 503 on the manager's own check (the pool list)",
    reason:
      "a manager that answers 503 is as unreachable as one that does not answer: its dependents wait for it",
    faults: [{ route: "listPools", kind: "status", status: 503, count: attempts }],
    visible: {
      reason: "Unreachable",
      message: ["GET /api/2.0/services/ipam/pools/scope/globalroot-0: HTTP 503"],
    },
    requests: [{ route: "listPools", status: "503" }],
    exact: { putEdge: { "204": 1 }, releaseAddress: { "200": 3 } },
  },
  {
    name: "409 storm on the edge PUT",
    reason:
      "the read that decided the PUT is the pre-write read; each 409 is followed by a fresh read and a new PUT, maxAttempts PUTs in all, then the pass gives up; the next pass corrects with GET + PUT",
    faults: [{ route: "putEdge", kind: "conflict", count: BUDGET.maxAttempts }],
    visible: {
      kind: "EdgeTenant",
      reason: "ConcurrentModification",
      message: [
        `PUT edge edge-1: the manager answered 409 (concurrent modification) ${BUDGET.maxAttempts} times`,
      ],
    },
    requests: [{ route: "putEdge", status: "409" }],
    exact: {
      putEdge: { "409": BUDGET.maxAttempts, "204": 1 },
      // the record's read; pass 1: the deciding GET and a re-read after each 409 but the last; pass 2: GET + PUT
      getEdge: { "200": RECORD_READS + BUDGET.maxAttempts + 1 },
    },
  },
  {
    name: "409s fewer than the executor's attempts",
    reason: "the executor re-reads and wins within one pass: seen only in the metrics",
    faults: [{ route: "putEdge", kind: "conflict", count: BUDGET.maxAttempts - 1 }],
    requests: [{ route: "putEdge", status: "409" }],
    exact: {
      putEdge: { "409": BUDGET.maxAttempts - 1, "204": 1 },
      // the record's read, the deciding GET, then one re-read after each 409
      getEdge: { "200": RECORD_READS + BUDGET.maxAttempts },
    },
  },
  {
    name: "409 storm on releases",
    reason:
      "a release answered 409 is retried after a fresh list while the address is still allocated, then given up",
    faults: [{ route: "releaseAddress", kind: "status", status: 409, count: BUDGET.maxAttempts }],
    visible: {
      kind: "IPPoolAllocations",
      reason: "ConcurrentModification",
      message: [`release of 10.0.0.10 from ipaddresspool-1: the manager answered 409`],
    },
    requests: [{ route: "releaseAddress", status: "409" }],
    exact: { releaseAddress: { "409": BUDGET.maxAttempts, "200": 3 } },
  },
  {
    name: "malformed edge document",
    reason: "a cut document is refused, never written back; the next pass reads a whole one",
    faults: [{ route: "getEdge", kind: "malformed", count: 1 }],
    visible: {
      kind: "EdgeTenant",
      reason: "ReconcileError",
      message: ["edge document:"],
    },
    requests: [{ route: "getEdge", status: "200" }],
    exact: { putEdge: { "204": 1 } },
  },
  {
    name: "malformed allocation list",
    reason: "a cut list is refused: nothing is released on a list that could not be read whole",
    faults: [{ route: "listAllocations", kind: "malformed", count: 1 }],
    visible: {
      kind: "IPPoolAllocations",
      reason: "ReconcileError",
      message: ["allocation list:"],
    },
    requests: [{ route: "listAllocations", status: "200" }],
    exact: { releaseAddress: { "200": 3 } },
  },
  {
    name: "malformed pool list",
    reason: "a cut pool list fails the pass of whoever read it (the manager's check or the pool's)",
    faults: [{ route: "listPools", kind: "malformed", count: 1 }],
    visible: { reason: "ReconcileError", message: ["pool list:"] },
    requests: [{ route: "listPools", status: "200" }],
    exact: { releaseAddress: { "200": 3 } },
  },
  {
    name: "malformed answer to an applied release",
    reason: "the release happened but its answer cannot be read: not repeated, the next list shows it gone",
    faults: [{ route: "releaseAddress", kind: "malformed", count: 1 }],
    visible: {
      kind: "IPPoolAllocations",
      reason: "ReconcileError",
      message: ["release response:"],
    },
    requests: [{ route: "releaseAddress", status: "200" }],
    exact: { releaseAddress: { "200": 3 } },
  },
  {
    name: "edge document trickling in slower than the request timeout",
    reason:
      "8 KB at 512 B per 100 ms needs 1.6 s: each attempt is cut at 1 s, and the manager reported unreachable",
    faults: [{ route: "getEdge", kind: "trickle", bytesPerInterval: 512, intervalMs: 100, count: attempts }],
    visible: {
      kind: "EdgeTenant",
      reason: "Unreachable",
      message: [`GET ${edgePath}`, "no complete response within 1000 ms"],
    },
    requests: [{ route: "getEdge", status: "error" }],
  },
  {
    name: "edge document trickling in slowly but within the request timeout",
    reason: "the edge in 5 pieces 100 ms apart takes 0.4 s: slow, complete, no error",
    faults: [
      { route: "getEdge", kind: "trickle", bytesPerInterval: Math.ceil(EDGE_BYTES / 5), intervalMs: 100 },
    ],
    requests: [{ route: "getEdge", status: "200" }],
    exact: { getEdge: { "200": 1 + RECORD_READS }, putEdge: { "204": 1 } },
    slowMs: 300,
    requestTimeoutSeconds: 5,
  },
  {
    name: "503 on any route at random",
    reason:
      "a seeded 30 % of calls fail, at most 3 of them (so at most 1+2+4 s of backoff): the operator converges within its budgets",
    faults: [{ route: "*", kind: "status", status: 503, rate: 0.3, seed: 7, count: 3 }],
    requests: [],
  },
];

describe("manager faults through the operator", () => {
  it.concurrent.each(CASES)("$name", async (c) => {
    const rig = await FaultRig.start({
      faults: c.faults,
      ...(c.requestTimeoutSeconds !== undefined ? { requestTimeoutSeconds: c.requestTimeoutSeconds } : {}),
    });
    try {
      const elapsedMs = await rig.waitConverged();
      await assertSafeAndBounded(rig, c, elapsedMs);
      await assertInMetrics(rig, c);
      if (c.visible !== undefined) assertVisible(rig, c.visible);
    } finally {
      await rig.close();
    }
  });
});

/** The fault happened as specified, nothing unsafe was done, and the calls stayed within the budgets. */
async function assertSafeAndBounded(rig: FaultRig, c: FaultCase, elapsedMs: number): Promise<void> {
  for (const fault of rig.sim.state.faults.list()) {
    if (fault.spec.count !== undefined && fault.spec.rate === undefined) {
      expect(fault.fired, `${c.reason}: fault ${JSON.stringify(fault.spec)} fired`).toBe(fault.spec.count);
    }
  }
  assertNoLostContent(rig.sim);
  assertNoAllowedReleased(rig.sim, ALLOWED);
  const released = rig.sim.state.audit.snapshot().releases.map((r) => r.ip);
  expect(released.sort(), "each stray released once").toEqual([...STRAYS].sort());
  const passes = await rig.passes();
  // and one pass more: the EdgeTenant records its original tenant before its first correction;
  // a dependent's failed pass may wake its manager's check (while the manager's status still says
  // it is fine), and a manager's check may wake its EdgeTenant (its edge list shows it drifted): at
  // most one more pass per pass of the other; and a manager whose own check fails and recovers
  // wakes its dependents twice (its Ready went down, and came back)
  const backoffBound = maxPassesWithin(elapsedMs);
  const dependents = Object.keys(OBJECTS).length - 1;
  expect(passes, "passes, bounded by the work queue's backoff").toBeLessThanOrEqual(
    Object.keys(OBJECTS).length * backoffBound + 1 + 2 * backoffBound + backoffBound + 2 * dependents,
  );
  assertCallsWithin(rig.sim, BUDGET, {
    NSXManager: { passes },
    EdgeTenant: { passes },
    IPPoolAllocations: { passes, releases: STRAYS.length },
  });
  const calls = callsByRoute(rig.sim);
  for (const [route, byStatus] of Object.entries(c.exact ?? {})) {
    for (const [status, n] of Object.entries(byStatus)) {
      expect(calls[route]?.byStatus[status] ?? 0, `${route} answered ${status}`).toBe(n);
    }
    const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
    expect(calls[route]?.total, `${route}: no other answers`).toBe(total);
  }
}

/** Every attempt counted by status as the simulator saw it; time spent; reconcile errors. */
async function assertInMetrics(rig: FaultRig, c: FaultCase): Promise<void> {
  for (const { route, status } of c.requests) {
    const counted = await rig.metric("nsxv_manager_requests_total", { route, status });
    expect(counted, `nsxv_manager_requests_total{route=${route},status=${status}}`).toBeGreaterThan(0);
    if (!/^\d+$/.test(status)) continue;
    // the simulator counts a call when it comes, the operator when its answer is read: a pass
    // still running after convergence (a slow answer) is counted by both once it ends
    let seen = "";
    await waitFor(
      `nsxv_manager_requests_total{route=${route},status=${status}} as the simulator counted`,
      async () => {
        const operator = await rig.metric("nsxv_manager_requests_total", { route, status });
        const simulator = callsByRoute(rig.sim)[route]?.byStatus[status];
        seen = `the operator counted ${operator}, the simulator ${simulator}; ${rig.describe()}`;
        return operator === simulator;
      },
      { intervalMs: 25 },
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}: ${seen}`, { cause: error });
    });
  }
  if (c.slowMs !== undefined) {
    const seconds = await rig.metric("nsxv_manager_request_duration_seconds_sum");
    const slow = rig.sim.state.faults.list().reduce((n, f) => n + f.fired, 0);
    expect(seconds, "time spent on the manager").toBeGreaterThanOrEqual((slow * c.slowMs * 0.9) / 1000);
  }
  const errors = await rig.metric("controller_runtime_reconcile_errors_total");
  if (c.visible !== undefined)
    expect(errors, "controller_runtime_reconcile_errors_total").toBeGreaterThanOrEqual(1);
  else if (c.requests.length > 0) expect(errors, "no reconcile failed").toBe(0);
}

/** Synced=False with the reason and the manager's words, a Warning event with the same reason and words, then Synced=True. */
function assertVisible(rig: FaultRig, visible: Visibility): void {
  const { kind, reason, message } = visible;
  const kinds = kind === undefined ? (Object.keys(OBJECTS) as Kind[]) : [kind];
  const failures = kinds.flatMap((k) => rig.failures(k, OBJECTS[k]));
  const matching = failures.filter((f) => f.reason === reason && message.every((m) => f.message.includes(m)));
  expect(matching, `Synced=False ${reason} among ${JSON.stringify(failures)}`).not.toEqual([]);
  const warnings = rig.events.filter((e) => e.type === "Warning" && kinds.includes(e.kind as Kind));
  expect(
    warnings.filter((e) => e.reason === reason && matching.some((f) => f.message === e.message)),
    `Warning ${reason} among ${JSON.stringify(warnings)}`,
  ).not.toEqual([]);
  for (const k of kinds)
    expect(rig.condition(k, OBJECTS[k], "Synced")?.status, `${k} Synced again`).toBe("True");
}

describe("a concurrent writer on the manager", () => {
  it("changes the edge while the PUT is in flight: 409 on the stale PUT, fresh read, nothing of theirs lost", async () => {
    const rig = await FaultRig.start({
      settings: { rejectStaleVersion: true },
      faults: [{ route: "putEdge", kind: "latency", latencyMs: 300, count: 1 }],
    });
    try {
      await waitFor(
        "the PUT to be in flight",
        async () => (rig.sim.state.faults.list()[0]?.fired === 1 ? true : undefined),
        { intervalMs: 5 },
      );
      rig.sim.state.changeEdge(EDGE_ID, { name: "renamed-by-another-client" });
      await rig.waitConverged();
      assertNoLostContent(rig.sim);
      expect(rig.sim.state.edge(EDGE_ID)?.doc.name, "the other client's change survived").toBe(
        "renamed-by-another-client",
      );
      expect(callsByRoute(rig.sim).putEdge, "the stale PUT refused, the fresh one accepted").toEqual({
        total: 2,
        byStatus: { "409": 1, "204": 1 },
      });
      expect(rig.failures("EdgeTenant", EDGE_TENANT), "absorbed by the executor's attempts").toEqual([]);
    } finally {
      await rig.close();
    }
  });
});
