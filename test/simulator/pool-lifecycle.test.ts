/**
 * IP pools created, updated and deleted through the API as a manager does it, with the bodies
 * the clients send (PowerNSX's New-NsxIpPool, nsxansible's RAML example with empty elements, a GET
 * document sent back): the id in Location and in the body, a taken name refused as a manager
 * refuses one, ranges that would strand allocations refused, deletion forced or refused.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AuditSnapshot } from "../../src/simulator/index.ts";
import { POOL_V4, TestSimulator, basic, xml } from "./helpers.ts";

let t: TestSimulator;
beforeEach(async () => {
  t = await TestSimulator.start({
    state: { auditor: { username: "auditor", password: "read-only" }, pools: [POOL_V4] },
  });
});
afterEach(() => t.close());

const SCOPE = "/api/2.0/services/ipam/pools/scope/globalroot-0";
const pool = (id: string) => `/api/2.0/services/ipam/pools/${id}`;

/** New-NsxIpPool -Name NAME -Gateway ... -SubnetPrefixLength 24 -StartAddress ... -EndAddress ..., as PowerNSX builds it */
function powerNsxPool(name: string, start = "10.9.0.10", end = "10.9.0.20"): string {
  return (
    `<ipamAddressPool><name>${name}</name><prefixLength>24</prefixLength><gateway>10.9.0.1</gateway>` +
    `<ipRanges><ipRangeDto><startAddress>${start}</startAddress><endAddress>${end}</endAddress></ipRangeDto></ipRanges>` +
    "<dnsServer1>10.9.0.53</dnsServer1></ipamAddressPool>"
  );
}

function errorOf(text: string): Record<string, string> {
  return xml(text).error as Record<string, string>;
}

describe("POST .../pools/scope/{scopeId}", () => {
  it("answers 201 with the id in Location and as a text/plain body; GET shows the pool", async () => {
    const reply = await t.api("POST", SCOPE, { body: powerNsxPool("vtep-pool") });
    expect(reply.status).toBe(201);
    expect(reply.headers.location).toBe("/api/2.0/services/ipam/pools/ipaddresspool-2");
    expect(reply.text).toBe("ipaddresspool-2");
    expect(reply.headers["content-type"]).toBe("text/plain");
    const got = xml((await t.api("GET", pool("ipaddresspool-2"))).text).ipamAddressPool;
    expect(got).toMatchObject({
      objectId: "ipaddresspool-2",
      name: "vtep-pool",
      revision: "1",
      scope: { id: "globalroot-0" },
      totalAddressCount: "11",
      usedAddressCount: "0",
      prefixLength: "24",
      gateway: "10.9.0.1",
      dnsServer1: "10.9.0.53",
      ipPoolType: "ipv4",
    });
  });

  it("takes nsxansible's body (the RAML example, unset fields empty) and hands out addresses from the new pool", async () => {
    const body =
      "<ipamAddressPool><name>ctl</name><prefixLength>24</prefixLength><gateway>10.8.0.1</gateway><dnsSuffix></dnsSuffix>" +
      "<dnsServer1></dnsServer1><dnsServer2></dnsServer2><ipRanges><ipRangeDto><startAddress>10.8.0.5</startAddress>" +
      "<endAddress>10.8.0.6</endAddress></ipRangeDto></ipRanges></ipamAddressPool>";
    expect((await t.api("POST", SCOPE, { body })).status).toBe(201);
    const got = xml((await t.api("GET", pool("ipaddresspool-2"))).text).ipamAddressPool as Record<
      string,
      unknown
    >;
    expect(got).not.toHaveProperty("dnsSuffix");
    const allocated = await t.api("POST", `${pool("ipaddresspool-2")}/ipaddresses`, {
      body: "<ipAddressRequest><allocationMode>ALLOCATE</allocationMode></ipAddressRequest>",
    });
    expect(xml(allocated.text).allocatedIpAddress).toMatchObject({ ipAddress: "10.8.0.5" });
  });

  it.each([
    {
      name: "TakenName",
      body: powerNsxPool("controller-pool"),
      code: "210",
      says: "Another object with same name : controller-pool already exists in the current scope : globalroot-0.",
    },
    {
      name: "BadStart",
      body: powerNsxPool("p", "10.9.0.x"),
      code: "210",
      says: "ipamAddressPool: ipRanges.ipRangeDto[0].startAddress: not an IP address",
    },
    {
      name: "EndBeforeStart",
      body: powerNsxPool("p", "10.9.0.9", "10.9.0.1"),
      code: "210",
      says: "endAddress: is before start",
    },
    {
      name: "NoRange",
      body: "<ipamAddressPool><name>p</name></ipamAddressPool>",
      code: "210",
      says: "needs at least one range",
    },
    {
      name: "NoName",
      body: powerNsxPool("").replace("<name></name>", ""),
      code: "210",
      says: "name: is required",
    },
    {
      name: "BadPrefix",
      body: "<ipamAddressPool><name>p</name><prefixLength>x</prefixLength></ipamAddressPool>",
      code: "210",
      says: "<prefixLength> must be an integer",
    },
    { name: "NotAPool", body: "<edge/>", code: "210", says: "<ipamAddressPool> document" },
  ])("$name: 400 from core-services, no pool made", async ({ body, code, says }) => {
    const reply = await t.api("POST", SCOPE, { body });
    expect(reply.status).toBe(400);
    const error = errorOf(reply.text);
    expect(error).toMatchObject({ errorCode: code, moduleName: "core-services" });
    expect(error.details).toContain(says);
    expect(t.state.pools().map((p) => p.id)).toEqual(["ipaddresspool-1"]);
  });

  it("answers 404/202 for an unknown scope, 403 for the Auditor", async () => {
    const unknown = await t.api("POST", "/api/2.0/services/ipam/pools/scope/vdnscope-9", {
      body: powerNsxPool("p"),
    });
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown.text).errorCode).toBe("202");
    expect(
      (await t.api("POST", SCOPE, { body: powerNsxPool("p"), auth: basic("auditor", "read-only") })).status,
    ).toBe(403);
  });
});

