/**
 * Edges created and deleted through the API as a manager does it: the id it assigns (never one it
 * gave before), the Location header clients read it from, the edge a GET then shows (defaults,
 * ten vnics, deployed appliances, no CLI password, numbered rules), a 400 naming the element of a
 * bad document, and what a deleted edge's id answers afterwards.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import type { AuditSnapshot } from "../../src/simulator/index.ts";
import { TestSimulator, basic, childNames, xml } from "./helpers.ts";

let t: TestSimulator;
beforeEach(async () => {
  t = await TestSimulator.start({
    state: {
      auditor: { username: "auditor", password: "read-only" },
      edges: [{ generate: { count: 2, idStart: 1, firewallRules: 2 } }],
    },
  });
});
afterEach(() => t.close());

/** New-NsxEdge's body for `-Name esg-new -Password ... -Interface (one uplink)`, as PowerNSX builds it */
const POWERNSX_BODY =
  "<edge><name>esg-new</name><fqdn>esg-new.corp.local</fqdn><type>gatewayServices</type><tenant>tenant-x</tenant>" +
  "<appliances><applianceSize>compact</applianceSize><appliance><resourcePoolId>domain-c7</resourcePoolId>" +
  "<datastoreId>datastore-15</datastoreId></appliance></appliances><features><syslog><enabled>false</enabled></syslog>" +
  "<firewall><enabled>true</enabled><defaultPolicy><loggingEnabled>false</loggingEnabled><action>deny</action>" +
  "</defaultPolicy></firewall></features><cliSettings><userName>admin</userName><password>VMware1!VMware1!</password>" +
  "<remoteAccess>false</remoteAccess></cliSettings><vnics><vnic><index>0</index><name>uplink</name><type>uplink</type>" +
  "<portgroupId>dvportgroup-41</portgroupId><addressGroups><addressGroup><primaryAddress>192.168.9.1</primaryAddress>" +
  "<subnetMask>255.255.255.0</subnetMask></addressGroup></addressGroups><mtu>1500</mtu><isConnected>true</isConnected>" +
  "</vnic></vnics></edge>";

async function create(body: string, auth?: string) {
  return t.api("POST", "/api/4.0/edges", { body, ...(auth !== undefined ? { auth } : {}) });
}

async function getEdge(id: string): Promise<EdgeDocument> {
  const reply = await t.api("GET", `/api/4.0/edges/${id}`);
  expect(reply.status).toBe(200);
  return EdgeDocument.parse(reply.text);
}

