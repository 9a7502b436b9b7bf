/**
 * What a failure reads as, judged once for every kind: the reconciler composes every failure
 * (conditions, one Warning event, the outcome) in one place, and Ready follows one rule: the
 * latest observation of this generation stands while it is recent (a blip does not flap it),
 * turns Unknown once it is older than two sync intervals, 30 s at least (the operator is blind),
 * at once when its NSXManager is known down, and is False for a generation never observed; a
 * pass never waits on a hung manager past that moment, and comes back before it. An NSXManager's Ready is its own check, so it follows the
 * failure at once. A pause, the object's or its NSXManager's, is judged by the same clock.
 */
import { describe, expect, it } from "vitest";
import type { Kind, NsxvObject } from "../../src/api/types.ts";
import { NsxTransportError } from "../../src/nsx/errors.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { edgeTenant, edgeXml, withOriginal } from "./edge-tenant/fixtures.ts";
import { apiError, fakeManager, T0, type FakeManager } from "./fixtures.ts";
import { allocations, pool, poolAllocations } from "./ip-pool/fixtures.ts";
import { credentials, manager } from "./nsx-manager/fixtures.ts";
import { condition, setup } from "./harness.ts";

const SECOND = 1_000;
/** the default sync interval of the harness's reconciler (5 min): Ready is kept for twice that */
const INTERVAL = 300 * SECOND;

/** how often the EdgeTenant of the table reads its edge in full: each failing pass (1 s on) reads */
const FULL_READ_MS = SECOND;

const unreachable = () =>
  new NsxTransportError({ method: "GET", path: "/api", reason: "connect ECONNREFUSED", notSent: true });

/** the object of each kind, in sync, and how to make its next pass fail before it observes */
const KINDS: Record<Kind, { object: () => NsxvObject; fail: (fake: FakeManager) => void }> = {
  NSXManager: { object: () => manager(), fail: (fake) => void (fake.faults.listPools = [unreachable()]) },
  EdgeTenant: {
    object: () => withOriginal(edgeTenant({ tenant: "red" }), "red"),
    // its edge list too: a pass looks there first (its full read falls due every second: FULL_READ_MS)
    fail: (fake) => void ((fake.faults.getEdge = [unreachable()]), (fake.faults.listEdges = [unreachable()])),
  },
  IPPoolAllocations: {
    object: () => poolAllocations({ allowed: ["10.0.0.1"] }),
    // the pool list is shared and kept a while: the pool's own call is its allocation list
    fail: (fake) => void (fake.faults.listAllocations = [unreachable()]),
  },
};

interface Case {
  name: string;
  reason: string;
  kind: Kind;
  /** since the last successful observation, when the failing pass runs */
  afterMs: number;
  /** the spec changed between the observation and the failure */
  newGeneration?: boolean;
  want: { ready: string; readyReason: string; synced: string; stalled?: boolean };
}

const cases: Case[] = [
  ...(["EdgeTenant", "IPPoolAllocations"] as const).flatMap((kind): Case[] => [
    {
      name: `${kind}BlipKeepsReady`,
      reason: "a failure within two sync intervals of the last observation leaves Ready as observed",
      kind,
      afterMs: INTERVAL,
      want: { ready: "True", readyReason: "InSync", synced: "Unreachable" },
    },
    {
      name: `${kind}BlindIsUnknown`,
      reason: "past two sync intervals without an observation, Ready is Unknown with the cause",
      kind,
      afterMs: 2 * INTERVAL + SECOND,
      want: { ready: "Unknown", readyReason: "Unreachable", synced: "Unreachable" },
    },
    {
      name: `${kind}NewGenerationNotReady`,
      reason: "a generation never observed is not Ready, whatever the last one was",
      kind,
      afterMs: SECOND,
      newGeneration: true,
      want: { ready: "False", readyReason: "Unreachable", synced: "Unreachable" },
    },
  ]),
  {
    name: "ManagerReadyIsItsCheck",
    reason: "an NSXManager's Ready is its check: False with the cause at once",
    kind: "NSXManager",
    afterMs: SECOND,
    want: { ready: "False", readyReason: "Unreachable", synced: "Unreachable" },
  },
];

