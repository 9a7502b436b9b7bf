/**
 * List-first observation: the NSXManager's check reads the manager's paged edge list once per
 * interval and wakes the EdgeTenants it shows drifted; an EdgeTenant's pass takes its edge's
 * summary from that list and reads the edge in full only when it must: a correction to plan
 * (the GET is the pre-write read: still exactly GET + PUT), an edge the list does not show, a list
 * that is missing or old, or its safety-net full read due. A summary that lags is caught by the
 * read before any write, and by the safety net at the latest.
 */
import { describe, expect, it } from "vitest";
import { refOf } from "../../../src/api/refs.ts";
import type { EdgeTenant, NSXManager, NSXManagerStatus } from "../../../src/api/types.ts";
import { edgeTenantsToWake } from "../../../src/reconcile/edge-tenant/edge-list-plan.ts";
import { phaseOf } from "../../../src/reconcile/edge-tenant/full-read-schedule.ts";
import { edgeTenant, edgeXml, withOriginal } from "./fixtures.ts";
import { apiError, count, fakeManager, MINUTE } from "../fixtures.ts";
import { pool, poolAllocations } from "../ip-pool/fixtures.ts";
import { credentials, manager } from "../nsx-manager/fixtures.ts";
import { condition, setup } from "../harness.ts";

const HOUR = 60 * MINUTE;

/** An NSXManager and one EdgeTenant (tenant "blue", original recorded) on a fake whose edge-1 carries `tenant`. */
function fleet(tenant: string, deps: Parameters<typeof setup>[0]["deps"] = {}) {
  const original = withOriginal(edgeTenant(), "old");
  // looked at before: a list wakes it (one not looked at yet is queued by its arrival)
  const object = { ...original, status: { ...original.status, observedGeneration: 1 } };
  const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant, version: 7 }) } });
  const harness = setup({ objects: [manager(), object], fake, deps });
  const tenantPass = () => harness.pass(harness.store.get(refOf(object)) as EdgeTenant);
  return { object, ...harness, tenantPass };
}

describe("the NSXManager's check reads the edge list", () => {
  it("once per check when EdgeTenants name the manager, and wakes those it shows drifted", async () => {
    const { fake, pass } = fleet("red");
    const report = await pass(manager());
    expect(fake.calls, "the list answers the check: no pool list without IPPoolAllocations").toEqual([
      "listEdges",
    ]);
    expect(report.wake, "edge-1 carries red, blue is wanted").toEqual([
      { kind: "EdgeTenant", namespace: "ns", name: "edge" },
    ]);
    expect(condition(report, "Ready")?.message).toContain("1 edge listed");
  });

  it("not at all without EdgeTenants", async () => {
    const { fake, pass } = setup({ objects: [manager()] });
    await pass(manager());
    expect(fake.calls).toEqual(["listPools globalroot-0"]);
  });

  it("and the pools as well when IPPoolAllocations name the manager: they share that fresh list", async () => {
    const object = withOriginal(edgeTenant(), "old");
    const fake = fakeManager({
      edges: { "edge-1": edgeXml({ tenant: "blue" }) },
      pools: { "globalroot-0": [pool({ vsmUuid: "uuid-of-the-pools" })] },
    });
    const { pass } = setup({ objects: [manager(), object, poolAllocations()], fake });
    const report = await pass(manager());
    expect([...fake.calls].sort()).toEqual(["listEdges", "listPools globalroot-0"]);
    expect(condition(report, "Ready")?.message).toContain("1 pool in globalroot-0; 1 edge listed");
    expect((report.status as NSXManagerStatus).vsmUuid).toBe("uuid-of-the-pools");
  });

  it("a list refused with 401 is the check's answer: Unauthorized, no pool list after it", async () => {
    const { fake, pass } = fleet("blue");
    fake.faults.listEdges = [apiError(401, "GET", "/api/4.0/edges")];
    const report = await pass(manager());
    expect(fake.calls).toEqual(["listEdges"]);
    expect(condition(report, "Ready")).toMatchObject({ status: "False", reason: "Unauthorized" });
    expect((report.status as NSXManagerStatus).authenticated).toBe(false);
  });

  it("a list that fails otherwise (403) leaves the check to the pool list", async () => {
    const { fake, pass } = fleet("blue");
    fake.faults.listEdges = [apiError(403, "GET", "/api/4.0/edges")];
    const report = await pass(manager());
    expect(fake.calls).toEqual(["listEdges", "listPools globalroot-0"]);
    expect(condition(report, "Ready")).toMatchObject({ status: "True" });
  });

  it("says once when the list fails, stays Ready, and wakes every EdgeTenant to read its edge", async () => {
    const { fake, pass } = fleet("blue");
    fake.faults.listEdges = [apiError(403, "GET", "/api/4.0/edges"), apiError(403, "GET", "/api/4.0/edges")];
    const first = await pass(manager());
    expect(condition(first, "Ready")).toMatchObject({ status: "True" });
    expect(condition(first, "Ready")?.message).toContain("the edge list failed");
    expect((first.status as NSXManagerStatus).edgeListError).toContain("403");
    expect(first.events.map((e) => e.reason)).toEqual(["EdgeListUnavailable"]);
    expect(first.wake).toHaveLength(1);
    const again = await pass(manager());
    expect(again.events, "said once, not at every check").toEqual([]);
    const recovered = await pass(manager());
    expect((recovered.status as NSXManagerStatus).edgeListError, "tried again: it works").toBeUndefined();
  });
});

