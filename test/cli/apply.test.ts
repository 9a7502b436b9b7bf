/**
 * `apply` end to end against the simulator, in-process: it converges, edge documents keep all
 * their content but the tenant, only strays are released and only with --release-strays,
 * maxPerSync holds, Observe and paused objects are left alone, failures name object and reason.
 */
import { describe, expect, it } from "vitest";
import { runOneShotCommand } from "../../src/cli/plan-apply.ts";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import { edgeModelOf, modelsEqualExcept } from "../../src/simulator/edge-model.ts";
import { startRewritingProxy } from "../faults/rewriting-proxy.ts";
import {
  allocations,
  captureIo,
  DEMO_MANIFESTS,
  edgeTenant,
  manager,
  poolAllocations,
  secret,
  demoPerTest,
} from "./helpers.ts";
import { callsOf } from "../support/calls.ts";

const demo = demoPerTest();
const { dirs } = demo;

const STRAYS = [
  "ipaddresspool-1 10.20.0.12",
  "ipaddresspool-1 10.20.0.15",
  "ipaddresspool-2 2001:db8:20::1a0",
];

function edges(): Map<string, EdgeDocument> {
  return new Map(demo.sim.state.edges().map((e) => [e.id, e.doc.clone()]));
}

describe("apply --release-strays on the demo manifests", () => {
  it("converges: corrections and releases done, the next plan shows no changes (exit 0)", async () => {
    const flags = { filename: [DEMO_MANIFESTS], managerUrl: [`lab=${demo.sim.url}`] };
    const io = captureIo();
    expect(await runOneShotCommand("apply", { ...flags, releaseStrays: true }, io)).toBe(0);
    expect(io.out()).toContain(`~ tenant: "default" → "tenant-blue"  corrected`);
    expect(io.out()).toContain(`- 10.20.0.12  note "controller-3 (removed)"  released`);
    expect(io.out()).toContain(
      "Applied: 2 tenant corrections, 3 releases. 1 object observed only, 1 paused.",
    );

    const again = captureIo();
    expect(await runOneShotCommand("plan", flags, again)).toBe(0);
    expect(again.out()).toContain("No changes. 1 object observed only, 1 paused.");
  });

  it("keeps every edge document's content but the tenant (no lost-content PUT)", async () => {
    const before = edges();
    await runOneShotCommand(
      "apply",
      { filename: [DEMO_MANIFESTS], managerUrl: [`lab=${demo.sim.url}`], releaseStrays: true },
      captureIo(),
    );
    const after = edges();
    expect(demo.sim.state.audit.snapshot().violations).toEqual([]);
    expect(callsOf(demo.sim)["putEdge"]).toBe(2);
    const tenants = Object.fromEntries([...after].map(([id, doc]) => [id, doc.tenant]));
    expect(tenants).toEqual({ "edge-1": "tenant-blue", "edge-2": "tenant-green", "edge-3": "legacy-ops" });
    // the manager stores what it is sent in its own format: compare information, not bytes
    const ignored = new Set(["tenant", "version", "edgeSummary"]);
    for (const [id, doc] of before) {
      const [was, now] = [doc, after.get(id) as EdgeDocument].map((d) => edgeModelOf(d.serialize()));
      expect(modelsEqualExcept(was!, now!, ignored), id).toBe(true);
    }
    expect(after.get("edge-3")?.serialize(), "the Observe edge is untouched").toBe(
      before.get("edge-3")?.serialize(),
    );
  });

  it("releases only the strays: allowed addresses and the paused pool's stay allocated", async () => {
    const before = allocations(demo.sim);
    await runOneShotCommand(
      "apply",
      { filename: [DEMO_MANIFESTS], managerUrl: [`lab=${demo.sim.url}`], releaseStrays: true },
      captureIo(),
    );
    expect(allocations(demo.sim)).toEqual(before.filter((a) => !STRAYS.includes(a)));
    const released = demo.sim.state.audit.snapshot().releases.map((r) => `${r.poolId} ${r.ip}`);
    expect(released.sort()).toEqual(STRAYS);
    expect(allocations(demo.sim)).toContain("ipaddresspool-3 192.168.50.99"); // stray, but its object is paused
  });

  it("prints JSON with each change's result", async () => {
    const io = captureIo();
    const flags = { filename: [DEMO_MANIFESTS], managerUrl: [`lab=${demo.sim.url}`], releaseStrays: true };
    expect(await runOneShotCommand("apply", { ...flags, output: "json" }, io)).toBe(0);
    const doc = JSON.parse(io.out());
    expect(doc).toMatchObject({
      command: "apply",
      releaseStrays: true,
      exitCode: 0,
      summary: { tenantCorrections: 2, releases: 3, errors: 0 },
    });
    const results = doc.objects.flatMap((o: { changes: { result: string }[] }) =>
      o.changes.map((c) => c.result),
    );
    expect(results.sort()).toEqual(["done", "done", "done", "done", "done", "observed"]);
  });
});