describe("a failure, for every kind", () => {
  it.each(cases)("$name: $reason", async (c) => {
    const { object: make, fail } = KINDS[c.kind];
    const object = make();
    const fake = fakeManager({
      edges: { "edge-1": edgeXml({ tenant: "red" }) },
      pools: { "globalroot-0": [pool()] },
      allocations: { "ipaddresspool-1": allocations("10.0.0.1") },
    });
    const others = c.kind === "NSXManager" ? [] : [manager()];
    // an EdgeTenant the list shows in sync calls its manager when its safety-net read falls due
    const deps =
      c.kind === "EdgeTenant" ? { kinds: { EdgeTenant: { fullReadIntervalMs: FULL_READ_MS } } } : {};
    const { pass, clock, store } = setup({ objects: [...others, object], fake, deps });
    const first = await pass(object);
    expect(condition(first, "Ready")?.status, "observed in sync first").toBe("True");
    clock.ms += c.afterMs;
    let current = store.list(c.kind)[0] as NsxvObject;
    if (c.newGeneration === true) {
      current = { ...current, metadata: { ...current.metadata, generation: 2 } } as NsxvObject;
      store.put(current);
    }
    fail(fake);
    const report = await pass(current);
    expect(condition(report, "Ready"), c.reason).toMatchObject({
      status: c.want.ready,
      reason: c.want.readyReason,
    });
    expect(condition(report, "Synced"), c.reason).toMatchObject({ status: "False", reason: c.want.synced });
    expect(
      report.events.filter((e) => e.type === "Warning").map((e) => e.reason),
      "one Warning",
    ).toEqual([c.want.synced]);
    expect(report.outcome.type, "retried after its backoff").toBe("failed");
    if (c.want.ready === "Unknown")
      expect(condition(report, "Ready")?.message, "says since when it is blind").toMatch(
        /no observation of the manager since 2024-05-01T12:00:00Z/,
      );
  });
});

describe("a pause, the object's or its NSXManager's", () => {
  it.each([
    { name: "ObjectPaused", paused: "object" as const },
    { name: "ManagerPaused", paused: "manager" as const },
  ])(
    "$name: no call; Ready kept while recent, then Unknown; the pass comes back when it goes stale",
    async ({ paused }) => {
      const object = withOriginal(edgeTenant({ tenant: "red" }), "red");
      const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant: "red" }) } });
      const { pass, clock, store } = setup({ objects: [manager(), object], fake });
      await pass(object);
      const annotations = { "nsxv.io/paused": "true" };
      const pausedOne = store.list(paused === "object" ? "EdgeTenant" : "NSXManager")[0] as NsxvObject;
      store.put({ ...pausedOne, metadata: { ...pausedOne.metadata, annotations } } as NsxvObject);
      const calls = fake.calls.length;
      clock.ms += INTERVAL;
      const recent = await pass(object);
      expect(fake.calls.length, "no manager call").toBe(calls);
      expect(condition(recent, "Synced")).toMatchObject({ status: "False", reason: "ReconcilePaused" });
      expect(condition(recent, "Synced")?.message).toContain(
        paused === "object" ? "annotation" : "its NSXManager ns/nsx",
      );
      expect(condition(recent, "Ready"), "the observation is recent").toMatchObject({ status: "True" });
      expect(recent.outcome, "back when it goes stale, behind events").toEqual({
        type: "done",
        requeueAfterMs: INTERVAL + 1,
        routine: true,
      });
      clock.ms += INTERVAL + SECOND;
      const stale = await pass(object);
      expect(condition(stale, "Ready")).toMatchObject({ status: "Unknown", reason: "ReconcilePaused" });
    },
  );
});

