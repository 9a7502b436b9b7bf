/**
 * The operator killed with SIGKILL at the worst moments and started again: `run --manifests
 * --status-file` as a child process against the manager simulator, with a latency fault holding
 * the chosen call open and the simulator's fault counters telling when it is in flight. After the
 * restart: convergence, no lost content (even with another client changing the edge while the
 * operator was dead), no allowed address released, no address released twice, calls within the
 * budgets, and the strays' firstSeen read back from the status file (the grace period is not
 * started again). No API server is needed; these run with the integration tests, one file at a
 * time, so that the timing windows are not squeezed by other test files.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { IPPoolAllocationsStatus } from "../../src/api/types.ts";
import { CLIENT_DEFAULTS } from "../../src/nsx/client.ts";
import { RECONCILER_DEFAULTS } from "../../src/reconcile/reconciler.ts";
import { startSimulator, type ApiRoute, type RunningSimulator } from "../../src/simulator/index.ts";
import { waitFor } from "../support/wait.ts";
import { assertCallsWithin, assertNoAllowedReleased, assertNoLostContent } from "../faults/invariants.ts";
import { spawnOperator, type OperatorProcess } from "../faults/operator-process.ts";
import {
  ALLOWED,
  DESIRED_TENANT,
  EDGE_ID,
  KEPT,
  POOL_ID,
  rigManifests,
  rigState,
  STRAYS,
} from "../faults/rig.ts";
import { callsByRoute, callsTo } from "../support/calls.ts";

/** what `run` uses: the client's and the reconciler's defaults */
const BUDGET = {
  maxRetries: CLIENT_DEFAULTS.maxRetries,
  maxAttempts: RECONCILER_DEFAULTS.maxAttempts,
};
/** the controller's log lines that end a pass */
const PASS_ENDS = new Set([
  "reconciled",
  "reconcile failed; retrying",
  "reconcile failed; not retrying until the object changes",
  "status write conflict; requeued",
]);
/** keys of the rig: at most this many passes are cut short by a kill */
const KEYS = 3;
const POOL_KEY = "IPPoolAllocations/default/pool-1";
const EDGE_KEY = "EdgeTenant/default/edge-1";