describe("apply without --release-strays", () => {
  it("corrects tenants, releases nothing, says how to release, and exits 2: something held back", async () => {
    const flags = { filename: [DEMO_MANIFESTS], managerUrl: [`lab=${demo.sim.url}`] };
    const io = captureIo();
    expect(await runOneShotCommand("apply", flags, io)).toBe(2);
    expect(callsOf(demo.sim)["releaseAddress"] ?? 0).toBe(0);
    expect(callsOf(demo.sim)["putEdge"]).toBe(2);
    expect(io.out()).toContain(
      `· 10.20.0.12  note "controller-3 (removed)"  held back: rerun with --release-strays`,
    );
    expect(io.out()).toContain(
      "Applied: 2 tenant corrections, 0 releases. 1 object observed only, 1 paused, 3 held back.",
    );
    expect(io.out()).toContain("Strays are released only by apply --release-strays");
    expect(await runOneShotCommand("plan", flags, captureIo()), "the strays are still pending").toBe(2);
  });
});

describe("apply honours spec.release", () => {
  it("maxPerSync 1 releases one stray per run, oldest then lowest address first", async () => {
    const pool = poolAllocations(
      "ctl",
      { id: "ipaddresspool-1" },
      ["10.20.0.10-10.20.0.11", "10.20.0.20-10.20.0.29"],
      {
        spec: { release: { maxPerSync: 1 } },
      },
    );
    const dir = dirs.write({ "all.yaml": [manager(demo.sim.url), secret(), pool] });
    const first = captureIo();
    expect(
      await runOneShotCommand("apply", { filename: [dir], releaseStrays: true }, first),
      "one held back",
    ).toBe(2);
    expect(first.out()).toContain(
      '10.20.0.15  note "test-vm jdoe"  held back: spec.release.maxPerSync 1 reached this pass',
    );
    expect(demo.sim.state.audit.snapshot().releases.map((r) => r.ip)).toEqual(["10.20.0.12"]);
    expect(await runOneShotCommand("apply", { filename: [dir], releaseStrays: true }, captureIo())).toBe(0);
    expect(demo.sim.state.audit.snapshot().releases.map((r) => r.ip)).toEqual(["10.20.0.12", "10.20.0.15"]);
    expect(await runOneShotCommand("plan", { filename: [dir] }, captureIo())).toBe(0);
  });

  it("maxPerSync 0 never releases, and nothing is pending", async () => {
    const pool = poolAllocations("ctl", { id: "ipaddresspool-1" }, ["10.20.0.10"], {
      spec: { release: { maxPerSync: 0 } },
    });
    const dir = dirs.write({ "all.yaml": [manager(demo.sim.url), secret(), pool] });
    const io = captureIo();
    expect(await runOneShotCommand("apply", { filename: [dir], releaseStrays: true }, io)).toBe(0);
    expect(io.out()).toContain("never released: spec.release.maxPerSync is 0");
    expect(callsOf(demo.sim)["releaseAddress"] ?? 0).toBe(0);
    expect(await runOneShotCommand("plan", { filename: [dir] }, captureIo())).toBe(0);
  });
});

describe("apply leaves Observe and paused objects alone", () => {
  it.each([
    {
      name: "Observe",
      reason: "Observe reports drift and changes nothing",
      extra: { spec: { managementPolicy: "Observe" } },
    },
    {
      name: "Paused",
      reason: "a paused object makes no manager call at all",
      extra: { annotations: { "nsxv.io/paused": "true" } },
    },
  ])("$name", async ({ name, reason, extra }) => {
    const before = allocations(demo.sim);
    const dir = dirs.write({
      "all.yaml": [
        manager(demo.sim.url),
        secret(),
        edgeTenant("web", "edge-1", "tenant-blue", extra),
        poolAllocations("ctl", { id: "ipaddresspool-1" }, ["10.20.0.10"], extra),
      ],
    });
    const io = captureIo();
    expect(await runOneShotCommand("apply", { filename: [dir], releaseStrays: true }, io)).toBe(0);
    expect(demo.sim.state.edge("edge-1")?.doc.tenant).toBe("default");
    expect(allocations(demo.sim)).toEqual(before);
    const calls = callsOf(demo.sim);
    expect([calls["putEdge"] ?? 0, calls["releaseAddress"] ?? 0], reason).toEqual([0, 0]);
    if (name === "Paused")
      expect([calls["getEdge"] ?? 0, calls["listAllocations"] ?? 0], "no calls at all").toEqual([0, 0]);
    else expect(io.out()).toContain("(observe only: would release)");
  });
});

describe("apply makes the fewest calls", () => {
  it("N drifted edges: the edge list (which is also the manager's check), then a GET and a PUT each: 2N + 1", async () => {
    const dir = dirs.write({
      "all.yaml": [
        manager(demo.sim.url),
        secret(),
        edgeTenant("web", "edge-1", "tenant-blue"),
        edgeTenant("app", "edge-2", "tenant-green"),
        edgeTenant("db", "edge-3", "legacy-ops"),
      ],
    });
    expect(await runOneShotCommand("apply", { filename: [dir] }, captureIo())).toBe(0);
    expect(callsOf(demo.sim)).toEqual({ listEdges: 1, getEdge: 2, putEdge: 2 });
  });
});

