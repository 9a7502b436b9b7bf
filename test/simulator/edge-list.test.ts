/**
 * The paged edge list's query parameters as the 6.4 RAML allows them: every sortBy value, both
 * orders, and the datacenter, tenant and pg filters.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestSimulator, xml } from "./helpers.ts";

interface EdgeSpec {
  n: number;
  name: string;
  tenant: string;
  size: string;
  fips: boolean;
  description?: string;
  /** an edge services gateway's vnic port groups */
  vnicPortgroups?: string[];
  /** a distributed router's interface port group */
  routerPortgroup?: string;
}

const EDGES: EdgeSpec[] = [
  {
    n: 2,
    name: "web",
    tenant: "blue",
    size: "xlarge",
    fips: false,
    description: "b",
    vnicPortgroups: ["dvportgroup-40", "dvportgroup-41"],
  },
  {
    n: 10,
    name: "app",
    tenant: "green",
    size: "compact",
    fips: true,
    description: "a",
    vnicPortgroups: ["dvportgroup-41"],
  },
  { n: 3, name: "db", tenant: "blue", size: "large", fips: false, routerPortgroup: "dvportgroup-77" },
  { n: 1, name: "edge10", tenant: "red", size: "quadlarge", fips: true, description: "c" },
];

function edgeXml(e: EdgeSpec): string {
  const vnics = (e.vnicPortgroups ?? [])
    .map((pg) => `<vnic><portgroupId>${pg}</portgroupId></vnic>`)
    .join("");
  const router = e.routerPortgroup
    ? `<interfaces><interface><connectedToId>${e.routerPortgroup}</connectedToId></interface></interfaces>`
    : "";
  return (
    `<edge><id>edge-${e.n}</id><datacenterMoid>datacenter-${e.n % 2}</datacenterMoid><tenant>${e.tenant}</tenant>` +
    `<name>${e.name}</name><enableFips>${e.fips}</enableFips><vnics>${vnics}</vnics>` +
    `<appliances><applianceSize>${e.size}</applianceSize></appliances>${router}` +
    (e.description !== undefined ? `<description>${e.description}</description>` : "") +
    "</edge>"
  );
}

let t: TestSimulator;
beforeAll(async () => {
  t = await TestSimulator.start({ state: { edges: EDGES.map((e) => ({ xml: edgeXml(e) })) } });
});
afterAll(() => t.close());

async function list(query: string): Promise<{ ids: string[]; info: Record<string, string> }> {
  const reply = await t.api("GET", `/api/4.0/edges?${query}`);
  expect(reply.status, reply.text).toBe(200);
  const page = xml(reply.text, ["edgeSummary"]).pagedEdgeList as {
    edgePage: { pagingInfo: Record<string, string>; edgeSummary?: { id: string }[] };
  };
  return { ids: (page.edgePage.edgeSummary ?? []).map((s) => s.id), info: page.edgePage.pagingInfo };
}

describe("GET /api/4.0/edges", () => {
  it.each([
    {
      sortBy: "id",
      want: ["edge-1", "edge-2", "edge-3", "edge-10"],
      reason: "numbers in ids compare as numbers",
    },
    { sortBy: "name", want: ["edge-10", "edge-3", "edge-1", "edge-2"], reason: "app, db, edge10, web" },
    {
      sortBy: "description",
      want: ["edge-3", "edge-10", "edge-2", "edge-1"],
      reason: "none first, then a, b, c",
    },
    {
      sortBy: "tenantId",
      want: ["edge-2", "edge-3", "edge-10", "edge-1"],
      reason: "blue (by id), green, red",
    },
    {
      sortBy: "size",
      want: ["edge-10", "edge-3", "edge-1", "edge-2"],
      reason: "compact, large, quadlarge, xlarge",
    },
    {
      sortBy: "enableFips",
      want: ["edge-2", "edge-3", "edge-1", "edge-10"],
      reason: "false then true, ties by id",
    },
  ])("sortBy=$sortBy orders $want ($reason), and the reverse when descending", async ({ sortBy, want }) => {
    const ascending = await list(`sortBy=${sortBy}`);
    expect(ascending.ids).toEqual(want);
    expect(ascending.info).toMatchObject({ sortBy, sortOrderAscending: "true", totalCount: "4" });
    expect((await list(`sortBy=${sortBy}&sortOrderAscending=false`)).ids).toEqual([...want].reverse());
  });

  it.each([
    { query: "pg=dvportgroup-41", want: ["edge-2", "edge-10"], reason: "any vnic on the port group" },
    { query: "pg=dvportgroup-40", want: ["edge-2"], reason: "one of several vnics" },
    { query: "pg=dvportgroup-77", want: ["edge-3"], reason: "a router's interface" },
    { query: "pg=dvportgroup-99", want: [], reason: "none on it" },
    { query: "tenant=blue", want: ["edge-2", "edge-3"], reason: "the tenant filter" },
    { query: "datacenter=datacenter-1", want: ["edge-1", "edge-3"], reason: "the datacenter filter" },
    { query: "tenant=blue&pg=dvportgroup-41", want: ["edge-2"], reason: "filters combine" },
  ])("$query lists $want ($reason)", async ({ query, want }) => {
    const { ids, info } = await list(query);
    expect(ids).toEqual(want);
    expect(info.totalCount).toBe(String(want.length));
  });

  it("refuses a sortBy the RAML does not allow, naming the allowed ones", async () => {
    const reply = await t.api("GET", "/api/4.0/edges?sortBy=fqdn");
    expect(reply.status).toBe(400);
    expect(xml(reply.text).error).toMatchObject({
      errorCode: "210",
      details: 'sortBy must be one of id, name, description, tenantId, size, enableFips, not "fqdn".',
    });
  });
});
