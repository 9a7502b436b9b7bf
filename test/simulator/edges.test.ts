import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import type { AuditSnapshot } from "../../src/simulator/index.ts";
import { TestSimulator, smallEdge, storedSmallEdge, xml } from "./helpers.ts";

let t: TestSimulator;
beforeEach(async () => {
  t = await TestSimulator.start({
    state: {
      edges: [{ xml: smallEdge() }, { generate: { idStart: 1, tenant: "tenant-a", firewallRules: 3 } }],
    },
  });
});
afterEach(() => t.close());

const EDGE = "/api/4.0/edges/edge-7";

async function getEdge(path = EDGE): Promise<EdgeDocument> {
  const reply = await t.api("GET", path);
  expect(reply.status).toBe(200);
  return EdgeDocument.parse(reply.text);
}

async function put(doc: EdgeDocument | string, path = EDGE, contentType?: string) {
  const body = typeof doc === "string" ? doc : doc.serialize();
  return t.api("PUT", path, { body, ...(contentType !== undefined ? { contentType } : {}) });
}

async function violations(): Promise<AuditSnapshot["violations"]> {
  return (await t.control<AuditSnapshot>("GET", "audit")).json.violations;
}

describe("GET edge", () => {
  it("answers the stored document in the manager's format", async () => {
    const reply = await t.api("GET", EDGE);
    expect(reply.status).toBe(200);
    expect(reply.headers["content-type"]).toBe("application/xml");
    expect(reply.text).toBe(storedSmallEdge());
  });

  it("answers 404 with errorCode 202 for an unknown edge", async () => {
    const reply = await t.api("GET", "/api/4.0/edges/edge-404");
    expect(reply.status).toBe(404);
    expect(xml(reply.text).error).toEqual({
      details: "The requested object : edge-404 could not be found. Object identifiers are case sensitive.",
      errorCode: "202",
      moduleName: "core-services",
    });
  });
});

