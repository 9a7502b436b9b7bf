import { describe, expect, it } from "vitest";
import type { EdgeTenantSpec, EdgeTenantStatus } from "../../src/api/types.ts";
import {
  edgeTenantStatus,
  planEdgeTenant,
  type EdgeObservation,
} from "../../src/reconcile/edge-tenant-plan.ts";
import type { Failure } from "../../src/reconcile/conditions.ts";
import { ReconcileError } from "../../src/reconcile/errors.ts";
import { at, edgePlanInput, edgeTenant, MINUTE, T0 } from "./fixtures.ts";

const iso = (d: Date) => d.toISOString().replace(".000Z", "Z");
const observed = (tenant: string | undefined): EdgeObservation => ({
  edgeId: "edge-1",
  name: "edge-one",
  version: 7,
  tenant,
});
const previous: EdgeTenantStatus = {
  lastCorrectionTime: "2024-04-01T00:00:00Z",
  conditions: [
    {
      type: "Ready",
      status: "True",
      reason: "InSync",
      message: "",
      lastTransitionTime: "2024-04-01T00:00:00Z",
    },
  ],
};

interface Case {
  name: string;
  reason: string;
  spec?: Partial<EdgeTenantSpec>;
  tenant: string | undefined;
  hold?: Failure;
  want: {
    synced?: string;
    actions: { from: string | undefined; to: string }[];
    withheld: number;
    ready: { status: string; reason: string; message?: RegExp };
    observedTenant: string | undefined;
    lastCorrectionTime: string;
  };
}

