/**
 * The safety net's budget: each edge is read in full once per its manager's cycle, the full-read
 * interval or, when the manager's EdgeTenants would take more than fullReadsPerMinute reads a
 * minute, the time that many reads a minute take to go round them all. Driven through the
 * reconciler on a settable clock: every object comes back when its outcome asks (a woken one at
 * once), as the operator's queue would bring it, and the fake manager's reads are counted per
 * minute.
 */
import { describe, expect, it } from "vitest";
import { objectKey, refOf } from "../../../src/api/refs.ts";
import type { EdgeTenant, NsxvObject } from "../../../src/api/types.ts";
import {
  fullReadCycleMs,
  FullReadSchedule,
  STAND_IN_CYCLES,
} from "../../../src/reconcile/edge-tenant/full-read-schedule.ts";
import { RECONCILER_DEFAULTS } from "../../../src/reconcile/reconciler.ts";
import { edgeTenant, edgeXml } from "./fixtures.ts";
import { fakeManager, MINUTE } from "../fixtures.ts";
import { manager } from "../nsx-manager/fixtures.ts";
import { setup } from "../harness.ts";

const HOUR = 60 * MINUTE;

describe("fullReadCycleMs", () => {
  it.each([
    { reason: "no EdgeTenant: the interval", edges: 0, intervalMs: HOUR, perMinute: 8, cycleMs: HOUR },
    { reason: "few edges: the interval stands", edges: 200, intervalMs: HOUR, perMinute: 8, cycleMs: HOUR },
    {
      reason: "exactly the budget at the interval: the interval",
      edges: 480,
      intervalMs: HOUR,
      perMinute: 8,
      cycleMs: HOUR,
    },
    {
      reason: "2000 edges at 1 h would be 33 a minute: 8 a minute take 250 min",
      edges: 2000,
      intervalMs: HOUR,
      perMinute: 8,
      cycleMs: 250 * MINUTE,
    },
    {
      reason: "a longer interval than the budget needs: the interval",
      edges: 2000,
      intervalMs: 6 * HOUR,
      perMinute: 8,
      cycleMs: 6 * HOUR,
    },
    {
      reason: "a bigger budget: the interval again",
      edges: 2000,
      intervalMs: HOUR,
      perMinute: 40,
      cycleMs: HOUR,
    },
  ])("$reason", ({ edges, intervalMs, perMinute, cycleMs }) => {
    expect(fullReadCycleMs(intervalMs, perMinute, edges)).toBe(cycleMs);
  });

  it.each([
    { reason: "2000 at the default budget: 286 min", edges: 2000, perMinute: 7, cycleMs: 286 * MINUTE },
    {
      reason: "a part of a minute rounds up: never more than the budget",
      edges: 2001,
      perMinute: 8,
      cycleMs: 251 * MINUTE,
    },
  ])("$reason", ({ edges, perMinute, cycleMs }) => {
    expect(fullReadCycleMs(HOUR, perMinute, edges)).toBe(cycleMs);
  });

  it("the default budget keeps a 2000-edge manager at a 10 s interval within 12 calls in any 30 s", () => {
    const perMinute = RECONCILER_DEFAULTS.kinds.EdgeTenant.fullReadsPerMinute;
    // the list's pages, one per 1024 edges, at each check: four checks fit in 30 s at -10 % jitter
    const listPages = Math.ceil(2000 / 1024) * 4;
    // reads evenly spaced at 60 / perMinute s: a 30 s window holds one more than it fits whole
    const reads = Math.floor(perMinute / 2) + 1;
    expect(listPages + reads).toBeLessThanOrEqual(12);
    // and it is the largest such budget
    expect(listPages + Math.floor((perMinute + 1) / 2) + 1).toBeGreaterThan(12);
  });
});

