import { describe, expect, it } from "vitest";
import { GROUP_WAIT_MS, RequestLimiter, type Release } from "../../src/nsx/limiter.ts";
import { FakeClock, realClock, type Clock } from "../../src/util/clock.ts";

/** lets every settled promise run its callbacks */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup(options: { maxConcurrentRequests: number; requestsPerSecond: number; burst: number }) {
  const clock = new FakeClock(1_000);
  const limiter = new RequestLimiter({ ...options, clock });
  const granted: string[] = [];
  const releases = new Map<string, Release>();
  const outcomes = new Map<string, unknown>();
  const request = (name: string, signal?: AbortSignal): void => {
    limiter.acquire(signal).then(
      (release) => {
        granted.push(name);
        releases.set(name, release);
      },
      (reason: unknown) => outcomes.set(name, reason),
    );
  };
  return { clock, limiter, granted, releases, outcomes, request };
}

describe("RequestLimiter", () => {
  it("caps concurrent requests and hands a freed slot to the next waiter", async () => {
    const t = setup({ maxConcurrentRequests: 2, requestsPerSecond: 1000, burst: 1000 });
    for (const name of ["a", "b", "c", "d"]) t.request(name);
    await flush();
    expect(t.granted).toEqual(["a", "b"]);
    expect(t.limiter.active).toBe(2);
    expect(t.limiter.waiting).toBe(2);

    t.releases.get("b")?.();
    t.releases.get("b")?.(); // a second call must not free a second slot
    await flush();
    expect(t.granted).toEqual(["a", "b", "c"]);
    expect(t.limiter.active).toBe(2);
  });

  it("lets a burst through at once, then one request per 1/rate seconds", async () => {
    const t = setup({ maxConcurrentRequests: 100, requestsPerSecond: 10, burst: 3 });
    for (let i = 0; i < 6; i++) t.request(`r${i}`);
    await flush();
    expect(t.granted).toEqual(["r0", "r1", "r2"]);

    await t.clock.advance(99);
    await flush();
    expect(t.granted).toHaveLength(3);
    await t.clock.advance(1);
    await flush();
    expect(t.granted).toHaveLength(4);
    await t.clock.advance(200);
    await flush();
    expect(t.granted).toHaveLength(6);
  });

  it("bounds the rate: N requests after the burst take (N - burst) / rate seconds", async () => {
    const t = setup({ maxConcurrentRequests: 100, requestsPerSecond: 20, burst: 20 });
    for (let i = 0; i < 60; i++) t.request(`r${i}`);
    await flush();
    let elapsedMs = 0;
    while (t.granted.length < 60 && elapsedMs < 10_000) {
      await t.clock.advance(10);
      elapsedMs += 10;
      await flush();
    }
    // 40 requests beyond the burst at 20/s: 2 s
    expect(elapsedMs).toBe(2_000);
  });

  it("once the rate binds, starts waiters in groups of GROUP_WAIT_MS' tokens, one timer a group, at the same rate", async () => {
    const t = setup({ maxConcurrentRequests: 2_000, requestsPerSecond: 1000, burst: 1000 });
    for (let i = 0; i < 1_120; i++) t.request(`r${i}`);
    await flush();
    expect(t.granted).toHaveLength(1_000);
    expect(t.clock.pendingTimers).toBe(1);
    await t.clock.advance(1);
    await flush();
    expect(t.granted, "a token came, the group did not").toHaveLength(1_000);
    await t.clock.advance(GROUP_WAIT_MS - 1);
    await flush();
    expect(t.granted).toHaveLength(1_000 + GROUP_WAIT_MS);
    await t.clock.advance(GROUP_WAIT_MS);
    await flush();
    expect(t.granted).toHaveLength(1_000 + 2 * GROUP_WAIT_MS);
    // the last 20 wait for a whole group too: the rate over the run is still 1000/s
    await t.clock.advance(GROUP_WAIT_MS);
    await flush();
    expect(t.granted).toHaveLength(1_120);
    expect(t.clock.pendingTimers).toBe(0);
  });

  it("waits for no group larger than half the burst", async () => {
    const t = setup({ maxConcurrentRequests: 100, requestsPerSecond: 1000, burst: 5 });
    for (let i = 0; i < 15; i++) t.request(`r${i}`);
    await flush();
    expect(t.granted).toHaveLength(5);
    await t.clock.advance(1);
    await flush();
    expect(t.granted).toHaveLength(5);
    await t.clock.advance(1);
    await flush();
    expect(t.granted, "a group of two").toHaveLength(7);
  });

  it("keeps the rate when its timer fires late: what came meanwhile has room in the bucket", async () => {
    const fake = new FakeClock(1_000);
    // each timer fires a millisecond after its time, as a busy event loop's do
    const late: Clock = {
      ...realClock,
      now: () => fake.now(),
      setTimer: (ms, run) => fake.setTimer(ms + 1, run),
    };
    const limiter = new RequestLimiter({
      maxConcurrentRequests: 100,
      requestsPerSecond: 1000,
      burst: 4,
      clock: late,
    });
    let granted = 0;
    for (let i = 0; i < 50; i++) void limiter.acquire().then(() => granted++);
    await flush();
    expect(granted).toBe(4);
    await fake.advance(30);
    await flush();
    // a group of the whole burst would lose a token at each late timer: 24 in 30 ms
    expect(granted, "the 30 tokens of 30 ms").toBe(4 + 30);
  });

  it("starts nothing on a freed slot while the line waits for its group", async () => {
    const t = setup({ maxConcurrentRequests: 5, requestsPerSecond: 1000, burst: 4 });
    for (const name of ["a", "b", "c", "d", "e", "f"]) t.request(name);
    await flush();
    expect(t.granted, "a slot is free, the bucket is dry: e waits for a group of two").toEqual([
      "a",
      "b",
      "c",
      "d",
    ]);
    await t.clock.advance(1);
    t.releases.get("a")?.();
    await flush();
    expect(t.granted, "one token of the two, and a second free slot").toEqual(["a", "b", "c", "d"]);
    await t.clock.advance(1);
    await flush();
    expect(t.granted).toEqual(["a", "b", "c", "d", "e", "f"]);
  });

  it("refills tokens while idle, never above the burst", async () => {
    const t = setup({ maxConcurrentRequests: 100, requestsPerSecond: 10, burst: 2 });
    t.request("a");
    t.request("b");
    await flush();
    await t.clock.advance(60_000);
    for (const name of ["c", "d", "e"]) t.request(name);
    await flush();
    expect(t.granted).toEqual(["a", "b", "c", "d"]);
  });

  it("serves waiters first come, first served across slots and tokens", async () => {
    const t = setup({ maxConcurrentRequests: 1, requestsPerSecond: 1, burst: 1 });
    for (const name of ["a", "b", "c"]) t.request(name);
    await flush();
    expect(t.granted).toEqual(["a"]);
    t.releases.get("a")?.();
    t.request("late");
    await t.clock.advance(1_000);
    await flush();
    expect(t.granted).toEqual(["a", "b"]);
    t.releases.get("b")?.();
    await t.clock.advance(1_000);
    await flush();
    t.releases.get("c")?.();
    await t.clock.advance(1_000);
    await flush();
    expect(t.granted).toEqual(["a", "b", "c", "late"]);
  });

  it("rejects an aborted waiter with the signal's reason and gives its place to the next", async () => {
    const t = setup({ maxConcurrentRequests: 1, requestsPerSecond: 1000, burst: 1000 });
    const controller = new AbortController();
    t.request("a");
    t.request("b", controller.signal);
    t.request("c");
    await flush();
    const reason = new Error("caller gave up");
    controller.abort(reason);
    await flush();
    expect(t.outcomes.get("b")).toBe(reason);
    expect(t.limiter.waiting).toBe(1);
    t.releases.get("a")?.();
    await flush();
    expect(t.granted).toEqual(["a", "c"]);
  });

  it("grants at once while nobody waits; a signal that aborts after the grant takes nothing back", async () => {
    const t = setup({ maxConcurrentRequests: 2, requestsPerSecond: 1, burst: 2 });
    const controller = new AbortController();
    t.request("a", controller.signal);
    t.request("b");
    t.request("c");
    await flush();
    expect(t.granted).toEqual(["a", "b"]);
    controller.abort(new Error("too late"));
    await flush();
    expect(t.outcomes.size).toBe(0);
    expect([t.limiter.active, t.limiter.waiting]).toEqual([2, 1]);
    t.releases.get("a")?.();
    // the slot is free, the token not yet: c keeps its place, a newcomer waits behind it
    t.request("d");
    await t.clock.advance(1_000);
    await flush();
    expect(t.granted).toEqual(["a", "b", "c"]);
    expect([t.limiter.active, t.limiter.waiting]).toEqual([2, 1]);
  });

  it("rejects at once when the signal is already aborted, taking no slot", async () => {
    const t = setup({ maxConcurrentRequests: 1, requestsPerSecond: 1000, burst: 1000 });
    t.request("a", AbortSignal.abort(new Error("already")));
    await flush();
    expect(t.outcomes.get("a")).toEqual(new Error("already"));
    expect(t.limiter.active).toBe(0);
  });

  it("keeps no timer when nobody waits, including after an aborted rate wait", async () => {
    const t = setup({ maxConcurrentRequests: 10, requestsPerSecond: 1, burst: 1 });
    expect(t.clock.pendingTimers).toBe(0);
    t.request("a");
    const controller = new AbortController();
    t.request("b", controller.signal);
    await flush();
    expect(t.clock.pendingTimers).toBe(1);
    controller.abort(new Error("stop"));
    await flush();
    expect(t.clock.pendingTimers).toBe(0);
    t.releases.get("a")?.();
    expect(t.clock.pendingTimers).toBe(0);
  });

  it("run() releases the slot when the task throws", async () => {
    const t = setup({ maxConcurrentRequests: 1, requestsPerSecond: 1000, burst: 1000 });
    await expect(t.limiter.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(t.limiter.active).toBe(0);
    await expect(t.limiter.run(() => Promise.resolve(42))).resolves.toBe(42);
  });

  it("treats an infinite rate as no rate limit", async () => {
    const t = setup({ maxConcurrentRequests: 100, requestsPerSecond: Infinity, burst: 1 });
    for (let i = 0; i < 50; i++) t.request(`r${i}`);
    await flush();
    expect(t.granted).toHaveLength(50);
    expect(t.clock.pendingTimers).toBe(0);
  });

  it.each([
    {
      name: "ZeroConcurrency",
      reason: "a cap of zero would block every request forever",
      options: { maxConcurrentRequests: 0, requestsPerSecond: 1, burst: 1 },
    },
    {
      name: "NegativeRate",
      reason: "a negative rate has no meaning and would compute negative waits",
      options: { maxConcurrentRequests: 1, requestsPerSecond: -1, burst: 1 },
    },
    {
      name: "FractionalBurst",
      reason: "the bucket holds whole requests",
      options: { maxConcurrentRequests: 1, requestsPerSecond: 1, burst: 1.5 },
    },
  ])("refuses bad options: $name ($reason)", ({ options }) => {
    expect(() => new RequestLimiter(options)).toThrow(RangeError);
  });
});
