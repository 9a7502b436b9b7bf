/**
 * The edge summary as the RAML's 6.4 example shows it (PowerNSX attaches it to every edge it
 * returns), and the list's lower-case `pagesize`/`startindex`, which a manager ignores: such a
 * client sees the first 256 edges.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateEdgeXml } from "../../src/simulator/index.ts";
import { TestSimulator, childNames, xml } from "./helpers.ts";

let t: TestSimulator;
beforeAll(async () => {
  t = await TestSimulator.start({
    state: { edges: [{ generate: { count: 300, idStart: 1, firewallRules: 0 } }] },
  });
});
afterAll(() => t.close());

describe("an edge's summary", () => {
  it("carries the RAML's 6.4 fields in its order, the appliances' summary whole", async () => {
    const text = (await t.api("GET", "/api/4.0/edges/edge-7/summary")).text;
    expect(childNames(text, "edgeSummary")).toEqual([
      "objectId",
      "objectTypeName",
      "vsmUuid",
      "nodeId",
      "revision",
      "type",
      "name",
      "clientHandle",
      "extendedAttributes",
      "isUniversal",
      "universalRevision",
      "id",
      "state",
      "edgeType",
      "datacenterMoid",
      "datacenterName",
      "tenantId",
      "apiVersion",
      "edgeStatus",
      "numberOfConnectedVnics",
      "appliancesSummary",
      "hypervisorAssist",
      "allowedActions",
      "localEgressEnabled",
    ]);
    const summary = xml(text, ["string"]).edgeSummary as Record<string, unknown>;
    expect(summary).toMatchObject({ hypervisorAssist: "false", localEgressEnabled: "false" });
    expect((summary.allowedActions as { string: string[] }).string).toContain("Redeploy Edge");
    expect(summary.appliancesSummary).toEqual({
      vmVersion: "6.4.6",
      vmBuildInfo: "6.4.6-15177041",
      applianceSize: "large",
      fqdn: "esg-07.net.example.org",
      numberOfDeployedVms: "1",
      activeVseHaIndex: "0",
      vmMoidOfActiveVse: "vm-1007",
      vmNameOfActiveVse: "esg-07-0",
      hostMoidOfActiveVse: "host-20",
      hostNameOfActiveVse: "esx-02.net.example.org",
      resourcePoolMoidOfActiveVse: "domain-c7",
      resourcePoolNameOfActiveVse: "cluster-edge",
      dataStoreMoidOfActiveVse: "datastore-18",
      dataStoreNameOfActiveVse: "ds-edge-04",
      communicationChannel: "msgbus",
      deployAppliances: "true",
      enableFips: "false",
    });
  });

  it("is what a generated edge embeds, field for field", async () => {
    const generated = generateEdgeXml({ edgeNumber: 7, firewallRules: 0, pretty: false, edgeSummary: true });
    const embedded = /<edgeSummary>.*<\/edgeSummary>/.exec(generated)?.[0];
    const served = (await t.api("GET", "/api/4.0/edges/edge-7/summary")).text;
    const vsmUuid = /<vsmUuid>[^<]*<\/vsmUuid><nodeId>[^<]*<\/nodeId>/;
    // the generator's manager is the default one; this simulator has a random UUID of its own
    expect(served.replace(vsmUuid, "")).toContain(embedded?.replace(vsmUuid, ""));
  });

  it("follows hypervisorAssist and the active appliance after a PUT", async () => {
    const doc = (await t.api("GET", "/api/4.0/edges/edge-8")).text
      .replace("<vmName>esg-08-0</vmName>", "<vmName>esg-08-renamed</vmName>")
      .replace("<enableFips>false</enableFips>", "<enableFips>true</enableFips>");
    expect((await t.api("PUT", "/api/4.0/edges/edge-8", { body: doc })).status).toBe(204);
    const summary = xml((await t.api("GET", "/api/4.0/edges/edge-8/summary")).text).edgeSummary as {
      appliancesSummary: Record<string, string>;
    };
    expect(summary.appliancesSummary).toMatchObject({
      vmNameOfActiveVse: "esg-08-renamed",
      enableFips: "true",
    });
  });
});

describe("the list's parameters are case-sensitive", () => {
  async function page(query: string) {
    const reply = await t.api("GET", `/api/4.0/edges?${query}`);
    expect(reply.status).toBe(200);
    const list = xml(reply.text, ["edgeSummary"]).pagedEdgeList as {
      edgePage: { pagingInfo: Record<string, string>; edgeSummary: { id: string }[] };
    };
    return { ids: list.edgePage.edgeSummary.map((s) => s.id), info: list.edgePage.pagingInfo };
  }

  it("ignores lower-case pagesize and startindex: such a client gets the first 256 of 300, whatever it asks", async () => {
    const { ids, info } = await page("pagesize=1000&startindex=256");
    expect(ids).toHaveLength(256);
    expect(ids[0]).toBe("edge-1");
    expect(info).toMatchObject({ pageSize: "256", startIndex: "0", totalCount: "300" });
  });

  it("honours pageSize and startIndex as the RAML spells them", async () => {
    const { ids, info } = await page("pageSize=1000&startIndex=256");
    expect(ids).toHaveLength(44);
    expect(info).toMatchObject({ pageSize: "1000", startIndex: "256", totalCount: "300" });
  });
});
