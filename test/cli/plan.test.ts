/**
 * `plan` end to end against the simulator, in-process: exit codes, the readable plan, the JSON
 * document, manifest errors before any call, credentials (Secret, environment, wrong ones),
 * objects the manager does not know, colours.
 */
import { describe, expect, it } from "vitest";
import { runOneShotCommand } from "../../src/cli/plan-apply.ts";
import {
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

/** What a simulator with the demo state holds: edge-1 "default", edge-3 "legacy-ops"; pool-1 strays .12 and .15. */
const ALL_OF_POOL_1 = ["10.20.0.10-10.20.0.30"];

interface ExitCase {
  name: string;
  reason: string;
  objects: (url: string) => object[];
  exit: number;
}

const exitCases: ExitCase[] = [
  {
    name: "NoChanges",
    reason: "the edge has the declared tenant and every allocation is allowed",
    objects: () => [edgeTenant("web", "edge-1", "default"), poolAllocations("ctl", { id: "ipaddresspool-1" }, ALL_OF_POOL_1)],
    exit: 0,
  },
  { name: "TenantDrift", reason: "a tenant to correct is a pending change", objects: () => [edgeTenant("web", "edge-1", "tenant-blue")], exit: 2 },
  {
    name: "StraysOnly",
    reason: "releases are pending changes even without --release-strays",
    objects: () => [poolAllocations("ctl", { id: "ipaddresspool-1" }, ["10.20.0.10-10.20.0.11"])],
    exit: 2,
  },
  {
    name: "ObserveDriftOnly",
    reason: "what an Observe object would change is not pending",
    objects: () => [
      edgeTenant("web", "edge-1", "tenant-blue", { spec: { managementPolicy: "Observe" } }),
      poolAllocations("ctl", { id: "ipaddresspool-1" }, ["10.20.0.10"], { spec: { managementPolicy: "Observe" } }),
    ],
    exit: 0,
  },
  {
    name: "PausedDriftOnly",
    reason: "a paused object makes no call and has nothing pending",
    objects: () => [edgeTenant("web", "edge-1", "tenant-blue", { annotations: { "nsxv.io/paused": "true" } })],
    exit: 0,
  },
  { name: "UnknownEdge", reason: "an object that fails makes the plan fail", objects: () => [edgeTenant("web", "edge-99", "x")], exit: 1 },
  {
    name: "Conflict",
    reason: "two objects claiming one edge cannot both hold",
    objects: () => [edgeTenant("a", "edge-1", "tenant-blue"), edgeTenant("b", "edge-1", "tenant-red")],
    exit: 1,
  },
  {
    name: "ErrorWinsOverChanges",
    reason: "exit 1 when one object fails even if another has changes",
    objects: () => [edgeTenant("web", "edge-1", "tenant-blue"), edgeTenant("gone", "edge-99", "x")],
    exit: 1,
  },
]; // prettier-ignore

describe("plan exit codes", () => {
  it.each(exitCases)("$name", async (c) => {
    const dir = dirs.write({ "all.yaml": [manager(demo.sim.url), secret(), ...c.objects(demo.sim.url)] });
    const io = captureIo();
    const exit = await runOneShotCommand("plan", { filename: [dir] }, io);
    expect(exit, `${c.reason}\n${io.out()}${io.err()}`).toBe(c.exit);
    const calls = callsOf(demo.sim);
    expect(calls["putEdge"] ?? 0, "plan never writes").toBe(0);
    expect(calls["releaseAddress"] ?? 0, "plan never releases").toBe(0);
  });
});

describe("plan reads the edge list first", () => {
  it("converged edges cost the list and no edge read; a drifted one costs its read", async () => {
    const converged = [
      edgeTenant("web", "edge-1", "default"),
      edgeTenant("app", "edge-2", "default"),
      edgeTenant("db", "edge-3", "legacy-ops"),
    ];
    const dir = dirs.write({ "all.yaml": [manager(demo.sim.url), secret(), ...converged] });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, io), io.err()).toBe(0);
    expect(callsOf(demo.sim), "the manager's check is the one page of edges").toEqual({ listEdges: 1 });
    expect(io.out(), "name and version from the list's summary").toContain("edge-2 (esg-02, version 1)");

    demo.sim.state.counters.reset();
    const drifted = [...converged.slice(0, 2), edgeTenant("db", "edge-3", "tenant-red")];
    const again = dirs.write({ "all.yaml": [manager(demo.sim.url), secret(), ...drifted] });
    expect(await runOneShotCommand("plan", { filename: [again] }, captureIo())).toBe(2);
    expect(callsOf(demo.sim)).toEqual({ listEdges: 1, getEdge: 1 });
  });
});

