import { describe, expect, it } from "vitest";
import { refOf } from "../../../src/api/refs.ts";
import {
  RESTORE_FINALIZER,
  type EdgeTenant,
  type EdgeTenantSpec,
  type ObjectMeta,
} from "../../../src/api/types.ts";
import { EdgeDocument } from "../../../src/nsx/edge-document.ts";
import { NsxTransportError } from "../../../src/nsx/errors.ts";
import { edgeTenant, edgeXml, withOriginal } from "./fixtures.ts";
import { apiError, count, fakeManager } from "../fixtures.ts";
import { manager } from "../nsx-manager/fixtures.ts";
import { condition, iso, setup } from "../harness.ts";
import { T0 } from "../fixtures.ts";

/**
 * One EdgeTenant (tenant "blue" wanted) on a fake manager whose edge-1 carries `tenant`, its
 * original already recorded: a pass corrects at once.
 */
function edge(tenant = "red", deps: Parameters<typeof setup>[0]["deps"] = {}) {
  const object = withOriginal(edgeTenant(), "red");
  const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant, version: 7 }) } });
  return { object, ...setup({ objects: [manager(), object], fake, deps }) };
}

describe("the EdgeTenant handler", () => {
  it("corrects with exactly GET + PUT: the document just read goes back with only the tenant changed", async () => {
    const { object, fake, pass } = edge("red");
    const report = await pass(object);
    // no list yet: the pass fetches the manager's (its check's, in the operator); it shows the drift
    expect(fake.calls, "the read that decided the write is the pre-write read").toEqual([
      "listEdges",
      "getEdge edge-1",
      "putEdge edge-1",
    ]);
    const sent = fake.puts[0] as EdgeDocument;
    const read = EdgeDocument.parse(edgeXml({ tenant: "red", version: 7 }));
    expect(sent.version, "the PUT is based on the read").toBe(7);
    expect(EdgeDocument.equalExcept(sent, read, ["tenant"]), "nothing but the tenant differs").toBe(true);
    expect(sent.tenant).toBe("blue");
    expect(report.changes.tenantCorrections).toEqual([{ edgeId: "edge-1", from: "red", to: "blue" }]);
    expect(report.status).toMatchObject({ observedTenant: "blue", lastCorrectionTime: iso(T0) });
    expect(condition(report, "Ready")).toMatchObject({ status: "True", reason: "InSync" });
  });

  it("after a 409 reads again, decides again on that read, and retries", async () => {
    const { object, fake, pass } = edge("red");
    fake.faults.putEdge = [apiError(409)];
    fake.before = (call) => {
      // the concurrent writer renamed the edge: the retry must carry their change
      if (call === "getEdge edge-1" && count(fake.calls, "getEdge") === 2) {
        fake.state.edges.set("edge-1", edgeXml({ tenant: "red", version: 8, name: "renamed" }));
      }
    };
    const report = await pass(object);
    expect(fake.calls).toEqual([
      "listEdges",
      "getEdge edge-1",
      "putEdge edge-1",
      "getEdge edge-1",
      "putEdge edge-1",
    ]);
    // the fake keeps only the documents it accepted
    const sent = fake.puts[0] as EdgeDocument;
    expect(sent.version, "the retry is based on the fresh read").toBe(8);
    expect(sent.name).toBe("renamed");
    expect(report.changes.tenantCorrections).toHaveLength(1);
    expect(report.status).toMatchObject({ edgeName: "renamed" });
  });

  it("after a 409 writes nothing when the fresh read shows the tenant already set", async () => {
    const { object, fake, pass } = edge("red");
    fake.faults.putEdge = [apiError(409)];
    fake.before = (call) => {
      if (call === "getEdge edge-1" && count(fake.calls, "getEdge") === 2) {
        fake.state.edges.set("edge-1", edgeXml({ tenant: "blue", version: 8 }));
      }
    };
    const report = await pass(object);
    expect(count(fake.calls, "putEdge"), "nothing left to write").toBe(1);
    expect(report.changes.tenantCorrections).toEqual([]);
    expect(condition(report, "Ready")).toMatchObject({ status: "True", reason: "InSync" });
    expect(report.outcome.type).toBe("done");
  });

  it("gives up after maxAttempts answers of 409, and stays not Ready: the edge is known drifted", async () => {
    const { object, fake, pass } = edge("red");
    fake.faults.putEdge = [apiError(409), apiError(409), apiError(409), apiError(409)];
    const report = await pass(object);
    expect(count(fake.calls, "putEdge"), "bounded: exactly maxAttempts PUTs").toBe(3);
    expect(count(fake.calls, "getEdge"), "the deciding read and one re-read per retry").toBe(3);
    expect(report.outcome).toMatchObject({
      type: "failed",
      error: {
        reason: "ConcurrentModification",
        message: expect.stringMatching(/PUT edge edge-1: the manager answered 409 .* 3 times/),
      },
    });
    expect(condition(report, "Ready")).toMatchObject({ status: "False", reason: "Drifted" });
    expect(condition(report, "Ready")?.message).toContain("the correction failed");
    expect(condition(report, "Synced")).toMatchObject({ status: "False", reason: "ConcurrentModification" });
  });

  it.each([
    { name: "ServerError", status: 500, reason: "ReconcileError" },
    { name: "Unavailable", status: 503, reason: "Unreachable" },
  ])(
    "a failed PUT ($name) is not retried here, and leaves Ready=False Drifted",
    async ({ status, reason }) => {
      const { object: previous, fake, pass } = edge("red");
      // the edge was in sync at the previous pass: Ready=True of this generation
      await pass(previous);
      fake.state.edges.set("edge-1", edgeXml({ tenant: "red", version: 9 }));
      await pass(manager()); // its check lists the edges: the drift shows
      fake.faults.putEdge = [apiError(status)];
      const report = await pass(previous);
      expect(count(fake.calls, "putEdge")).toBe(2);
      expect(condition(report, "Ready"), "the latest observation shows drift").toMatchObject({
        status: "False",
        reason: "Drifted",
      });
      expect(condition(report, "Synced")).toMatchObject({ status: "False", reason });
      expect(report.outcome).toMatchObject({ type: "failed", error: { reason } });
    },
  );

  it("writes nothing in plan mode and reports the drift", async () => {
    const { object, fake, pass } = edge("red", { mode: "plan" });
    const report = await pass(object);
    expect(fake.calls).toEqual(["listEdges", "getEdge edge-1"]);
    expect(report.planned).toEqual([
      { action: { type: "setTenant", edgeId: "edge-1", from: "red", to: "blue" } },
    ]);
    expect(condition(report, "Ready")).toMatchObject({ status: "False", reason: "Drifted" });
    expect(report.status).toMatchObject({ observedTenant: "red" });
  });

  it("reads again when a read lost sections the previous read had, and writes what the second read shows", async () => {
    const { object, fake, pass, store } = edge("red");
    await pass(object); // read in full (and corrected): its shape is remembered
    const whole = edgeXml({ tenant: "red", version: 8 });
    const cut = whole.replace(/ *<features>.*<\/features>\n/, "");
    expect(cut, "the cut answer lacks <features>").not.toContain("<features>");
    fake.state.edges.set("edge-1", whole);
    await pass(manager()); // its check lists the edges: the drift shows
    let reads = 0;
    // a proxy cuts the first answer of the pass, not the second
    fake.before = (call) => {
      if (call === "getEdge edge-1") fake.state.edges.set("edge-1", ++reads === 1 ? cut : whole);
    };
    const report = await pass(store.get(refOf(object)) as EdgeTenant);
    expect(reads, "the cut read was not trusted: read again").toBe(2);
    expect(fake.puts.at(-1)?.serialize(), "the PUT carries what the cut read lost").toContain("<features>");
    expect(report.changes.tenantCorrections).toHaveLength(1);
  });

  it("turns the manager's not-found into EdgeNotFound with its details", async () => {
    const object = edgeTenant();
    const { pass } = setup({ objects: [manager(), object], fake: fakeManager() });
    const report = await pass(object);
    expect(report.outcome).toMatchObject({
      type: "failed",
      error: {
        reason: "EdgeNotFound",
        message: expect.stringMatching(
          /edge edge-1: GET \/api\/4.0\/edges\/edge-1: HTTP 404: status 404 from the fake, errorCode 202/,
        ),
      },
    });
  });
});

