/**
 * The reconciler end to end over HTTP: the real ManagerClient against the manager simulator on
 * loopback. Proves that what the fakes stand for holds with the real pieces: the PUT carries the
 * whole document back (the simulator audits lost content), releases go through the real DELETE,
 * and a refused password surfaces as Unauthorized.
 */
import { realClock } from "../../src/util/clock.ts";
import { afterEach, describe, expect, it } from "vitest";
import type { NsxvObject } from "../../src/api/types.ts";
import { ManagerClient } from "../../src/nsx/client.ts";
import { ManagerConnections } from "../../src/reconcile/connections.ts";
import { createReconciler, type ReconcilerDeps } from "../../src/reconcile/reconciler.ts";
import { memoryStore } from "../../src/reconcile/store.ts";
import { refOf } from "../../src/api/refs.ts";
import { generateEdgeXml, startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { edgeTenant } from "./edge-tenant/fixtures.ts";
import { MINUTE, T0 } from "./fixtures.ts";
import { poolAllocations } from "./ip-pool/fixtures.ts";
import { credentials, manager } from "./nsx-manager/fixtures.ts";

let simulator: RunningSimulator | undefined;
let connections: ManagerConnections | undefined;

afterEach(async () => {
  await connections?.close();
  await simulator?.close();
  simulator = undefined;
  connections = undefined;
});

async function setup(objects: NsxvObject[], deps: Partial<ReconcilerDeps> = {}, secret = credentials()) {
  simulator = await startSimulator({
    credentials: { username: "admin", password: "s3cret" },
    state: {
      edges: [{ xml: generateEdgeXml({ edgeNumber: 1, tenant: "default", firewallRules: 50 }) }],
      pools: [
        {
          id: "ipaddresspool-1",
          name: "vteps-v6",
          ranges: [{ start: "2001:db8::1", end: "2001:db8::ff" }],
          allocationIds: "prefixed",
          allocations: [
            { ip: "2001:db8::1", note: "host-1" },
            { ip: "2001:db8::2", note: "host-2" },
            { ip: "2001:db8::a", note: "removed-host" },
          ],
        },
      ],
    },
  });
  const url = simulator.url;
  const store = memoryStore({
    objects: objects.map((o) => (o.kind === "NSXManager" ? { ...o, spec: { ...o.spec, url } } : o)),
    secrets: [secret],
  });
  connections = new ManagerConnections({
    createClient: (options) => new ManagerClient({ ...options, maxRetries: 0 }),
  });
  const clock = { ms: T0.getTime(), now: () => clock.ms, setTimer: realClock.setTimer };
  const reconcile = createReconciler({ store, connections, clock, random: () => 0.5, ...deps });
  const pass = async (object: NsxvObject) => {
    const report = await reconcile(refOf(object));
    const current = store.get(refOf(object)) as NsxvObject;
    if (report.status !== undefined) store.put({ ...current, status: report.status } as NsxvObject);
    return report;
  };
  return { sim: simulator, clock, pass };
}

describe("reconcile against the simulator", () => {
  it("corrects a tenant with the whole document sent back", async () => {
    const object = edgeTenant({ edgeId: "edge-1", tenant: "blue" });
    const { sim, pass } = await setup([manager(), object]);
    const before = sim.state.edge("edge-1");
    const record = await pass(object);
    expect(record.status, "the first pass records the original").toMatchObject({ originalTenant: "default" });
    expect(sim.state.edge("edge-1")?.doc.tenant, "and writes nothing").toBe("default");
    const report = await pass(object);
    expect(report.outcome.type).toBe("done");
    expect(report.changes.tenantCorrections).toEqual([{ edgeId: "edge-1", from: "default", to: "blue" }]);
    const after = sim.state.edge("edge-1");
    expect(after?.doc.tenant).toBe("blue");
    expect(after?.doc.version).toBe((before?.doc.version ?? 0) + 1);
    expect(sim.state.audit.snapshot().violations, "no content lost in the PUT").toEqual([]);
  });

  it("releases an IPv6 stray only after its grace period, and never an allowed address", async () => {
    const object = poolAllocations({ allowed: ["2001:db8::/125"], release: { minStrayAge: "2m" } });
    const { sim, clock, pass } = await setup([manager(), object]);
    const first = await pass(object);
    expect(first.status).toMatchObject({ stray: [{ ip: "2001:db8::a", note: "removed-host" }], missing: 5 });
    expect(sim.state.audit.snapshot().releases).toEqual([]);
    clock.ms += 2 * MINUTE;
    const second = await pass(object);
    expect(second.changes.releases).toEqual([
      {
        poolId: "ipaddresspool-1",
        ip: "2001:db8::a",
        allocationId: "allocatedipaddress-3",
        note: "removed-host",
      },
    ]);
    const left = sim.state
      .pool("ipaddresspool-1")
      ?.allocations()
      .map((a) => a.ipAddress);
    expect(left).toEqual(["2001:db8::1", "2001:db8::2"]);
  });

  it("reports refused credentials as Unauthorized on the NSXManager", async () => {
    const wrong = credentials("nsx-creds", { username: "admin", password: "wrong" });
    const { pass } = await setup([manager()], {}, wrong);
    const report = await pass(manager());
    expect(report.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "Unauthorized",
    });
    expect(report.status).toMatchObject({ reachable: true, authenticated: false });
    expect(JSON.stringify(report), "the password appears nowhere in the report").not.toContain("wrong");
  });
});