describe("plan says where each verdict comes from, and reads in full when asked", () => {
  it("a list that lies: in sync from the list (and said so); --full-read finds the drift", async () => {
    const objects = [manager(demo.sim.url), secret(), edgeTenant("web", "edge-1", "default")];
    const dir = dirs.write({ "all.yaml": objects });
    // the list is frozen as it is, then the edge changes: the list shows the old tenant
    demo.sim.state.faults.add({ route: "*", kind: "staleList" });
    demo.sim.state.changeEdge("edge-1", { tenant: "someone-else" });
    const listed = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, listed)).toBe(0);
    expect(listed.out()).toContain(
      "EdgeTenant default/web  edge-1 (esg-web, version 12)  (from the edge list)  ✓ in sync",
    );
    expect(listed.out()).toContain("1 edge judged from the manager's edge list, not read");

    demo.sim.state.counters.reset();
    const read = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir], fullRead: true, output: "json" }, read)).toBe(
      2,
    );
    const doc = JSON.parse(read.out());
    expect(doc).toMatchObject({ fullRead: true, summary: { tenantCorrections: 1, fromEdgeList: 0 } });
    expect(doc.objects[1]).toMatchObject({
      observedVia: "Read",
      changes: [{ type: "setTenant", from: "someone-else", to: "default", result: "planned" }],
    });
    expect(callsOf(demo.sim), "the list (the manager's check), and the edge read in full").toEqual({
      listEdges: 1,
      getEdge: 1,
    });
  });

  it("apply --full-read reads every edge, corrects what the read shows, and writes only after its read", async () => {
    const dir = dirs.write({
      "all.yaml": [
        manager(demo.sim.url),
        secret(),
        edgeTenant("web", "edge-1", "default"),
        edgeTenant("app", "edge-2", "default"),
      ],
    });
    demo.sim.state.faults.add({ route: "*", kind: "staleList" });
    demo.sim.state.changeEdge("edge-1", { tenant: "someone-else" });
    const io = captureIo();
    expect(await runOneShotCommand("apply", { filename: [dir], fullRead: true }, io)).toBe(0);
    expect(io.out()).toContain(`~ tenant: "someone-else" → "default"  corrected`);
    expect(io.out()).not.toContain("judged from the manager's edge list");
    expect(callsOf(demo.sim)).toEqual({ listEdges: 1, getEdge: 2, putEdge: 1 });
    expect(demo.sim.state.edge("edge-1")?.doc.tenant).toBe("default");
  });
});