interface Scene {
  sim: RunningSimulator;
  statusFile: string;
  start(): OperatorProcess;
}

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scene(
  options: { strays?: readonly string[]; release?: { minStrayAge: string; maxPerSync: number } } = {},
): Promise<Scene> {
  const sim = await startSimulator({ state: rigState(options.strays) });
  cleanups.push(() => sim.close());
  const dir = mkdtempSync(join(tmpdir(), "nsxv-kill-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const manifests = join(dir, "manifests");
  mkdirSync(manifests);
  const documents = rigManifests(sim.url, {
    requestTimeoutSeconds: 10,
    ...(options.release !== undefined ? { release: options.release } : {}),
  });
  writeFileSync(join(manifests, "objects.yaml"), documents.map((d) => stringify(d)).join("---\n"));
  const statusFile = join(dir, "status.json");
  return {
    sim,
    statusFile,
    start() {
      const child = spawnOperator({ manifests, statusFile });
      cleanups.push(() => child.kill());
      return child;
    },
  };
}

/** how often the faults of a route fired: a call of it has reached the simulator */
function fired(sim: RunningSimulator, route: ApiRoute): number {
  return sim.state.faults
    .list()
    .filter((f) => f.spec.route === route)
    .reduce((n, f) => n + f.fired, 0);
}

function persisted(
  statusFile: string,
  key: string,
): { generation: number; status?: Record<string, unknown> } | undefined {
  const content = JSON.parse(readFileSync(statusFile, "utf8")) as {
    objects: Record<string, { generation: number; status?: Record<string, unknown> }>;
  };
  return content.objects[key];
}

function condition(statusFile: string, key: string, type: string) {
  const conditions = persisted(statusFile, key)?.status?.conditions as
    { type: string; status: string }[] | undefined;
  return conditions?.find((c) => c.type === type);
}

/** the declared state holds on the manager, and the status file says so for the edge and the pool */
async function converged(s: Scene, child: OperatorProcess, tenant = DESIRED_TENANT): Promise<void> {
  await waitFor(
    "convergence after the restart",
    async () => {
      const left =
        s.sim.state
          .pool(POOL_ID)
          ?.allocations()
          .map((a) => a.ipAddress) ?? [];
      const done =
        s.sim.state.edge(EDGE_ID)?.doc.tenant === tenant &&
        left.length === KEPT.length &&
        condition(s.statusFile, EDGE_KEY, "Ready")?.status === "True" &&
        condition(s.statusFile, POOL_KEY, "Ready")?.status === "True";
      return done ? true : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 50 },
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; operator stderr: ${child.stderr().slice(-2_000)}`);
  });
}

/** passes that ended (logged), plus those a kill cut short */
function passes(runs: { child: OperatorProcess; killed: boolean }[]): number {
  return runs.reduce(
    (n, { child, killed }) =>
      n + child.logs.filter((l) => PASS_ENDS.has(String(l.msg))).length + (killed ? KEYS : 0),
    0,
  );
}

/** The calls of a killed run and of its restart stay within the budgets of the passes the two made. */
function assertCallsAcrossRestart(
  sim: RunningSimulator,
  killed: OperatorProcess,
  restarted: OperatorProcess,
  releases: number,
): void {
  const made = passes([
    { child: killed, killed: true },
    { child: restarted, killed: false },
  ]);
  assertCallsWithin(sim, BUDGET, {
    NSXManager: { passes: made },
    EdgeTenant: { passes: made },
    IPPoolAllocations: { passes: made, releases },
  });
}

describe("operator killed with SIGKILL, then restarted", () => {
  it("between the edge GET and its PUT: nothing was written; the restart writes once, over the newest version", async () => {
    const s = await scene();
    // both reads are held 1.5 s: the one whose pass records the original tenant, then the one
    // that decides the PUT (and is the document PUT back)
    s.sim.state.faults.add({ route: "getEdge", kind: "latency", latencyMs: 1_500, count: 2 });
    const first = s.start();
    await waitFor(
      "the read before the PUT to be in flight",
      async () => (fired(s.sim, "getEdge") >= 2 ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    expect(await first.kill()).toBe("SIGKILL");
    expect(callsTo(s.sim, "putEdge"), "killed before the PUT").toBe(0);
    expect(
      persisted(s.statusFile, EDGE_KEY)?.status?.originalTenant,
      "the original was recorded before the write it is needed for",
    ).toBe("default");

    // another client changes the edge while the operator is dead
    s.sim.state.faults.clear();
    s.sim.state.changeEdge(EDGE_ID, { name: "renamed-while-down" });
    const second = s.start();
    await converged(s, second);

    assertNoLostContent(s.sim);
    assertNoAllowedReleased(s.sim, ALLOWED);
    const edge = s.sim.state.edge(EDGE_ID);
    expect(edge?.doc.name, "the other client's change survived").toBe("renamed-while-down");
    expect(callsTo(s.sim, "putEdge"), "one PUT in all").toBe(1);
    expect(callsTo(s.sim, "getEdge"), "the record's read, then one read per run").toBeLessThanOrEqual(3);
    assertCallsAcrossRestart(s.sim, first, second, STRAYS.length);
  });

  it("while its PUT is in flight: the manager applies it; the restart finds the tenant right and does not write again", async () => {
    const s = await scene();
    s.sim.state.faults.add({ route: "putEdge", kind: "latency", latencyMs: 1_500, count: 1 });
    const first = s.start();
    await waitFor("the PUT to be in flight", async () => (fired(s.sim, "putEdge") >= 1 ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 20,
    });
    await first.kill();
    // the request was sent whole: the manager acts on it although its sender is gone
    await waitFor(
      "the manager to apply the PUT",
      async () => (callsTo(s.sim, "putEdge") === 1 ? true : undefined),
      {
        timeoutMs: 5_000,
      },
    );
    expect(s.sim.state.edge(EDGE_ID)?.doc.tenant).toBe(DESIRED_TENANT);

    s.sim.state.faults.clear();
    const second = s.start();
    await converged(s, second);
    assertNoLostContent(s.sim);
    assertNoAllowedReleased(s.sim, ALLOWED);
    expect(callsTo(s.sim, "putEdge"), "no second PUT").toBe(1);
    expect(condition(s.statusFile, EDGE_KEY, "Synced")?.status).toBe("True");
    expect(
      persisted(s.statusFile, EDGE_KEY)?.status?.originalTenant,
      "the tenant before the write survived the kill: it was recorded first",
    ).toBe("default");
  });

  it("in the middle of a run of releases: each stray released once, none allowed, firstSeen kept", async () => {
    const strays = Array.from({ length: 12 }, (_, i) => `10.0.0.${30 + i}`);
    const minStrayAgeMs = 5_000;
    const s = await scene({ strays, release: { minStrayAge: "5s", maxPerSync: 100 } });
    s.sim.state.faults.add({ route: "releaseAddress", kind: "latency", latencyMs: 400 });
    const first = s.start();
    await waitFor(
      "a run of releases to be under way",
      async () => (s.sim.state.audit.snapshot().releases.length >= 3 ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    await first.kill();
    expect(s.sim.state.audit.snapshot().releases.length, "killed in the middle of the run").toBeLessThan(
      strays.length - 1,
    );

    // the status file still holds the strays as the first pass saw them, with their firstSeen
    const before = persisted(s.statusFile, POOL_KEY)?.status as IPPoolAllocationsStatus | undefined;
    const firstSeen = new Set(before?.stray?.map((st) => st.firstSeen));
    expect(before?.stray?.map((st) => st.ip).sort(), "every stray, as first seen").toEqual(
      [...strays].sort(),
    );
    expect(firstSeen.size, "one firstSeen: the first pass's").toBe(1);
    const firstSeenMs = Date.parse([...firstSeen][0] ?? "");

    // the DELETEs in flight at the kill still land on the manager. A DELETE the kernel delivered
    // before the kill may not have been read by the simulator yet (it counts a call as fired once
    // it has read it): done means every fired call answered, and nothing new for longer than the
    // 400 ms a fired call takes
    let quietSince: { releases: number; atMs: number } | undefined;
    await waitFor("the DELETEs in flight to land", async () => {
      const releases = s.sim.state.audit.snapshot().releases.length;
      if (
        callsTo(s.sim, "releaseAddress") !== fired(s.sim, "releaseAddress") ||
        quietSince?.releases !== releases
      ) {
        quietSince = { releases, atMs: Date.now() };
        return undefined;
      }
      return Date.now() - quietSince.atMs >= 1_000 ? true : undefined;
    });
    const releasedBeforeRestart = s.sim.state.audit.snapshot().releases.length;
    s.sim.state.faults.clear();
    const restartedAtMs = Date.now();
    const second = s.start();
    await converged(s, second);

    const releases = s.sim.state.audit.snapshot().releases;
    expect(releases.map((r) => r.ip).sort(), "each stray released exactly once").toEqual([...strays].sort());
    expect(callsByRoute(s.sim).releaseAddress, "no DELETE of an address already released").toEqual({
      total: strays.length,
      byStatus: { "200": strays.length },
    });
    assertNoAllowedReleased(s.sim, ALLOWED);
    assertNoLostContent(s.sim);
    const afterRestart = releases.filter((r) => Date.parse(r.time) >= restartedAtMs);
    expect(afterRestart.length).toBe(strays.length - releasedBeforeRestart);
    const waitedMs = Date.parse(afterRestart[0]?.time ?? "") - restartedAtMs;
    expect(
      waitedMs,
      `the restarted operator released ${waitedMs} ms after starting: its grace period ran from the persisted firstSeen, not anew`,
    ).toBeLessThan(minStrayAgeMs);
    expect(restartedAtMs - firstSeenMs).toBeGreaterThanOrEqual(minStrayAgeMs);
    const after = persisted(s.statusFile, POOL_KEY)?.status as IPPoolAllocationsStatus | undefined;
    expect(after?.stray ?? []).toEqual([]);
    assertCallsAcrossRestart(s.sim, first, second, strays.length);
  });
});