describe("Ready goes stale on time", () => {
  /** the shortest sync interval: 2 x 10 s is below the 30 s floor */
  const SHORT = { syncInterval: "10s" };
  const never = new Promise<void>(() => {});

  it.each([
    {
      afterMs: 25 * SECOND,
      ready: "True",
      why: "within 30 s of the observation: kept, although 2 x 10 s passed",
    },
    { afterMs: 31 * SECOND, ready: "Unknown", why: "past max(2 x 10 s, 30 s): blind" },
  ])("an object that resyncs every 10 s keeps Ready for 30 s: $why", async ({ afterMs, ready }) => {
    const object = poolAllocations({ allowed: ["10.0.0.1"], ...SHORT });
    const fake = fakeManager({
      pools: { "globalroot-0": [pool()] },
      allocations: { "ipaddresspool-1": allocations("10.0.0.1") },
    });
    const { pass, clock } = setup({ objects: [manager(), object], fake });
    await pass(object);
    clock.ms += afterMs;
    fake.faults.listAllocations = [unreachable()];
    const report = await pass(object);
    expect(condition(report, "Ready")?.status).toBe(ready);
  });

  it("a failure that keeps Ready comes back before the observation goes stale, whatever its backoff", async () => {
    const object = poolAllocations({ allowed: ["10.0.0.1"] });
    const fake = fakeManager({
      pools: { "globalroot-0": [pool()] },
      allocations: { "ipaddresspool-1": allocations("10.0.0.1") },
    });
    const { pass, clock } = setup({ objects: [manager(), object], fake });
    await pass(object);
    clock.ms += 2 * INTERVAL - 10 * SECOND;
    fake.faults.listAllocations = [unreachable()];
    const report = await pass(object);
    expect(condition(report, "Ready")?.status, "kept: 10 s left").toBe("True");
    // two seconds before it expires, so that a pass that hangs is cut at the expiry
    expect(report.outcome).toMatchObject({ type: "failed", maxBackoffMs: 8 * SECOND });
  });

  it("a dependent whose NSXManager is known unreachable or refused reads Unknown at once", async () => {
    const object = withOriginal(edgeTenant({ tenant: "red" }), "red");
    const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant: "red" }) } });
    const { pass, clock, store } = setup({ objects: [manager(), object], fake });
    await pass(object);
    // what the manager's own check records when it cannot reach it
    store.put({ ...manager(), status: { reachable: false } });
    clock.ms += SECOND;
    const calls = fake.calls.length;
    const report = await pass(object);
    expect(fake.calls.length, "no call").toBe(calls);
    expect(condition(report, "Ready")).toMatchObject({ status: "Unknown", reason: "ManagerNotReady" });
    expect(condition(report, "Ready")?.message).toMatch(/its NSXManager cannot be used/);
  });

  it("an NSXManager wakes its dependents when its Ready changes, down and back, not on its first check", async () => {
    const edge = withOriginal(edgeTenant({ tenant: "red" }), "red");
    const pools = poolAllocations({ allowed: ["10.0.0.1"] });
    const fake = fakeManager({
      edges: { "edge-1": edgeXml({ tenant: "red" }) },
      pools: { "globalroot-0": [pool()] },
      allocations: { "ipaddresspool-1": allocations("10.0.0.1") },
    });
    const { pass, store } = setup({ objects: [manager(), edge, pools], fake });
    const names = (report: { wake: { name: string }[] }) => report.wake.map((r) => r.name).sort();
    // observed in sync first: the manager's list wakes none of them
    await pass(edge);
    await pass(pools);
    const first = await pass(manager());
    expect(names(first), "first check: its dependents are queued by their own arrival").toEqual([]);
    fake.faults.listPools = [unreachable()];
    const down = await pass(store.list("NSXManager")[0]!);
    expect(condition(down, "Ready")?.status).toBe("False");
    expect(names(down), "down: they say so at once").toEqual(["edge", "pool"]);
    const back = await pass(store.list("NSXManager")[0]!);
    expect(condition(back, "Ready")?.status).toBe("True");
    expect(names(back), "back: they observe at once").toEqual(["edge", "pool"]);
    const again = await pass(store.list("NSXManager")[0]!);
    expect(names(again), "no change: nobody woken").toEqual([]);
  });

  it("a pass waits on a hung manager only until its object's last observation expires, then Unknown", async () => {
    const clock = new FakeClock(T0.getTime());
    const object = poolAllocations({ allowed: ["10.0.0.1"], ...SHORT });
    const fake = fakeManager({
      pools: { "globalroot-0": [pool()] },
      allocations: { "ipaddresspool-1": allocations("10.0.0.1") },
    });
    const { pass } = setup({
      objects: [manager(), object],
      fake,
      deps: { clock, kinds: { IPPoolAllocations: { poolListTtlMs: 0 } } },
    });
    await pass(object);
    await clock.advance(20 * SECOND);
    fake.hold = never;
    let done = false;
    const hung = pass(object).finally(() => void (done = true));
    await clock.advance(9 * SECOND);
    expect(done, "29 s after the observation: still waiting").toBe(false);
    await clock.advance(SECOND);
    const report = await hung;
    expect(condition(report, "Ready")).toMatchObject({ status: "Unknown", reason: "Unreachable" });
    expect(condition(report, "Ready")?.message).toMatch(/did not answer within 10 s/);
  });

  it("an NSXManager's check cut at its expiry finds the manager unreachable, and its dependents are told", async () => {
    const clock = new FakeClock(T0.getTime());
    // its EdgeTenant resyncs every 10 s: the manager is checked as often, and stale as soon
    const edge = withOriginal(edgeTenant({ tenant: "red", ...SHORT }), "red");
    const fake = fakeManager({
      edges: { "edge-1": edgeXml({ tenant: "red" }) },
      pools: { "globalroot-0": [pool()] },
    });
    const { pass, store } = setup({ objects: [manager(), edge], fake, deps: { clock } });
    await pass(edge);
    await pass(manager());
    await clock.advance(10 * SECOND);
    fake.hold = never;
    const hung = pass(store.list("NSXManager")[0]!);
    await clock.advance(20 * SECOND);
    const report = await hung;
    expect(condition(report, "Ready")).toMatchObject({ status: "False", reason: "Unreachable" });
    expect(report.status).toMatchObject({ reachable: false });
    expect(report.wake.map((r) => r.name)).toEqual(["edge"]);
    // the woken EdgeTenant makes no call and says so at once
    const woken = await pass(edge);
    expect(condition(woken, "Ready")).toMatchObject({ status: "Unknown", reason: "ManagerNotReady" });
  });

  it("a pass that starts after the expiry (queued behind others) still gets 2 s for an answer", async () => {
    const clock = new FakeClock(T0.getTime());
    const object = poolAllocations({ allowed: ["10.0.0.1"], ...SHORT });
    const fake = fakeManager({
      pools: { "globalroot-0": [pool()] },
      allocations: { "ipaddresspool-1": allocations("10.0.0.1") },
    });
    const { pass, store } = setup({
      objects: [manager(), object],
      fake,
      deps: { clock, kinds: { IPPoolAllocations: { poolListTtlMs: 0 } } },
    });
    await pass(object);
    await clock.advance(40 * SECOND);
    let answer: () => void = () => {};
    fake.hold = new Promise((resolve) => (answer = resolve));
    const late = pass(object);
    await clock.advance(SECOND);
    answer();
    const report = await late;
    expect(report.outcome.type, "observed").toBe("done");
    const ready = (store.list("IPPoolAllocations")[0]!.status?.conditions ?? []).find(
      (c) => c.type === "Ready",
    );
    expect(ready).toMatchObject({ status: "True", reason: "InSync" });
  });
});

