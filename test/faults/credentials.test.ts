/**
 * 401 after the manager's credentials rotate, and recovery once the Secret is updated: the
 * operator (over a directory of manifests) keeps calling with the old password and fails with
 * Unauthorized, visible on the NSXManager (authenticated: false), in Events and in metrics, and
 * writes nothing; once the Secret carries the new password, ManagerConnections builds a new
 * client and the drift made meanwhile is corrected. The operator resyncs on a fake clock.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FakeClock } from "../../src/util/clock.ts";
import { advance, advanceUntil } from "../support/operator-time.ts";
import { callsByRoute, type RouteCalls } from "../support/calls.ts";
import { assertNoAllowedReleased, assertNoLostContent } from "./invariants.ts";
import { ALLOWED, CREDENTIALS, EDGE_ID, FaultRig, MANAGER, POOL_ID } from "./rig.ts";

const NEW_PASSWORD = "second-password";
const SYNC_INTERVAL_MS = 500;

let rig: FaultRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

function count(calls: RouteCalls, status: string): number {
  return Object.values(calls).reduce((n, c) => n + (c.byStatus[status] ?? 0), 0);
}

describe("credentials rotated on the manager", () => {
  it("fails with Unauthorized, writes nothing, and recovers once the Secret is updated", async () => {
    const clock = new FakeClock();
    rig = await FaultRig.start({ syncIntervalMs: SYNC_INTERVAL_MS, clock });
    const r = rig;
    const { registry } = r.metrics;
    const until = <T>(what: string, check: () => T | undefined | false) =>
      advanceUntil(what, clock, registry, check, {
        stepMs: SYNC_INTERVAL_MS / 5,
        limitMs: 20 * SYNC_INTERVAL_MS,
      });
    await until("convergence", () => r.converged());

    r.sim.state.auth.rotate(
      { username: CREDENTIALS.username, password: NEW_PASSWORD },
      { keepTokens: false },
    );
    // drift while the operator cannot log in: another tenant, a new stray
    r.sim.state.changeEdge(EDGE_ID, { tenant: "red" });
    r.sim.state.allocate(POOL_ID, { mode: "RESERVE", ipAddress: "10.0.0.30", note: "late host" });
    const passesBefore = await r.passes();
    const before = callsByRoute(r.sim);

    const manager = await until("the NSXManager to report the refused credentials", () => {
      const status = r.status("NSXManager", MANAGER) as { authenticated?: boolean } | undefined;
      return status?.authenticated === false ? status : undefined;
    });
    expect(manager).toMatchObject({ reachable: true, authenticated: false });
    const ready = r.condition("NSXManager", MANAGER, "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "Unauthorized" });
    expect(ready?.message).toContain("the manager refused the credentials");
    expect(ready?.message).toContain("HTTP 401: Authentication failed");
    // the dependents wait for their manager instead of hammering it
    await until(
      "the dependents to wait for the manager",
      () =>
        r.condition("EdgeTenant", "edge-1", "Synced")?.reason === "ManagerNotReady" &&
        r.condition("IPPoolAllocations", "pool-1", "Synced")?.reason === "ManagerNotReady",
    );
    const warnings = r.events.filter((e) => e.type === "Warning");
    expect(warnings.some((e) => e.kind === "NSXManager" && e.message.includes("HTTP 401"))).toBe(true);
    expect(warnings.some((e) => e.reason === "ManagerNotReady")).toBe(true);
    expect(await r.metric("nsxv_manager_requests_total", { status: "401" })).toBeGreaterThan(0);

    // a few resyncs later: one 401 per pass at most, and no write was even tried
    await advance(clock, registry, 3 * SYNC_INTERVAL_MS, SYNC_INTERVAL_MS / 5);
    const during = callsByRoute(r.sim);
    const passesDuring = (await r.passes()) - passesBefore;
    const refused = count(during, "401") - count(before, "401");
    expect(refused, "401s, each ending its pass").toBeGreaterThan(0);
    expect(refused).toBeLessThanOrEqual(passesDuring);
    expect(during.putEdge?.total).toBe(before.putEdge?.total);
    expect(during.releaseAddress?.total).toBe(before.releaseAddress?.total);
    expect(r.sim.state.edge(EDGE_ID)?.doc.tenant).toBe("red");

    // the Secret is updated: a new client, and the drift is corrected
    await r.rewrite({ password: NEW_PASSWORD });
    await until("convergence with the new password", () => r.converged());
    expect(r.status("NSXManager", MANAGER)).toMatchObject({ reachable: true, authenticated: true });
    expect(
      r.sim.state
        .pool(POOL_ID)
        ?.allocations()
        .map((a) => a.ipAddress),
    ).not.toContain("10.0.0.30");
    // a pass with the old client may still have been refused until the new one took over (a
    // failing object is retried every sync interval, 0.5 s here); from then on, no 401
    const converged = callsByRoute(r.sim);
    await advance(clock, registry, 3 * SYNC_INTERVAL_MS, SYNC_INTERVAL_MS / 5);
    const after = callsByRoute(r.sim);
    expect(count(after, "401"), "no 401 once the new password is in use").toBe(count(converged, "401"));
    // converged EdgeTenants read the edge list, not their edges: any answered call counts
    expect(count(after, "200"), "passes went on meanwhile").toBeGreaterThan(count(converged, "200"));

    assertNoLostContent(r.sim);
    assertNoAllowedReleased(r.sim, ALLOWED);
    const everything = JSON.stringify([r.events, r.source.writes]);
    expect(everything, "passwords appear in no status and no event").not.toContain(CREDENTIALS.password);
    expect(everything).not.toContain(NEW_PASSWORD);
  });
});
