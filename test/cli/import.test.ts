/**
 * `nsxv-operator import` against the simulator: what it reads (GETs only, every page), what it
 * writes (valid objects that round-trip names and tenants exactly) and that `plan` over the result
 * has nothing to change.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { runImport, type ImportFlags } from "../../src/cli/import.ts";
import { importManifests, uniqueName } from "../../src/cli/import-manifests.ts";
import { runOneShotCommand } from "../../src/cli/plan-apply.ts";
import { ManagerClient, type ManagerClientOptions } from "../../src/nsx/client.ts";
import { loadManifests } from "../../src/api/manifests.ts";
import type { ObjectMeta } from "../../src/api/types.ts";
import {
  startSimulator,
  type RunningSimulator,
  type SimulatorStateInput,
} from "../../src/simulator/index.ts";
import { captureIo, importFlags } from "./helpers.ts";

const ENV = { NSX_USERNAME: "admin", NSX_PASSWORD: "default" };
const root = mkdtempSync(join(tmpdir(), "nsxv-import-"));
let dirs = 0;
let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const UNUSUAL_TENANTS = ['acme "east" & <west>', "münchen-β ✓", "- not: a list", "#hash, 'quote'"];

/** an edge document with this name, tenant and datacenter; text escaped for XML */
function edgeXml(n: number, name: string, tenant: string | undefined, dc = "datacenter-21"): string {
  const esc = (t: string) => t.replaceAll("&", "&amp;").replaceAll("<", "&lt;");
  return (
    `<edge><id>edge-${n}</id><version>1</version><datacenterMoid>${dc}</datacenterMoid>` +
    `${tenant === undefined ? "" : `<tenant>${esc(tenant)}</tenant>`}<name>${esc(name)}</name><type>gatewayServices</type></edge>`
  );
}

const STATE: SimulatorStateInput = {
  edges: [
    ...UNUSUAL_TENANTS.map((tenant, i) => ({
      xml: edgeXml(i + 1, `Edge ${i + 1}: "special" & <co>`, tenant),
    })),
    { xml: edgeXml(10, "web", "blue") },
    { xml: edgeXml(11, "WEB", "green", "datacenter-99") },
    { generate: { count: 40, idStart: 100, firewallRules: 0, tenant: "bulk" } },
  ],
  pools: [
    {
      id: "ipaddresspool-1",
      name: "controllers",
      ranges: [{ start: "10.0.0.1", end: "10.0.0.40" }],
      allocations: [
        { ip: "10.0.0.4", note: "ctl-1\n- 10.0.0.99 # forged" },
        { ip: "10.0.0.5", note: "ctl-2" },
        { ip: "10.0.0.6" },
        { ip: "10.0.0.7" },
        { ip: "10.0.0.20", note: "vm & <co>" },
      ],
    },
    { id: "ipaddresspool-2", name: "vteps", ranges: [{ start: "2001:db8::1", end: "2001:db8::ff" }] },
  ],
};

async function start(state: SimulatorStateInput = STATE): Promise<RunningSimulator> {
  sim = await startSimulator({ state });
  return sim;
}

function flags(overrides: Partial<ImportFlags> = {}): ImportFlags {
  return importFlags(sim!.url, join(root, String(dirs++)), overrides);
}

/** the fields these tests read, whatever the kind */
interface Written {
  kind: string;
  metadata: ObjectMeta;
  spec: {
    edgeId?: string;
    tenant?: string;
    allowed?: string[];
    managementPolicy?: string;
    pool?: { id: string };
  };
}

async function objectsIn(dir: string): Promise<Written[]> {
  const set = await loadManifests([dir]);
  expect(set.errors).toEqual([]);
  return set.objects.map((o) => o.object as unknown as Written);
}