const cases: Case[] = [
  {
    name: "HeldWhileSourceInvalid",
    reason:
      "While the manifest that declares the object does not load, the correction is withheld: Ready=False Drifted (what was observed), Synced=False says why.",
    tenant: "red",
    hold: { reason: "SourceInvalid", message: "edges.yaml:4: invalid YAML" },
    want: {
      synced: "SourceInvalid",
      actions: [],
      withheld: 1,
      ready: { status: "False", reason: "Drifted", message: /held: edges.yaml:4: invalid YAML/ },
      observedTenant: "red",
      lastCorrectionTime: "2024-04-01T00:00:00Z",
    },
  },
  {
    name: "HoldWithoutDrift",
    reason:
      "A hold with nothing to write: Ready=True (the manager matches), Synced=False (the file does not load).",
    tenant: "blue",
    hold: { reason: "SourceInvalid", message: "edges.yaml:4: invalid YAML" },
    want: {
      synced: "SourceInvalid",
      actions: [],
      withheld: 0,
      ready: { status: "True", reason: "InSync" },
      observedTenant: "blue",
      lastCorrectionTime: "2024-04-01T00:00:00Z",
    },
  },
  {
    name: "InSyncNoAction",
    reason:
      "The tenant the spec wants is already there: no write, Ready=True, the last correction time kept.",
    tenant: "blue",
    want: {
      actions: [],
      withheld: 0,
      ready: { status: "True", reason: "InSync" },
      observedTenant: "blue",
      lastCorrectionTime: "2024-04-01T00:00:00Z",
    },
  },
  {
    name: "DriftedEnforceCorrects",
    reason:
      "Enforce plans one setTenant from the observed to the wanted tenant, and the status records the correction now.",
    tenant: "red",
    want: {
      actions: [{ from: "red", to: "blue" }],
      withheld: 0,
      ready: { status: "True", reason: "InSync", message: /corrected from "red" to "blue"/ },
      observedTenant: "blue",
      lastCorrectionTime: iso(T0),
    },
  },
  {
    name: "AbsentTenantIsSet",
    reason: "An edge without a <tenant> element gets one; `from` says it was absent.",
    tenant: undefined,
    want: {
      actions: [{ from: undefined, to: "blue" }],
      withheld: 0,
      ready: { status: "True", reason: "InSync" },
      observedTenant: "blue",
      lastCorrectionTime: iso(T0),
    },
  },
  {
    name: "EmptyWantedAndAbsentAgree",
    reason: "An absent <tenant> reads as empty, so an empty spec.tenant is in sync.",
    spec: { tenant: "" },
    tenant: undefined,
    want: {
      actions: [],
      withheld: 0,
      ready: { status: "True", reason: "InSync" },
      observedTenant: undefined,
      lastCorrectionTime: "2024-04-01T00:00:00Z",
    },
  },
  {
    name: "CaseMatters",
    reason: "Tenants are free text compared exactly: a different case is drift.",
    tenant: "Blue",
    want: {
      actions: [{ from: "Blue", to: "blue" }],
      withheld: 0,
      ready: { status: "True", reason: "InSync" },
      observedTenant: "blue",
      lastCorrectionTime: iso(T0),
    },
  },
  {
    name: "ObserveReportsDrift",
    reason:
      "Observe writes nothing, withholds the correction, and Ready=False Drifted says what would change.",
    spec: { managementPolicy: "Observe" },
    tenant: "red",
    want: {
      actions: [],
      withheld: 1,
      ready: {
        status: "False",
        reason: "Drifted",
        message: /has tenant "red", spec.tenant is "blue": would set it to "blue" \(managementPolicy Observe/,
      },
      observedTenant: "red",
      lastCorrectionTime: "2024-04-01T00:00:00Z",
    },
  },
];

describe("planEdgeTenant", () => {
  it.each(cases)("$name", (c) => {
    const plan = planEdgeTenant(
      edgePlanInput({
        object: edgeTenant(c.spec),
        observed: observed(c.tenant),
        previous,
        now: T0,
        hold: c.hold,
      }),
    );
    expect(
      plan.actions.map(({ from, to }) => ({ from, to })),
      c.reason,
    ).toEqual(c.want.actions);
    expect(
      plan.actions.every((a) => a.type === "setTenant" && a.edgeId === "edge-1"),
      c.reason,
    ).toBe(true);
    expect(plan.withheld, c.reason).toHaveLength(c.want.withheld);
    const ready = plan.status.conditions?.find((x) => x.type === "Ready");
    expect(ready, c.reason).toMatchObject({
      status: c.want.ready.status,
      reason: c.want.ready.reason,
      observedGeneration: 1,
    });
    if (c.want.ready.message) expect(ready?.message, c.reason).toMatch(c.want.ready.message);
    expect(plan.status.observedTenant, c.reason).toBe(c.want.observedTenant);
    expect(plan.status.lastCorrectionTime, c.reason).toBe(c.want.lastCorrectionTime);
    expect(plan.status.conditions?.find((x) => x.type === "Synced")?.reason, c.reason).toBe(
      c.want.synced ?? "ReconcileSuccess",
    );
  });

  it("fills edgeName, edgeVersion and observedGeneration from the observation and the object", () => {
    const plan = planEdgeTenant(
      edgePlanInput({
        object: edgeTenant({}, { generation: 4 }),
        observed: observed("blue"),
        previous: undefined,
        now: T0,
      }),
    );
    expect(plan.status).toMatchObject({
      edgeName: "edge-one",
      edgeVersion: 7,
      observedTenant: "blue",
      observedGeneration: 4,
    });
    expect(plan.status, "nothing was corrected, ever").not.toHaveProperty("lastCorrectionTime");
  });

  it("reports a planned but not carried out correction as drift (plan mode)", () => {
    const input = edgePlanInput({
      object: edgeTenant(),
      observed: observed("red"),
      previous,
      now: at(MINUTE),
    });
    const status = edgeTenantStatus(input, { corrected: false });
    const ready = status.conditions?.find((x) => x.type === "Ready");
    expect(ready, "plan mode shows the manager as it is").toMatchObject({
      status: "False",
      reason: "Drifted",
    });
    expect(ready?.message).toContain("a correction is planned");
    expect(ready?.lastTransitionTime, "Ready changed status: new time").toBe(iso(at(MINUTE)));
    expect(status.observedTenant).toBe("red");
  });

  it("refuses an unknown policy as InvalidSpec", () => {
    const object = edgeTenant({ managementPolicy: "Sometimes" as "Observe" });
    expect(() => edgePlanInput({ object, observed: observed("blue"), previous, now: T0 })).toThrow(
      ReconcileError,
    );
  });
});
