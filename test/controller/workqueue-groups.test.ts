/**
 * The work queue's bulkhead: items belong to groups, at most `maxInFlightPerGroup` of a group are
 * handed out at once, and `get` hands out the oldest item whose group has room, with every other
 * rule of the queue (dedupe, one worker per key, re-add while processing) kept. Keys here are
 * `group:name`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WorkQueue } from "../../src/controller/workqueue.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { runSteps, type Step } from "./helpers.ts";

const groupOfKey = (key: string): string => key.split(":")[0] as string;

function groupedQueue(
  maxInFlightPerGroup: number,
  groupOf: (key: string) => string = groupOfKey,
  maxInFlight?: number,
) {
  const clock = new FakeClock(0);
  const queue = new WorkQueue<string>({
    name: "groups",
    clock,
    groupOf,
    maxInFlightPerGroup,
    ...(maxInFlight !== undefined ? { maxInFlight } : {}),
  });
  return { queue, clock };
}

/** A get that must not resolve yet, and what it resolved to once it did. */
function pendingGet(queue: WorkQueue<string>) {
  const got: { value?: string | undefined; settled: boolean } = { settled: false };
  void queue.get().then((value) => Object.assign(got, { value, settled: true }));
  return got;
}

describe("WorkQueue groups", () => {
  const cases: { name: string; reason: string; cap: number; maxInFlight?: number; steps: Step[] }[] = [
    {
      name: "CapHoldsBackAGroup",
      reason: "A group at its cap waits; another group's item goes first.",
      cap: 1,
      steps: [
        ["add", "m1:a"],
        ["add", "m1:b"],
        ["add", "m2:a"],
        ["get", "m1:a"],
        ["get", "m2:a"],
        ["len", 1],
        ["done", "m1:a"],
        ["get", "m1:b"],
      ],
    },
    {
      name: "OldestWithRoomFirst",
      reason: "Among the groups with room, the item queued first goes first.",
      cap: 1,
      steps: [
        ["add", "m1:a"],
        ["add", "m2:a"],
        ["add", "m1:b"],
        ["add", "m2:b"],
        ["get", "m1:a"],
        ["get", "m2:a"],
        ["done", "m2:a"],
        ["get", "m2:b"],
        ["done", "m1:a"],
        ["get", "m1:b"],
      ],
    },
    {
      name: "CapAboveOne",
      reason: "A cap of 2 lets two items of one group go at once, not three.",
      cap: 2,
      steps: [
        ["add", "m1:a"],
        ["add", "m1:b"],
        ["add", "m1:c"],
        ["add", "m2:a"],
        ["get", "m1:a"],
        ["get", "m1:b"],
        ["get", "m2:a"],
        ["len", 1],
        ["done", "m1:b"],
        ["get", "m1:c"],
      ],
    },
    {
      name: "ReaddWhileProcessingTakesNoSecondSlot",
      reason: "A key re-added while it is processed waits for its done, and then counts once.",
      cap: 2,
      steps: [
        ["add", "m1:a"],
        ["get", "m1:a"],
        ["add", "m1:a"],
        ["add", "m1:b"],
        ["get", "m1:b"],
        ["len", 0],
        ["done", "m1:a"],
        ["len", 1],
        ["get", "m1:a"],
      ],
    },
    {
      name: "MaxInFlightHoldsBack",
      reason: "At maxInFlight, a group that has an item out waits, though under its own cap.",
      cap: 3,
      maxInFlight: 2,
      steps: [
        ["add", "m1:a"],
        ["add", "m1:b"],
        ["add", "m1:c"],
        ["get", "m1:a"],
        ["get", "m1:b"],
        ["len", 1],
        ["done", "m1:a"],
        ["get", "m1:c"],
      ],
    },
    {
      name: "FloorForAGroupWithNoneOut",
      reason:
        "However many items other groups hold (they may hang), a group with none out gets one at once, beyond maxInFlight; a second waits until fewer than maxInFlight are out, those of the floor counted.",
      cap: 2,
      maxInFlight: 2,
      steps: [
        ["add", "m1:a"],
        ["add", "m1:b"],
        ["add", "m2:a"],
        ["add", "m2:b"],
        ["add", "m3:a"],
        ["get", "m1:a"],
        ["get", "m1:b"],
        ["get", "m2:a"],
        ["get", "m3:a"],
        ["len", 1],
        ["done", "m1:a"],
        ["done", "m1:b"],
        ["len", 1],
        ["done", "m3:a"],
        ["get", "m2:b"],
      ],
    },
    {
      name: "DuplicatesMergeWithinAGroup",
      reason: "Dedupe is by key, whatever the group.",
      cap: 1,
      steps: [
        ["add", "m1:a"],
        ["add", "m1:a"],
        ["add", "m2:a"],
        ["len", 2],
        ["get", "m1:a"],
        ["get", "m2:a"],
        ["len", 0],
      ],
    },
  ];

  it.each(cases)("$name", async ({ reason, cap, maxInFlight, steps }) => {
    await runSteps(groupedQueue(cap, groupOfKey, maxInFlight).queue, steps, reason);
  });

  it("a waiting worker gets an item of another group at once, and a held-back one when its group has room", async () => {
    const { queue, clock } = groupedQueue(1);
    queue.add("m1:a");
    queue.add("m1:b");
    expect(await queue.get()).toBe("m1:a");
    const first = pendingGet(queue);
    await clock.flush();
    expect(first.settled, "m1 is at its cap: nothing for this worker yet").toBe(false);
    queue.add("m2:a");
    await clock.flush();
    expect(first).toEqual({ settled: true, value: "m2:a" });
    const second = pendingGet(queue);
    await clock.flush();
    expect(second.settled).toBe(false);
    queue.done("m1:a");
    await clock.flush();
    expect(second).toEqual({ settled: true, value: "m1:b" });
  });

  it("reads an item's group when it is queued, and frees the slot of the group it was handed out in", async () => {
    const groups = new Map([
      ["x", "A"],
      ["y", "B"],
      ["z", "A"],
    ]);
    const { queue, clock } = groupedQueue(1, (key) => groups.get(key) as string);
    queue.add("x");
    expect(await queue.get()).toBe("x");
    groups.set("x", "B"); // its object now names another manager
    queue.add("x");
    queue.add("y");
    expect(await queue.get()).toBe("y");
    queue.done("x");
    const held = pendingGet(queue);
    await clock.flush();
    expect(held.settled, "x is queued in B now, where y holds the slot").toBe(false);
    queue.add("z");
    await clock.flush();
    expect(held, "A's slot was given back when x was done").toEqual({ settled: true, value: "z" });
    queue.done("y");
    expect(await queue.get()).toBe("x");
  });

  it("with drain: a held-back item is still handed out, then waiters see undefined", async () => {
    const { queue, clock } = groupedQueue(1);
    queue.add("m1:a");
    queue.add("m1:b");
    expect(await queue.get()).toBe("m1:a");
    const waiter = pendingGet(queue);
    let drained = false;
    const drain = queue.shutDown({ drain: true }).then(() => (drained = true));
    await clock.flush();
    expect(waiter.settled, "m1:b is still to be handed out").toBe(false);
    queue.done("m1:a");
    await clock.flush();
    expect(waiter).toEqual({ settled: true, value: "m1:b" });
    expect(await queue.get()).toBeUndefined();
    expect(drained).toBe(false);
    queue.done("m1:b");
    await drain;
    expect(drained).toBe(true);
  });

  it("without drain: a worker waiting behind a full group is released with undefined", async () => {
    const { queue, clock } = groupedQueue(1);
    queue.add("m1:a");
    queue.add("m1:b");
    await queue.get();
    const waiter = pendingGet(queue);
    await queue.shutDown();
    await clock.flush();
    expect(waiter).toEqual({ settled: true, value: undefined });
    expect(queue.len()).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses a cap of %s", (cap) => {
    expect(() => new WorkQueue<string>({ name: "bad", maxInFlightPerGroup: cap })).toThrow(
      /maxInFlightPerGroup must be a positive integer/,
    );
    expect(() => new WorkQueue<string>({ name: "bad", maxInFlight: cap })).toThrow(
      /maxInFlight must be a positive integer/,
    );
  });

  it("never exceeds a group's cap nor maxInFlight but by one per group with none else out, never hands a key to two workers, and loses no add (property)", async () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant("add" as const),
        key: fc.constantFrom("m1:a", "m1:b", "m1:c", "m2:a", "m2:b", "m3:a"),
      }),
      fc.record({ kind: fc.constant("get" as const) }),
      fc.record({ kind: fc.constant("done" as const), pick: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(op, { maxLength: 60 }),
        async (cap, maxInFlight, ops) => {
          const { queue, clock } = groupedQueue(cap, groupOfKey, maxInFlight);
          const processing: string[] = [];
          /** keys added since they were last handed out: each must be handed out again */
          const owed = new Set<string>();
          let waiting = 0;
          const take = (): void => {
            waiting += 1;
            void queue.get().then((key) => {
              waiting -= 1;
              if (key === undefined) return;
              expect(processing).not.toContain(key);
              processing.push(key);
              owed.delete(key);
              const inGroup = processing.filter((k) => groupOfKey(k) === groupOfKey(key)).length;
              expect(inGroup).toBeLessThanOrEqual(cap);
              // beyond maxInFlight only as a group's first
              if (processing.length > maxInFlight) expect(inGroup).toBe(1);
            });
          };
          for (const o of ops) {
            if (o.kind === "add") {
              queue.add(o.key);
              owed.add(o.key);
            } else if (o.kind === "get" && waiting < 4) take();
            else if (o.kind === "done" && processing.length > 0) {
              const [key] = processing.splice(o.pick % processing.length, 1);
              queue.done(key as string);
            }
            await clock.flush();
          }
          // the workers finish what they hold until nothing is owed: a held-back key must come out
          if (waiting === 0) take();
          for (let round = 0; round < 20 && (owed.size > 0 || processing.length > 0); round++) {
            for (const key of processing.splice(0)) queue.done(key);
            await clock.flush();
            if (waiting === 0) take();
            await clock.flush();
          }
          expect([...owed]).toEqual([]);
          await queue.shutDown();
          await clock.flush();
          expect(waiting).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("WorkQueue backoff cap", () => {
  it("caps one retry's delay at maxDelayMs and keeps counting the failures", async () => {
    const clock = new FakeClock(0);
    const queue = new WorkQueue<string>({ name: "cap", clock });
    const readyAfter = async (maxDelayMs?: number): Promise<number> => {
      const start = clock.now();
      queue.addRateLimited("a", { maxDelayMs });
      while (queue.len() === 0) await clock.advance(100);
      await queue.get();
      queue.done("a");
      return clock.now() - start;
    };
    // the default backoff: 1 s doubling to 60 s; a 10 s resync caps it at 10 s
    const delays = [];
    for (let i = 0; i < 6; i++) delays.push(await readyAfter(10_000));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(queue.numRequeues("a")).toBe(6);
    expect(await readyAfter(), "without a cap the backoff goes on from where it was").toBe(60_000);
  });

  it("ignores a cap that is not a number of milliseconds", async () => {
    const clock = new FakeClock(0);
    const queue = new WorkQueue<string>({ name: "cap", clock });
    queue.addRateLimited("a", { maxDelayMs: Number.NaN });
    queue.addRateLimited("b", { maxDelayMs: -1 });
    await clock.advance(999);
    expect(queue.len()).toBe(0);
    await clock.advance(1);
    expect(queue.len()).toBe(2);
  });
});
