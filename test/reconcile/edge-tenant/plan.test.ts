import { describe, expect, it } from "vitest";
import type { EdgeTenantSpec, EdgeTenantStatus } from "../../../src/api/types.ts";
import { planEdgeTenant, type EdgeObservation } from "../../../src/reconcile/edge-tenant/plan.ts";
import type { Failure } from "../../../src/reconcile/conditions.ts";
import { ReconcileError } from "../../../src/reconcile/errors.ts";
import { edgePlanInput, edgeTenant } from "./fixtures.ts";
import { allDone, at, MINUTE, onlyDone, T0 } from "../fixtures.ts";

const iso = (d: Date) => d.toISOString().replace(".000Z", "Z");
const observed = (tenant: string | undefined): EdgeObservation => ({
  edgeId: "edge-1",
  name: "edge-one",
  version: 7,
  tenant,
  via: "read",
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
  writesBlockedBy?: Failure;
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
    writesBlockedBy: { reason: "SourceInvalid", message: "edges.yaml:4: invalid YAML" },
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
      "Writes blocked with nothing to write: Ready=True (the manager matches), Synced=False (the file does not load).",
    tenant: "blue",
    writesBlockedBy: { reason: "SourceInvalid", message: "edges.yaml:4: invalid YAML" },
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
        writesBlockedBy: c.writesBlockedBy,
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
    const status = allDone(plan).status as EdgeTenantStatus;
    const ready = status.conditions?.find((x) => x.type === "Ready");
    expect(ready, c.reason).toMatchObject({
      status: c.want.ready.status,
      reason: c.want.ready.reason,
      observedGeneration: 1,
    });
    if (c.want.ready.message) expect(ready?.message, c.reason).toMatch(c.want.ready.message);
    expect(status.observedTenant, c.reason).toBe(c.want.observedTenant);
    expect(status.lastCorrectionTime, c.reason).toBe(c.want.lastCorrectionTime);
    expect(status.conditions?.find((x) => x.type === "Synced")?.reason, c.reason).toBe(
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
    const status = allDone(plan).status;
    expect(status).toMatchObject({
      edgeName: "edge-one",
      edgeVersion: 7,
      observedTenant: "blue",
      observedGeneration: 4,
    });
    expect(status, "nothing was corrected, ever").not.toHaveProperty("lastCorrectionTime");
  });

  it("remembers the shape of a full read, keeps it while observing from the list, and reads a status without one", () => {
    const shape = {
      edgeId: "edge-1",
      version: 7,
      sections: ["features", "vnics"],
      lists: [{ path: "vnics/vnic", count: 10 }],
    };
    // a status written by an older release has no edgeShape: it is read as it is
    const older: EdgeTenantStatus = { observedGeneration: 1, observedTenant: "blue", edgeVersion: 6 };
    const read = allDone(
      planEdgeTenant(
        edgePlanInput({
          object: edgeTenant(),
          observed: { ...observed("blue"), shape },
          previous: older,
          now: T0,
        }),
      ),
    ).status as EdgeTenantStatus;
    expect(read.edgeShape, "the read's shape").toEqual(shape);
    const listed = allDone(
      planEdgeTenant(
        edgePlanInput({
          object: edgeTenant(),
          observed: { edgeId: "edge-1", tenant: "blue", version: 8, via: "list" },
          previous: read,
          now: at(MINUTE),
        }),
      ),
    ).status as EdgeTenantStatus;
    expect(listed.edgeShape, "the list says nothing of the content: the last read's shape stays").toEqual(
      shape,
    );
  });

  it("reports a planned but not carried out correction as drift (plan mode)", () => {
    const input = edgePlanInput({
      object: edgeTenant(),
      observed: observed("red"),
      previous,
      now: at(MINUTE),
    });
    const status = onlyDone(planEdgeTenant(input), []).status as EdgeTenantStatus;
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

describe("planEdgeTenant: the original tenant, recorded before the first write and bound to its edge", () => {
  const of = { edgeId: "edge-1", manager: "nsx", managerURL: "https://nsx.example" };
  interface OriginalCase {
    name: string;
    reason: string;
    spec?: Partial<EdgeTenantSpec>;
    tenant: string;
    previous?: EdgeTenantStatus;
    finalizerPresent?: boolean;
    managerUrl?: string;
    statusLost?: string;
    want: {
      /** a setTenant planned for now */
      corrects: boolean;
      /** a part of the withheld correction's why */
      withheld?: string;
      requeueAfterMs?: number;
      originalTenant?: string;
      originalTenantOf?: typeof of;
      synced?: string;
      stalled?: boolean;
      lost?: boolean;
      events?: string[];
    };
  }
  const cases: OriginalCase[] = [
    {
      name: "FirstCorrectionRecordsFirst",
      reason:
        "With no original recorded, the pass records the tenant the edge carries and writes nothing; the correction comes at once in the next pass.",
      tenant: "legacy",
      want: {
        corrects: false,
        withheld: "recorded first",
        requeueAfterMs: 0,
        originalTenant: "legacy",
        originalTenantOf: of,
      },
    },
    {
      name: "RecordedCorrectsAtOnce",
      reason:
        "Once the original is recorded (and Orphan needs no finalizer), a drift is corrected in the pass.",
      tenant: "red",
      previous: { originalTenant: "legacy", originalTenantOf: of },
      want: { corrects: true, originalTenant: "legacy", originalTenantOf: of },
    },
    {
      name: "RestoreWaitsForItsFinalizer",
      reason:
        "Restore needs its finalizer on the object before the first write, or a delete could let it go unrestored: the pass records and comes back.",
      spec: { deletionPolicy: "Restore" },
      tenant: "red",
      previous: { originalTenant: "legacy", originalTenantOf: of },
      finalizerPresent: false,
      want: { corrects: false, withheld: "recorded first", requeueAfterMs: 0, originalTenant: "legacy" },
    },
    {
      name: "RestoreWithFinalizerCorrects",
      reason: "Original and finalizer in place: the correction is made.",
      spec: { deletionPolicy: "Restore" },
      tenant: "red",
      previous: { originalTenant: "legacy", originalTenantOf: of },
      finalizerPresent: true,
      want: { corrects: true, originalTenant: "legacy" },
    },
    {
      name: "RestoreEdgeMovedStalls",
      reason:
        "A Restore object whose spec moved to another edge under a remembered original writes nothing: Stalled, EdgeMoved, and the original kept for the edge it belongs to.",
      spec: { deletionPolicy: "Restore", edgeId: "edge-2" },
      tenant: "red",
      previous: { originalTenant: "legacy", originalTenantOf: of },
      finalizerPresent: true,
      want: {
        corrects: false,
        withheld: "spec.edgeId moved from edge-1 to edge-2",
        synced: "EdgeMoved",
        stalled: true,
        originalTenant: "legacy",
        originalTenantOf: of,
      },
    },
    {
      name: "RestoreManagerUrlMovedStalls",
      reason:
        "The NSXManager now points at another manager: its edge-1 is another edge, and the original of the first is not lent to it.",
      spec: { deletionPolicy: "Restore" },
      tenant: "red",
      previous: { originalTenant: "legacy", originalTenantOf: of },
      finalizerPresent: true,
      managerUrl: "https://nsx-b.example",
      want: {
        corrects: false,
        withheld: "moved from https://nsx.example to https://nsx-b.example",
        synced: "EdgeMoved",
        stalled: true,
        originalTenant: "legacy",
        originalTenantOf: of,
      },
    },
    {
      name: "OrphanEdgeMovedForgets",
      reason:
        "An Orphan object that moves restores nothing: the old edge's original is dropped, and the new edge's is recorded before its first correction.",
      spec: { edgeId: "edge-2" },
      tenant: "red",
      previous: { originalTenant: "legacy", originalTenantOf: of },
      want: {
        corrects: false,
        withheld: "recorded first",
        requeueAfterMs: 0,
        originalTenant: "red",
        originalTenantOf: { ...of, edgeId: "edge-2" },
      },
    },
    {
      name: "LegacyRecordBelongsToSpecEdge",
      reason:
        "An original recorded before originals were bound belongs to the edge and manager the spec names: it is bound to them now.",
      tenant: "red",
      previous: { originalTenant: "legacy" },
      want: { corrects: true, originalTenant: "legacy", originalTenantOf: of },
    },
    {
      name: "LostOriginalSaysSo",
      reason:
        "The status that kept the original was lost: OriginalTenantLost with a Warning, no original guessed, and the correction is made without one.",
      tenant: "red",
      statusLost: "the status file /var/lib/nsxv/status.json could not be read",
      want: { corrects: true, lost: true, events: ["StatusLost"] },
    },
    {
      name: "LostOriginalWarnedOnce",
      reason: "The Warning is for the transition; the condition stays until the object is recreated.",
      tenant: "blue",
      previous: {
        conditions: [
          {
            type: "OriginalTenantLost",
            status: "True",
            reason: "StatusLost",
            message: "lost earlier",
            lastTransitionTime: "2024-04-01T00:00:00Z",
          },
        ],
      },
      want: { corrects: false, lost: true, events: [] },
    },
  ];

  it.each(cases)("$name", (c) => {
    const object = edgeTenant(c.spec);
    const plan = planEdgeTenant(
      edgePlanInput({
        object,
        observed: { ...observed(c.tenant), edgeId: object.spec.edgeId },
        previous: c.previous,
        now: T0,
        recordsOriginal: true,
        finalizerPresent: c.finalizerPresent ?? false,
        ...(c.managerUrl !== undefined ? { manager: { name: "nsx", url: c.managerUrl } } : {}),
        statusLost: c.statusLost,
      }),
    );
    const { want } = c;
    expect(plan.actions.length > 0, c.reason).toBe(want.corrects);
    if (want.withheld !== undefined) expect(plan.withheld[0]?.why, c.reason).toContain(want.withheld);
    expect(plan.requeueAfterMs, c.reason).toBe(want.requeueAfterMs);
    const settled = allDone(plan);
    const status = settled.status as EdgeTenantStatus;
    expect(status.originalTenant, c.reason).toBe(want.originalTenant);
    if (want.originalTenantOf !== undefined)
      expect(status.originalTenantOf, c.reason).toEqual(want.originalTenantOf);
    const condition = (type: string) => status.conditions?.find((x) => x.type === type);
    expect(condition("Synced")?.reason, c.reason).toBe(want.synced ?? "ReconcileSuccess");
    expect(condition("Stalled")?.status === "True", c.reason).toBe(want.stalled ?? false);
    expect(condition("OriginalTenantLost")?.status === "True", c.reason).toBe(want.lost ?? false);
    if (want.events !== undefined)
      expect(
        settled.events.map((e) => e.reason),
        c.reason,
      ).toEqual(want.events);
  });

  it("never records an original from the edge list: its drift asks for a read, and a read that fails leaves nothing recorded", () => {
    const object = edgeTenant({ deletionPolicy: "Restore" });
    const plan = planEdgeTenant(
      edgePlanInput({
        object,
        // the list's summary keeps a tenant cut as status shows it: never what a restore writes back
        observed: { ...observed("legacy"), via: "list", observedAtMs: T0.getTime() },
        previous: undefined,
        now: T0,
        recordsOriginal: true,
        finalizerPresent: false,
      }),
    );
    expect(plan.observeFully, "a read decides").toBe(true);
    const failure: Failure = { reason: "Unreachable", message: "GET /api/4.0/edges/edge-1: HTTP 503" };
    const settled = plan.settle({ done: [], dropped: [], refused: [] }, failure);
    const status = settled.status as EdgeTenantStatus;
    expect(status.originalTenant, "nothing recorded").toBeUndefined();
    expect(status.originalTenantOf).toBeUndefined();
    expect(status.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "Drifted",
    });
  });

  it("drops edgeVersion after a correction: the manager raised it, and only the next read tells by how much", () => {
    const plan = planEdgeTenant(
      edgePlanInput({ object: edgeTenant(), observed: observed("red"), previous, now: T0 }),
    );
    expect(onlyDone(plan, []).status, "not corrected: the version read").toMatchObject({ edgeVersion: 7 });
    expect(allDone(plan).status, "corrected: unknown until read").not.toHaveProperty("edgeVersion");
  });
});

describe("planEdgeTenant: a Restore correction waits for its NSXManager to hold its Secrets", () => {
  const managerRef = { kind: "NSXManager" as const, name: "nsx", namespace: "default" };
  const recorded: EdgeTenantStatus = {
    originalTenant: "red",
    originalTenantOf: { edgeId: "edge-1", manager: "nsx", managerURL: "https://nsx.example" },
  };
  const plan = (held: boolean, via: "read" | "list") =>
    planEdgeTenant(
      edgePlanInput({
        object: edgeTenant({ deletionPolicy: "Restore" }),
        observed: { ...observed("red"), via },
        previous: recorded,
        now: T0,
        recordsOriginal: true,
        finalizerPresent: true,
        secretsHold: { held, manager: managerRef },
      }),
    );

  it("withholds the correction, asks the NSXManager's pass for, comes back in a second, says so in Reconciling", () => {
    const waiting = plan(false, "read");
    expect(waiting.actions).toEqual([]);
    expect(waiting.withheld[0]?.why).toMatch(/^NSXManager nsx first holds its Secrets against deletion/);
    expect(waiting.requeueAfterMs).toBe(1_000);
    const settled = allDone(waiting);
    expect(settled.wake, "the NSXManager is woken to hold them").toEqual([managerRef]);
    const conditions = (settled.status as EdgeTenantStatus).conditions;
    expect(conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "CorrectionPending",
    });
    expect(conditions?.find((c) => c.type === "Reconciling")?.message).toMatch(/first holds its Secrets/);
  });

  it("seen on the list while waiting, asks for no read: the read would wait as well", () => {
    expect(plan(false, "list").observeFully).toBe(false);
  });

  it("corrects once they are held, and wakes nobody", () => {
    const held = plan(true, "read");
    expect(held.actions.map(({ from, to }) => ({ from, to }))).toEqual([{ from: "red", to: "blue" }]);
    expect(held.withheld).toEqual([]);
    expect(held.requeueAfterMs).toBeUndefined();
    expect(allDone(held).wake).toBeUndefined();
  });
});

describe("planEdgeTenant: a read after the list", () => {
  const notes = (listedTenant: string | undefined, via: "read" | "list" = "read") =>
    allDone(
      planEdgeTenant(
        edgePlanInput({
          object: edgeTenant(),
          observed: { ...observed("blue"), via },
          previous,
          now: T0,
          listedTenant,
        }),
      ),
    ).notes ?? [];

  it.each([
    { reason: "the list showed another tenant: a note says the read decides", listed: "red", want: 1 },
    { reason: "the list agreed: nothing to say", listed: "blue", want: 0 },
    { reason: "no list before the read: nothing to say", listed: undefined, want: 0 },
  ])("$reason", ({ listed, want }) => {
    const got = notes(listed);
    expect(got).toHaveLength(want);
    if (want > 0)
      expect(got[0]).toMatch(/the edge list showed edge-1 with tenant "red", the read shows "blue"/);
  });

  it("an observation from the list itself has no note", () => {
    expect(notes("red", "list")).toEqual([]);
  });
});