describe("FullReadSchedule", () => {
  const manager = { kind: "NSXManager", namespace: "ns", name: "nsx" } as const;
  const ref = (n: number) => ({ kind: "EdgeTenant", namespace: "ns", name: `edge-${n}` }) as const;
  const look = (ms: number) => ({ ms, fullRead: false });
  const read = (ms: number) => ({ ms, fullRead: true });

  it("falls due at the object's phase of the cycle after its first look, then once per cycle after each read", () => {
    const s = new FullReadSchedule();
    const at = { manager, cycleMs: HOUR, phase: 0.25 };
    expect(s.dueAtMs(ref(1), at, look(0), 0)).toBe(15 * MINUTE);
    // asked again before it: the same
    expect(s.dueAtMs(ref(1), at, look(0), 10 * MINUTE)).toBe(15 * MINUTE);
    // read at 15 min 1 s: the next turn of its phase
    expect(s.dueAtMs(ref(1), at, read(15 * MINUTE + 1000), 15 * MINUTE + 1000)).toBe(75 * MINUTE);
  });

  it("a cycle that moves keeps each object's next read where it stands, and changes the pace from then on", () => {
    const s = new FullReadSchedule();
    expect(s.dueAtMs(ref(1), { manager, cycleMs: HOUR, phase: 0.5 }, look(0), 0)).toBe(30 * MINUTE);
    // at 20 min the cycle doubles: a third of a cycle was left (10 min), now 20 min
    expect(s.dueAtMs(ref(1), { manager, cycleMs: 2 * HOUR, phase: 0.5 }, look(0), 20 * MINUTE)).toBe(
      40 * MINUTE,
    );
    // a new object at 20 min with phase 0.75: three quarters of a 2 h cycle from the count's 1/3
    expect(
      s.dueAtMs(ref(2), { manager, cycleMs: 2 * HOUR, phase: 0.75 }, look(20 * MINUTE), 20 * MINUTE),
    ).toBe(20 * MINUTE + Math.ceil((0.75 - 1 / 3) * 2 * HOUR));
  });

  it("a full read at the very ms of the first look is still a full read: it stands in for the point just after", () => {
    const s = new FullReadSchedule();
    const at = { manager, cycleMs: HOUR, phase: 0.25 };
    // the manager's count starts at 0: the object's point of phase 0.25 is at 15 min
    s.dueAtMs(ref(2), { ...at, phase: 0 }, look(0), 0);
    expect(s.dueAtMs(ref(1), at, look(14 * MINUTE), 14 * MINUTE)).toBe(15 * MINUTE);
    expect(s.dueAtMs(ref(1), at, read(14 * MINUTE), 14 * MINUTE)).toBe(75 * MINUTE);
  });

  it("forgets an object that is gone: counted again from its next look", () => {
    const s = new FullReadSchedule();
    const at = { manager, cycleMs: HOUR, phase: 0.5 };
    expect(s.dueAtMs(ref(1), at, look(0), 0)).toBe(30 * MINUTE);
    s.forget(ref(1));
    expect(s.dueAtMs(ref(1), at, look(40 * MINUTE), 40 * MINUTE)).toBe(90 * MINUTE);
  });

  it.each([
    {
      reason:
        "a full read within a twentieth of the cycle before the point stands in for it: the point after",
      since: read(15 * MINUTE - STAND_IN_CYCLES * HOUR + 1000),
      dueMs: 75 * MINUTE,
    },
    {
      reason: "a full read further before the point does not: the point itself",
      since: read(15 * MINUTE - STAND_IN_CYCLES * HOUR - 1000),
      dueMs: 15 * MINUTE,
    },
    {
      reason: "a first look just before the point stands in for nothing: the point itself",
      since: look(15 * MINUTE - 1000),
      dueMs: 15 * MINUTE,
    },
  ])("$reason", ({ since, dueMs }) => {
    const s = new FullReadSchedule();
    // the manager's count starts at 0: the object's point of phase 0.25 is at 15 min
    s.dueAtMs(ref(2), { manager, cycleMs: HOUR, phase: 0 }, look(0), 0);
    expect(s.dueAtMs(ref(1), { manager, cycleMs: HOUR, phase: 0.25 }, since, since.ms)).toBe(dueMs);
  });
});

/** `edges` EdgeTenants in sync on one manager (no status yet), and the reconciler over them. */
function fleet(edges: number, deps: { fullReadIntervalMs: number; fullReadsPerMinute: number }) {
  const objects = Array.from({ length: edges }, (_, i) =>
    edgeTenant({ edgeId: `edge-${i + 1}` }, { name: `edge-${i + 1}` }),
  );
  const fake = fakeManager({
    edges: Object.fromEntries(objects.map((o) => [o.spec.edgeId, edgeXml({ tenant: "blue" })])),
  });
  const harness = setup({ objects: [manager(), ...objects], fake, deps: { kinds: { EdgeTenant: deps } } });
  /** ms of the clock → the object's next pass, as the queue would bring it */
  const next = new Map<string, { ref: ReturnType<typeof refOf>; atMs: number }>();
  const queue = (object: NsxvObject) =>
    next.set(objectKey(refOf(object)), { ref: refOf(object), atMs: harness.clock.ms });
  for (const object of [manager(), ...objects]) queue(object);
  /** full reads by minute since the start, and on the first passes (at the start itself) */
  const readsByMinute: number[] = [];
  let readsAtStart = 0;
  const startMs = harness.clock.ms;
  /** runs every pass due until `untilMs` after the start */
  const runUntil = async (untilMs: number) => {
    for (;;) {
      let first: { key: string; atMs: number } | undefined;
      for (const [key, { atMs }] of next) if (first === undefined || atMs < first.atMs) first = { key, atMs };
      if (first === undefined || first.atMs > startMs + untilMs) break;
      const entry = next.get(first.key);
      if (entry === undefined) break;
      harness.clock.ms = Math.max(harness.clock.ms, first.atMs);
      const reads = fake.calls.filter((c) => c.startsWith("getEdge")).length;
      const report = await harness.pass(harness.store.get(entry.ref) as NsxvObject);
      const minute = Math.floor((harness.clock.ms - startMs) / MINUTE);
      const read = fake.calls.filter((c) => c.startsWith("getEdge")).length - reads;
      readsByMinute[minute] = (readsByMinute[minute] ?? 0) + read;
      if (harness.clock.ms === startMs) readsAtStart += read;
      const after = report.outcome.type === "done" ? report.outcome.requeueAfterMs : 1000;
      next.set(first.key, { ref: entry.ref, atMs: harness.clock.ms + (after ?? Infinity) });
      for (const woken of report.wake ?? [])
        next.set(objectKey(woken), { ref: woken, atMs: harness.clock.ms });
    }
  };
  const reads = (fromMinute: number, toMinute: number) =>
    Array.from({ length: toMinute - fromMinute }, (_, i) => readsByMinute[fromMinute + i] ?? 0);
  return { ...harness, objects, runUntil, reads, queue, readsAtStart: () => readsAtStart };
}