describe("plan output", () => {
  it("prints each correction, each release with its note and age, Observe and paused objects, and counts", async () => {
    const io = captureIo();
    const exit = await runOneShotCommand(
      "plan",
      { filename: [DEMO_MANIFESTS], managerUrl: [`lab=${demo.sim.url}`] },
      io,
    );
    const out = io.out();
    expect(exit).toBe(2);
    expect(out, "a correction is planned on a full read, and says so").toContain(
      `EdgeTenant default/esg-web  edge-1 (esg-web, version 12)  (read in full)\n  ~ tenant: "default" → "tenant-blue"\n`,
    );
    expect(out).toContain(`- release 10.20.0.12  note "controller-3 (removed)"  stray now`);
    expect(out).toContain(`- release 2001:db8:20::1a0  note "vtep-esx-09 (decommissioned)"  stray now`);
    expect(out, "Observe writes nothing: the list's verdict stands, and says where it comes from").toMatch(
      /esg-db .*\(from the edge list\) {2}\[Observe\]\n {2}~ tenant: "legacy-ops" → "tenant-red" {2}\(observe only: not changed\)/,
    );
    expect(out).toContain(
      "1 edge judged from the manager's edge list, not read: --full-read reads every edge in full.",
    );
    expect(out).toContain("IPPoolAllocations default/dmz  ipaddresspool-3  [paused] no manager calls");
    expect(out).toContain("Plan: 2 tenant corrections, 3 releases. 1 object observed only, 1 paused.");
    expect(out).toContain("one pass cannot observe minStrayAge");
    expect(out, "no escape codes off a terminal").not.toContain("\u001b[");
    expect(io.err()).toBe("");
  });

  it("prints JSON with the documented shape", async () => {
    const io = captureIo();
    const exit = await runOneShotCommand(
      "plan",
      { filename: [DEMO_MANIFESTS], managerUrl: [`lab=${demo.sim.url}`], output: "json" },
      io,
    );
    const doc = JSON.parse(io.out());
    expect(exit).toBe(2);
    expect(doc).toMatchObject({
      formatVersion: 2,
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      command: "plan",
      releaseStrays: false,
      fullRead: false,
      exitCode: 2,
      summary: {
        objects: 7,
        tenantCorrections: 2,
        releases: 3,
        heldBack: 0,
        observedOnly: 1,
        paused: 1,
        conflicts: 0,
        errors: 0,
        fromEdgeList: 1,
      },
      skipped: [],
      manifestErrors: [],
    });
    const byName = Object.fromEntries(doc.objects.map((o: { name: string }) => [o.name, o]));
    expect(byName["esg-web"]).toEqual({
      kind: "EdgeTenant",
      namespace: "default",
      name: "esg-web",
      file: `${DEMO_MANIFESTS}/edges.yaml`,
      line: 2,
      managementPolicy: "Enforce",
      target: "edge-1 (esg-web, version 12)",
      observedVia: "Read",
      state: "changes",
      message: expect.stringContaining("would set it to"),
      changes: [
        { type: "setTenant", edgeId: "edge-1", from: "default", to: "tenant-blue", result: "planned" },
      ],
    });
    expect(byName["esg-db"]).toMatchObject({
      observedVia: "EdgeList",
      state: "observedOnly",
      changes: [{ result: "observed", why: expect.any(String) }],
    });
    expect(byName["dmz"]).toMatchObject({ state: "paused", changes: [] });
    expect(byName["controllers"].changes).toEqual([
      expect.objectContaining({
        type: "releaseAddress",
        poolId: "ipaddresspool-1",
        ip: "10.20.0.12",
        note: "controller-3 (removed)",
        result: "planned",
      }),
      expect.objectContaining({ ip: "10.20.0.15", result: "planned" }),
    ]);
    expect(byName["lab"]).toMatchObject({ kind: "NSXManager", state: "inSync", target: demo.sim.url });
  });

  it("tells since when an address is stray when the manifest carries the status (kubectl get -o yaml)", async () => {
    const allocationId = (ip: string) =>
      demo.sim.state
        .pool("ipaddresspool-1")
        ?.allocations()
        .find((a) => a.ipAddress === ip)?.id;
    const pool = {
      ...poolAllocations("ctl", { id: "ipaddresspool-1" }, [
        "10.20.0.10-10.20.0.11",
        "10.20.0.20-10.20.0.29",
      ]),
      status: {
        stray: [
          // the allocation the manager holds there: the same one, so its clock is kept
          {
            ip: "10.20.0.12",
            allocationId: allocationId("10.20.0.12"),
            note: "controller-3 (removed)",
            firstSeen: "2026-01-02T03:04:05Z",
          },
          // recorded for another allocation than the one there now: a new stray
          {
            ip: "10.20.0.15",
            allocationId: "allocatedipaddress-999",
            note: "test-vm jdoe",
            firstSeen: "2026-01-02T03:04:05Z",
          },
        ],
      },
    };
    const dir = dirs.write({ "all.yaml": [manager(demo.sim.url), secret(), pool] });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, io)).toBe(2);
    expect(io.out()).toContain(
      `- release 10.20.0.12  note "controller-3 (removed)"  stray since 2026-01-02T03:04:05Z`,
    );
    expect(io.out()).toContain(`- release 10.20.0.15  note "test-vm jdoe"  stray now`);
  });

  it("uses colours on a terminal, and none when NO_COLOR is set", async () => {
    const flags = { filename: [DEMO_MANIFESTS], managerUrl: [`lab=${demo.sim.url}`] };
    const tty = captureIo({ isTTY: true });
    await runOneShotCommand("plan", flags, tty);
    expect(tty.out()).toContain("\u001b[33m~\u001b[39m");
    const noColor = captureIo({ isTTY: true, env: { NO_COLOR: "1" } });
    await runOneShotCommand("plan", flags, noColor);
    expect(noColor.out()).not.toContain("\u001b[");
  });

  it("notes skipped kinds on stderr and plans the rest", async () => {
    const configMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings" },
      data: { a: "b" },
    };
    const dir = dirs.write({
      "all.yaml": [configMap, manager(demo.sim.url), secret(), edgeTenant("web", "edge-1", "default")],
    });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, io)).toBe(0);
    expect(io.err()).toMatch(/note: skipped v1 ConfigMap default\/settings \(.*all\.yaml:1\)/);
  });
});