describe("one list per real manager", () => {
  /** NSXManager `name` in `namespace` at the fake's URL (written its own way), with one EdgeTenant */
  const team = (namespace: string, url: string, tls: NSXManager["spec"]["tls"] = undefined) => ({
    manager: manager({ url, ...(tls !== undefined ? { tls } : {}) }, { namespace }),
    tenant: withOriginal(edgeTenant({}, { namespace }), "old"),
  });
  const credentialsIn = (namespace: string) => ({
    ...credentials(),
    metadata: { name: "nsx-creds", namespace },
    stringData: { ...credentials().stringData, "ca.crt": "pem" },
  });

  it.each([
    {
      name: "SameManagerTwoObjects",
      reason:
        "two NSXManager objects naming one manager (in two namespaces, one URL written another way) list it once per interval, not once each",
      b: team("team-b", "HTTPS://NSX.example:443/"),
      lists: 1,
      // the shared list was read with the other's credentials: this check sends its own, on the pool list
      pools: 1,
    },
    {
      name: "OtherTrust",
      reason:
        "a client that verifies the manager with another CA reaches, as far as it knows, another server: it lists its own",
      b: team("team-b", "https://nsx.example", { caSecretRef: { name: "nsx-creds", key: "ca.crt" } }),
      lists: 2,
      pools: 0,
    },
    {
      name: "Unverified",
      reason: "a client that verifies nothing shares no list: what it reads may be an impostor's",
      b: team("team-b", "https://nsx.example", { insecureSkipVerify: true }),
      lists: 2,
      pools: 0,
    },
  ])("$name: $reason", async ({ b, lists, pools }) => {
    const a = team("team-a", "https://nsx.example");
    const { fake, pass } = setup({
      objects: [a.manager, b.manager, a.tenant, b.tenant],
      secrets: [credentialsIn("team-a"), credentialsIn("team-b")],
    });
    await pass(a.manager);
    const checked = await pass(b.manager);
    expect(count(fake.calls, "listEdges")).toBe(lists);
    expect(count(fake.calls, "listPools"), "each check sends its own credentials").toBe(pools);
    expect(condition(checked, "Ready")?.message, "the check still reports the list").toContain(
      "1 edge listed",
    );
    // the next interval: each object's own check lists again only when its last list is its own
    await pass(a.manager);
    expect(count(fake.calls, "listEdges")).toBe(lists + 1);
  });
});

describe("a shared list gives no authority", () => {
  it("a check that takes another NSXManager's list still sends its own credentials: refused, it is not authenticated", async () => {
    const a = manager({}, { namespace: "team-a" });
    const b = manager({ url: "https://NSX.example/" }, { namespace: "team-b" });
    const tenants = ["team-a", "team-b"].map((ns) => withOriginal(edgeTenant({}, { namespace: ns }), "old"));
    const secret = (ns: string) => ({ ...credentials(), metadata: { name: "nsx-creds", namespace: ns } });
    const { fake, pass } = setup({
      objects: [a, b, ...tenants],
      secrets: [secret("team-a"), secret("team-b")],
    });
    await pass(a);
    fake.faults.listPools = [apiError(401, "GET", "/api/2.0/services/ipam/pools/scope/globalroot-0")];
    const refused = await pass(b);
    expect(count(fake.calls, "listEdges"), "the list was shared").toBe(1);
    expect(condition(refused, "Ready")?.reason).toBe("Unauthorized");
    expect((refused.status as NSXManagerStatus).authenticated).toBe(false);
  });
});

