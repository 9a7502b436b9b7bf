import { describe, expect, it } from "vitest";
import { FakeClock, realClock, type Clock } from "../../src/util/clock.ts";
import { TokenBucket } from "../../src/util/token-bucket.ts";

describe("TokenBucket", () => {
  it("allows the burst, then one token per refill interval", async () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ burst: 3, refillIntervalMs: 1000, clock });
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    await clock.advance(999);
    expect(bucket.tryTake()).toBe(false);
    await clock.advance(1);
    expect(bucket.tryTake()).toBe(true);
    expect(bucket.tryTake()).toBe(false);
  });

  it("refills no further than the burst", async () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ burst: 2, refillIntervalMs: 10, clock });
    bucket.tryTake();
    await clock.advance(10_000);
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, false]);
  });

  it("says how long until the next token, and 0 while one is there", async () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ burst: 1, refillIntervalMs: 100, clock });
    expect(bucket.msUntilTokens(1)).toBe(0);
    expect(bucket.tryTake()).toBe(true);
    expect(bucket.msUntilTokens(1)).toBe(100);
    await clock.advance(30);
    expect(bucket.msUntilTokens(1)).toBe(70);
    await clock.advance(70);
    expect(bucket.msUntilTokens(1)).toBe(0);
    expect(bucket.tryTake()).toBe(true);
  });

  it("says how long until it holds several tokens, counting no more than its burst", async () => {
    const clock = new FakeClock(0);
    const bucket = new TokenBucket({ burst: 4, refillIntervalMs: 10, clock });
    for (let i = 0; i < 4; i++) bucket.tryTake();
    expect(bucket.msUntilTokens(3)).toBe(30);
    await clock.advance(15);
    expect(bucket.msUntilTokens(3), "a token and a half there").toBe(15);
    expect(bucket.msUntilTokens(100), "a full bucket is the most there is to wait for").toBe(25);
    await clock.advance(25);
    expect(bucket.msUntilTokens(100)).toBe(0);
  });

  it("has no rate limit with a refill interval of 0", () => {
    const bucket = new TokenBucket({ burst: 1, refillIntervalMs: 0, clock: new FakeClock(0) });
    expect(Array.from({ length: 5 }, () => bucket.tryTake())).toEqual([true, true, true, true, true]);
    expect(bucket.msUntilTokens(1)).toBe(0);
  });

  it("takes no tokens away when the clock steps back", () => {
    let nowMs = 10_000;
    const clock: Clock = { ...realClock, now: () => nowMs };
    const bucket = new TokenBucket({ burst: 2, refillIntervalMs: 1000, clock });
    expect(bucket.tryTake()).toBe(true);
    nowMs = 0; // the wall clock was set back by 10 s
    expect(bucket.tryTake(), "the token left is still there").toBe(true);
    expect(bucket.tryTake()).toBe(false);
    nowMs = 1000;
    expect(bucket.tryTake(), "refilled from the new time on").toBe(true);
  });
});
