import { describe, expect, it } from "vitest";
import { ExponentialBackoff } from "../../src/controller/rate-limiter.ts";

describe("ExponentialBackoff", () => {
  const cases = [
    {
      name: "Defaults",
      reason: "Crossplane's bounds: 1 s doubling, capped at 60 s.",
      options: {},
      want: [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000],
    },
    {
      name: "CustomBounds",
      reason: "Both bounds are options.",
      options: { baseDelayMs: 5, maxDelayMs: 30 },
      want: [5, 10, 20, 30, 30],
    },
    {
      name: "ZeroBase",
      reason: "A zero base means retry at once, forever.",
      options: { baseDelayMs: 0 },
      want: [0, 0, 0],
    },
  ];
  it.each(cases)("$name", ({ reason, options, want }) => {
    const limiter = new ExponentialBackoff(options);
    const got = want.map(() => limiter.when("ns/a"));
    expect(got, reason).toEqual(want);
    expect(limiter.numRequeues("ns/a"), reason).toBe(want.length);
  });

  it("does not overflow after very many failures", () => {
    const limiter = new ExponentialBackoff();
    for (let i = 0; i < 2000; i++) limiter.when("ns/a");
    expect(limiter.when("ns/a")).toBe(60_000);
  });

  it("keeps keys apart and resets on forget", () => {
    const limiter = new ExponentialBackoff();
    limiter.when("ns/a");
    limiter.when("ns/a");
    expect(limiter.when("ns/b")).toBe(1000);
    limiter.forget("ns/a");
    expect(limiter.numRequeues("ns/a")).toBe(0);
    expect(limiter.when("ns/a")).toBe(1000);
    expect(limiter.numRequeues("ns/b")).toBe(1);
  });
});