describe("credentials the manager refused", () => {
  const refused = () => apiError(401, "GET", "/api/2.0/services/ipam/pools/scope/globalroot-0");

  it("are not sent again before their retry time; a rotated Secret is tried at once", async () => {
    const fake = fakeManager({ pools: { "globalroot-0": [pool()] } });
    const { pass, clock, store } = setup({ objects: [manager()], fake });
    fake.faults.listPools = [refused()];
    const first = await pass(manager());
    expect(condition(first, "Ready")).toMatchObject({ status: "False", reason: "Unauthorized" });
    const calls = fake.calls.length;

    clock.ms += 500;
    const waiting = await pass(store.list("NSXManager")[0]!);
    expect(fake.calls.length, "the same credentials are not sent again yet").toBe(calls);
    expect(waiting.status, "nothing new to say").toBeUndefined();
    expect(waiting.outcome, "back when they may be tried, or to read the Secret again").toEqual({
      type: "done",
      requeueAfterMs: 500,
    });

    store.putSecret(credentials("nsx-creds", { username: "admin", password: "rotated" }));
    const rotated = await pass(store.list("NSXManager")[0]!);
    expect(fake.calls.length, "the new credentials at once").toBe(calls + 1);
    expect(condition(rotated, "Ready")).toMatchObject({ status: "True" });
  });

  it("are sent again after 1 s doubling to 60 s, with the Secret read every 2 s meanwhile", async () => {
    const fake = fakeManager({ pools: { "globalroot-0": [pool()] } });
    const { pass, clock, store } = setup({ objects: [manager()], fake });
    const current = () => store.list("NSXManager")[0]!;
    fake.faults.listPools = [refused(), refused(), refused()];
    await pass(manager());
    clock.ms += SECOND;
    await pass(current());
    expect(fake.calls, "due after 1 s: tried again, refused again").toHaveLength(2);
    clock.ms += SECOND;
    const polling = await pass(current());
    expect(fake.calls, "the next try is 2 s after that one").toHaveLength(2);
    expect(polling.outcome).toEqual({ type: "done", requeueAfterMs: SECOND });
    clock.ms += SECOND;
    await pass(current());
    expect(fake.calls).toHaveLength(3);
    clock.ms += SECOND;
    expect((await pass(current())).outcome, "4 s now, 3 s left: the Secret is read again in 2 s").toEqual({
      type: "done",
      requeueAfterMs: 2 * SECOND,
    });
  });
});