describe("POST /api/4.0/edges", () => {
  it("answers 201 with the new edge's path in Location and no body; the id is the manager's next", async () => {
    const reply = await create(POWERNSX_BODY);
    expect(reply.status).toBe(201);
    expect(reply.headers.location).toBe("/api/4.0/edges/edge-3");
    expect(reply.text).toBe("");
    expect((await create("<edge><appliances/></edge>")).headers.location).toBe("/api/4.0/edges/edge-4");
  });

  it("stores the edge a GET then shows: the sent fields, the manager's defaults, ten vnics, a deployed appliance", async () => {
    await create(POWERNSX_BODY);
    const edge = await getEdge("edge-3");
    expect(edge.missingFromWholeEdge(), "what every ESG carries").toEqual([]);
    expect(edge).toMatchObject({
      id: "edge-3",
      version: 1,
      status: "deployed",
      tenant: "tenant-x",
      name: "esg-new",
    });
    expect(edge.type).toBe("gatewayServices");
    // a generated edge's datacenter: the one of the edge whose appliance is in the same resource pool
    expect(edge.datacenterMoid).toMatch(/^datacenter-\d+$/);
    for (const [name, value] of [
      ["enableAesni", "true"],
      ["enableFips", "false"],
      ["vseLogLevel", "info"],
      ["isUniversal", "false"],
      ["hypervisorAssist", "false"],
    ]) {
      expect(edge.getField(name!), name).toBe(value);
    }
    const text = edge.serialize();
    expect(childNames(text, "vnics")).toEqual(Array(10).fill("vnic"));
    expect(text).toContain("<portgroupId>dvportgroup-41</portgroupId>");
    expect(text).toContain("<label>vNic_9</label><name>vnic9</name>");
    expect(text).toMatch(
      /<appliance><highAvailabilityIndex>0<\/highAvailabilityIndex>.*<vmId>vm-\d+<\/vmId>/,
    );
    expect(text).toContain("<deployed>true</deployed><edgeId>edge-3</edgeId>");
    expect(text, "a GET never shows the CLI password").not.toContain("VMware1!");
    expect(text).toContain(
      "<cliSettings><userName>admin</userName><remoteAccess>false</remoteAccess></cliSettings>",
    );
    // the firewall's internal rule, with the manager's id and tag
    expect(text).toContain("<firewallRule><id>131073</id><ruleTag>131073</ruleTag><name>firewall</name>");
    // the features every ESG carries (src/nsx/edge-shape.ts), switched off but there
    expect(childNames(text, "features")).toEqual([
      "firewall",
      "routing",
      "highAvailability",
      "syslog",
      "ipsec",
      "nat",
      "dhcp",
    ]);
  });

  it("fills in what a minimal document leaves out: name and fqdn NSX-<id>, tenant default, a compact appliance size", async () => {
    await create(
      "<edge><appliances><appliance><resourcePoolId>resgroup-9</resourcePoolId><datastoreId>ds-1</datastoreId></appliance></appliances></edge>",
    );
    const edge = await getEdge("edge-3");
    expect(edge).toMatchObject({ name: "NSX-edge-3", fqdn: "NSX-edge-3", tenant: "default" });
    expect(edge.serialize()).toContain("<applianceSize>compact</applianceSize>");
    const summary = xml((await t.api("GET", "/api/4.0/edges/edge-3/summary")).text).edgeSummary;
    expect(summary).toMatchObject({ name: "NSX-edge-3", tenantId: "default", revision: "1" });
  });

  it("configures without deploying when the document says deployAppliances false: no VM, none counted", async () => {
    await create(
      "<edge><appliances><appliance><resourcePoolId>r</resourcePoolId><datastoreId>d</datastoreId></appliance>" +
        "<deployAppliances>false</deployAppliances></appliances></edge>",
    );
    const text = (await getEdge("edge-3")).serialize();
    expect(text).not.toContain("<vmId>");
    expect(text).toContain("<deployed>false</deployed>");
    const summary = xml((await t.api("GET", "/api/4.0/edges/edge-3/summary")).text).edgeSummary as {
      appliancesSummary: Record<string, string>;
    };
    expect(summary.appliancesSummary).toMatchObject({ numberOfDeployedVms: "0", deployAppliances: "false" });
    expect(summary.appliancesSummary).not.toHaveProperty("vmMoidOfActiveVse");
  });

  it("numbers the sent firewall and NAT rules, and keeps a distributed router's interfaces without vnics", async () => {
    await create(
      "<edge><type>distributedRouter</type><datacenterMoid>datacenter-9</datacenterMoid><appliances><appliance>" +
        "<resourcePoolId>r</resourcePoolId><datastoreId>d</datastoreId></appliance></appliances>" +
        "<mgmtInterface><connectedToId>dvportgroup-38</connectedToId></mgmtInterface>" +
        "<features><firewall><firewallRules><firewallRule><name>a</name></firewallRule></firewallRules></firewall>" +
        "<nat><natRules><natRule><action>snat</action></natRule></natRules></nat></features></edge>",
    );
    const text = (await getEdge("edge-3")).serialize();
    expect(text).not.toContain("<vnics>");
    expect(text).toContain(
      "<datacenterMoid>datacenter-9</datacenterMoid><datacenterName>datacenter-9</datacenterName>",
    );
    expect(text).toContain("<mgmtInterface><connectedToId>dvportgroup-38</connectedToId></mgmtInterface>");
    expect(text).toContain(
      "<firewallRule><id>131074</id><ruleTag>131074</ruleTag><name>a</name></firewallRule>",
    );
    expect(text).toContain(
      "<natRule><ruleId>196609</ruleId><ruleTag>196609</ruleTag><action>snat</action></natRule>",
    );
  });

  it.each([
    { name: "NotAnEdge", body: "<ipamAddressPool/>", says: "root element is <ipamAddressPool>" },
    { name: "UnknownType", body: "<edge><type>router</type></edge>", says: "<type> must be one of" },
    {
      name: "UnknownSize",
      body: "<edge><appliances><applianceSize>huge</applianceSize></appliances></edge>",
      says: "<applianceSize> must be one of compact, large, quadlarge, xlarge, not huge",
    },
    {
      name: "NoDatastore",
      body: "<edge><appliances><appliance><resourcePoolId>r</resourcePoolId></appliance></appliances></edge>",
      says: "<appliance> 1 needs a <datastoreId>",
    },
    {
      name: "ThreeAppliances",
      body: `<edge><appliances>${"<appliance><resourcePoolId>r</resourcePoolId><datastoreId>d</datastoreId></appliance>".repeat(3)}</appliances></edge>`,
      says: "at most 2 <appliance> elements",
    },
    { name: "VnicTen", body: "<edge><vnics><vnic><index>10</index></vnic></vnics></edge>", says: "0 to 9" },
    {
      name: "VnicTwice",
      body: "<edge><vnics><vnic><index>1</index></vnic><vnic><index>1</index></vnic></vnics></edge>",
      says: "<vnic><index> 1 appears twice",
    },
    { name: "NotXml", body: "<edge>", says: "edge document" },
  ])("$name: 400 with the edge module's 10001 naming the element, no edge made", async ({ body, says }) => {
    const reply = await create(body);
    expect(reply.status).toBe(400);
    const error = xml(reply.text).error as Record<string, string>;
    expect(error).toMatchObject({ errorCode: "10001", moduleName: "vShield Edge" });
    expect(error.details).toContain(says);
    expect((await t.control<{ edges: unknown[] }>("GET", "state")).json.edges).toHaveLength(2);
  });

  it("refuses the Auditor (403) and a body that is not XML (415)", async () => {
    expect((await create(POWERNSX_BODY, basic("auditor", "read-only"))).status).toBe(403);
    const json = await t.api("POST", "/api/4.0/edges", { body: "{}", contentType: "application/json" });
    expect(json.status).toBe(415);
  });
});