describe("PUT edge", () => {
  it("stores the tenant, raises the version by one whatever was sent, and answers 204", async () => {
    const doc = (await getEdge()).setTenant("tenant-b").setField("version", "99");
    const reply = await put(doc);
    expect(reply.status).toBe(204);
    expect(reply.text).toBe("");
    const after = await getEdge();
    expect(after.tenant).toBe("tenant-b");
    expect(after.version).toBe(5);
    expect(await violations()).toEqual([]);
  });

  it.each([
    { name: "NoId", body: smallEdge().replace("<id>edge-7</id>", ""), reason: "govnsx sends none" },
    {
      name: "EmptyId",
      body: smallEdge().replace("<id>edge-7</id>", "<id></id>"),
      reason: "the RAML's example",
    },
    {
      name: "BlankId",
      body: smallEdge().replace("<id>edge-7</id>", "<id> </id>"),
      reason: "nothing but spaces",
    },
  ])("$name: takes the id from the URL ($reason)", async ({ body }) => {
    expect((await put(body.replace("<tenant>default</tenant>", "<tenant>from-url</tenant>"))).status).toBe(
      204,
    );
    const after = await getEdge();
    expect(after).toMatchObject({ id: "edge-7", version: 5, tenant: "from-url" });
    expect((await t.api("GET", EDGE)).text).toMatch(/<edge><id>edge-7<\/id><version>5<\/version>/);
    expect(await violations()).toEqual([]);
  });

  it("stores a changed description, and the audit says it changed", async () => {
    const doc = (await getEdge()).setField("description", "changed").setTenant("t2");
    expect((await put(doc)).status).toBe(204);
    const after = await getEdge();
    expect(after.description).toBe("changed");
    expect(after.tenant).toBe("t2");
    expect(await violations()).toEqual([
      expect.objectContaining({ kind: "changedContent", changed: ["edge.description"], lost: [], added: [] }),
    ]);
  });

  it("stores a description added to an edge that has none, in the spec's place", async () => {
    const doc = (await getEdge("/api/4.0/edges/edge-1")).setField("description", "new").setTenant("t3");
    expect((await put(doc, "/api/4.0/edges/edge-1")).status).toBe(204);
    const after = await getEdge("/api/4.0/edges/edge-1");
    expect(after.description).toBe("new");
    expect(after.tenant).toBe("t3");
    expect(await violations()).toEqual([expect.objectContaining({ added: ["edge.description"] })]);
  });

  it("stores the whole document sent, and audits what it added and lost by path", async () => {
    const text = smallEdge("edge-7", "<nat><enabled>true</enabled></nat>")
      .replace("<featureConfig/>", "")
      .replace("<tenant>default</tenant>", "<tenant>x</tenant>");
    expect((await put(text)).status).toBe(204);
    const after = await t.api("GET", EDGE);
    expect(after.text).toContain("<features><nat><enabled>true</enabled></nat></features>");
    expect(after.text).toContain("<version>5</version>");
    expect(await violations()).toEqual([
      expect.objectContaining({
        kind: "lostContent",
        edgeId: "edge-7",
        storedVersion: 4,
        sentVersion: 4,
        lost: ["edge.features.featureConfig"],
        added: ["edge.features.nat"],
        changed: [],
      }),
    ]);
  });

  it("audits a PUT based on a stale read as an overwrite of the other client's change", async () => {
    const stale = await getEdge();
    await t.control("PATCH", "edges/edge-7", { name: "renamed-by-someone" });
    expect((await put(stale.setTenant("t"))).status).toBe(204);
    const [violation] = await violations();
    expect(violation).toMatchObject({
      message: "PUT based on version 4 overwrote version 5",
      kind: "changedContent",
      changed: ["edge.name"],
    });
    expect((await getEdge()).name).toBe("dlr-07");
  });

  it("answers 409 to a stale PUT when rejectStaleVersion is set, and stores nothing", async () => {
    await t.control("PUT", "settings", { rejectStaleVersion: true });
    const stale = await getEdge();
    await t.control("PATCH", "edges/edge-7", { tenant: "drift" });
    const reply = await put(stale.setTenant("t"));
    expect(reply.status).toBe(409);
    expect(xml(reply.text).error).toMatchObject({ errorCode: "10003", moduleName: "vShield Edge" });
    expect((await getEdge()).tenant).toBe("drift");
    expect((await put((await getEdge()).setTenant("t"))).status).toBe(204);
  });

  it.each([
    { name: "NoContentType", contentType: "", status: 415, reason: "a body without a type" },
    { name: "Json", contentType: "application/json", status: 415, reason: "the manager takes XML only" },
    { name: "TextPlain", contentType: "text/plain", status: 415, reason: "not XML" },
    {
      name: "WithCharset",
      contentType: "application/xml; charset=UTF-8",
      status: 204,
      reason: "UTF-8 named",
    },
    { name: "TextXml", contentType: "text/xml", status: 204, reason: "the older XML type" },
    { name: "TextXmlCharset", contentType: 'text/xml;charset="utf-8"', status: 204, reason: "quoted" },
    {
      name: "Latin1",
      contentType: "application/xml; charset=ISO-8859-1",
      status: 204,
      reason: "a known charset",
    },
    {
      name: "UnknownCharset",
      contentType: "application/xml; charset=x-martian",
      status: 415,
      reason: "undecodable",
    },
    { name: "NotWellFormed", body: "<edge><id>edge-7</id>", status: 400, reason: "a truncated document" },
    {
      name: "WrongRoot",
      body: "<router><id>edge-7</id></router>",
      status: 400,
      reason: "the root must be edge",
    },
    {
      name: "Doctype",
      body: '<!DOCTYPE edge [<!ENTITY x "y">]><edge><id>edge-7</id></edge>',
      status: 400,
      reason: "no DTDs",
    },
    { name: "IdMismatch", body: smallEdge("edge-8"), status: 400, reason: "the document is another edge" },
    {
      name: "TwoVersions",
      body: smallEdge().replace("<status>", "<version>3</version><status>").replace("dlr-07<", "x<"),
      status: 400,
      reason: "a changed document with two versions: which one counts is unknown",
    },
    {
      name: "UnknownEdge",
      path: "/api/4.0/edges/edge-404",
      body: smallEdge("edge-404"),
      status: 404,
      reason: "nothing to replace",
    },
  ])("$name: answers $status ($reason)", async ({ contentType, body, path, status }) => {
    const reply = await put(body ?? smallEdge(), path ?? EDGE, contentType);
    expect(reply.status).toBe(status);
    if (status !== 204) {
      expect(xml(reply.text).error).toHaveProperty("errorCode");
      expect((await getEdge()).version).toBe(4);
    }
  });

  it("decodes the charset named: a Latin-1 body keeps its accents", async () => {
    const text = smallEdge().replace("<tenant>default</tenant>", "<tenant>équipe</tenant>");
    const reply = await t.api("PUT", EDGE, {
      body: Buffer.from(text, "latin1"),
      contentType: "application/xml; charset=ISO-8859-1",
    });
    expect(reply.status).toBe(204);
    expect((await getEdge()).tenant).toBe("équipe");
  });

  it("refuses bytes that are not UTF-8 when no charset is named, storing nothing", async () => {
    const body = Buffer.concat([Buffer.from(smallEdge().slice(0, 100)), Buffer.from([0xff, 0xfe])]);
    const reply = await t.api("PUT", EDGE, { body });
    expect(reply.status).toBe(400);
    expect(xml(reply.text).error).toMatchObject({ errorCode: "210" });
  });

  it("takes concurrent PUTs one at a time: each raises the version once", async () => {
    const base = await getEdge("/api/4.0/edges/edge-1");
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => put(base.clone().setTenant(`t-${i}`), "/api/4.0/edges/edge-1")),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(204));
    const after = await getEdge("/api/4.0/edges/edge-1");
    expect(after.version).toBe(21);
    expect(after.tenant).toMatch(/^t-\d+$/);
    const { json } = await t.control<{ putEdge: Record<string, number> }>("GET", "counters");
    expect(json.putEdge).toEqual({ "204": 20 });
  });
});

