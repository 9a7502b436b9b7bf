import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { POOL_V4, POOL_V6, TestSimulator, childNames, xml } from "./helpers.ts";

let t: TestSimulator;
beforeEach(async () => {
  t = await TestSimulator.start({
    state: { scopes: [{ id: "vdnscope-9", name: "empty-zone" }], pools: [POOL_V4, POOL_V6] },
  });
});
afterEach(() => t.close());

const POOLS = "/api/2.0/services/ipam/pools";

async function pool(id: string): Promise<Record<string, string>> {
  const reply = await t.api("GET", `${POOLS}/scope/globalroot-0`);
  const pools = (
    xml(reply.text, ["ipamAddressPool"]).ipamAddressPools as { ipamAddressPool: Record<string, string>[] }
  ).ipamAddressPool;
  const found = pools.find((p) => p.objectId === id);
  if (!found) throw new Error(`no pool ${id}`);
  return found;
}

async function allocations(poolId: string): Promise<Record<string, string>[]> {
  const reply = await t.api("GET", `${POOLS}/${poolId}/ipaddresses`);
  expect(reply.status).toBe(200);
  const root = xml(reply.text, ["allocatedIpAddress"]).allocatedIpAddresses;
  return root === "" ? [] : (root as { allocatedIpAddress: Record<string, string>[] }).allocatedIpAddress;
}

function allocateBody(mode: string, ip?: string, note?: string): string {
  return (
    `<ipAddressRequest><allocationMode>${mode}</allocationMode>` +
    `${ip ? `<ipAddress>${ip}</ipAddress>` : ""}${note ? `<allocationNote>${note}</allocationNote>` : ""}</ipAddressRequest>`
  );
}

describe("pool list", () => {
  it("answers <ipamAddressPools> with every field of spec 2.2 in a real manager's order", async () => {
    const reply = await t.api("GET", `${POOLS}/scope/globalroot-0`);
    expect(reply.status).toBe(200);
    expect(reply.headers["content-type"]).toBe("application/xml");
    expect(
      reply.text.startsWith('<?xml version="1.0" encoding="UTF-8"?><ipamAddressPools><ipamAddressPool>'),
    ).toBe(true);
    expect(childNames(reply.text, "ipamAddressPool")).toEqual([
      "objectId",
      "objectTypeName",
      "vsmUuid",
      "nodeId",
      "revision",
      "type",
      "name",
      "scope",
      "clientHandle",
      "extendedAttributes",
      "isUniversal",
      "universalRevision",
      "totalAddressCount",
      "usedAddressCount",
      "usedPercentage",
      "prefixLength",
      "gateway",
      "dnsSuffix",
      "dnsServer1",
      "dnsServer2",
      "ipPoolType",
      "ipRanges",
      "subnetId",
    ]);
    const p = await pool("ipaddresspool-1");
    expect(p).toMatchObject({
      objectTypeName: "IpAddressPool",
      type: { typeName: "IpAddressPool" },
      scope: { id: "globalroot-0", objectTypeName: "GlobalRoot", name: "Global" },
      totalAddressCount: "3",
      usedAddressCount: "2",
      usedPercentage: "66",
      ipPoolType: "ipv4",
      ipRanges: { ipRangeDto: { startAddress: "10.0.0.10", endAddress: "10.0.0.12" } },
    });
    expect((await pool("ipaddresspool-2")).ipPoolType).toBe("ipv6");
  });

  it.each([
    {
      name: "KnownEmptyScope",
      scope: "vdnscope-9",
      status: 200,
      reason: "a scope declared in the state file has no pools",
    },
    { name: "UnknownScope", scope: "vdnscope-404", status: 404, reason: "nothing is known of that scope" },
  ])("$name: $reason", async ({ scope, status }) => {
    const reply = await t.api("GET", `${POOLS}/scope/${scope}`);
    expect(reply.status).toBe(status);
    if (status === 200) expect(xml(reply.text)).toEqual({ ipamAddressPools: "" });
    else expect(xml(reply.text).error).toMatchObject({ errorCode: "202", moduleName: "core-services" });
  });

  it("lists one pool as one child", async () => {
    await t.control("PUT", "pools/ipaddresspool-5", {
      name: "alone",
      scope: "vdnscope-9",
      ranges: [{ start: "10.9.0.1", end: "10.9.0.1" }],
    });
    const reply = await t.api("GET", `${POOLS}/scope/vdnscope-9`);
    expect(reply.text).toContain("<ipamAddressPools><ipamAddressPool><objectId>ipaddresspool-5</objectId>");
    expect(reply.text.match(/<ipamAddressPool>/g)).toHaveLength(1);
  });
});