describe("plan without a cluster decides what a cluster would", () => {
  it("reads a kubectl List item by item: no object goes unread", async () => {
    const list = {
      apiVersion: "v1",
      kind: "List",
      items: [manager(demo.sim.url), secret(), edgeTenant("web", "edge-1", "tenant-blue")],
    };
    const dir = dirs.write({ "list.yaml": [list] });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, io)).toBe(2);
    expect(io.out()).toContain("EdgeTenant default/web");
    expect(io.out()).toContain('~ tenant: "default" → "tenant-blue"');
    expect(io.err(), "nothing skipped").toBe("");
  });

  it("refuses a dependent whose NSXManager is not in the files, before any call", async () => {
    const dir = dirs.write({ "a.yaml": [secret(), edgeTenant("web", "edge-1", "tenant-blue")] });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, io)).toBe(1);
    expect(io.err()).toMatch(
      /a\.yaml:\d+: document 2: EdgeTenant default\/web: spec\.managerRef\.name: NSXManager default\/lab is not in the manifests/,
    );
    expect(callsOf(demo.sim)).toEqual({});
  });

  it("blames an invalid NSXManager once, not its dependents as missing", async () => {
    const dir = dirs.write({
      "a.yaml": [
        manager(demo.sim.url, { requestsPerSecond: 10_000 }),
        secret(),
        edgeTenant("web", "edge-1", "t"),
      ],
    });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, io)).toBe(1);
    expect(io.err()).toMatch(/NSXManager default\/lab: spec\.requestsPerSecond: Invalid value: 10000/);
    expect(io.err()).not.toContain("is not in the manifests");
    expect(io.err()).toContain("1 invalid manifest");
    expect(callsOf(demo.sim)).toEqual({});
  });

  it("lets the first of two objects naming one edge act, and says so in file terms", async () => {
    const dir = dirs.write({
      "a.yaml": [manager(demo.sim.url), secret(), edgeTenant("first", "edge-1", "tenant-blue")],
      "b.yaml": [edgeTenant("second", "edge-1", "tenant-red")],
    });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, io)).toBe(1);
    expect(io.out()).toContain('~ tenant: "default" → "tenant-blue"');
    expect(io.out()).toMatch(
      /✗ Conflict: edge edge-1 is also named by EdgeTenant default\/first \(.*a\.yaml:\d+\), which comes first in the files: this object acts on nothing/,
    );
  });
});

describe("plan against a URL of the wrong scheme", () => {
  it("says that the manager does not speak TLS and to use http://", async () => {
    const io = captureIo();
    const https = demo.sim.url.replace("http://", "https://");
    const exit = await runOneShotCommand(
      "plan",
      { filename: [DEMO_MANIFESTS], managerUrl: [`lab=${https}`] },
      io,
    );
    expect(exit).toBe(1);
    expect(io.out()).toContain(`the server at ${https} does not speak TLS: use http://`);
    expect(io.out()).not.toContain("SSL routines");
  });
});

