import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../src/util/clock.ts";
import { ExponentialBackoff } from "../../src/controller/rate-limiter.ts";
import { WorkQueue } from "../../src/controller/workqueue.ts";
import { recordingMetrics, runSteps, type Step } from "./helpers.ts";

function newQueue(clock = new FakeClock(0)) {
  const { metrics, recorded } = recordingMetrics();
  const queue = new WorkQueue({ name: "test", clock, metrics });
  return { queue, clock, recorded };
}

describe("WorkQueue semantics", () => {
  const cases: { name: string; reason: string; steps: Step[] }[] = [
    {
      name: "FifoOrder",
      reason: "Keys are handed out in the order they were first added.",
      steps: [
        ["add", "a"],
        ["add", "b"],
        ["add", "c"],
        ["get", "a"],
        ["get", "b"],
        ["get", "c"],
        ["len", 0],
      ],
    },
    {
      name: "DuplicateAddsMerge",
      reason: "A key added twice before it is handed out is handed out once.",
      steps: [
        ["add", "a"],
        ["add", "b"],
        ["add", "a"],
        ["len", 2],
        ["get", "a"],
        ["get", "b"],
        ["len", 0],
      ],
    },
    {
      name: "AddWhileProcessingWaitsForDone",
      reason: "A key being processed is not handed to a second worker; it is queued again at done.",
      steps: [
        ["add", "a"],
        ["get", "a"],
        ["add", "a"],
        ["len", 0],
        ["done", "a"],
        ["len", 1],
        ["get", "a"],
      ],
    },
    {
      name: "ReaddsWhileProcessingMerge",
      reason: "Several adds during processing give one more pass, not several.",
      steps: [
        ["add", "a"],
        ["get", "a"],
        ["add", "a"],
        ["add", "a"],
        ["done", "a"],
        ["len", 1],
        ["get", "a"],
        ["done", "a"],
        ["len", 0],
      ],
    },
    {
      name: "ReaddGoesToTheBack",
      reason: "A key re-queued at done waits behind keys added earlier.",
      steps: [
        ["add", "a"],
        ["get", "a"],
        ["add", "a"],
        ["add", "b"],
        ["done", "a"],
        ["get", "b"],
        ["get", "a"],
      ],
    },
    {
      name: "DoneWithoutReaddForgetsTheKey",
      reason: "A processed key that was not re-added leaves the queue.",
      steps: [
        ["add", "a"],
        ["get", "a"],
        ["done", "a"],
        ["len", 0],
        ["add", "a"],
        ["get", "a"],
      ],
    },
    {
      name: "DoneOfUnknownKeyIsIgnored",
      reason: "A stray done must not disturb the queue.",
      steps: [
        ["add", "a"],
        ["done", "a"],
        ["done", "zzz"],
        ["len", 1],
        ["get", "a"],
      ],
    },
  ];

  it.each(cases)("$name", async ({ reason, steps }) => {
    await runSteps(newQueue().queue, steps, reason);
  });

  it("a waiting get receives the next add", async () => {
    const { queue, clock } = newQueue();
    const first = queue.get();
    const second = queue.get();
    queue.add("a");
    queue.add("a");
    queue.add("b");
    await expect(first).resolves.toBe("a");
    await expect(second).resolves.toBe("b");
    expect(queue.len()).toBe(0);
    await clock.flush();
  });

  it("never hands a key to two workers at once and loses no add (property)", async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("add" as const), key: fc.constantFrom("a", "b", "c") }),
      fc.record({ kind: fc.constant("get" as const) }),
      fc.record({ kind: fc.constant("done" as const), pick: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        const { queue } = newQueue();
        const processing: string[] = [];
        /** keys added since they were last handed out: each must be handed out again */
        const owed = new Set<string>();
        for (const o of ops) {
          if (o.kind === "add") {
            queue.add(o.key);
            owed.add(o.key);
          } else if (o.kind === "get" && queue.len() > 0) {
            const key = (await queue.get()) as string;
            expect(processing).not.toContain(key);
            processing.push(key);
            owed.delete(key);
          } else if (o.kind === "done" && processing.length > 0) {
            const [key] = processing.splice(o.pick % processing.length, 1);
            queue.done(key as string);
          }
        }
        for (const key of processing) queue.done(key);
        const handed = new Set<string>();
        while (queue.len() > 0) handed.add((await queue.get()) as string);
        expect([...handed].sort()).toEqual([...owed].sort());
      }),
      { numRuns: 200 },
    );
  });
});