describe("an EdgeTenant's pass takes the list first", () => {
  it("in sync as the list shows it: no call at all", async () => {
    const { fake, pass, tenantPass, store, object } = fleet("blue");
    await pass(manager());
    await tenantPass();
    const calls = fake.calls.length;
    await tenantPass();
    expect(fake.calls.slice(calls), "no call: the list saw it").toEqual([]);
    const status = (store.get(refOf(object)) as EdgeTenant).status;
    expect(status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "InSync",
    });
    expect(status).toMatchObject({ observedVia: "EdgeList" });
  });

  it("drifted as the list shows it: exactly GET + PUT, the GET being the pre-write read", async () => {
    const { fake, pass, tenantPass } = fleet("blue");
    await pass(manager());
    await tenantPass();
    fake.state.edges.set("edge-1", edgeXml({ tenant: "red", version: 8 }));
    await pass(manager());
    const calls = fake.calls.length;
    const report = await tenantPass();
    expect(fake.calls.slice(calls)).toEqual(["getEdge edge-1", "putEdge edge-1"]);
    expect(report.changes.tenantCorrections).toEqual([{ edgeId: "edge-1", from: "red", to: "blue" }]);
    const after = fake.calls.length;
    await tenantPass();
    expect(fake.calls.slice(after), "the list knows what was written: no call").toEqual([]);
  });

  it("a summary that lags (drift shown, the read shows none): nothing written, a debug note", async () => {
    const { fake, pass, tenantPass } = fleet("blue");
    await pass(manager());
    await tenantPass();
    // a list that lags shows an older state of the edge: its version before the read's 7
    fake.state.staleSummaries = new Map([["edge-1", { id: "edge-1", tenant: "red", revision: 6 }]]);
    await pass(manager());
    const calls = fake.calls.length;
    const report = await tenantPass();
    expect(fake.calls.slice(calls)).toEqual(["getEdge edge-1"]);
    expect(report.changes.tenantCorrections).toEqual([]);
    expect(report.notes.join("\n")).toMatch(/summary that lags/);
  });

  it("a read older than the list is read again; two such reads decide nothing: StaleRead, nothing written", async () => {
    const { fake, pass, tenantPass } = fleet("red");
    await pass(manager());
    // the manager's list shows version 9; something in between serves the document of version 7
    fake.state.staleSummaries = new Map([["edge-1", { id: "edge-1", tenant: "red", revision: 9 }]]);
    await pass(manager());
    const calls = fake.calls.length;
    const report = await tenantPass();
    expect(fake.calls.slice(calls), "read twice, never written").toEqual([
      "getEdge edge-1",
      "getEdge edge-1",
    ]);
    expect(condition(report, "Synced")).toMatchObject({ status: "False", reason: "StaleRead" });
    expect(condition(report, "Synced")?.message).toContain(
      "edge edge-1: read twice, and both reads are older than the manager's edge list (the read has version 7, the edge list showed version 9)",
    );
    expect(report.outcome.type, "the next pass reads again").toBe("failed");

    fake.state.edges.set("edge-1", edgeXml({ tenant: "red", version: 9 }));
    const after = fake.calls.length;
    const next = await tenantPass();
    expect(fake.calls.slice(after), "a read as recent as the list decides").toEqual([
      "getEdge edge-1",
      "putEdge edge-1",
    ]);
    expect(next.changes.tenantCorrections).toHaveLength(1);
  });

  it("a read older than the list whose second read is recent: the second read decides", async () => {
    const { fake, pass, tenantPass } = fleet("red");
    await pass(manager());
    fake.state.staleSummaries = new Map([["edge-1", { id: "edge-1", tenant: "red", revision: 8 }]]);
    await pass(manager());
    // the first read is served from a cache (version 7), the second by the manager (version 8)
    let reads = 0;
    fake.before = (call) => {
      if (call === "getEdge edge-1" && ++reads === 2)
        fake.state.edges.set("edge-1", edgeXml({ tenant: "red", version: 8 }));
    };
    const calls = fake.calls.length;
    const report = await tenantPass();
    expect(fake.calls.slice(calls)).toEqual(["getEdge edge-1", "getEdge edge-1", "putEdge edge-1"]);
    expect(fake.puts.at(-1)?.version, "the PUT is the second read's document").toBe(8);
    expect(report.changes.tenantCorrections).toHaveLength(1);
  });

  it("the pass after the original is recorded reads again: a list that lags does not undo what a read saw", async () => {
    const object = edgeTenant(); // no original yet: the first correction records it, then writes
    const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant: "red", version: 8 }) } });
    const { pass, store } = setup({ objects: [manager(), object], fake });
    const tenantPass = () => pass(store.get(refOf(object)) as EdgeTenant);
    await pass(manager());
    const recording = await tenantPass();
    expect(fake.calls.at(-1), "the list shows drift: it reads in full, and records before it writes").toBe(
      "getEdge edge-1",
    );
    expect(recording.status).toMatchObject({ originalTenant: "red", observedTenant: "red" });
    // the next list lags: it shows the edge as it was before, with the wanted tenant
    fake.state.staleSummaries = new Map([["edge-1", { id: "edge-1", tenant: "blue", revision: 7 }]]);
    await pass(manager());
    const calls = fake.calls.length;
    const report = await tenantPass();
    expect(fake.calls.slice(calls), "the list says blue, the last read said red: read, then write").toEqual([
      "getEdge edge-1",
      "putEdge edge-1",
    ]);
    expect(report.changes.tenantCorrections).toEqual([{ edgeId: "edge-1", from: "red", to: "blue" }]);
  });

  it("a summary that hides drift is caught by the safety net's full read, spread over fullReadInterval", async () => {
    const { fake, pass, tenantPass, clock } = fleet("blue", {
      kinds: { EdgeTenant: { fullReadIntervalMs: HOUR } },
    });
    await pass(manager());
    await tenantPass();
    // someone sets red; the list keeps saying blue
    fake.state.staleSummaries = new Map([["edge-1", { id: "edge-1", tenant: "blue", revision: 7 }]]);
    fake.state.edges.set("edge-1", edgeXml({ tenant: "red", version: 8 }));
    let corrected = false;
    for (let minutes = 5; minutes <= 2 * 60 && !corrected; minutes += 5) {
      clock.ms += 5 * MINUTE;
      await pass(manager());
      corrected = (await tenantPass()).changes.tenantCorrections.length > 0;
      if (!corrected) expect(minutes, "within one fullReadInterval (and one pass)").toBeLessThan(65);
    }
    expect(corrected).toBe(true);
    expect(count(fake.calls, "putEdge"), "one write, after a read").toBe(1);
  });

  it("reads in full when the list does not show the edge, and reports EdgeNotFound only after that read", async () => {
    const { fake, pass, tenantPass } = fleet("blue");
    await pass(manager());
    await tenantPass();
    fake.state.edges.delete("edge-1");
    await pass(manager());
    const calls = fake.calls.length;
    const report = await tenantPass();
    expect(fake.calls.slice(calls), "confirmed by a GET").toEqual(["getEdge edge-1"]);
    expect(condition(report, "Synced")).toMatchObject({ reason: "EdgeNotFound" });
  });

  it("fetches the list again when it is older than two of its sync intervals: one fetch for all, no read each", async () => {
    // no safety-net read falls due meanwhile
    const { fake, pass, tenantPass, clock } = fleet("blue", {
      kinds: { EdgeTenant: { fullReadIntervalMs: 24 * HOUR } },
    });
    await pass(manager());
    await tenantPass();
    clock.ms += 11 * MINUTE; // the default interval is 5 min
    const calls = fake.calls.length;
    // a queue that drains for longer than the list stays recent: its objects share one fetch
    const reports = await Promise.all([tenantPass(), tenantPass(), tenantPass()]);
    expect(fake.calls.slice(calls)).toEqual(["listEdges"]);
    for (const report of reports)
      expect(report.outcome.type, "observed from the fetch they shared").toBe("done");
  });

  it("reads in full when the list fetched again fails", async () => {
    const { fake, pass, tenantPass, clock } = fleet("blue", {
      kinds: { EdgeTenant: { fullReadIntervalMs: 24 * HOUR } },
    });
    await pass(manager());
    await tenantPass();
    clock.ms += 11 * MINUTE;
    fake.faults.listEdges = [apiError(503, "GET", "/api/4.0/edges")];
    const calls = fake.calls.length;
    await tenantPass();
    expect(fake.calls.slice(calls)).toEqual(["listEdges", "getEdge edge-1"]);
  });

  it("a new object's first full read comes at its phase of the interval, not on its first pass", async () => {
    const { clock } = setup({ objects: [] });
    const created = new Date(clock.ms).toISOString();
    const object = edgeTenant({}, { creationTimestamp: created });
    const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant: "blue", version: 7 }) } });
    const harness = setup({
      objects: [manager(), object],
      fake,
      deps: { kinds: { EdgeTenant: { fullReadIntervalMs: HOUR } } },
    });
    const tenantPass = () => harness.pass(harness.store.get(refOf(object)) as EdgeTenant);
    await harness.pass(manager());
    const first = await tenantPass();
    expect(count(fake.calls, "getEdge"), "Ready from the list alone").toBe(0);
    expect(condition(first, "Ready")).toMatchObject({ status: "True", reason: "InSync" });
    let read = false;
    for (let minutes = 5; minutes <= 65 && !read; minutes += 5) {
      harness.clock.ms += 5 * MINUTE;
      await harness.pass(manager());
      await tenantPass();
      read = count(fake.calls, "getEdge") > 0;
    }
    expect(read, "read in full within one interval of its creation").toBe(true);
  });

  it("after a restart, waits for the manager's first list instead of reading an edge read in full lately", async () => {
    const { fake, pass, tenantPass, store, object } = fleet("blue");
    await pass(manager());
    await tenantPass();
    const kept = store.get(refOf(object)) as EdgeTenant;
    // a new process: the status is kept (the API server's), the lists are not
    const restarted = setup({ objects: [manager(), kept], fake });
    const calls = fake.calls.length;
    // its pass comes before the manager's: it fetches the list the manager's would
    await restarted.pass(restarted.store.get(refOf(object)) as EdgeTenant);
    expect(fake.calls.slice(calls), "the list stands for the read").toEqual(["listEdges"]);
    expect((restarted.store.get(refOf(object)) as EdgeTenant).status).toMatchObject({
      observedVia: "EdgeList",
    });
  });

  it("after a restart, an edge never read in full waits for the list too: the start reads none", async () => {
    const { fake, tenantPass } = fleet("blue");
    await tenantPass();
    expect(fake.calls).toEqual(["listEdges"]);
  });

  it("an operator that starts over edges whose full read is long overdue reads each at its phase of the next interval, not at the start", async () => {
    const { clock } = setup({ objects: [] });
    const long = new Date(clock.ms - 5 * HOUR).toISOString().replace(/\.\d{3}Z$/, "Z");
    const objects = Array.from({ length: 20 }, (_, i) => {
      const object = edgeTenant({ edgeId: `edge-${i + 1}` }, { name: `edge-${i + 1}` });
      return { ...object, status: { observedGeneration: 1, observedTenant: "blue", lastFullReadTime: long } };
    });
    const edges = Object.fromEntries(objects.map((o) => [o.spec.edgeId, edgeXml({ tenant: "blue" })]));
    const fake = fakeManager({ edges });
    const harness = setup({
      objects: [manager(), ...objects],
      fake,
      deps: { kinds: { EdgeTenant: { fullReadIntervalMs: HOUR } } },
    });
    const passAll = () =>
      Promise.all(objects.map((o) => harness.pass(harness.store.get(refOf(o)) as EdgeTenant)));
    await harness.pass(manager());
    const reports = await passAll();
    expect(count(fake.calls, "getEdge"), "the start reads none in full").toBe(0);
    // each comes back when its own full read falls due: within the hour, at its phase
    const comeBacks = reports.map((r) =>
      r.outcome.type === "done" ? (r.outcome.requeueAfterMs ?? NaN) : NaN,
    );
    for (const ms of comeBacks) expect(ms).toBeLessThanOrEqual(HOUR);
    expect(
      new Set(comeBacks.map((ms) => Math.floor(ms / (10 * MINUTE)))).size,
      "spread, not bunched",
    ).toBeGreaterThan(3);
    for (let minutes = 0; minutes < 60; minutes += 5) {
      harness.clock.ms += 5 * MINUTE;
      await harness.pass(manager());
      await passAll();
    }
    expect(count(fake.calls, "getEdge"), "each read in full once within the interval").toBe(20);
  });

  it("after a restart whose first list fails, reads its edge", async () => {
    const { fake, pass, tenantPass, store, object } = fleet("blue");
    await pass(manager());
    await tenantPass();
    const restarted = setup({ objects: [manager(), store.get(refOf(object)) as EdgeTenant], fake });
    fake.faults.listEdges = [apiError(403, "GET", "/api/4.0/edges")];
    const calls = fake.calls.length;
    await restarted.pass(restarted.store.get(refOf(object)) as EdgeTenant);
    expect(fake.calls.slice(calls)).toEqual(["listEdges", "getEdge edge-1"]);
  });

  it("in a one-shot run trusts the list: no safety net read", async () => {
    const { fake, pass, tenantPass } = fleet("blue", { oneShot: { releaseStrays: false }, mode: "plan" });
    await pass(manager());
    const calls = fake.calls.length;
    await tenantPass();
    expect(fake.calls.slice(calls)).toEqual([]);
  });
});