describe("allocation list", () => {
  it("lists allocations with every field of spec 2.3 and the note", async () => {
    const reply = await t.api("GET", `${POOLS}/ipaddresspool-1/ipaddresses`);
    expect(childNames(reply.text, "allocatedIpAddress")).toEqual([
      "id",
      "ipAddress",
      "gateway",
      "prefixLength",
      "dnsServer1",
      "dnsServer2",
      "dnsSuffix",
      "subnetId",
      "allocationNote",
    ]);
    expect(await allocations("ipaddresspool-1")).toEqual([
      expect.objectContaining({
        id: "allocatedipaddress-1",
        ipAddress: "10.0.0.10",
        allocationNote: "controller-1",
        subnetId: "subnet-1",
      }),
      expect.objectContaining({
        id: "allocatedipaddress-2",
        ipAddress: "10.0.0.11",
        allocationNote: "controller-2",
      }),
    ]);
  });

  it("writes ids as integers for a pool configured so (the spec's form), and addresses canonically", async () => {
    expect(await allocations("ipaddresspool-2")).toEqual([
      expect.objectContaining({
        id: "1",
        ipAddress: "2001:db8::10",
        allocationNote: "vtep-host-19",
      }),
    ]);
  });

  it("answers an empty element for a pool without allocations", async () => {
    await t.api("DELETE", `${POOLS}/ipaddresspool-2/ipaddresses/2001:db8::10`);
    const reply = await t.api("GET", `${POOLS}/ipaddresspool-2/ipaddresses`);
    expect(reply.text).toBe('<?xml version="1.0" encoding="UTF-8"?><allocatedIpAddresses/>');
  });

  it.each([
    {
      name: "Default",
      setting: 400,
      code: "120054",
      reason: "the field notes list 120054 for a pool that does not exist",
    },
    {
      name: "NotFoundStyle",
      setting: 404,
      code: "202",
      reason: "some managers answer the generic not-found error",
    },
  ] as const)("$name: unknown pool answers $setting ($reason)", async ({ setting, code }) => {
    await t.control("PUT", "settings", { missingPoolStatus: setting });
    const reply = await t.api("GET", `${POOLS}/ipaddresspool-99/ipaddresses`);
    expect(reply.status).toBe(setting);
    expect(xml(reply.text).error).toMatchObject({ errorCode: code, moduleName: "core-services" });
  });
});