describe("plan text is safe to read", () => {
  it("escapes control characters from the manager, so a note cannot forge report lines", async () => {
    // what XML can carry: line breaks, tabs, C1 controls, bidirectional overrides
    const forged = "ctl\n  ✓ nothing to see\t\u0085\u202ex";
    demo.sim.state.allocate("ipaddresspool-1", { mode: "RESERVE", ipAddress: "10.20.0.30", note: forged });
    const io = captureIo();
    await runOneShotCommand("plan", { filename: [DEMO_MANIFESTS], managerUrl: [`lab=${demo.sim.url}`] }, io);
    const out = io.out();
    expect(out).toContain(String.raw`"ctl\n  ✓ nothing to see\t\u0085\u202ex"`);
    expect(
      out.split("\n").filter((line) => line.startsWith("  ✓ nothing")),
      "no forged line",
    ).toEqual([]);
    expect(out, "no raw control character reaches the terminal").not.toMatch(/[\t\u0085\u202e]/);
  });
});

describe("plan refuses bad input before any manager call", () => {
  const bad = () =>
    dirs.write({
      "a.yaml": [manager("http://127.0.0.1:1"), secret(), edgeTenant("web", "edge-x", "t")],
      "b.yaml": [poolAllocations("ctl", { id: "ipaddresspool-1" }, ["10.0.0.1", "10.0.0.300"])],
    });

  it("reports every manifest error with file, line, object and field, and exits 1", async () => {
    const dir = bad();
    const io = captureIo();
    expect(
      await runOneShotCommand("plan", { filename: [dir], managerUrl: [`lab=${demo.sim.url}`] }, io),
    ).toBe(1);
    expect(io.err()).toContain("2 invalid manifests; no manager was called");
    expect(io.err()).toMatch(/a\.yaml:\d+: document 3: EdgeTenant default\/web: spec\.edgeId: /);
    expect(io.err()).toMatch(/b\.yaml:\d+: document 1: IPPoolAllocations default\/ctl: spec\.allowed\[1\]: /);
    expect(io.out()).toBe("");
    expect(callsOf(demo.sim), "no call reached the manager").toEqual({});
  });

  it("reports them in the JSON document too", async () => {
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [bad()], output: "json" }, io)).toBe(1);
    const doc = JSON.parse(io.out());
    expect(doc).toMatchObject({ formatVersion: 2, command: "plan", exitCode: 1, objects: [] });
    expect(doc.summary.errors, "summary counts the manifest errors").toBe(2);
    expect(
      doc.manifestErrors.map((e: { documentIndex: number }) => e.documentIndex),
      "counted from 1",
    ).toEqual([3, 1]);
    expect(doc.manifestErrors.map((e: { field: string }) => e.field)).toEqual([
      "spec.edgeId",
      "spec.allowed[1]",
    ]);
    expect(callsOf(demo.sim)).toEqual({});
  });

  it.each([
    {
      name: "UnknownManagerName",
      flag: "other=http://127.0.0.1:1",
      text: "names no NSXManager of the manifests: other",
    },
    {
      name: "NotNameEqualsUrl",
      reason: "the name says which manager",
      flag: "http://127.0.0.1:1",
      text: "want NAME=URL",
    },
    {
      name: "NotHttp",
      reason: "managers speak HTTPS (or HTTP for a simulator)",
      flag: "lab=ftp://127.0.0.1",
      text: "must be https:// or http://",
    },
  ])("refuses --manager-url $name", async ({ flag, text, reason }) => {
    const dir = dirs.write({
      "all.yaml": [manager(demo.sim.url), secret(), edgeTenant("web", "edge-1", "t")],
    });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir], managerUrl: [flag] }, io), reason).toBe(1);
    expect(io.err()).toContain(text);
    expect(callsOf(demo.sim)).toEqual({});
  });

  it("refuses a path without any object", async () => {
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dirs.write({ "empty.yaml": "" })] }, io)).toBe(1);
    expect(io.err()).toContain("no NSXManager, EdgeTenant or IPPoolAllocations object");
  });
});