describe("deletionPolicy Restore", () => {
  const restore = { deletionPolicy: "Restore" as const };

  it("records the tenant before the first correction in a pass of its own, and keeps it across later ones", async () => {
    const object = edgeTenant(restore);
    const { fake, pass, store } = setup({
      objects: [manager(), object],
      fake: fakeManager({ edges: { "edge-1": edgeXml({ tenant: "legacy" }) } }),
    });
    const first = await pass(object);
    expect(fake.calls, "no write before the record").toEqual(["listEdges", "getEdge edge-1"]);
    expect(first.status, "the original and the edge it belongs to").toMatchObject({
      originalTenant: "legacy",
      originalTenantOf: { edgeId: "edge-1", manager: "nsx", managerURL: "https://nsx.example" },
      observedTenant: "legacy",
    });
    expect(first.finalizer, "and the finalizer Restore needs").toEqual({
      name: RESTORE_FINALIZER,
      present: true,
    });
    expect(first.outcome, "the correction follows at once").toEqual({ type: "done", requeueAfterMs: 0 });
    expect(condition(first, "Reconciling")).toMatchObject({ status: "True" });
    const recorded = store.get(refOf(object)) as EdgeTenant;
    store.put({ ...recorded, metadata: { ...recorded.metadata, finalizers: [RESTORE_FINALIZER] } });
    const second = await pass(store.get(refOf(object)) as EdgeTenant);
    // the list still shows the drift: GET + PUT
    expect(fake.calls.slice(2), "then GET + PUT").toEqual(["getEdge edge-1", "putEdge edge-1"]);
    expect(second.changes.tenantCorrections).toEqual([{ edgeId: "edge-1", from: "legacy", to: "blue" }]);
    fake.state.edges.set("edge-1", edgeXml({ tenant: "someone-else", version: 9 }));
    await pass(manager()); // its check lists the edges: the drift shows
    const again = await pass(store.get(refOf(object)) as EdgeTenant);
    expect(again.changes.tenantCorrections, "a later drift is corrected at once").toHaveLength(1);
    expect((store.get(refOf(object)) as EdgeTenant).status?.originalTenant, "the first one stays").toBe(
      "legacy",
    );
  });

  it.each([
    { name: "Restore", spec: restore, finalizers: [], want: { name: RESTORE_FINALIZER, present: true } },
    { name: "RestoreHeld", spec: restore, finalizers: [RESTORE_FINALIZER], want: undefined },
    { name: "Orphan", spec: {}, finalizers: [], want: undefined },
    {
      name: "OrphanNow",
      spec: {},
      finalizers: [RESTORE_FINALIZER],
      want: { name: RESTORE_FINALIZER, present: false },
    },
  ])("a live object's finalizer follows its policy: $name", async ({ spec, finalizers, want }) => {
    const object = edgeTenant(spec, { finalizers });
    const { pass } = setup({ objects: [manager(), object] });
    expect((await pass(object)).finalizer).toEqual(want);
  });

  /** A Restore object being deleted, that corrected "legacy" to "blue" earlier; the edge now carries `current`. */
  function deleting(
    init: {
      current?: string;
      spec?: Partial<EdgeTenantSpec>;
      meta?: Partial<ObjectMeta>;
      original?: string | null;
      /** its NSXManager carries the pause annotation */
      pausedManager?: boolean;
    } = {},
  ) {
    const { current = "blue", original = "legacy" } = init;
    const object: EdgeTenant = {
      ...edgeTenant(
        { ...restore, ...init.spec },
        { deletionTimestamp: "2024-05-01T12:00:00Z", finalizers: [RESTORE_FINALIZER], ...init.meta },
      ),
      status: original === null ? {} : { originalTenant: original },
    };
    const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant: current }) } });
    const nsx = manager({}, init.pausedManager === true ? { annotations: { "nsxv.io/paused": "true" } } : {});
    return { object, ...setup({ objects: [nsx, object], fake }) };
  }

  it("writes the original tenant back with GET + PUT, then lets the object go", async () => {
    const { object, fake, pass } = deleting();
    const report = await pass(object);
    expect(fake.calls).toEqual(["getEdge edge-1", "putEdge edge-1"]);
    expect(fake.puts[0]?.tenant).toBe("legacy");
    expect(report.finalizer).toEqual({ name: RESTORE_FINALIZER, present: false });
    expect(report.events.map((e) => e.reason)).toEqual(["RestoredEdgeTenant"]);
    expect(report.changes.tenantCorrections).toEqual([{ edgeId: "edge-1", from: "blue", to: "legacy" }]);
  });

  it("says only that it restored when its finalizer's removal lost a race and the pass runs again", async () => {
    const { object, fake, pass } = deleting();
    const first = await pass(object);
    expect(first.events.map((e) => e.reason)).toEqual(["RestoredEdgeTenant"]);
    // the finalizer patch was refused (409: the object changed meanwhile): the same object again
    const again = await pass(object);
    expect(fake.puts, "nothing written twice").toHaveLength(1);
    expect(again.finalizer, "and it goes").toEqual({ name: RESTORE_FINALIZER, present: false });
    expect(again.events, "not also RestoreSkipped: the restore was this operator's").toEqual([]);
  });

  it.each([
    {
      name: "AlreadyOriginal",
      reason: "the edge carries the original tenant: nothing to write",
      init: { current: "legacy" },
      calls: ["getEdge edge-1"],
    },
    {
      name: "NeverCorrected",
      reason: "no original recorded: nothing to restore",
      init: { original: null },
      calls: [],
    },
    {
      name: "Observe",
      reason: "an Observe object never writes, on delete either",
      init: { spec: { managementPolicy: "Observe" as const } },
      calls: [],
    },
    {
      name: "Paused",
      reason: "a paused object makes no call, on delete either",
      init: { meta: { annotations: { "nsxv.io/paused": "true" } as Record<string, string> } },
      calls: [],
      warning: true,
    },
    {
      name: "PolicyOrphanNow",
      reason: "the policy was changed to Orphan before the delete",
      init: { spec: { deletionPolicy: "Orphan" as const } },
      calls: [],
    },
    {
      name: "ManagerPaused",
      reason: "a paused NSXManager gets no call, a restore's either",
      init: { pausedManager: true },
      calls: [],
      warning: true,
    },
    {
      name: "SkipRestoreAnnotation",
      reason: "the escape hatch for a manager that is gone for good",
      init: { meta: { annotations: { "nsxv.io/skip-restore": "true" } as Record<string, string> } },
      calls: [],
      warning: true,
    },
  ])("lets the object go without a write: $name ($reason)", async ({ init, calls, warning }) => {
    const { object, fake, pass } = deleting(init);
    const report = await pass(object);
    expect(fake.calls).toEqual(calls);
    expect(report.finalizer).toEqual({ name: RESTORE_FINALIZER, present: false });
    const reason = warning === true ? "RestoreAbandoned" : "RestoreSkipped";
    const said = report.events.filter(
      (e) => e.reason === "RestoreSkipped" || e.reason === "RestoreAbandoned",
    );
    expect(said, "an Event says why nothing was restored").toEqual([
      expect.objectContaining({ reason, type: warning === true ? "Warning" : "Normal" }),
    ]);
  });

  it("writes the original back to the edge it was read from, not to the edge the spec names now", async () => {
    const object: EdgeTenant = {
      ...edgeTenant(
        { ...restore, edgeId: "edge-2" },
        { deletionTimestamp: "2024-05-01T12:00:00Z", finalizers: [RESTORE_FINALIZER] },
      ),
      status: {
        originalTenant: "legacy",
        originalTenantOf: { edgeId: "edge-1", manager: "nsx", managerURL: "https://nsx.example" },
      },
    };
    const fake = fakeManager({
      edges: { "edge-1": edgeXml({ tenant: "blue" }), "edge-2": edgeXml({ id: "edge-2", tenant: "other" }) },
    });
    const { pass } = setup({ objects: [manager(), object], fake });
    const report = await pass(object);
    expect(fake.calls).toEqual(["getEdge edge-1", "putEdge edge-1"]);
    expect(fake.puts[0]?.tenant).toBe("legacy");
    expect(report.finalizer?.present).toBe(false);
  });

  it("restores with the credentials it holds when the Secret went first (a namespace deleted at once)", async () => {
    const { object, fake, pass, store, clients } = deleting();
    // a pass while the Secret was there built the manager's client
    await pass(manager());
    expect(clients).toHaveLength(1);
    store.removeSecret("ns", "nsx-creds");
    const report = await pass(object);
    expect(fake.puts[0]?.tenant, "restored with the held credentials").toBe("legacy");
    expect(report.finalizer).toEqual({ name: RESTORE_FINALIZER, present: false });
  });

  it("says how to go on when it holds no credentials and the Secret is gone (after a restart)", async () => {
    const { object, fake, pass, store } = deleting();
    store.removeSecret("ns", "nsx-creds");
    const report = await pass(object);
    expect(fake.calls).toEqual([]);
    expect(report.finalizer, "held: nothing was restored").toBeUndefined();
    expect(condition(report, "Synced")).toMatchObject({ status: "False", reason: "ManagerNotReady" });
    expect(condition(report, "Synced")?.message).toContain('nsxv.io/skip-restore: "true"');
  });

  it("does not restore on another manager than the one the original was read on", async () => {
    const { object: base, fake, pass, store } = deleting();
    const object: EdgeTenant = {
      ...base,
      status: {
        originalTenant: "legacy",
        originalTenantOf: { edgeId: "edge-1", manager: "nsx", managerURL: "https://old-nsx.example" },
      },
    };
    store.put(object);
    const report = await pass(object);
    expect(fake.calls, "no call to the manager the NSXManager points at now").toEqual([]);
    expect(report.finalizer, "held until someone decides").toBeUndefined();
    expect(condition(report, "Stalled")).toMatchObject({ status: "True", reason: "EdgeMoved" });
    expect(condition(report, "Synced")?.message).toContain("nsxv.io/skip-restore");
  });

  it("does not restore an edge another live object now owns", async () => {
    const { object, fake, pass, store } = deleting();
    store.put(edgeTenant({ tenant: "green" }, { name: "successor" }));
    const report = await pass(object);
    expect(fake.calls).toEqual([]);
    expect(report.finalizer?.present).toBe(false);
  });

  it("keeps the finalizer while the manager cannot be reached, and says why", async () => {
    const { object, fake, pass } = deleting();
    fake.faults.getEdge = [
      new NsxTransportError({
        method: "GET",
        path: "/api/4.0/edges/edge-1",
        reason: "connect ECONNREFUSED",
        notSent: true,
      }),
    ];
    const report = await pass(object);
    expect(report.finalizer, "held: the object stays").toBeUndefined();
    expect(condition(report, "Synced")).toMatchObject({ status: "False", reason: "Unreachable" });
    expect(condition(report, "Synced")?.message).toContain(
      "restoring the original tenant before the object goes",
    );
    expect(report.outcome.type).toBe("failed");
  });
});