describe("release", () => {
  it("answers <boolean>true</boolean>, removes the allocation, keeps the counts true and audits it", async () => {
    const reply = await t.api("DELETE", `${POOLS}/ipaddresspool-1/ipaddresses/10.0.0.10`);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('<?xml version="1.0" encoding="UTF-8"?><boolean>true</boolean>');
    expect((await allocations("ipaddresspool-1")).map((a) => a.ipAddress)).toEqual(["10.0.0.11"]);
    expect(await pool("ipaddresspool-1")).toMatchObject({ usedAddressCount: "1", usedPercentage: "33" });
    const audit = await t.control<{ releases: unknown[] }>("GET", "audit");
    expect(audit.json.releases).toEqual([
      expect.objectContaining({
        poolId: "ipaddresspool-1",
        ip: "10.0.0.10",
        note: "controller-1",
        allocationId: "allocatedipaddress-1",
      }),
    ]);
  });

  it.each([
    { name: "Canonical", ip: "2001:db8::10", reason: "the address as the manager lists it" },
    { name: "Expanded", ip: "2001:0db8:0:0:0:0:0:10", reason: "the same address written in full" },
    { name: "Encoded", ip: "2001%3Adb8%3A%3A10", reason: "colons URL-encoded in the path segment" },
    { name: "Uppercase", ip: "2001:DB8::10", reason: "hex digits in upper case" },
  ])("$name: matches an IPv6 address by value ($reason)", async ({ ip }) => {
    const reply = await t.api("DELETE", `${POOLS}/ipaddresspool-2/ipaddresses/${ip}`);
    expect(reply.status).toBe(200);
    expect(await allocations("ipaddresspool-2")).toEqual([]);
    expect((await pool("ipaddresspool-2")).usedAddressCount).toBe("0");
  });

  it.each([
    { name: "FreeAddress", ip: "10.0.0.12", reason: "inside the range but not allocated" },
    { name: "OutsideRange", ip: "192.0.2.1", reason: "not an address of this pool at all" },
    { name: "OtherFamily", ip: "2001:db8::10", reason: "an IPv6 address in an IPv4 pool" },
    { name: "NotAnAddress", ip: "controller-1", reason: "text that is not an IP address" },
    { name: "Twice", ip: "10.0.0.10", twice: true, reason: "the second release of one address" },
  ])("$name: answers 400 120056 ($reason)", async ({ ip, twice }) => {
    if (twice) expect((await t.api("DELETE", `${POOLS}/ipaddresspool-1/ipaddresses/${ip}`)).status).toBe(200);
    const reply = await t.api("DELETE", `${POOLS}/ipaddresspool-1/ipaddresses/${ip}`);
    expect(reply.status).toBe(400);
    expect(xml(reply.text).error).toMatchObject({ errorCode: "120056", moduleName: "core-services" });
    expect((await pool("ipaddresspool-1")).usedAddressCount).toBe(twice ? "1" : "2");
  });

  it("answers 400 120054 for an unknown pool", async () => {
    const reply = await t.api("DELETE", `${POOLS}/ipaddresspool-99/ipaddresses/10.0.0.10`);
    expect(reply.status).toBe(400);
    expect(xml(reply.text).error).toMatchObject({ errorCode: "120054" });
  });
});

