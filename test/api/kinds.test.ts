import { describe, expect, it } from "vitest";
import { DEPENDENT_KINDS, KINDS, perKind } from "../../src/api/types.ts";

describe("the kinds, listed once", () => {
  it("DEPENDENT_KINDS are the kinds that name a manager: every kind but NSXManager, in KINDS' order", () => {
    expect(DEPENDENT_KINDS).toEqual(KINDS.filter((kind) => kind !== "NSXManager"));
  });

  it.each([
    {
      name: "EveryKind",
      reason: "a record made by perKind has an entry for each kind of KINDS, none other",
      make: () => perKind((kind) => kind.length),
      want: { NSXManager: 10, EdgeTenant: 10, IPPoolAllocations: 17 },
    },
    {
      name: "FreshValues",
      reason: "each kind gets its own value (a Map per kind), not one shared by all",
      make: () => perKind(() => new Map<string, number>()),
      check: (made: Record<string, unknown>) => expect(made.NSXManager).not.toBe(made.EdgeTenant),
    },
  ])("perKind $name: $reason", ({ make, want, check }) => {
    const made = make() as Record<string, unknown>;
    expect(Object.keys(made)).toEqual([...KINDS]);
    if (want !== undefined) expect(made).toEqual(want);
    check?.(made);
  });
});