describe("WorkQueue delayed adds", () => {
  const cases = [
    {
      name: "SingleDelay",
      reason: "A delayed key appears exactly at its time.",
      delays: [5000],
      wantAtMs: 5000,
    },
    {
      name: "EarlierDelayWins",
      reason: "A sooner delayed add replaces a later pending one.",
      delays: [10_000, 3000],
      wantAtMs: 3000,
    },
    {
      name: "LaterDelayDoesNotPostpone",
      reason: "A later delayed add does not push back a sooner pending one.",
      delays: [3000, 10_000],
      wantAtMs: 3000,
    },
  ];

  it.each(cases)("$name", async ({ reason, delays, wantAtMs }) => {
    const { queue, clock } = newQueue();
    for (const d of delays) queue.addAfter("ns/a", d);
    await clock.advance(wantAtMs - 1);
    expect(queue.len(), reason).toBe(0);
    await clock.advance(1);
    expect(queue.len(), reason).toBe(1);
    expect(await queue.get()).toBe("ns/a");
    queue.done("ns/a");
    await clock.advance(60_000);
    expect(queue.len(), `${reason} (fires once)`).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it("a zero or negative delay adds at once", () => {
    const { queue } = newQueue();
    queue.addAfter("a", 0);
    queue.addAfter("b", -5);
    expect(queue.len()).toBe(2);
  });

  it("a delayed add of a queued key merges with it", async () => {
    const { queue, clock } = newQueue();
    queue.add("a");
    queue.addAfter("a", 100);
    await clock.advance(100);
    expect(queue.len()).toBe(1);
  });

  it("addRateLimited backs off per key, and forget resets", async () => {
    const clock = new FakeClock(0);
    const queue = new WorkQueue({
      name: "t",
      clock,
      rateLimiter: new ExponentialBackoff({ baseDelayMs: 100 }),
    });
    const readyAfter = async (): Promise<number> => {
      const start = clock.now();
      queue.addRateLimited("a");
      while (queue.len() === 0) await clock.advance(10);
      await queue.get();
      queue.done("a");
      return clock.now() - start;
    };
    expect([await readyAfter(), await readyAfter(), await readyAfter()]).toEqual([100, 200, 400]);
    expect(queue.numRequeues("a")).toBe(3);
    queue.forget("a");
    expect(queue.numRequeues("a")).toBe(0);
    expect(await readyAfter()).toBe(100);
  });
});

describe("WorkQueue shutdown", () => {
  it("without drain: waiters and later gets see undefined, queued keys are dropped", async () => {
    const { queue, clock } = newQueue();
    const waiting = queue.get();
    queue.add("a");
    await waiting;
    queue.add("b");
    queue.addAfter("c", 1000);
    const idle = queue.get();
    queue.done("a");
    expect(await idle).toBe("b");
    const blocked = queue.get();
    await queue.shutDown();
    expect(await blocked).toBeUndefined();
    expect(await queue.get()).toBeUndefined();
    expect(clock.pendingTimers).toBe(0);
    queue.add("d");
    queue.addRateLimited("d");
    expect(queue.len()).toBe(0);
    expect(queue.shuttingDown).toBe(true);
  });

  it("with drain: queued keys are still handed out and the promise waits for done", async () => {
    const { queue, clock } = newQueue();
    queue.add("a");
    queue.add("b");
    const a = await queue.get();
    let drained = false;
    const drain = queue.shutDown({ drain: true }).then(() => (drained = true));
    queue.add("c");
    expect(await queue.get()).toBe("b");
    expect(await queue.get()).toBeUndefined();
    await clock.flush();
    expect(drained).toBe(false);
    queue.done(a as string);
    await clock.flush();
    expect(drained).toBe(false);
    queue.done("b");
    await drain;
    expect(drained).toBe(true);
  });

  it("with drain: a key re-added before shutdown is processed once more", async () => {
    const { queue } = newQueue();
    queue.add("a");
    await queue.get();
    queue.add("a");
    const drain = queue.shutDown({ drain: true });
    queue.done("a");
    expect(await queue.get()).toBe("a");
    queue.done("a");
    await drain;
    expect(await queue.get()).toBeUndefined();
  });
});

describe("WorkQueue metrics", () => {
  it("reports adds, depth, queue and work durations, retries", async () => {
    const { queue, clock, recorded } = newQueue();
    queue.add("a");
    queue.add("a");
    queue.add("b");
    await clock.advance(3000);
    await queue.get();
    await clock.advance(500);
    queue.done("a");
    queue.addRateLimited("a");
    expect(recorded.adds).toBe(2);
    expect(recorded.depths).toEqual([1, 2, 1]);
    expect(recorded.queueSeconds).toEqual([3]);
    expect(recorded.workSeconds).toEqual([0.5]);
    expect(recorded.retries).toBe(1);
  });
});
