import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import type { StateDump } from "../../src/simulator/index.ts";
import { POOL_V4, TestSimulator, smallEdge, storedSmallEdge, xml } from "./helpers.ts";

let t: TestSimulator;
beforeEach(async () => {
  t = await TestSimulator.start({ state: { pools: [POOL_V4], edges: [{ xml: smallEdge() }] } });
});
afterEach(() => t.close());

async function getEdge(id = "edge-7"): Promise<EdgeDocument> {
  return EdgeDocument.parse((await t.api("GET", `/api/4.0/edges/${id}`)).text);
}

describe("state", () => {
  it("dumps edges, scopes, pools with their allocations, the user name and settings", async () => {
    const { status, json } = await t.control<StateDump>("GET", "state");
    expect(status).toBe(200);
    expect(json.edges).toEqual([
      {
        id: "edge-7",
        version: 4,
        tenant: "default",
        name: "dlr-07",
        bytes: Buffer.byteLength(storedSmallEdge()),
      },
    ]);
    expect(json.scopes).toEqual([{ id: "globalroot-0", objectTypeName: "GlobalRoot", name: "Global" }]);
    expect(json.pools).toEqual([
      {
        id: "ipaddresspool-1",
        name: "controller-pool",
        scopeId: "globalroot-0",
        ipPoolType: "ipv4",
        totalAddressCount: 3,
        usedAddressCount: 2,
        usedPercentage: 66,
        allocations: [
          { id: "allocatedipaddress-1", ipAddress: "10.0.0.10", note: "controller-1" },
          { id: "allocatedipaddress-2", ipAddress: "10.0.0.11", note: "controller-2" },
        ],
      },
    ]);
    expect(json.username).toBe("admin");
    expect(json.settings.missingPoolStatus).toBe(400);
  });
});

describe("allocations", () => {
  it.each([
    {
      name: "Allocate",
      body: { note: "edge-9" },
      status: 201,
      want: { id: "allocatedipaddress-3", ipAddress: "10.0.0.12", note: "edge-9" },
      reason: "next free by default",
    },
    {
      name: "Reserve",
      body: { mode: "RESERVE", ip: "10.0.0.12" },
      status: 201,
      want: { id: "allocatedipaddress-3", ipAddress: "10.0.0.12" },
      reason: "a chosen free one",
    },
    {
      name: "ReserveTaken",
      body: { mode: "RESERVE", ip: "10.0.0.10" },
      status: 409,
      want: { error: "10.0.0.10 is already allocated" },
      reason: "taken",
    },
    {
      name: "ReserveOutside",
      body: { mode: "RESERVE", ip: "10.9.9.9" },
      status: 400,
      want: { error: expect.stringContaining("not inside") },
      reason: "outside the ranges",
    },
    {
      name: "ReserveNoIp",
      body: { mode: "RESERVE" },
      status: 400,
      want: { error: "ip: is required for RESERVE", path: "ip" },
      reason: "which one",
    },
    {
      name: "BadMode",
      body: { mode: "TAKE" },
      status: 400,
      want: { error: "mode: must be one of ALLOCATE, RESERVE", path: "mode" },
      reason: "two modes",
    },
  ])("$name: answers $status ($reason)", async ({ body, status, want }) => {
    const reply = await t.control("POST", "pools/ipaddresspool-1/allocations", body);
    expect(reply).toEqual({ status, json: want });
  });

  it("answers 409 when the pool is full and 404 for an unknown pool", async () => {
    await t.control("POST", "pools/ipaddresspool-1/allocations", {});
    expect(await t.control("POST", "pools/ipaddresspool-1/allocations", {})).toEqual({
      status: 409,
      json: { error: "ipaddresspool-1 has no free address" },
    });
    expect((await t.control("POST", "pools/ipaddresspool-9/allocations", {})).status).toBe(404);
  });

  it("makes the allocation visible to the API", async () => {
    await t.control("POST", "pools/ipaddresspool-1/allocations", { note: "controller-3" });
    const reply = await t.api("GET", "/api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses");
    expect(reply.text).toContain("<ipAddress>10.0.0.12</ipAddress><gateway>10.0.0.1</gateway>");
    expect(reply.text).toContain("<allocationNote>controller-3</allocationNote>");
  });
});

describe("pools", () => {
  it("adds a pool, then replaces it", async () => {
    const added = await t.control("PUT", "pools/ipaddresspool-4", {
      name: "new",
      ranges: [{ start: "172.16.0.1", end: "172.16.0.4" }],
      allocations: [{ ip: "172.16.0.1" }],
    });
    expect(added).toEqual({
      status: 200,
      json: expect.objectContaining({ id: "ipaddresspool-4", totalAddressCount: 4, usedAddressCount: 1 }),
    });
    await t.control("PUT", "pools/ipaddresspool-4", {
      name: "replaced",
      ranges: [{ start: "172.16.0.1", end: "172.16.0.2" }],
    });
    expect(t.state.pool("ipaddresspool-4")).toMatchObject({ totalAddressCount: 2, usedAddressCount: 0 });
  });

  it.each([
    {
      name: "IdMismatch",
      body: { id: "ipaddresspool-5", name: "x", ranges: [{ start: "10.0.0.1", end: "10.0.0.1" }] },
      error: "id: must be ipaddresspool-4 as in the path",
      reason: "the path names the pool",
    },
    {
      name: "BadRange",
      body: { name: "x", ranges: [{ start: "10.0.0.1", end: "nope" }] },
      error: "ranges[0].end: not an IP address",
      reason: "validated as in the state file",
    },
    { name: "NotJson", raw: "{", error: "the body is not JSON", reason: "JSON in" },
  ])("$name: answers 400 ($reason)", async ({ body, raw, error }) => {
    const reply = raw
      ? await fetch(`${t.sim.url}/_simulator/pools/ipaddresspool-4`, { method: "PUT", body: raw }).then(
          async (r) => ({ status: r.status, json: await r.json() }),
        )
      : await t.control("PUT", "pools/ipaddresspool-4", body);
    expect(reply.status).toBe(400);
    expect((reply.json as { error: string }).error).toContain(error);
  });
});

