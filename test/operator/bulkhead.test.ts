/**
 * One manager's trouble stays its own: the operator groups the queue by the real manager each
 * object calls (several NSXManager objects can name one), a manager that never answers, or
 * answers just under its timeout, holds at most its share of the workers, and however many do,
 * another manager with nothing running gets a reconcile at once; and a failing object is retried
 * within its resync interval however often it failed.
 */
import { describe, expect, it } from "vitest";
import { refOf, type ObjectRef } from "../../src/api/refs.ts";
import type { EdgeTenant, IPPoolAllocations, NSXManager, NsxvObject } from "../../src/api/types.ts";
import type { Logger } from "../../src/controller/controller.ts";
import { defaultConcurrencyPerManager, managerGroupOf } from "../../src/operator/operator.ts";
import { RealManagerIndex } from "../../src/reconcile/real-managers.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { edgeRef, NS, objects, operatorHarness, ready } from "./harness.ts";
import { waitFor } from "../support/wait.ts";
import { MemorySource } from "../support/memory-source.ts";

const manager = (name: string, url: string): NSXManager => ({
  apiVersion: "nsxv.io/v1alpha1",
  kind: "NSXManager",
  metadata: { name, namespace: NS },
  spec: { url, credentialsSecretRef: { name: "creds" } },
});

const tenant = (name: string, managerName: string, edgeId = "edge-1"): EdgeTenant => ({
  apiVersion: "nsxv.io/v1alpha1",
  kind: "EdgeTenant",
  metadata: { name, namespace: NS, generation: 1 },
  spec: { managerRef: { name: managerName }, edgeId, tenant: "blue", syncInterval: "10s" },
});

describe("managerGroupOf", () => {
  const pool: IPPoolAllocations = {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "IPPoolAllocations",
    metadata: { name: "p", namespace: NS },
    spec: { managerRef: { name: "nsx-b" }, pool: { id: "ipaddresspool-1" }, allowed: [] },
  };
  /** nsx-a and nsx-a2 name one manager (their URLs differ only in case and a trailing slash) */
  const managers = new RealManagerIndex(() => [
    manager("nsx-a", "https://nsx-a.example"),
    manager("nsx-a2", "https://NSX-A.example/"),
    manager("nsx-b", "https://nsx-b.example"),
  ]);
  const cases: {
    name: string;
    reason: string;
    ref: ObjectRef;
    object: NsxvObject | undefined;
    want: string;
  }[] = [
    {
      name: "Manager",
      reason: "an NSXManager's own check calls its real manager",
      ref: { kind: "NSXManager", namespace: NS, name: "nsx-a" },
      object: undefined,
      want: "manager https://nsx-a.example",
    },
    {
      name: "EdgeTenant",
      reason: "a dependent calls the manager its spec names",
      ref: { kind: "EdgeTenant", namespace: NS, name: "web" },
      object: tenant("web", "nsx-a"),
      want: "manager https://nsx-a.example",
    },
    {
      name: "TwoObjectsOneManager",
      reason: "another NSXManager object naming the same manager shares its share",
      ref: { kind: "EdgeTenant", namespace: NS, name: "web" },
      object: tenant("web", "nsx-a2"),
      want: "manager https://nsx-a.example",
    },
    {
      name: "IPPoolAllocations",
      reason: "every dependent kind alike",
      ref: { kind: "IPPoolAllocations", namespace: NS, name: "p" },
      object: pool,
      want: "manager https://nsx-b.example",
    },
    {
      name: "UnknownManager",
      reason: "an NSXManager the source does not know is its own group",
      ref: { kind: "EdgeTenant", namespace: NS, name: "web" },
      object: tenant("web", "missing"),
      want: `NSXManager/${NS}/missing`,
    },
    {
      name: "Gone",
      reason: "an object that is gone calls no manager: it never waits behind one",
      ref: { kind: "EdgeTenant", namespace: NS, name: "web" },
      object: undefined,
      want: `EdgeTenant/${NS}/web`,
    },
  ];
  it.each(cases)("$name: $reason", ({ ref, object, want }) => {
    expect(managerGroupOf(ref, object, (m) => managers.of(m))).toBe(want);
  });

  it.each([
    [1, 1],
    [2, 1],
    [3, 2],
    [4, 2],
    [9, 5],
  ])("a manager's default share of %i workers is %i: half, rounded up", (workers, share) => {
    expect(defaultConcurrencyPerManager(workers)).toBe(share);
  });
});

