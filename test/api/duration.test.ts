import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DURATION_PATTERN, DurationError, formatDuration, parseDuration } from "../../src/api/duration.ts";

describe("parseDuration", () => {
  it.each([
    { name: "Seconds", reason: "the most common form", text: "90s", ms: 90_000 },
    { name: "Minutes", reason: "the default minStrayAge", text: "5m", ms: 300_000 },
    { name: "Hours", reason: "h is hours", text: "2h", ms: 7_200_000 },
    { name: "Milliseconds", reason: "ms is not m followed by s", text: "500ms", ms: 500 },
    { name: "Combination", reason: "terms add up, as in Go", text: "1h30m", ms: 5_400_000 },
    { name: "AllUnits", reason: "every unit in one text", text: "1h1m1s1ms", ms: 3_661_001 },
    { name: "RepeatedUnit", reason: "Go accepts a unit twice and adds", text: "1m1m", ms: 120_000 },
    { name: "Fraction", reason: "decimal fractions are Go syntax", text: "1.5h", ms: 5_400_000 },
    { name: "LeadingDot", reason: "Go accepts .5s", text: ".5s", ms: 500 },
    { name: "TrailingDot", reason: "Go accepts 1.s", text: "1.s", ms: 1000 },
    {
      name: "SubMillisecond",
      reason: "fractions of a millisecond are kept, to the nanosecond",
      text: "0.25ms",
      ms: 0.25,
    },
    {
      name: "ExactTenths",
      reason: "fractions are computed in integer nanoseconds, so 0.3s is exactly 300 ms",
      text: "0.3s",
      ms: 300,
    },
    { name: "BareZero", reason: "Go accepts a bare 0", text: "0", ms: 0 },
    { name: "ZeroWithUnit", reason: "0s is zero", text: "0s", ms: 0 },
  ])("$name", ({ reason, text, ms }) => {
    expect(parseDuration(text), reason).toBe(ms);
    expect(new RegExp(DURATION_PATTERN).test(text), `${reason} (the CRD pattern accepts it too)`).toBe(true);
  });

  it.each([
    { name: "Empty", reason: "nothing is not a duration", text: "", want: "it is empty" },
    { name: "Negative", reason: "an interval cannot be negative", text: "-5m", want: "cannot be negative" },
    {
      name: "PlusSign",
      reason: "signs are not accepted at all",
      text: "+5m",
      want: "expected a number and a unit",
    },
    {
      name: "NoUnit",
      reason: "only a bare 0 may omit the unit",
      text: "10",
      want: "expected a number and a unit",
    },
    { name: "Nanoseconds", reason: "ns is Go syntax but no use here", text: "100ns", want: 'at "100ns"' },
    { name: "Microseconds", reason: "us is Go syntax but no use here", text: "5us", want: 'at "5us"' },
    { name: "Days", reason: "Go has no d unit", text: "1d", want: 'at "1d"' },
    { name: "Space", reason: "spaces are not trimmed", text: "1h 30m", want: 'at " 30m"' },
    { name: "DotAlone", reason: "a dot is no number", text: ".s", want: "expected a number" },
    { name: "UnitFirst", reason: "the number comes first", text: "m5", want: "expected a number" },
    {
      name: "Overflow",
      reason: "Go durations stop at 2^63-1 ns",
      text: "2562048h",
      want: "longer than the longest Go duration",
    },
  ])("rejects $name", ({ reason, text, want }) => {
    expect(() => parseDuration(text), reason).toThrow(DurationError);
    expect(() => parseDuration(text), reason).toThrow(want);
    if (text !== "-5m" && text !== "2562048h") {
      expect(new RegExp(DURATION_PATTERN).test(text), `${reason} (the CRD pattern rejects it too)`).toBe(
        false,
      );
    }
  });

  it("accepts the longest Go duration", () => {
    expect(parseDuration("2562047h")).toBe(2_562_047 * 3_600_000);
  });
});

describe("formatDuration", () => {
  it.each([
    { name: "Zero", reason: "Go prints zero as 0s", ms: 0, text: "0s" },
    { name: "Milliseconds", reason: "below a second", ms: 250, text: "250ms" },
    { name: "Seconds", reason: "whole seconds", ms: 10_000, text: "10s" },
    { name: "FractionalSeconds", reason: "fractions of a second are kept", ms: 1500, text: "1.5s" },
    { name: "MinutesSeconds", reason: "zero parts are left out", ms: 90_000, text: "1m30s" },
    { name: "HoursMinutes", reason: "no trailing 0s", ms: 5_400_000, text: "1h30m" },
  ])("$name", ({ reason, ms, text }) => {
    expect(formatDuration(ms), reason).toBe(text);
  });

  it("rejects negative and non-finite values", () => {
    expect(() => formatDuration(-1)).toThrow(DurationError);
    expect(() => formatDuration(Number.NaN)).toThrow(DurationError);
  });

  it("parses back what it formats, for whole milliseconds", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 24 * 3_600_000 }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
      { numRuns: 1000 },
    );
  });
});