describe("edges", () => {
  it("changes top-level fields out of band, raising the version (drift)", async () => {
    const reply = await t.control("PATCH", "edges/edge-7", { tenant: "someone-else", fqdn: "x.example.org" });
    expect(reply).toEqual({ status: 200, json: { id: "edge-7", version: 5, tenant: "someone-else" } });
    const doc = await getEdge();
    expect(doc).toMatchObject({ tenant: "someone-else", fqdn: "x.example.org", version: 5 });
  });

  it("sets the version when told to", async () => {
    await t.control("PATCH", "edges/edge-7", { version: "40", name: "n" });
    expect((await getEdge()).version).toBe(40);
  });

  it.each([
    { name: "Empty", body: {}, status: 400, reason: "nothing to change" },
    { name: "Id", body: { id: "edge-8" }, status: 400, reason: "the id names the edge" },
    { name: "NotText", body: { tenant: 3 }, status: 400, reason: "fields are text" },
    { name: "BadVersion", body: { version: "v" }, status: 400, reason: "an integer" },
    { name: "BadName", body: { "a b": "x" }, status: 400, reason: "not an element name" },
    { name: "Unknown", body: { tenant: "x" }, edge: "edge-404", status: 404, reason: "no such edge" },
  ])("$name: answers $status ($reason)", async ({ body, edge, status }) => {
    expect((await t.control("PATCH", `edges/${edge ?? "edge-7"}`, body)).status).toBe(status);
    expect((await getEdge()).version).toBe(4);
  });

  it("adds an edge from XML or generated, and replaces one raising its version", async () => {
    expect(await t.control("PUT", "edges/edge-8", { xml: smallEdge("edge-8") })).toEqual({
      status: 201,
      json: { id: "edge-8", version: 4, tenant: "default" },
    });
    expect(await t.control("PUT", "edges/edge-9", { generate: { tenant: "g", firewallRules: 2 } })).toEqual({
      status: 201,
      json: { id: "edge-9", version: 1, tenant: "g" },
    });
    expect((await getEdge("edge-9")).name).toBe("esg-09");
    const replaced = await t.control("PUT", "edges/edge-7", {
      xml: smallEdge().replace("dlr-07", "replaced"),
    });
    expect(replaced).toEqual({ status: 200, json: { id: "edge-7", version: 5, tenant: "default" } });
    expect((await getEdge()).name).toBe("replaced");
  });

  it.each([
    {
      name: "IdMismatch",
      path: "edges/edge-8",
      body: { xml: smallEdge("edge-7") },
      error: "the document is edge-7, the path edge-8",
      reason: "the path names the edge",
    },
    {
      name: "BadXml",
      path: "edges/edge-8",
      body: { xml: "<edge>" },
      error: "xml: edge document: not well-formed",
      reason: "XML",
    },
    { name: "Neither", path: "edges/edge-8", body: {}, error: "give xml or generate", reason: "a source" },
    {
      name: "BadPath",
      path: "edges/router-1",
      body: { generate: {} },
      error: "router-1 is not edge-<n>",
      reason: "spec 2.5",
    },
  ])("$name: answers 400 ($reason)", async ({ path, body, error }) => {
    const reply = await t.control<{ error: string }>("PUT", path, body);
    expect(reply.status).toBe(400);
    expect(reply.json.error).toContain(error);
  });
});

describe("settings, clock and routing", () => {
  it("reads and changes settings, refusing unknown ones", async () => {
    expect((await t.control("PUT", "settings", { prettyXml: true })).json).toMatchObject({
      prettyXml: true,
      latencyMs: 0,
    });
    const pools = await t.api("GET", "/api/2.0/services/ipam/pools/scope/globalroot-0");
    expect(pools.text).toContain("\n  <ipamAddressPool>\n    <objectId>ipaddresspool-1</objectId>");
    expect(xml(pools.text, ["ipamAddressPool"])).toHaveProperty("ipamAddressPools.ipamAddressPool");
    expect((await t.control("GET", "settings")).json).toMatchObject({ prettyXml: true });
    expect(await t.control("PUT", "settings", { pretty: true })).toEqual({
      status: 400,
      json: expect.objectContaining({ path: "pretty" }),
    });
  });

  it("advances the clock", async () => {
    const before = Date.now();
    const { json } = await t.control<{ nowMs: number }>("POST", "clock", { advanceMs: 3_600_000 });
    expect(json.nowMs).toBeGreaterThanOrEqual(before + 3_600_000);
  });

  it.each([
    { name: "UnknownRoute", method: "GET", path: "nothing", status: 404, reason: "no such control route" },
    { name: "WrongMethod", method: "POST", path: "state", status: 405, reason: "state is read with GET" },
  ])("$name: answers $status ($reason)", async ({ method, path, status }) => {
    expect((await t.control(method, path)).status).toBe(status);
  });

  it("needs no credentials and is not counted", async () => {
    await t.control("GET", "state");
    expect((await t.control("GET", "counters")).json).toEqual({});
  });
});