describe("plan credentials", () => {
  it("with wrong credentials: exit 1, a clear message, one refused call, no writes, no password printed", async () => {
    const dir = dirs.write({
      "all.yaml": [
        manager(demo.sim.url),
        secret("admin", "wrong-password-42"),
        edgeTenant("web", "edge-1", "tenant-blue"),
      ],
    });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, io)).toBe(1);
    expect(io.out()).toContain("Unauthorized: the manager refused the credentials");
    expect(io.out()).toMatch(
      /EdgeTenant default\/web.*\n {2}✗ ManagerNotReady: NSXManager default\/lab: its last check failed to authenticate/,
    );
    expect(io.out() + io.err()).not.toContain("wrong-password-42");
    expect(
      demo.sim.state.counters.snapshot(),
      "the check's one refused call; the dependents made none",
    ).toEqual({
      listEdges: { 401: 1 },
    });
  });

  it("NSX_USERNAME and NSX_PASSWORD win over the Secret, and work without one", async () => {
    await demo.restart({ username: "ops", password: "env-secret-7" });
    const objects = [manager(demo.sim.url), edgeTenant("web", "edge-1", "tenant-blue")];
    const env = { NSX_USERNAME: "ops", NSX_PASSWORD: "env-secret-7" };
    const withSecret = dirs.write({ "all.yaml": [...objects, secret("admin", "default")] });
    const withoutSecret = dirs.write({ "all.yaml": objects });

    expect(
      await runOneShotCommand("plan", { filename: [withSecret] }, captureIo()),
      "the Secret's are wrong",
    ).toBe(1);
    const io = captureIo({ env });
    expect(await runOneShotCommand("plan", { filename: [withSecret] }, io)).toBe(2);
    expect(io.out()).not.toContain("env-secret-7");
    expect(await runOneShotCommand("plan", { filename: [withoutSecret] }, captureIo({ env }))).toBe(2);
    const missing = captureIo();
    expect(await runOneShotCommand("plan", { filename: [withoutSecret] }, missing)).toBe(1);
    expect(missing.out()).toContain("Secret default/lab-credentials not found");
  });
});

describe("plan reports what the manager does not know", () => {
  it("an unknown edge, with the manager's error details", async () => {
    const dir = dirs.write({
      "all.yaml": [manager(demo.sim.url), secret(), edgeTenant("web", "edge-99", "t")],
    });
    const text = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, text)).toBe(1);
    expect(text.out()).toContain("EdgeNotFound: edge edge-99: GET /api/4.0/edges/edge-99: HTTP 404");
    expect(text.out()).toContain("errorCode 202");
    const json = captureIo();
    await runOneShotCommand("plan", { filename: [dir], output: "json" }, json);
    const web = JSON.parse(json.out()).objects.find((o: { name: string }) => o.name === "web");
    expect(web).toMatchObject({
      state: "error",
      error: {
        reason: "EdgeNotFound",
        manager: {
          status: 404,
          method: "GET",
          errorCode: "202",
          details: expect.stringContaining("edge-99"),
        },
      },
    });
  });

  it.each([
    {
      name: "UnknownPoolId",
      reason: "the scope's list does not have the id",
      pool: { id: "ipaddresspool-99" },
      text: "PoolNotFound: pool ipaddresspool-99 is not in scope globalroot-0 (3 pools listed)",
    },
    {
      name: "UnknownPoolName",
      reason: "no pool of the scope has the name",
      pool: { name: "nope" },
      text: `PoolNotFound: no pool named "nope" in scope globalroot-0`,
    },
    {
      name: "UnknownScope",
      reason: "the manager's own 404 for the scope is passed on",
      pool: { name: "vtep-v6", scope: "vdnscope-99" },
      text: "HTTP 404: The requested object : vdnscope-99 could not be found",
    },
  ])("$name", async ({ pool, text, reason }) => {
    const dir = dirs.write({
      "all.yaml": [manager(demo.sim.url), secret(), poolAllocations("p", pool, ["10.0.0.1"])],
    });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, io)).toBe(1);
    expect(io.out()).toContain("IPPoolAllocations default/p");
    expect(io.out(), reason).toContain(text);
  });
});