describe("PUT .../pools/{poolId}", () => {
  it("takes the GET document back with changes: 204, the revision one higher, allocations kept", async () => {
    const doc = (await t.api("GET", pool("ipaddresspool-1"))).text
      .replace("<name>controller-pool</name>", "<name>controllers</name>")
      .replace("<endAddress>10.0.0.12</endAddress>", "<endAddress>10.0.0.20</endAddress>")
      .replace("<revision>1</revision>", "<revision>7</revision>");
    const reply = await t.api("PUT", pool("ipaddresspool-1"), { body: doc });
    expect(reply.status).toBe(204);
    const got = xml((await t.api("GET", pool("ipaddresspool-1"))).text).ipamAddressPool;
    expect(got).toMatchObject({
      name: "controllers",
      revision: "2",
      totalAddressCount: "11",
      usedAddressCount: "2",
    });
    const { objects } = (await t.control<AuditSnapshot>("GET", "audit")).json;
    expect(objects).toEqual([
      {
        action: "updated",
        kind: "pool",
        id: "ipaddresspool-1",
        name: "controllers",
        time: expect.any(String),
      },
    ]);
  });

  it("refuses ranges that would leave allocations outside (400/120056 naming them), and a taken name", async () => {
    await t.api("POST", SCOPE, { body: powerNsxPool("other") });
    const shrink = powerNsxPool("controller-pool", "10.0.0.11", "10.0.0.12");
    const reply = await t.api("PUT", pool("ipaddresspool-1"), { body: shrink });
    expect(reply.status).toBe(400);
    expect(errorOf(reply.text)).toMatchObject({ errorCode: "120056" });
    expect(errorOf(reply.text).details).toContain("10.0.0.10");
    const taken = await t.api("PUT", pool("ipaddresspool-1"), {
      body: powerNsxPool("other", "10.0.0.10", "10.0.0.12"),
    });
    expect(taken.status).toBe(400);
    expect(errorOf(taken.text).details).toContain("Another object with same name : other");
    expect(xml((await t.api("GET", pool("ipaddresspool-1"))).text).ipamAddressPool).toMatchObject({
      name: "controller-pool",
      revision: "1",
    });
  });

  it("answers 404/202 for an unknown pool", async () => {
    const reply = await t.api("PUT", pool("ipaddresspool-9"), { body: powerNsxPool("p") });
    expect(reply.status).toBe(404);
  });
});

describe("DELETE .../pools/{poolId}", () => {
  it("deletes a pool without allocations (204); its id answers as an unknown pool and is not given again", async () => {
    await t.api("POST", SCOPE, { body: powerNsxPool("empty") });
    expect((await t.api("DELETE", pool("ipaddresspool-2"))).status).toBe(204);
    expect((await t.api("GET", pool("ipaddresspool-2"))).status).toBe(404);
    const allocations = await t.api("GET", `${pool("ipaddresspool-2")}/ipaddresses`);
    expect(allocations.status).toBe(400);
    expect(errorOf(allocations.text).errorCode).toBe("120054");
    expect((await t.api("POST", SCOPE, { body: powerNsxPool("again") })).text).toBe("ipaddresspool-3");
  });

  it("refuses a pool with allocations unless force=true, which drops them; the audit lists them", async () => {
    const refused = await t.api("DELETE", pool("ipaddresspool-1"));
    expect(refused.status).toBe(400);
    expect(errorOf(refused.text)).toMatchObject({ errorCode: "120060", moduleName: "core-services" });
    expect((await t.api("DELETE", `${pool("ipaddresspool-1")}?force=false`)).status).toBe(400);
    expect(
      (await t.api("DELETE", pool("ipaddresspool-1"), { auth: basic("auditor", "read-only") })).status,
    ).toBe(403);
    expect((await t.api("DELETE", `${pool("ipaddresspool-1")}?force=true`)).status).toBe(204);
    expect(t.state.pools()).toEqual([]);
    const { objects, releases } = (await t.control<AuditSnapshot>("GET", "audit")).json;
    expect(objects).toEqual([
      {
        action: "deleted",
        kind: "pool",
        id: "ipaddresspool-1",
        name: "controller-pool",
        time: expect.any(String),
        droppedAllocations: [
          { ip: "10.0.0.10", note: "controller-1", allocationId: "allocatedipaddress-1" },
          { ip: "10.0.0.11", note: "controller-2", allocationId: "allocatedipaddress-2" },
        ],
      },
    ]);
    expect(releases, "a deleted pool's allocations are not releases").toEqual([]);
  });
});
