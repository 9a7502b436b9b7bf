/**
 * What deleting an EdgeTenant with the restore finalizer decides before anything is read: the
 * rules that let it go without a write, in their order, and the restore on the edge and manager
 * the original was read on.
 */
import { describe, expect, it } from "vitest";
import type { ObjectRef } from "../../../src/api/refs.ts";
import type { EdgeTenant, EdgeTenantSpec } from "../../../src/api/types.ts";
import { restoreDecision } from "../../../src/reconcile/edge-tenant/restore-plan.ts";
import { edgeTenant, withOriginal } from "./fixtures.ts";

const restoring = (spec: Partial<EdgeTenantSpec> = {}, annotations?: Record<string, string>): EdgeTenant =>
  withOriginal(edgeTenant({ deletionPolicy: "Restore", ...spec }, annotations ? { annotations } : {}), "red");
const owner: ObjectRef = { kind: "EdgeTenant", namespace: "ns", name: "other" };

describe("restoreDecision: when the object goes without a write", () => {
  const cases: {
    reason: string;
    object: EdgeTenant;
    owner?: ObjectRef;
    managerPaused?: boolean;
    event: { type: string; reason: string; message: RegExp };
  }[] = [
    {
      reason: "a spec that does not resolve abandons the original",
      object: restoring({ managementPolicy: "Sometimes" as "Observe" }),
      event: { type: "Warning", reason: "RestoreAbandoned", message: /its spec cannot be read/ },
    },
    {
      reason: "the skip-restore annotation leaves the original unwritten, and says which",
      object: restoring({}, { "nsxv.io/skip-restore": "true" }),
      event: {
        type: "Warning",
        reason: "RestoreAbandoned",
        message: /skip-restore is "true": the original tenant "red" of edge-1 is not written back;/,
      },
    },
    {
      reason: "the skip-restore annotation comes first: even an Orphan object is told so",
      object: restoring({ deletionPolicy: "Orphan" }, { "nsxv.io/skip-restore": "true" }),
      event: { type: "Warning", reason: "RestoreAbandoned", message: /skip-restore is "true"/ },
    },
    {
      reason: "the skip-restore annotation with no original has nothing to name",
      object: edgeTenant({ deletionPolicy: "Restore" }, { annotations: { "nsxv.io/skip-restore": "true" } }),
      event: {
        type: "Warning",
        reason: "RestoreAbandoned",
        message: /skip-restore is "true": the edge keeps the tenant it has$/,
      },
    },
    {
      reason: "deletionPolicy Orphan (now) writes nothing",
      object: restoring({ deletionPolicy: "Orphan" }),
      event: { type: "Normal", reason: "RestoreSkipped", message: /deletionPolicy is Orphan$/ },
    },
    {
      reason: "managementPolicy Observe writes nothing, on delete either",
      object: restoring({ managementPolicy: "Observe" }),
      event: { type: "Normal", reason: "RestoreSkipped", message: /managementPolicy Observe writes nothing/ },
    },
    {
      reason: "a paused object makes no calls",
      object: restoring({}, { "nsxv.io/paused": "true" }),
      event: {
        type: "Warning",
        reason: "RestoreAbandoned",
        message: /nsxv.io\/paused is "true": no manager calls, on delete either; edge-1 keeps/,
      },
    },
    {
      reason: "a paused NSXManager makes no calls, and is named",
      object: restoring(),
      managerPaused: true,
      event: { type: "Warning", reason: "RestoreAbandoned", message: /is "true" on its NSXManager:/ },
    },
    {
      reason: "pause comes before an unknown original: no calls either way",
      object: edgeTenant({ deletionPolicy: "Restore" }, { annotations: { "nsxv.io/paused": "true" } }),
      event: { type: "Warning", reason: "RestoreAbandoned", message: /nsxv.io\/paused/ },
    },
    {
      reason: "never corrected: nothing to restore",
      object: edgeTenant({ deletionPolicy: "Restore" }),
      event: {
        type: "Normal",
        reason: "RestoreSkipped",
        message: /never corrected edge-1: nothing to restore/,
      },
    },
    {
      reason: "an original that was lost is said to be, with why",
      object: {
        ...edgeTenant({ deletionPolicy: "Restore" }),
        status: {
          conditions: [
            {
              type: "OriginalTenantLost",
              status: "True",
              reason: "StatusLost",
              message: "status file set aside",
              lastTransitionTime: "2024-01-01T00:00:00Z",
            },
          ],
        },
      },
      event: {
        type: "Warning",
        reason: "RestoreAbandoned",
        message: /original tenant of edge-1 is not known \(status file set aside\)/,
      },
    },
    {
      reason: "another live object owns the edge now: its tenant is that object's",
      object: restoring(),
      owner,
      event: { type: "Normal", reason: "RestoreSkipped", message: /edge-1 is owned by .*other now/ },
    },
  ];
  it.each(cases)("$reason", (c) => {
    const decision = restoreDecision(c.object, c.owner, c.managerPaused);
    expect(decision.type).toBe("skip");
    if (decision.type !== "skip") return;
    expect(decision.event).toMatchObject({ type: c.event.type, reason: c.event.reason });
    expect(decision.event.message).toMatch(/^EdgeTenant ns\/edge goes without restoring a tenant: /);
    expect(decision.event.message).toMatch(c.event.message);
  });
});

describe("restoreDecision: the restore", () => {
  it("goes to the edge and manager the original was read on, not the spec's now", () => {
    const object = restoring();
    const moved: EdgeTenant = {
      ...object,
      spec: { ...object.spec, edgeId: "edge-9", managerRef: { name: "other" } },
    };
    expect(restoreDecision(moved, undefined)).toMatchObject({
      type: "restore",
      original: "red",
      managerURL: "https://nsx.example",
      config: {
        edgeId: "edge-1",
        managerName: "nsx",
        manager: { kind: "NSXManager", namespace: "ns", name: "nsx" },
      },
    });
  });

  it("for a status older than the record of its edge, goes to the spec's edge and manager", () => {
    const object: EdgeTenant = {
      ...edgeTenant({ deletionPolicy: "Restore" }),
      status: { originalTenant: "" },
    };
    expect(restoreDecision(object, undefined)).toMatchObject({
      type: "restore",
      original: "",
      managerURL: undefined,
      config: { edgeId: "edge-1", managerName: "nsx" },
    });
  });
});