describe("DELETE /api/4.0/edges/{edgeId}", () => {
  it("answers 204; the id then answers 404/202 everywhere, leaves the list and is never given again", async () => {
    const reply = await t.api("DELETE", "/api/4.0/edges/edge-2");
    expect(reply.status).toBe(204);
    for (const [method, path] of [
      ["GET", "/api/4.0/edges/edge-2"],
      ["GET", "/api/4.0/edges/edge-2/summary"],
      ["DELETE", "/api/4.0/edges/edge-2"],
    ] as const) {
      const again = await t.api(method, path);
      expect(again.status, `${method} ${path}`).toBe(404);
      expect(xml(again.text).error).toMatchObject({ errorCode: "202", moduleName: "core-services" });
    }
    const put = await t.api("PUT", "/api/4.0/edges/edge-2", { body: "<edge><tenant>x</tenant></edge>" });
    expect(put.status).toBe(404);
    const list = xml((await t.api("GET", "/api/4.0/edges")).text, ["edgeSummary"]).pagedEdgeList as {
      edgePage: { edgeSummary: { id: string }[]; pagingInfo: { totalCount: string } };
    };
    expect(list.edgePage.edgeSummary.map((e) => e.id)).toEqual(["edge-1"]);
    expect(list.edgePage.pagingInfo.totalCount).toBe("1");
    expect((await create(POWERNSX_BODY)).headers.location, "edge-2 is not given again").toBe(
      "/api/4.0/edges/edge-3",
    );
  });

  it("refuses the Auditor: 403 and the edge stays", async () => {
    expect(
      (await t.api("DELETE", "/api/4.0/edges/edge-1", { auth: basic("auditor", "read-only") })).status,
    ).toBe(403);
    expect((await t.api("GET", "/api/4.0/edges/edge-1")).status).toBe(200);
  });

  it("a list lagging by lagMs drops a deleted edge lagMs later; GET knows at once", async () => {
    await t.control("POST", "faults", { kind: "staleList", lagMs: 30_000 });
    await t.api("DELETE", "/api/4.0/edges/edge-1");
    const ids = async () =>
      (
        xml((await t.api("GET", "/api/4.0/edges")).text, ["edgeSummary"]).pagedEdgeList as {
          edgePage: { edgeSummary?: { id: string }[] };
        }
      ).edgePage.edgeSummary?.map((e) => e.id);
    expect(await ids()).toEqual(["edge-1", "edge-2"]);
    expect((await t.api("GET", "/api/4.0/edges/edge-1")).status).toBe(404);
    await t.control("POST", "clock", { advanceMs: 30_000 });
    expect(await ids()).toEqual(["edge-2"]);
  });
});

describe("the audit of created and deleted edges", () => {
  it("lists each creation and deletion in order, with the id and name", async () => {
    await create(POWERNSX_BODY);
    await t.api("DELETE", "/api/4.0/edges/edge-1");
    const { objects, violations } = (await t.control<AuditSnapshot>("GET", "audit")).json;
    expect(objects).toEqual([
      { action: "created", kind: "edge", id: "edge-3", name: "esg-new", time: expect.any(String) },
      { action: "deleted", kind: "edge", id: "edge-1", name: "esg-01", time: expect.any(String) },
    ]);
    expect(violations).toEqual([]);
  });
});