describe("nsxv-operator import", () => {
  it("writes every edge through the pages and every pool, with GETs only; plan afterwards has nothing to do", async () => {
    await start();
    const f = flags();
    const io = captureIo({ env: ENV });
    expect(await runImport(f, io)).toBe(0);
    expect(io.err()).toContain("listing edges: 46 of 46");
    expect(io.err()).toContain("reading edges: 46 of 46");
    expect(io.err()).toContain("1 NSXManager, 46 EdgeTenants, 2 IPPoolAllocations");
    expect(io.err(), "how to bind the Secret to the manager, for a cluster").toContain(
      `kubectl -n ${f.namespace} annotate secret ${f.name}-credentials nsxv.io/allowed-manager-urls=${f.url}`,
    );
    const calls = sim!.state.counters.snapshot();
    expect(Object.keys(calls).sort()).toEqual(["getEdge", "listAllocations", "listEdges", "listPools"]);

    const objects = await objectsIn(f.output);
    const tenants = objects.filter((o) => o.kind === "EdgeTenant");
    expect(tenants).toHaveLength(46);
    const byEdge = new Map(tenants.map((o) => [o.spec.edgeId, o]));
    UNUSUAL_TENANTS.forEach((tenant, i) => expect(byEdge.get(`edge-${i + 1}`)?.spec.tenant).toBe(tenant));
    expect(byEdge.get("edge-1")?.metadata.annotations?.["nsxv.io/edge-name"]).toBe(
      'Edge 1: "special" & <co>',
    );
    expect(byEdge.get("edge-1")?.metadata.labels?.["nsxv.io/edge-id"]).toBe("edge-1");
    const names = tenants.map((o) => o.metadata.name);
    expect(new Set(names).size).toBe(46);
    expect(byEdge.get("edge-10")?.metadata.name).toBe("web");
    expect(byEdge.get("edge-11")?.metadata.name).toBe("web-edge-11");
    expect(objects.every((o) => o.kind === "NSXManager" || o.spec.managementPolicy === "Observe")).toBe(true);

    const pool = objects.find((o) => o.kind === "IPPoolAllocations" && o.spec.pool?.id === "ipaddresspool-1");
    expect(pool?.spec.allowed).toEqual(["10.0.0.4/30", "10.0.0.20"]);
    const text = readFileSync(join(f.output, "ippoolallocations.yaml"), "utf8");
    expect(text).toContain('# 10.0.0.4 "ctl-1\\n- 10.0.0.99 # forged"');
    expect(text).toContain('# 10.0.0.20 "vm & <co>"');
    expect(
      objects.find((o) => o.kind === "IPPoolAllocations" && o.spec.pool?.id === "ipaddresspool-2")?.spec
        .allowed,
    ).toEqual([]);

    const before = sim!.state.counters.snapshot();
    const plan = captureIo({ env: ENV });
    expect(await runOneShotCommand("plan", { filename: [f.output] }, plan)).toBe(0);
    expect(plan.out()).toContain("No changes.");
    expect(sim!.state.counters.snapshot().putEdge).toEqual(before.putEdge);
  });

  it("600 edges come over the manager's three pages of 256, and plan over them has nothing to change", async () => {
    await start({ edges: [{ generate: { count: 600, firewallRules: 0, tenant: "bulk" } }] });
    const f = flags({ requestsPerSecond: 2000 });
    const io = captureIo({ env: ENV });
    expect(await runImport(f, io)).toBe(0);
    expect(io.err()).toContain(
      "listing edges: 256 of 600\nlisting edges: 512 of 600\nlisting edges: 600 of 600\n",
    );
    expect(sim!.state.counters.snapshot().listEdges).toEqual({ "200": 3 });
    expect((await objectsIn(f.output)).filter((o) => o.kind === "EdgeTenant")).toHaveLength(600);
    const plan = captureIo({ env: ENV });
    // the plan's client as fast as the import's: the pace is not what this test is about
    const createClient = (o: ManagerClientOptions) => new ManagerClient({ ...o, requestsPerSecond: 2000 });
    expect(await runOneShotCommand("plan", { filename: [f.output] }, plan, { createClient })).toBe(0);
    expect(plan.out()).toContain("No changes.");
  });

  it("with --management-policy Enforce, plan and apply still have nothing to change", async () => {
    await start();
    const f = flags({ managementPolicy: "Enforce", edgeName: /^web$/i, poolName: /^controllers$/ });
    expect(await runImport(f, captureIo({ env: ENV }))).toBe(0);
    const objects = await objectsIn(f.output);
    expect(
      objects.map((o) => `${o.kind} ${o.metadata.name} ${o.spec.managementPolicy ?? ""}`).sort(),
    ).toEqual([
      "EdgeTenant web Enforce",
      "EdgeTenant web-edge-11 Enforce",
      "IPPoolAllocations controllers Enforce",
      "NSXManager lab ",
    ]);
    expect(
      await runOneShotCommand(
        "apply",
        { filename: [f.output], releaseStrays: true },
        captureIo({ env: ENV }),
      ),
    ).toBe(0);
    expect(sim!.state.audit.snapshot().releases).toEqual([]);
    expect(sim!.state.counters.snapshot().putEdge).toBeUndefined();
  });

  it("filters edges by datacenter, and writes one file per object with --layout object", async () => {
    await start();
    const f = flags({ datacenter: "datacenter-99", layout: "object", poolName: /^nothing$/ });
    expect(await runImport(f, captureIo({ env: ENV }))).toBe(0);
    expect(readdirSync(f.output).sort()).toEqual(["edgetenants-web.yaml", "nsxmanager-lab.yaml"]);
    const [edge] = (await objectsIn(f.output)).filter((o) => o.kind === "EdgeTenant");
    expect(edge?.spec).toMatchObject({ edgeId: "edge-11", tenant: "green" });
  });

  it("refuses to overwrite files unless --force, writing nothing", async () => {
    await start({ edges: [{ xml: edgeXml(1, "a", "t") }] });
    const f = flags();
    expect(await runImport(f, captureIo({ env: ENV }))).toBe(0);
    writeFileSync(join(f.output, "edgetenants.yaml"), "# mine\n");
    const io = captureIo({ env: ENV });
    expect(await runImport(f, io)).toBe(1);
    expect(io.err()).toContain("edgetenants.yaml exist already: nothing was written (--force overwrites)");
    expect(readFileSync(join(f.output, "edgetenants.yaml"), "utf8")).toBe("# mine\n");
    expect(await runImport({ ...f, force: true }, captureIo({ env: ENV }))).toBe(0);
    expect(readFileSync(join(f.output, "edgetenants.yaml"), "utf8")).toContain("edgeId: edge-1");
  });

  it("says which edges it could not declare, and why", async () => {
    await start({ edges: [{ xml: edgeXml(1, "no-tenant", undefined) }, { xml: edgeXml(2, "ok", "t") }] });
    const f = flags();
    const io = captureIo({ env: ENV });
    expect(await runImport(f, io)).toBe(0);
    expect(io.err()).toContain(
      'not imported: edge edge-1 ("no-tenant"): it has no tenant (an EdgeTenant needs one)',
    );
    expect((await objectsIn(f.output)).map((o) => o.kind).sort()).toEqual(["EdgeTenant", "NSXManager"]);
  });

  it("needs NSX_USERNAME and NSX_PASSWORD, and makes no call without them", async () => {
    await start();
    const io = captureIo({ env: {} });
    expect(await runImport(flags(), io)).toBe(1);
    expect(io.err()).toBe("error: set NSX_USERNAME and NSX_PASSWORD to the manager's credentials\n");
    expect(sim!.state.counters.snapshot()).toEqual({});
  });

  it("a manager that refuses the credentials is one error line and exit 1", async () => {
    await start();
    const io = captureIo({ env: { NSX_USERNAME: "admin", NSX_PASSWORD: "wrong" } });
    const f = flags();
    expect(await runImport(f, io)).toBe(1);
    expect(io.err()).toMatch(/^error: GET \/api\/4\.0\/edges\?startIndex=0&pageSize=256: HTTP 401/m);
    expect(() => readdirSync(f.output)).toThrow();
  });
});

