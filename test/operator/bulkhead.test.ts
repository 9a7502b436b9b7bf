/**
 * One manager's trouble stays its own: the operator groups the queue by the manager each object
 * calls, so a manager that never answers holds at most its share of the workers; and a failing
 * object is retried within its resync interval however often it failed.
 */
import { describe, expect, it } from "vitest";
import type { ObjectRef } from "../../src/api/refs.ts";
import type { EdgeTenant, IPPoolAllocations, NSXManager, NsxvObject } from "../../src/api/types.ts";
import type { Logger } from "../../src/controller/controller.ts";
import { defaultConcurrencyPerManager, managerGroupOf } from "../../src/operator/operator.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { edgeRef, NS, objects, operatorHarness, ready } from "./harness.ts";
import { waitFor } from "../support/wait.ts";
import { MemorySource } from "../support/memory-source.ts";

const tenant = (name: string, managerName: string): EdgeTenant => ({
  apiVersion: "nsxv.io/v1alpha1",
  kind: "EdgeTenant",
  metadata: { name, namespace: NS, generation: 1 },
  spec: { managerRef: { name: managerName }, edgeId: "edge-1", tenant: "blue", syncInterval: "10s" },
});

describe("managerGroupOf", () => {
  const pool: IPPoolAllocations = {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "IPPoolAllocations",
    metadata: { name: "p", namespace: NS },
    spec: { managerRef: { name: "nsx-b" }, pool: { id: "ipaddresspool-1" }, allowed: [] },
  };
  const cases: {
    name: string;
    reason: string;
    ref: ObjectRef;
    object: NsxvObject | undefined;
    want: string;
  }[] = [
    {
      name: "Manager",
      reason: "an NSXManager's own check calls itself",
      ref: { kind: "NSXManager", namespace: NS, name: "nsx-a" },
      object: undefined,
      want: `${NS}/nsx-a`,
    },
    {
      name: "EdgeTenant",
      reason: "a dependent calls the manager its spec names, in its namespace",
      ref: { kind: "EdgeTenant", namespace: NS, name: "web" },
      object: tenant("web", "nsx-a"),
      want: `${NS}/nsx-a`,
    },
    {
      name: "IPPoolAllocations",
      reason: "every dependent kind alike",
      ref: { kind: "IPPoolAllocations", namespace: NS, name: "p" },
      object: pool,
      want: `${NS}/nsx-b`,
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
    expect(managerGroupOf(ref, object)).toBe(want);
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

  /** a manager that accepts connections and answers nothing, with `dependents` EdgeTenants */
  async function frozenScene(dependents: number) {
    const frozen = await simulator(["red"]);
    frozen.state.faults.add({ route: "*", kind: "latency", latencyMs: 600_000 });
    const healthy = await simulator(["red"]);
    const { objects: fine, secrets } = objects(healthy.url, {});
    const hung: NSXManager = {
      ...(fine[0] as NSXManager),
      metadata: { name: "hung", namespace: NS, generation: 1 },
      // a request hangs for 3 s: longer than the tests look, short enough for their shutdown to
      // wait out (a pool list shared by several objects is not aborted with one of them)
      spec: { url: frozen.url, credentialsSecretRef: { name: "creds" }, requestTimeoutSeconds: 3 },
    };
    // the hung manager and its objects come first: without the bulkhead they take every worker
    const hungTenants = Array.from({ length: dependents }, (_, i) => tenant(`hung-${i}`, "hung"));
    const source = new MemorySource({
      objects: [hung, fine[0]!, ...hungTenants, tenant("late", "nsx")],
      secrets,
    });
    return { source, healthy, frozen };
  }

  const convergedOn = (sim: RunningSimulator) => sim.state.edge("edge-1")?.doc.tenant === "blue";

  it("a manager that never answers holds only its share: another manager's object goes at once", async () => {
    const { source, healthy, frozen } = await frozenScene(3);
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
    // the hung calls end at once (their sockets closed), so the operator stops at once
    await frozen.close();
  });

  it("without the bulkhead (a share of every worker) the same scene stalls the other manager", async () => {
    const { source, healthy, frozen } = await frozenScene(3);
    const clock = new FakeClock();
    run(source, {
      concurrency: 2,
      concurrencyPerManager: 2,
      shutdownTimeoutMs: 100,
      clientOptions: { circuitBreakerFailures: 0 },
      clock,
    });
    // both workers wait on the frozen manager, for its request timeout (3 s) and its retries
    await waitFor("both workers held by the frozen manager", () => frozen.state.faults.list()[0]!.fired >= 2);
    await clock.advance(2_900);
    expect(source.statusOf(edgeRef("late")), "never reached").toBeUndefined();
    expect(convergedOn(healthy)).toBe(false);
    await frozen.close();
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
