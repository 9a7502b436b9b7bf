/**
 * What a failure reads as, judged once for every kind: the reconciler composes every failure
 * (conditions, one Warning event, the outcome) in one place, and Ready follows one rule: the
 * latest observation of this generation stands while it is recent (a blip does not flap it),
 * turns Unknown once it is older than two sync intervals (the operator is blind), and is False
 * for a generation never observed. An NSXManager's Ready is its own check, so it follows the
 * failure at once. A pause, the object's or its NSXManager's, is judged by the same clock.
 */
import { describe, expect, it } from "vitest";
import type { Kind, NsxvObject } from "../../src/api/types.ts";
import { NsxTransportError } from "../../src/nsx/errors.ts";
import {
  allocations,
  edgeTenant,
  edgeXml,
  fakeManager,
  manager,
  pool,
  poolAllocations,
  withOriginal,
  type FakeManager,
} from "./fixtures.ts";
import { condition, setup } from "./harness.ts";

const SECOND = 1_000;
/** the default sync interval of the harness's reconciler (5 min): Ready is kept for twice that */
const INTERVAL = 300 * SECOND;

const unreachable = () =>
  new NsxTransportError({ method: "GET", path: "/api", reason: "connect ECONNREFUSED", notSent: true });

/** the object of each kind, in sync, and how to make its next pass fail before it observes */
const KINDS: Record<Kind, { object: () => NsxvObject; fail: (fake: FakeManager) => void }> = {
  NSXManager: { object: () => manager(), fail: (fake) => void (fake.faults.listPools = [unreachable()]) },
  EdgeTenant: {
    object: () => withOriginal(edgeTenant({ tenant: "red" }), "red"),
    // its edge list too: a pass read in full lately looks there first
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
    const { pass, clock, store } = setup({ objects: [...others, object], fake });
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
      expect(recent.outcome, "back when it goes stale").toEqual({
        type: "done",
        requeueAfterMs: INTERVAL + 1,
      });
      clock.ms += INTERVAL + SECOND;
      const stale = await pass(object);
      expect(condition(stale, "Ready")).toMatchObject({ status: "Unknown", reason: "ReconcilePaused" });
    },
  );
});