describe("which EdgeTenants a list wakes", () => {
  const list = (tenant: string | undefined) => ({
    list: {
      fetchedAtMs: 0,
      byId: new Map(tenant === undefined ? [] : [["edge-1", { id: "edge-1", tenant }]]),
    },
  });
  const withStatus = (object: EdgeTenant, observedTenant: string): EdgeTenant => ({
    ...object,
    status: { observedGeneration: object.metadata.generation, observedTenant },
  });
  it.each([
    {
      name: "InSync",
      reason: "the list shows the tenant it must carry",
      object: withStatus(edgeTenant(), "blue"),
      state: list("blue"),
      woken: false,
      shown: true,
    },
    {
      name: "Drifted",
      reason: "a correction to make",
      object: withStatus(edgeTenant(), "blue"),
      state: list("red"),
      woken: true,
    },
    {
      name: "Absent",
      reason: "the list does not show the edge: a read confirms",
      object: withStatus(edgeTenant(), "blue"),
      state: list(undefined),
      woken: true,
    },
    {
      name: "NotLookedAt",
      reason:
        "an object the operator has not looked at yet: its arrival queued it (a start's list wakes none)",
      object: edgeTenant(),
      state: list("red"),
      woken: false,
    },
    {
      name: "NotLookedAtDefaulted",
      reason: "the status the API server defaults (observedGeneration -1) is not a look",
      object: { ...edgeTenant(), status: { observedGeneration: -1 } },
      state: list("red"),
      woken: false,
    },
    {
      name: "ObserveUnchanged",
      reason: "an Observe object whose status reports the drift already",
      object: withStatus(edgeTenant({ managementPolicy: "Observe" }), "red"),
      state: list("red"),
      woken: false,
      shown: true,
    },
    {
      name: "ObserveChanged",
      reason: "an Observe object has a new tenant to report",
      object: withStatus(edgeTenant({ managementPolicy: "Observe" }), "red"),
      state: list("green"),
      woken: true,
    },
    {
      name: "ListFailed",
      reason: "no list: every EdgeTenant reads its edge",
      object: withStatus(edgeTenant(), "blue"),
      state: { error: "HTTP 403" },
      woken: true,
    },
    {
      name: "Paused",
      reason: "no calls for a paused object",
      object: edgeTenant({}, { annotations: { "nsxv.io/paused": "true" } }),
      state: list("red"),
      woken: false,
    },
    {
      name: "InvalidSpec",
      reason: "a spec its pass refuses until it changes",
      object: edgeTenant({ edgeId: "edge-one" }),
      state: list("red"),
      woken: false,
    },
  ])("$name: $reason", ({ object, state, woken, shown = false }) => {
    const verdict = edgeTenantsToWake([object], state);
    expect(verdict.wake).toHaveLength(woken ? 1 : 0);
    // shown as its status says: observed when the list was read, and no pass of its own
    expect(verdict.shown).toHaveLength(shown ? 1 : 0);
  });
});

describe("phaseOf", () => {
  it("spreads a manager's edges evenly over the interval: 2000 edges every 4 h, 3 to 6 in every 30 s", () => {
    const interval = 4 * HOUR;
    const phases = Array.from({ length: 2000 }, (_, i) =>
      phaseOf(edgeTenant({ edgeId: `edge-${i + 1}` }, { name: `t-${i + 1}` })),
    );
    const window = 30_000 / interval;
    const counts = Array.from(
      { length: interval / 30_000 },
      (_, w) => phases.filter((p) => p >= w * window && p < (w + 1) * window).length,
    );
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(3);
    expect(Math.max(...counts), "no clump: a hash of the names put up to 10 in one").toBeLessThanOrEqual(6);
  });
});
