/**
 * The operator's wiring (src/controller/operator.ts) with an in-memory desired-state source and
 * the simulator as the manager: reports go to the status sink, Events and metrics; a status
 * conflict requeues quietly; a terminal error waits for a change; only the leader works, a lost
 * lease ends with "lease-lost"; shutdown lets in-flight reconciles finish and releases the lease,
 * within its timeout even when a manager hangs; /readyz follows the source.
 */
import { describe, expect, it } from "vitest";
import type { EdgeTenant, NSXManager, NsxvObject } from "../../src/api/types.ts";
import { InMemoryLeaseStore, type LeaseStore } from "../../src/controller/leader-election.ts";
import { shutdownBudget } from "../../src/operator/operator.ts";
import { edgeRef, NS, objects, operatorHarness, ready } from "./harness.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { advance, settle } from "../support/operator-time.ts";
import { waitFor } from "../support/wait.ts";
import { MemorySource } from "../support/memory-source.ts";
import { StatusRefusedError } from "../../src/source/source.ts";

describe("Operator", () => {
  const { run, simulator } = operatorHarness();

  it("reconciles every object at start; status goes to the sink, changes to Events and metrics", async () => {
    const sim = await simulator(["red"]);
    const { objects: objs, secrets } = objects(sim.url, { "edge-1": "blue" });
    const source = new MemorySource({ objects: objs, secrets });
    const { registry } = run(source);
    await waitFor("edge-1 Ready", () => ready(source.statusOf(edgeRef("edge-1"))) === "True");
    expect(sim.state.edge("edge-1")?.doc.tenant).toBe("blue");
    await source.events.flush();
    expect(source.sink.events.map((e) => `${e.involvedObject.kind}/${e.type}/${e.reason}`)).toContain(
      "EdgeTenant/Normal/UpdatedEdgeTenant",
    );
    const text = await registry.metrics();
    expect(text).toContain("nsxv_edge_tenant_corrections_total 1");
    expect(text).toContain(
      `nsxv_manager_requests_total{manager="${NS}/nsx",method="PUT",route="putEdge",status="204"} 1`,
    );
    expect(text).toMatch(
      /controller_runtime_reconcile_total\{controller="nsxv-operator",result="requeue_after"\} [1-9]/,
    );
    // a pass that finds nothing new writes nothing (the pass after a correction still records the
    // edge's new version, so settle first)
    const edge = { kind: "EdgeTenant", namespace: NS, name: "edge-1" } as const;
    const settled = () => source.store.get(edge) as NsxvObject;
    source.change({ ...settled() });
    await settle(registry);
    const writes = source.writes.length;
    source.change({ ...settled() });
    await settle(registry);
    expect(source.writes).toHaveLength(writes);
  });

  it("a status the API server refuses (422) is replaced by a minimal one saying why, and the object is retried, not frozen", async () => {
    const sim = await simulator(["red"]);
    const { objects: objs, secrets } = objects(sim.url, { "edge-1": "blue" });
    const source = new MemorySource({ objects: objs, secrets });
    // the EdgeTenant's first status (its record) is refused; every other write goes through
    const refusal = new StatusRefusedError(
      "write status of EdgeTenant ops/edge-1: HTTP 422 Invalid: status.conditions[0].message: Too long: may not be more than 32768 bytes",
    );
    const first = source.writeStatus.bind(source);
    let refused = false;
    source.writeStatus = (ref, status) => {
      if (ref.kind === "EdgeTenant" && !refused) {
        refused = true;
        source.writes.push({ ref, status });
        return Promise.reject(refusal);
      }
      return first(ref, status);
    };
    run(source);
    const minimal = await waitFor("the minimal status", () =>
      source.writes
        .flatMap((w) => w.status.conditions ?? [])
        .find((c) => c.type === "Synced" && c.reason === "StatusRefused"),
    );
    expect(minimal.message).toContain("HTTP 422 Invalid");
    expect(minimal.message).toContain("reconciled again");
    const refusedAt = source.writes.findIndex((w) =>
      w.status.conditions?.some((c) => c.reason === "StatusRefused"),
    );
    expect(source.writes[refusedAt - 1]?.status, "the refused status carried the record").toMatchObject({
      originalTenant: "red",
    });
    await source.events.flush();
    expect(source.sink.events.map((e) => e.reason)).toContain("StatusRefused");
    // retried after its backoff: the record lands, the edge is corrected
    await waitFor("edge-1 corrected", () => ready(source.statusOf(edgeRef("edge-1"))) === "True");
    expect(sim.state.edge("edge-1")?.doc.tenant).toBe("blue");
  });

  it("a 409 on a status write requeues quietly, then writes", async () => {
    const sim = await simulator(["blue"]);
    const { objects: objs, secrets } = objects(sim.url, { "edge-1": "blue" });
    const source = new MemorySource({ objects: objs, secrets });
    source.answers.push("conflict");
    const { registry } = run(source);
    // two objects, one of which conflicts once: three writes
    await waitFor("three writes", () => source.writes.length >= 3);
    expect(ready(source.statusOf(edgeRef("edge-1")))).toBe("True");
    const text = await registry.metrics();
    // a quiet error: counted as an error and retried after the backoff, never logged as one
    expect(text).toMatch(/controller_runtime_reconcile_errors_total\{controller="nsxv-operator"\} 1/);
  });

  it("a dependent's call answered 401 turns its NSXManager not-Ready at once, not at the manager's next check", async () => {
    const sim = await simulator(["blue"]);
    const { objects: objs, secrets } = objects(sim.url, { "edge-1": "blue" });
    const source = new MemorySource({ objects: objs, secrets });
    // managers are checked again only after an hour here
    run(source);
    const managerRef = { kind: "NSXManager" as const, namespace: NS, name: "nsx" };
    const managerStatus = () => (source.store.get(managerRef) as NsxvObject | undefined)?.status;
    // the manager's check (pools and edge list) may end after its dependent's pass
    await waitFor(
      "converged",
      () => ready(source.statusOf(edgeRef("edge-1"))) === "True" && ready(managerStatus()) === "True",
    );

    sim.state.auth.rotate({ username: "admin", password: "rotated" }, { keepTokens: false });
    const edge = source.store.get({ kind: "EdgeTenant", namespace: NS, name: "edge-1" }) as EdgeTenant;
    source.change({
      ...edge,
      metadata: { ...edge.metadata, generation: 2 },
      spec: { ...edge.spec, tenant: "green" },
    });
    const refused = await waitFor("the manager not Ready", () => {
      const status = managerStatus() as NSXManager["status"];
      return status?.authenticated === false ? status : undefined;
    });
    expect(ready(refused)).toBe("False");
    expect(refused.conditions?.find((c) => c.type === "Ready")?.reason).toBe("Unauthorized");
  });

  it("a terminal error waits for a change of the object", async () => {
    const sim = await simulator(["red"]);
    const { objects: objs, secrets } = objects(sim.url, { "edge-1": "blue" });
    const bad = { ...objs[1]!, spec: { ...(objs[1] as EdgeTenant).spec, edgeId: "edge-one" } } as EdgeTenant;
    const source = new MemorySource({ objects: [objs[0]!, bad], secrets });
    const clock = new FakeClock();
    const { registry } = run(source, { clock });
    await waitFor("Stalled", () =>
      source.statusOf(edgeRef("edge-1"))?.conditions?.some((c) => c.type === "Stalled"),
    );
    await advance(clock, registry, 1_500, 100); // past the first backoff (1 s)
    const errors = async () =>
      /controller_runtime_reconcile_errors_total\{controller="nsxv-operator"\} (\d+)/.exec(
        await registry.metrics(),
      )?.[1];
    expect(await errors()).toBe("1");
    source.change({
      ...bad,
      metadata: { ...bad.metadata, generation: 2 },
      spec: { ...bad.spec, edgeId: "edge-1" },
    });
    await waitFor("Ready", () => ready(source.statusOf(edgeRef("edge-1"))) === "True");
    expect(await errors()).toBe("1");
  });

  it("only the leader works; a leader that cannot renew ends with lease-lost and the standby takes over", async () => {
    const sim = await simulator(["red", "red"]);
    const shared = new InMemoryLeaseStore();
    let broken = false;
    const flaky: LeaseStore = {
      get: () => (broken ? Promise.reject(new Error("unreachable")) : shared.get()),
      create: (spec) => (broken ? Promise.reject(new Error("unreachable")) : shared.create(spec)),
      update: (rv, spec) => (broken ? Promise.reject(new Error("unreachable")) : shared.update(rv, spec)),
    };
    const lease = { leaseDurationMs: 600, renewDeadlineMs: 400, retryPeriodMs: 100 };
    const a = new MemorySource(objects(sim.url, { "edge-1": "blue" }));
    const b = new MemorySource(objects(sim.url, { "edge-2": "green" }));
    // the standby's tries to take the lease
    let tries = 0;
    const standby: LeaseStore = {
      get: () => {
        tries += 1;
        return shared.get();
      },
      create: (spec) => shared.create(spec),
      update: (rv, spec) => shared.update(rv, spec),
    };
    const first = run(a, { leaderElection: { ...lease, store: flaky, identity: "a" } });
    await waitFor("a leads", () => first.operator.isLeader);
    const second = run(b, { leaderElection: { ...lease, store: standby, identity: "b" } });
    await waitFor("a wrote", () => ready(a.statusOf(edgeRef("edge-1"))) === "True");
    const seen = tries;
    await waitFor("the standby to try again and find the lease held", () => tries >= seen + 2);
    expect(b.writes, "the standby writes nothing").toEqual([]);
    expect(second.operator.isLeader).toBe(false);

    broken = true;
    expect(await first.exit).toBe("lease-lost");
    await waitFor("b leads", () => second.operator.isLeader, { timeoutMs: 3_000 });
    await waitFor("b wrote", () => ready(b.statusOf(edgeRef("edge-2"))) === "True");
    expect(sim.state.edge("edge-2")?.doc.tenant).toBe("green");
  });

  it("shutdown lets the reconcile in flight finish, releases the lease and ends with stopped", async () => {
    const sim = await simulator(["red"], 300);
    const { objects: objs, secrets } = objects(sim.url, { "edge-1": "blue" });
    const source = new MemorySource({ objects: objs, secrets });
    const store = new InMemoryLeaseStore();
    const { operator, exit, stop } = run(source, {
      leaderElection: {
        store,
        identity: "a",
        leaseDurationMs: 600,
        renewDeadlineMs: 400,
        retryPeriodMs: 100,
      },
    });
    await waitFor(
      "a reconcile in flight",
      () => Object.keys(sim.state.counters.snapshot()).length > 0 || undefined,
    );
    stop.abort();
    expect(await exit).toBe("stopped");
    expect(operator.isLeader).toBe(false);
    expect(source.writes.length).toBeGreaterThan(0);
    expect((await store.get())?.holderIdentity).toBe("");
  });

  it("shutdown with a hung manager: stops within the timeout, the lease first, nothing written after the drain", async () => {
    const sim = await simulator(["red"], 600_000);
    const { objects: objs, secrets } = objects(sim.url, { "edge-1": "blue" });
    const source = new MemorySource({ objects: objs, secrets });
    const store = new InMemoryLeaseStore();
    const shutdownTimeoutMs = 1_200;
    const { operator, exit, stop } = run(source, {
      shutdownTimeoutMs,
      leaderElection: {
        store,
        identity: "a",
        leaseDurationMs: 600,
        renewDeadlineMs: 400,
        retryPeriodMs: 100,
      },
    });
    await waitFor("the lease", () => operator.isLeader);
    // the manager's check and the EdgeTenant's read are waiting on the manager
    await new Promise((resolve) => setTimeout(resolve, 200));
    const writesBefore = source.writes.length;
    const stoppedAtMs = Date.now();
    stop.abort();
    expect(await exit).toBe("stopped");
    const tookMs = Date.now() - stoppedAtMs;
    const { drainMs } = shutdownBudget(shutdownTimeoutMs);
    expect(tookMs, "the drain, then letting go").toBeGreaterThanOrEqual(drainMs - 50);
    expect(tookMs, "within the shutdown timeout, whatever the manager does").toBeLessThan(shutdownTimeoutMs);
    expect((await store.get())?.holderIdentity, "the lease released").toBe("");
    // the cut reconciles fail once their requests are aborted: their reports are not written
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(source.writes.length, "nothing written after the drain deadline").toBe(writesBefore);
  });

  it("serves /readyz from the source and /healthz always", async () => {
    const source = new MemorySource({ objects: [], secrets: [] });
    source.ready = "EdgeTenant: not listed yet";
    const { operator } = run(source, {
      healthProbeBindAddress: "127.0.0.1:0",
      metricsBindAddress: "127.0.0.1:0",
    });
    const { probes, metrics } = await operator.listening;
    const get = async (port: number, path: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return `${res.status} ${await res.text()}`;
    };
    expect(await get(probes!.port, "/readyz")).toContain("500 [-]source failed: EdgeTenant: not listed yet");
    expect(await get(probes!.port, "/healthz")).toBe("200 ok");
    source.ready = undefined;
    expect(await get(probes!.port, "/readyz")).toBe("200 ok");
    expect(await get(metrics!.port, "/metrics")).toContain("workqueue_depth");
  });
});