describe("allocate", () => {
  it("ALLOCATE hands out the lowest free address with the note, then 120051 when none is left", async () => {
    const first = await t.api("POST", `${POOLS}/ipaddresspool-1/ipaddresses`, {
      body: allocateBody("ALLOCATE", undefined, "edge-3"),
    });
    expect(first.status).toBe(200);
    expect(xml(first.text).allocatedIpAddress).toMatchObject({
      id: "allocatedipaddress-3",
      ipAddress: "10.0.0.12",
      allocationNote: "edge-3",
    });
    expect(await pool("ipaddresspool-1")).toMatchObject({ usedAddressCount: "3", usedPercentage: "100" });
    const second = await t.api("POST", `${POOLS}/ipaddresspool-1/ipaddresses`, {
      body: allocateBody("ALLOCATE"),
    });
    expect(second.status).toBe(400);
    expect(xml(second.text).error).toMatchObject({ errorCode: "120051", moduleName: "core-services" });
  });

  it("ALLOCATE takes a released address again when it is the lowest free one", async () => {
    await t.api("DELETE", `${POOLS}/ipaddresspool-1/ipaddresses/10.0.0.10`);
    const reply = await t.api("POST", `${POOLS}/ipaddresspool-1/ipaddresses`, {
      body: allocateBody("ALLOCATE"),
    });
    expect(xml(reply.text).allocatedIpAddress).toMatchObject({
      id: "allocatedipaddress-3",
      ipAddress: "10.0.0.10",
    });
  });

  it.each([
    {
      name: "Free",
      ip: "2001:db8::1f",
      status: 200,
      code: undefined,
      reason: "a free address inside the range",
    },
    {
      name: "Taken",
      ip: "2001:db8:0::10",
      status: 400,
      code: "120056",
      reason: "already allocated, written differently",
    },
    {
      name: "Outside",
      ip: "2001:db8::20",
      status: 400,
      code: "120056",
      reason: "just past the end of the range",
    },
  ])("$name: RESERVE $ip answers $status ($reason)", async ({ ip, status, code }) => {
    const reply = await t.api("POST", `${POOLS}/ipaddresspool-2/ipaddresses`, {
      body: allocateBody("RESERVE", ip, "x"),
    });
    expect(reply.status).toBe(status);
    if (code) expect(xml(reply.text).error).toMatchObject({ errorCode: code });
    else expect(xml(reply.text).allocatedIpAddress).toMatchObject({ id: "2", ipAddress: ip });
  });

  it.each([
    {
      name: "NoContentType",
      body: allocateBody("ALLOCATE"),
      contentType: "text/plain",
      status: 415,
      reason: "bodies are XML",
    },
    { name: "NotXml", body: "<ipAddressRequest>", status: 400, reason: "the body is not well-formed" },
    { name: "WrongRoot", body: "<request/>", status: 400, reason: "the root must be ipAddressRequest" },
    { name: "BadMode", body: allocateBody("GRAB"), status: 400, reason: "only ALLOCATE and RESERVE exist" },
    {
      name: "ReserveWithoutIp",
      body: allocateBody("RESERVE"),
      status: 400,
      reason: "RESERVE names the address",
    },
  ])("$name: answers $status ($reason)", async ({ body, contentType, status }) => {
    const reply = await t.api("POST", `${POOLS}/ipaddresspool-1/ipaddresses`, {
      body,
      ...(contentType ? { contentType } : {}),
    });
    expect(reply.status).toBe(status);
    expect(xml(reply.text).error).toHaveProperty("errorCode");
    expect((await pool("ipaddresspool-1")).usedAddressCount).toBe("2");
  });
});

describe("routing", () => {
  it.each([
    {
      name: "UnknownPath",
      method: "GET",
      path: "/api/2.0/services/nothing",
      status: 404,
      reason: "no API there",
    },
    {
      name: "WrongMethod",
      method: "POST",
      path: "/api/4.0/edges/edge-1",
      status: 405,
      reason: "edges are GET and PUT",
    },
    {
      name: "BadEscape",
      method: "GET",
      path: "/api/4.0/edges/%E0%A4%A",
      status: 400,
      reason: "a path that cannot be decoded",
    },
  ])("$name: answers $status ($reason)", async ({ method, path, status }) => {
    expect((await t.api(method, path)).status).toBe(status);
  });

  it("answers 413 to a body over maxRequestBytes", async () => {
    await t.control("PUT", "settings", { maxRequestBytes: 64 });
    const body = `<ipAddressRequest><allocationNote>${"x".repeat(100)}</allocationNote></ipAddressRequest>`;
    expect((await t.api("POST", `${POOLS}/ipaddresspool-1/ipaddresses`, { body })).status).toBe(413);
    expect((await pool("ipaddresspool-1")).usedAddressCount).toBe("2");
  });

  it("answers 400 to a path that does not decode, before a body too large", async () => {
    await t.control("PUT", "settings", { maxRequestBytes: 64 });
    const reply = await t.api("POST", `${POOLS}/%E0%A4%A/ipaddresses`, { body: "x".repeat(100) });
    expect(reply.status).toBe(400);
    expect(reply.text).toBe("bad path");
  });

  it("tolerates a trailing slash", async () => {
    expect((await t.api("GET", `${POOLS}/scope/globalroot-0/`)).status).toBe(200);
  });
});