describe("apply --release-strays releases only the allocation it planned", () => {
  it("a 409 after which the address holds a new allocation: no DELETE for it, and the output says so", async () => {
    const pool = demo.sim.state.pool("ipaddresspool-1")!;
    const stray = "10.20.0.12";
    const planned = pool.allocations().find((a) => a.ipAddress === stray)!;
    let answered409 = false;
    // the manager releases the address, a new machine is given it at once, and the DELETE is answered 409
    const proxy = await startRewritingProxy(demo.sim.url, [
      {
        method: "DELETE",
        path: /\/ipaddresspool-1\/ipaddresses\/10\.20\.0\.12$/,
        body: (t) => t,
        intercept: async () => {
          if (answered409) return undefined;
          answered409 = true;
          demo.sim.state.release(pool, stray);
          demo.sim.state.allocate("ipaddresspool-1", { mode: "RESERVE", ipAddress: stray, note: "vm-new" });
          return {
            status: 409,
            body: "<error><details>concurrent change</details><errorCode>409</errorCode></error>",
          };
        },
      },
    ]);
    try {
      const dir = dirs.write({
        "all.yaml": [
          manager(proxy.url),
          secret(),
          poolAllocations("ctl", { id: "ipaddresspool-1" }, [
            "10.20.0.10-10.20.0.11",
            "10.20.0.20-10.20.0.21",
          ]),
        ],
      });
      const io = captureIo();
      const code = await runOneShotCommand(
        "apply",
        { filename: [dir], releaseStrays: true, output: "json" },
        io,
      );
      expect(answered409, "the DELETE met the 409").toBe(true);
      const renewed = pool.allocations().find((a) => a.ipAddress === stray);
      expect(renewed?.note, "the new machine keeps its address").toBe("vm-new");
      expect(renewed?.id).not.toBe(planned.id);
      expect(
        demo.sim.state.audit.snapshot().releases.map((r) => `${r.ip} ${r.note ?? ""}`),
        "released: the other stray, and the planned allocation only by the manager's own act before its 409",
      ).toEqual([`${stray} ${planned.note}`, "10.20.0.15 test-vm jdoe"]);
      const view = JSON.parse(io.out()) as {
        summary: { releases: number; heldBack: number };
        objects: {
          changes: { ip: string; allocationId?: string; note?: string; result: string; why?: string }[];
        }[];
      };
      const changes = view.objects[1]!.changes;
      const old = changes.find((c) => c.ip === stray);
      expect(old, "the planned allocation is not reported done").toMatchObject({
        allocationId: planned.id,
        note: planned.note,
        result: "held",
      });
      expect(old?.why).toContain(`another allocation there (id ${renewed!.id}, note "vm-new")`);
      expect(changes.find((c) => c.ip === "10.20.0.15")?.result).toBe("done");
      expect(view.summary).toMatchObject({ releases: 1, heldBack: 1 });
      expect(code, "a stray is left: held back").toBe(2);
    } finally {
      await proxy.close();
    }
  });
});

describe("apply failures name the object and the reason, and exit 1", () => {
  it("an unknown edge fails alone: the other objects are still corrected", async () => {
    const dir = dirs.write({
      "all.yaml": [
        manager(demo.sim.url),
        secret(),
        edgeTenant("gone", "edge-99", "t"),
        edgeTenant("web", "edge-1", "tenant-blue"),
      ],
    });
    const io = captureIo();
    expect(await runOneShotCommand("apply", { filename: [dir] }, io)).toBe(1);
    expect(io.out()).toMatch(
      /EdgeTenant default\/gone {2}edge-99\n {2}✗ EdgeNotFound: edge edge-99: GET \/api\/4\.0\/edges\/edge-99: HTTP 404/,
    );
    expect(io.out()).toContain("Applied: 1 tenant correction, 0 releases. 1 error.");
    expect(demo.sim.state.edge("edge-1")?.doc.tenant).toBe("tenant-blue");
  });

  it("a release the manager refuses", async () => {
    demo.sim.state.faults.add({
      route: "releaseAddress",
      kind: "status",
      status: 403,
      errors: [
        {
          errorCode: "403",
          details: "User does not have the rights to release addresses",
          moduleName: "ipam",
        },
      ],
    });
    const dir = dirs.write({
      "all.yaml": [
        manager(demo.sim.url),
        secret(),
        poolAllocations("ctl", { id: "ipaddresspool-1" }, ["10.20.0.10-10.20.0.11"]),
      ],
    });
    const io = captureIo();
    expect(await runOneShotCommand("apply", { filename: [dir], releaseStrays: true }, io)).toBe(1);
    expect(io.out()).toContain("IPPoolAllocations default/ctl");
    expect(io.out()).toContain("✗ Unauthorized: the user lacks the rights: DELETE");
    expect(io.out()).toContain("User does not have the rights to release addresses");
    expect(io.out()).toContain("not carried out: see the error");
    expect(demo.sim.state.audit.snapshot().releases).toEqual([]);
  });
});