describe("object names from a manager's free text", () => {
  it.each([
    { name: "Plain", text: "esg-web", id: "edge-1", used: [], want: "esg-web", reason: "a valid name stays" },
    {
      name: "Spaces",
      text: "Web Edge #1",
      id: "edge-1",
      used: [],
      want: "web-edge-1",
      reason: "runs of others become -",
    },
    {
      name: "Accents",
      text: "München Édge",
      id: "edge-2",
      used: [],
      want: "munchen-edge",
      reason: "accents are dropped",
    },
    { name: "Nothing", text: "✓✓", id: "edge-3", used: [], want: "edge-3", reason: "nothing left: the id" },
    {
      name: "Taken",
      text: "web",
      id: "edge-4",
      used: ["web"],
      want: "web-edge-4",
      reason: "the id tells two apart",
    },
    {
      name: "Long",
      text: "x".repeat(80),
      id: "edge-5",
      used: ["x".repeat(63)],
      want: `${"x".repeat(56)}-edge-5`,
      reason: "63 characters at most, id included",
    },
  ])("$name: $reason", ({ text, id, used, want }) => {
    const name = uniqueName(text, id, new Set(used));
    expect(name).toBe(want);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
  });

  it("skips a pool whose allocations need more allowed entries than the CRD takes", () => {
    const allocations = Array.from({ length: 5001 }, (_, i) => ({
      id: String(i),
      ipAddress: `10.${i >> 8}.${i & 255}.1`,
    }));
    const pool = {
      objectId: "ipaddresspool-9",
      name: "big",
      totalAddressCount: 0,
      usedAddressCount: 0,
      usedPercentage: 0,
      ranges: [],
    };
    const result = importManifests([], [{ pool, allocations }], {
      managerName: "lab",
      namespace: "nsx",
      url: "https://nsx.example.org",
      scope: "globalroot-0",
      managementPolicy: "Observe",
    });
    expect(result.objects.map((o) => o.kind)).toEqual(["NSXManager"]);
    expect(result.skipped).toEqual([
      'pool ipaddresspool-9 ("big"): its allocations need 5001 allowed entries, more than the 5000 an IPPoolAllocations takes',
    ]);
  });
});
