import { describe, expect, it } from "vitest";
import { formatTime, FakeClock, realClock, withTimeout } from "../../src/util/clock.ts";

describe("FakeClock", () => {
  it("fires timers in due order, each at its due time", async () => {
    const clock = new FakeClock(1000);
    const fired: [string, number][] = [];
    clock.setTimer(300, () => fired.push(["c", clock.now()]));
    clock.setTimer(100, () => fired.push(["a", clock.now()]));
    clock.setTimer(100, () => fired.push(["b", clock.now()]));
    clock.setTimer(500, () => fired.push(["late", clock.now()]));
    await clock.advance(300);
    expect(fired).toEqual([
      ["a", 1100],
      ["b", 1100],
      ["c", 1300],
    ]);
    expect(clock.now()).toBe(1300);
    expect(clock.pendingTimers).toBe(1);
  });

  it("fires timers that a timer schedules within the same advance", async () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimer(10, () => clock.setTimer(10, () => fired.push(clock.now())));
    await clock.advance(25);
    expect(fired).toEqual([20]);
  });

  it("does not fire cancelled timers", async () => {
    const clock = new FakeClock(0);
    let fired = false;
    clock.setTimer(10, () => (fired = true)).cancel();
    await clock.advance(20);
    expect(fired).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it("sleep resolves at its time, or at once when the signal aborts", async () => {
    const clock = new FakeClock(0);
    let woke = -1;
    void clock.sleep(50).then(() => (woke = clock.now()));
    await clock.advance(49);
    expect(woke).toBe(-1);
    await clock.advance(1);
    expect(woke).toBe(50);

    const abort = new AbortController();
    const slept = clock.sleep(60_000, abort.signal);
    abort.abort();
    await slept;
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("withTimeout", () => {
  it("gives the promise's value when it settles in time", async () => {
    const clock = new FakeClock(0);
    await expect(withTimeout(clock, Promise.resolve("value"), 10, "fallback")).resolves.toBe("value");
    expect(clock.pendingTimers).toBe(0);
  });

  it("gives the fallback when the promise hangs", async () => {
    const clock = new FakeClock(0);
    const result = withTimeout(clock, new Promise<string>(() => {}), 10, "fallback");
    await clock.advance(10);
    await expect(result).resolves.toBe("fallback");
  });

  it("works with the real clock", async () => {
    const result = await withTimeout(realClock, new Promise<string>(() => {}), 5, "fallback");
    expect(result).toBe("fallback");
  });
});

describe("formatTime", () => {
  it.each([
    {
      reason: "milliseconds dropped",
      time: Date.UTC(2026, 10, 26, 16, 1, 9, 999),
      want: "2026-11-26T16:01:09Z",
    },
    {
      reason: "a Date as a number",
      time: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
      want: "2026-01-02T03:04:05Z",
    },
    { reason: "the epoch", time: 0, want: "1970-01-01T00:00:00Z" },
    {
      reason: "a year past 9999 keeps its sign and six digits",
      time: Date.UTC(10000, 0, 1),
      want: "+010000-01-01T00:00:00Z",
    },
  ])("$reason", ({ time, want }) => {
    expect(formatTime(time)).toBe(want);
  });

  it("formats each time by its own second, one after another (the last second is kept)", () => {
    const second = Date.UTC(2026, 10, 26, 16, 1, 9);
    expect(formatTime(second + 1)).toBe("2026-11-26T16:01:09Z");
    expect(formatTime(new Date(second + 998))).toBe("2026-11-26T16:01:09Z");
    expect(formatTime(second + 1000)).toBe("2026-11-26T16:01:10Z");
    expect(formatTime(second - 1)).toBe("2026-11-26T16:01:08Z");
    expect(formatTime(-1)).toBe("1969-12-31T23:59:59Z");
    expect(() => formatTime(NaN)).toThrow(RangeError);
    expect(() => formatTime(NaN)).toThrow(RangeError);
  });
});