describe("the safety net's budget, through the reconciler", () => {
  it.each([
    {
      reason: "few edges: each read once per interval",
      edges: 60,
      intervalMs: 30 * MINUTE,
      perMinute: 8,
      cycleMinutes: 30,
      message: "each edge read in full every 30m",
    },
    {
      reason:
        "more than the budget fits in the interval: each read once per edges / budget minutes, 8 a minute",
      edges: 400,
      intervalMs: 30 * MINUTE,
      perMinute: 8,
      cycleMinutes: 50,
      message: "each edge read in full every 50m (8 full reads a minute at most, over 400 EdgeTenants)",
    },
    {
      reason: "a bigger budget: the interval again",
      edges: 400,
      intervalMs: 30 * MINUTE,
      perMinute: 20,
      cycleMinutes: 30,
      message: "each edge read in full every 30m",
    },
  ])("$reason", async ({ edges, intervalMs, perMinute, cycleMinutes, message }) => {
    const f = fleet(edges, { fullReadIntervalMs: intervalMs, fullReadsPerMinute: perMinute });
    await f.runUntil(2 * cycleMinutes * MINUTE);
    expect(f.readsAtStart(), "the start reads none: the list shows each edge").toBe(0);
    const firstCycle = f.reads(0, cycleMinutes);
    expect(
      firstCycle.reduce((a, b) => a + b, 0),
      "each edge read once in its first cycle",
    ).toBe(edges);
    const perMinuteMost = Math.ceil(edges / cycleMinutes) + 1;
    expect(Math.max(...f.reads(0, 2 * cycleMinutes)), "spread over the cycle").toBeLessThanOrEqual(
      Math.min(perMinute + 1, perMinuteMost),
    );
    expect(
      f.reads(cycleMinutes, 2 * cycleMinutes).reduce((a, b) => a + b, 0),
      "and once in the next",
    ).toBe(edges);
    const checked = f.store.get(refOf(manager())) as NsxvObject;
    const ready = checked.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready?.message, "the manager's check tells how often").toContain(message);
  });

  it("an edge corrected just before its point is read again a cycle later, not at the point", async () => {
    const f = fleet(100, { fullReadIntervalMs: HOUR, fullReadsPerMinute: 100 });
    // edge-89's point is 0.5 % into the cycle (18 s after the first look), edge-1's 62 % (37 min)
    for (const edgeId of ["edge-1", "edge-89"]) f.fake.state.edges.set(edgeId, edgeXml({ tenant: "red" }));
    const readsOf = (edgeId: string) => f.fake.calls.filter((c) => c === `getEdge ${edgeId}`).length;
    await f.runUntil(10_000);
    const corrected = { "edge-1": readsOf("edge-1"), "edge-89": readsOf("edge-89") };
    expect(corrected["edge-89"], "the correction reads it").toBeGreaterThan(0);
    await f.runUntil(HOUR - MINUTE);
    expect(readsOf("edge-89"), "its point 18 s after the correction's read: skipped").toBe(
      corrected["edge-89"],
    );
    expect(readsOf("edge-1"), "its point 37 min after: read then").toBe(corrected["edge-1"] + 1);
    await f.runUntil(HOUR + MINUTE);
    expect(readsOf("edge-89"), "and a cycle after its point").toBe(corrected["edge-89"] + 1);
  });

  it("EdgeTenants added while it runs move the cycle without a burst of reads", async () => {
    const f = fleet(400, { fullReadIntervalMs: 30 * MINUTE, fullReadsPerMinute: 8 });
    await f.runUntil(20 * MINUTE);
    // 40 more: 440 over 8 a minute, 55 min; every other object's next read stays where it was
    for (let i = 401; i <= 440; i++) {
      const object: EdgeTenant = edgeTenant({ edgeId: `edge-${i}` }, { name: `edge-${i}` });
      f.fake.state.edges.set(object.spec.edgeId, edgeXml({ tenant: "blue" }));
      f.store.put(object);
      f.queue(object);
    }
    // the manager's check lists the new edges (a new object whose edge no list shows yet reads it)
    await f.pass(manager());
    await f.runUntil(120 * MINUTE);
    expect(Math.max(...f.reads(0, 120)), "never more than the budget in a minute").toBeLessThanOrEqual(9);
    expect(
      f.reads(60, 115).reduce((a, b) => a + b, 0),
      "each read once per 55 min",
    ).toBeGreaterThanOrEqual(439);
  });
});
