/**
 * The work queue's priorities, as controller-runtime's priority queue has them: higher goes
 * first (events at the default 0 ahead of bulk work at LOW_PRIORITY), an item waiting with a
 * lower priority is raised, never lowered, and a pending delayed add keeps the highest of its
 * priorities with the soonest of its times; within a priority the oldest goes first, across
 * groups too, and the bulkhead's caps still hold. Keys here are `group:name`.
 */
import { describe, expect, it } from "vitest";
import { LOW_PRIORITY, WorkQueue } from "../../src/controller/workqueue.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { runSteps, type Step } from "./helpers.ts";

const LOW = LOW_PRIORITY;

function queueOf(maxInFlightPerGroup?: number) {
  const clock = new FakeClock(0);
  const queue = new WorkQueue<string>({
    name: "priorities",
    clock,
    groupOf: (key) => key.split(":")[0] as string,
    ...(maxInFlightPerGroup !== undefined ? { maxInFlightPerGroup } : {}),
  });
  return { queue, clock };
}

describe("WorkQueue priorities", () => {
  const cases: { name: string; reason: string; cap?: number; steps: Step[] }[] = [
    {
      name: "EventAheadOfBulk",
      reason: "An item added at the default priority goes ahead of older bulk items.",
      steps: [
        ["add", "m1:a", LOW],
        ["add", "m1:b", LOW],
        ["add", "m1:c"],
        ["get", "m1:c"],
        ["get", "m1:a"],
        ["get", "m1:b"],
      ],
    },
    {
      name: "RaisedWhileWaiting",
      reason: "A bulk item added again as an event is raised, and handed out once.",
      steps: [
        ["add", "m1:a", LOW],
        ["add", "m1:b", LOW],
        ["add", "m1:b"],
        ["len", 2],
        ["get", "m1:b"],
        ["get", "m1:a"],
        ["len", 0],
      ],
    },
    {
      name: "NeverLowered",
      reason: "An event added again as bulk work keeps its priority and its place.",
      steps: [
        ["add", "m1:a"],
        ["add", "m1:b"],
        ["add", "m1:a", LOW],
        ["add", "m1:c", LOW],
        ["get", "m1:a"],
        ["get", "m1:b"],
        ["get", "m1:c"],
      ],
    },
    {
      name: "OldestWithinAPriority",
      reason: "Among items of one priority, the one queued first goes first, across groups.",
      steps: [
        ["add", "m2:a"],
        ["add", "m1:a"],
        ["add", "m1:b", LOW],
        ["add", "m2:b", LOW],
        ["get", "m2:a"],
        ["get", "m1:a"],
        ["get", "m1:b"],
        ["get", "m2:b"],
      ],
    },
    {
      name: "EventAcrossGroups",
      reason: "An event of one group goes ahead of older bulk work of another.",
      steps: [
        ["add", "m1:a", LOW],
        ["add", "m1:b", LOW],
        ["add", "m2:a"],
        ["get", "m2:a"],
        ["get", "m1:a"],
      ],
    },
    {
      name: "CapHoldsAnEvent",
      reason: "An event of a group at its cap waits; bulk work of a group with room goes meanwhile.",
      cap: 1,
      steps: [
        ["add", "m1:a", LOW],
        ["add", "m2:a", LOW],
        ["get", "m1:a"],
        ["add", "m1:b"],
        ["get", "m2:a"],
        ["done", "m1:a"],
        ["get", "m1:b"],
      ],
    },
    {
      name: "ReaddedWhileProcessing",
      reason:
        "An item re-added while processed is queued at the highest priority it was added with, when done.",
      steps: [
        ["add", "m1:a", LOW],
        ["get", "m1:a"],
        ["add", "m1:a", LOW],
        ["add", "m1:b", LOW],
        ["add", "m1:a"],
        ["done", "m1:a"],
        ["get", "m1:a"],
        ["get", "m1:b"],
      ],
    },
  ];

  it.each(cases)("$name: $reason", async ({ reason, cap, steps }) => {
    await runSteps(queueOf(cap).queue, steps, reason);
  });

  it("a delayed add keeps the soonest time and the highest priority of its adds", async () => {
    const { queue, clock } = queueOf();
    queue.add("m1:bulk", { priority: LOW });
    queue.addAfter("m1:a", 10_000, { priority: LOW });
    queue.addAfter("m1:a", 20_000);
    queue.addAfter("m1:b", 5_000);
    queue.addAfter("m1:b", 1_000, { priority: LOW });
    await clock.advance(10_000);
    expect(queue.len()).toBe(3);
    // both are events now, in the order their timers fired; the bulk item last
    expect(await queue.get()).toBe("m1:b");
    expect(await queue.get()).toBe("m1:a");
    expect(await queue.get()).toBe("m1:bulk");
  });

  it("a rate-limited add carries its priority", async () => {
    const { queue, clock } = queueOf();
    queue.addRateLimited("m1:a", { priority: LOW });
    queue.addRateLimited("m1:b");
    await clock.advance(60_000);
    expect(await queue.get()).toBe("m1:b");
    expect(await queue.get()).toBe("m1:a");
  });
});
