import { describe, expect, it } from "vitest";
import { SyncedLatch } from "../../src/controller/synced-latch.ts";

describe("SyncedLatch", () => {
  it("wakes every waiter with true once opened, and answers true at once afterwards", async () => {
    const latch = new SyncedLatch();
    const signal = new AbortController().signal;
    const waiting = [latch.wait(signal), latch.wait(signal)];
    expect(latch.isOpen).toBe(false);
    latch.open();
    latch.open(); // a second load changes nothing
    expect(await Promise.all(waiting)).toEqual([true, true]);
    expect(await latch.wait(signal)).toBe(true);
  });

  it.each([
    { name: "AbortedWhileWaiting", reason: "a caller that gives up is told false", abortFirst: false },
    { name: "AlreadyAborted", reason: "an aborted signal never waits for the load", abortFirst: true },
  ])("answers false when the signal aborts before the load: $name", async ({ reason, abortFirst }) => {
    const latch = new SyncedLatch();
    const stop = new AbortController();
    if (abortFirst) stop.abort();
    const waiting = latch.wait(stop.signal);
    stop.abort();
    expect(await waiting, reason).toBe(false);
    latch.open();
    expect(latch.isOpen).toBe(true);
  });
});