describe("Operator bulkhead", () => {
  const { run, simulator } = operatorHarness();

  /** `managers` managers that accept connections and answer nothing, each with `dependents` EdgeTenants */
  async function frozenScene(dependents: number, managers = 1) {
    const healthy = await simulator(["red"]);
    const { objects: fine, secrets } = objects(healthy.url, {});
    const hung: NsxvObject[] = [];
    const frozen: RunningSimulator[] = [];
    for (let m = 0; m < managers; m++) {
      const sim = await simulator(["red"]);
      sim.state.faults.add({ route: "*", kind: "latency", latencyMs: 600_000 });
      frozen.push(sim);
      const name = managers === 1 ? "hung" : `hung-${m}`;
      hung.push({
        ...(fine[0] as NSXManager),
        metadata: { name, namespace: NS, generation: 1 },
        // a request hangs for 3 s: longer than the tests look, short enough for their shutdown to
        // wait out (a pool list shared by several objects is not aborted with one of them)
        spec: { url: sim.url, credentialsSecretRef: { name: "creds" }, requestTimeoutSeconds: 3 },
      });
      // the hung managers and their objects come first: they would take every worker
      for (let i = 0; i < dependents; i++) hung.push(tenant(`${name}-${i}`, name, `edge-${i + 1}`));
    }
    const source = new MemorySource({ objects: [...hung, fine[0]!, tenant("late", "nsx")], secrets });
    // the hung calls end at once when these close, so an operator stops at once
    const closeFrozen = () => Promise.all(frozen.map((f) => f.close()));
    return { source, healthy, closeFrozen };
  }

  const convergedOn = (sim: RunningSimulator) => sim.state.edge("edge-1")?.doc.tenant === "blue";

  it("a manager that never answers holds only its share: another manager's object goes at once", async () => {
    const { source, healthy, closeFrozen } = await frozenScene(3);
    // two workers, one each; no breaker, so that the hung calls hang for the whole test (the
    // operator's clock is a fake one: their timeouts come when the test moves it)
    run(source, {
      concurrency: 2,
      shutdownTimeoutMs: 100,
      clientOptions: { circuitBreakerFailures: 0 },
      clock: new FakeClock(),
    });
    await waitFor(
      "the other manager's EdgeTenant Ready",
      () => ready(source.statusOf(edgeRef("late"))) === "True",
    );
    expect(convergedOn(healthy)).toBe(true);
    await closeFrozen();
  });

  it.each([4, 8])(
    "with %i managers that never answer, another manager's new object still goes at once",
    async (count) => {
      const { source, healthy, closeFrozen } = await frozenScene(2, count);
      // fewer workers than hung managers: only the floor of one per manager keeps the other going
      run(source, { concurrency: 2, shutdownTimeoutMs: 100, clientOptions: { circuitBreakerFailures: 0 } });
      await waitFor(
        "the other manager's EdgeTenant Ready",
        () => ready(source.statusOf(edgeRef("late"))) === "True",
      );
      expect(convergedOn(healthy)).toBe(true);
      // and every hung manager gets its turn: each of their objects says it cannot reach it
      const sick = source.store
        .list("NSXManager")
        .concat(source.store.list("EdgeTenant"))
        .filter((o) => o.metadata.name.startsWith("hung-"))
        .map(refOf);
      await waitFor(
        "every hung manager's objects saying so",
        () =>
          sick.every((ref) => {
            const reason = source.statusOf(ref)?.conditions?.find((c) => c.type === "Synced")?.reason;
            return reason === "Unreachable" || reason === "ManagerNotReady";
          }),
        { timeoutMs: 20_000 },
      );
      await closeFrozen();
    },
  );

  it("managers that answer just under their timeout (their breaker never trips) starve no other manager", async () => {
    const slow = await Promise.all([1, 2, 3, 4].map(() => simulator(["red"])));
    for (const sim of slow) sim.state.faults.add({ route: "*", kind: "latency", latencyMs: 2_500 });
    const healthy = await simulator(["red"]);
    const { objects: fine, secrets } = objects(healthy.url, {});
    const slowObjects = slow.flatMap((sim, i): NsxvObject[] => [
      {
        ...(fine[0] as NSXManager),
        metadata: { name: `slow-${i}`, namespace: NS, generation: 1 },
        spec: { url: sim.url, credentialsSecretRef: { name: "creds" }, requestTimeoutSeconds: 3 },
      },
      ...[1, 2, 3].map((n) => tenant(`slow-${i}-${n}`, `slow-${i}`)),
    ]);
    const source = new MemorySource({ objects: [...slowObjects, fine[0]!, tenant("late", "nsx")], secrets });
    run(source, { concurrency: 2, shutdownTimeoutMs: 100 });
    await waitFor(
      "the other manager's EdgeTenant Ready",
      () => ready(source.statusOf(edgeRef("late"))) === "True",
      { timeoutMs: 5_000 },
    );
    expect(convergedOn(healthy)).toBe(true);
  });
});

describe("Operator backoff cap", () => {
  const { run } = operatorHarness();

  it("retries a failing object no later than its resync interval, however often it failed", async () => {
    const clock = new FakeClock(0);
    const failedAtMs: number[] = [];
    const record = (_fields: Record<string, unknown>, message: string): void => {
      if (message === "reconcile failed; retrying") failedAtMs.push(clock.now());
    };
    const logger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: record };
    // its NSXManager does not exist: every pass fails at once (ManagerNotReady), with no call
    const source = new MemorySource({ objects: [tenant("orphan", "missing")], secrets: [] });
    run(source, { clock, logger, reconciler: { jitterFraction: 0 } });
    await waitFor("the first failure", () => failedAtMs.length === 1);
    for (let i = 0; i < 8; i++) await clock.advance(10_000);
    const waits = failedAtMs.slice(1).map((at, i) => at - (failedAtMs[i] as number));
    // the default backoff (1 s doubling to 60 s) stops growing at spec.syncInterval, 10 s
    expect(waits.slice(0, 6)).toEqual([1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
  });
});