describe("PUT edge: what a PUT cannot change stays", () => {
  /** a partial document, as a lossy client sends it, with read-only fields set to other values */
  const PARTIAL =
    "<edge><status>undeployed</status><datacenterMoid>datacenter-99</datacenterMoid><datacenterName></datacenterName>" +
    "<fqdn>elsewhere.example.org</fqdn><name>esg-renamed</name><tenant>tenant-a</tenant><type>distributedRouter</type>" +
    "<hypervisorAssist>true</hypervisorAssist><appliances><applianceSize>xlarge</applianceSize></appliances></edge>";

  it("keeps status, datacenter, fqdn, type and hypervisorAssist as the manager knows them", async () => {
    const before = await getEdge("/api/4.0/edges/edge-1");
    expect((await put(PARTIAL, "/api/4.0/edges/edge-1")).status).toBe(204);
    const after = await getEdge("/api/4.0/edges/edge-1");
    for (const field of ["status", "datacenterMoid", "datacenterName", "fqdn", "type", "hypervisorAssist"]) {
      expect(after.getField(field), field).toBe(before.getField(field));
    }
    expect(after).toMatchObject({ id: "edge-1", version: 2, name: "esg-renamed", tenant: "tenant-a" });
    const [violation] = await violations();
    expect(violation?.lost).toEqual(
      expect.arrayContaining(["edge.vnics", "edge.features", "edge.cliSettings"]),
    );
    for (const field of ["status", "datacenterMoid", "datacenterName", "fqdn", "type", "hypervisorAssist"]) {
      expect([...violation!.lost, ...violation!.changed], field).not.toContain(`edge.${field}`);
    }
  });

  it("recomputes the summary from what is stored: no vnic or appliance numbers the document lost", async () => {
    const before = xml((await t.api("GET", "/api/4.0/edges/edge-1/summary")).text).edgeSummary;
    expect(before).toMatchObject({
      numberOfConnectedVnics: "3",
      appliancesSummary: { applianceSize: "large", numberOfDeployedVms: "1" },
    });
    expect((await put(PARTIAL, "/api/4.0/edges/edge-1")).status).toBe(204);
    const summary = xml((await t.api("GET", "/api/4.0/edges/edge-1/summary")).text).edgeSummary;
    expect(summary).toMatchObject({
      name: "esg-renamed",
      revision: "2",
      edgeType: "gatewayServices",
      datacenterMoid: "datacenter-22",
      numberOfConnectedVnics: "0",
      appliancesSummary: { applianceSize: "xlarge", numberOfDeployedVms: "0" },
    });
  });
});
