/**
 * The report's "did the status change" question (toReport): a status equal as JSON to the one
 * the object has is nothing to write, whatever the key order and however an absent field is
 * spelled; any difference of value, nesting or list order is a change.
 */
import { describe, expect, it } from "vitest";
import { toReport, type ObjectStatus } from "../../src/reconcile/report.ts";
import type { EdgeTenant } from "../../src/api/types.ts";

const REF = { kind: "EdgeTenant", namespace: "default", name: "e" } as const;

function withStatus(status: unknown): EdgeTenant {
  return {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "EdgeTenant",
    metadata: { name: "e", namespace: "default" },
    spec: { managerRef: { name: "nsx" }, edgeId: "edge-1", tenant: "t" },
    status,
  } as EdgeTenant;
}

const condition = { type: "Ready", status: "True", reason: "InSync", message: "in sync" };

describe("toReport: the status to write", () => {
  it.each([
    {
      reason: "the same fields in another order",
      current: { observedTenant: "t", observedGeneration: 2, conditions: [condition] },
      next: {
        conditions: [{ message: "in sync", reason: "InSync", status: "True", type: "Ready" }],
        observedGeneration: 2,
        observedTenant: "t",
      },
      written: false,
    },
    {
      reason: "a field set to undefined is the field left out",
      current: { observedTenant: "t" },
      next: { observedTenant: "t", observedVersion: undefined },
      written: false,
    },
    {
      reason: "an undefined field in the current status is absent too",
      current: { observedTenant: "t", observedVersion: undefined },
      next: { observedTenant: "t" },
      written: false,
    },
    {
      reason: "a value changed",
      current: { observedTenant: "t" },
      next: { observedTenant: "u" },
      written: true,
    },
    {
      reason: "a field added",
      current: { observedTenant: "t" },
      next: { observedTenant: "t", observedVersion: 3 },
      written: true,
    },
    {
      reason: "a field removed",
      current: { observedTenant: "t", observedVersion: 3 },
      next: { observedTenant: "t" },
      written: true,
    },
    {
      reason: "a nested value changed",
      current: { conditions: [condition] },
      next: { conditions: [{ ...condition, message: "other" }] },
      written: true,
    },
    {
      reason: "a list in another order",
      current: { edgeShape: { sections: ["a", "b"] } },
      next: { edgeShape: { sections: ["b", "a"] } },
      written: true,
    },
    {
      reason: "a list one longer",
      current: { edgeShape: { sections: ["a"] } },
      next: { edgeShape: { sections: ["a", "a"] } },
      written: true,
    },
    {
      reason: "a number against its text",
      current: { observedVersion: 3 },
      next: { observedVersion: "3" },
      written: true,
    },
    {
      reason: "an object against a list",
      current: { edgeShape: {} },
      next: { edgeShape: [] },
      written: true,
    },
    { reason: "no status before", current: undefined, next: { observedTenant: "t" }, written: true },
    { reason: "an empty status where there was none", current: undefined, next: {}, written: false },
  ])("$reason: written $written", ({ current, next, written }) => {
    const report = toReport(REF, withStatus(current), {
      status: next as ObjectStatus,
      outcome: { type: "done" },
    });
    expect(report.status).toEqual(written ? next : undefined);
  });
});
