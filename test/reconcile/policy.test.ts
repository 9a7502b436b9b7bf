import { describe, expect, it } from "vitest";
import { allows, isPaused, resolvePolicy, SUPPORTED_COMBINATIONS } from "../../src/reconcile/policy.ts";

describe("management policies", () => {
  it.each([
    {
      name: "EnforceObserves",
      policy: "Enforce" as const,
      action: "observe" as const,
      want: true,
      reason: "every policy reads",
    },
    {
      name: "EnforceUpdates",
      policy: "Enforce" as const,
      action: "updateEdge" as const,
      want: true,
      reason: "Enforce corrects tenants",
    },
    {
      name: "EnforceReleases",
      policy: "Enforce" as const,
      action: "releaseAddress" as const,
      want: true,
      reason: "Enforce releases strays",
    },
    {
      name: "ObserveObserves",
      policy: "Observe" as const,
      action: "observe" as const,
      want: true,
      reason: "Observe reads",
    },
    {
      name: "ObserveNoUpdate",
      policy: "Observe" as const,
      action: "updateEdge" as const,
      want: false,
      reason: "Observe never writes an edge",
    },
    {
      name: "ObserveNoRelease",
      policy: "Observe" as const,
      action: "releaseAddress" as const,
      want: false,
      reason: "Observe never releases",
    },
  ])("$name", ({ policy, action, want, reason }) => {
    expect(allows(policy, action), reason).toBe(want);
  });

  it("lists each supported combination once, with why, and every one includes observe", () => {
    expect(new Set(SUPPORTED_COMBINATIONS.map((c) => c.policy)).size).toBe(SUPPORTED_COMBINATIONS.length);
    for (const c of SUPPORTED_COMBINATIONS) {
      expect(c.why.length, c.policy).toBeGreaterThan(20);
      expect(c.actions, `${c.policy}: a write is planned from a read`).toContain("observe");
    }
  });

  it("defaults to Enforce and refuses unknown names as InvalidSpec", () => {
    expect(resolvePolicy(undefined)).toBe("Enforce");
    expect(resolvePolicy("Observe")).toBe("Observe");
    expect(() => resolvePolicy("observe")).toThrow(
      expect.objectContaining({ reason: "InvalidSpec", terminal: true }),
    );
  });
});

describe("isPaused", () => {
  it.each([
    {
      name: "TrueString",
      annotations: { "nsxv.io/paused": "true" },
      want: true,
      reason: 'the annotation set to "true" pauses',
    },
    {
      name: "CapitalTrue",
      annotations: { "nsxv.io/paused": "True" },
      want: false,
      reason: "only the exact value pauses, as Crossplane reads it",
    },
    {
      name: "FalseString",
      annotations: { "nsxv.io/paused": "false" },
      want: false,
      reason: '"false" does not pause',
    },
    {
      name: "OtherGroup",
      annotations: { "crossplane.io/paused": "true" },
      want: false,
      reason: "another project's annotation is not ours",
    },
    { name: "NoAnnotations", annotations: undefined, want: false, reason: "no annotations, no pause" },
  ] as { name: string; annotations: Record<string, string> | undefined; want: boolean; reason: string }[])(
    "$name",
    ({ annotations, want, reason }) => {
      expect(isPaused({ name: "x", ...(annotations ? { annotations } : {}) }), reason).toBe(want);
    },
  );
});
