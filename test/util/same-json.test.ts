import { describe, expect, it } from "vitest";
import { sameJson } from "../../src/util/same-json.ts";

describe("sameJson", () => {
  const cases: { reason: string; a: unknown; b: unknown; same: boolean }[] = [
    { reason: "key order is not a change", a: { x: 1, y: [1, 2] }, b: { y: [1, 2], x: 1 }, same: true },
    { reason: "a key set to undefined is as absent", a: { x: 1, y: undefined }, b: { x: 1 }, same: true },
    { reason: "an array's undefined item is JSON's null", a: [undefined], b: [null], same: true },
    { reason: "a nested value differs", a: { x: { y: 1 } }, b: { x: { y: 2 } }, same: false },
    { reason: "an extra key", a: { x: 1 }, b: { x: 1, y: 0 }, same: false },
    { reason: "array order counts", a: [1, 2], b: [2, 1], same: false },
    { reason: "an array is not an object with index keys", a: [1], b: { 0: 1 }, same: false },
    { reason: "null is not an empty object", a: null, b: {}, same: false },
  ];
  it.each(cases)("$reason", ({ a, b, same }) => {
    expect(sameJson(a, b)).toBe(same);
    expect(sameJson(b, a)).toBe(same);
  });
});
