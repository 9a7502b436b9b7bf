import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import type { AuditSnapshot } from "../../src/simulator/index.ts";
import { TestSimulator, smallEdge, xml } from "./helpers.ts";

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

async function put(doc: EdgeDocument | string, path = EDGE) {
  return t.api("PUT", path, { body: typeof doc === "string" ? doc : doc.serialize() });
}

async function violations(): Promise<AuditSnapshot["violations"]> {
  return (await t.control<AuditSnapshot>("GET", "audit")).json.violations;
}

describe("GET edge", () => {
  it("answers the stored document byte for byte", async () => {
    const reply = await t.api("GET", EDGE);
    expect(reply.status).toBe(200);
    expect(reply.headers["content-type"]).toBe("application/xml");
    expect(reply.text).toBe(smallEdge());
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

  it("ignores a changed description: the stored one stays", async () => {
    const doc = (await getEdge()).setField("description", "changed").setTenant("t2");
    expect((await put(doc)).status).toBe(204);
    const after = await getEdge();
    expect(after.description).toBe("tier 7");
    expect(after.tenant).toBe("t2");
    expect(await violations()).toEqual([]);
  });

  it("ignores a description added to an edge that has none", async () => {
    const doc = (await getEdge("/api/4.0/edges/edge-1")).setField("description", "new").setTenant("t3");
    expect((await put(doc, "/api/4.0/edges/edge-1")).status).toBe(204);
    const after = await getEdge("/api/4.0/edges/edge-1");
    expect(after.description).toBeUndefined();
    expect(after.tenant).toBe("t3");
  });

  it("stores the whole document sent, and audits content that differs as lost", async () => {
    const text = smallEdge("edge-7", "<nat><enabled>true</enabled></nat>").replace(
      "<tenant>default</tenant>",
      "<tenant>x</tenant>",
    );
    expect((await put(text)).status).toBe(204);
    const after = await t.api("GET", EDGE);
    expect(after.text).toContain("<features><featureConfig/><nat><enabled>true</enabled></nat></features>");
    expect(after.text).toContain("<version>5</version>");
    expect(await violations()).toEqual([
      expect.objectContaining({ kind: "lostContent", edgeId: "edge-7", storedVersion: 4, sentVersion: 4 }),
    ]);
  });

  it("audits a dropped element as lost content", async () => {
    const text = smallEdge().replace("<featureConfig/>", "");
    expect((await put(text)).status).toBe(204);
    expect(await violations()).toHaveLength(1);
    expect((await t.api("GET", EDGE)).text).toContain("<features/>");
  });

  it("audits a PUT based on a stale read as an overwrite", async () => {
    const stale = await getEdge();
    await t.control("PATCH", "edges/edge-7", { name: "renamed-by-someone" });
    expect((await put(stale.setTenant("t"))).status).toBe(204);
    const [violation] = await violations();
    expect(violation?.message).toBe("PUT based on version 4 overwrote version 5");
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
    {
      name: "WithCharset",
      contentType: "application/xml; charset=UTF-8",
      status: 204,
      reason: "parameters are fine",
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
    const reply = await t.api("PUT", path ?? EDGE, {
      body: body ?? smallEdge(),
      ...(contentType !== undefined ? { contentType } : {}),
    });
    expect(reply.status).toBe(status);
    if (status !== 204) {
      expect(xml(reply.text).error).toHaveProperty("errorCode");
      expect((await getEdge()).version).toBe(4);
    }
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

describe("PUT edge: stored as the manager's model", () => {
  /** the same information as `text` in another client's formatting */
  function reformatted(text: string): string {
    return text
      .replaceAll("><", ">\n  <")
      .replace(
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        "<?xml version='1.0'?>\n<!-- sent by another client -->\n",
      )
      .replace("<name>dlr-07</name>", "<name><![CDATA[dlr-07]]></name>")
      .replace("<tunnels/>", "<tunnels ></tunnels >");
  }

  it("a formatting-only change is no lost content, and the GET answers in the manager's format", async () => {
    const sent = reformatted(smallEdge()).replace("<tenant>default</tenant>", "<tenant>t-fmt</tenant>");
    expect((await put(sent)).status).toBe(204);
    expect(await violations()).toEqual([]);
    const after = (await t.api("GET", EDGE)).text;
    expect(
      after.startsWith('<?xml version="1.0" encoding="UTF-8"?><edge><id>edge-7</id><version>5</version>'),
    ).toBe(true);
    expect(after).not.toContain("another client");
    expect(after).not.toContain("CDATA");
    expect(after).not.toContain("\n");
    expect(after).toContain("<name>dlr-07</name>");
    expect(after).toContain("<tenant>t-fmt</tenant>");
  });

  it("writes two-space indentation when prettyXml is set", async () => {
    await t.control("PUT", "settings", { prettyXml: true });
    expect((await put(smallEdge().replace("<tenant>default</tenant>", "<tenant>p</tenant>"))).status).toBe(
      204,
    );
    const after = (await t.api("GET", EDGE)).text;
    expect(after).toContain(
      '<?xml version="1.0" encoding="UTF-8"?>\n<edge>\n  <id>edge-7</id>\n  <version>5</version>',
    );
    expect(await violations()).toEqual([]);
  });

  it("keeps attributes, compares them as a set, and escapes text it writes back", async () => {
    const before = smallEdge("edge-7", '<nat a="1" b="x &amp; y"><enabled>a &lt; b</enabled></nat>');
    await t.control("PUT", "edges/edge-7", { xml: before });
    const sent = before
      .replace('<nat a="1" b="x &amp; y">', "<nat b='x &#38; y'  a='1' >")
      .replace("<tenant>default</tenant>", "<tenant>t-attr</tenant>");
    expect((await put(sent)).status).toBe(204);
    expect(await violations()).toEqual([]);
    expect((await t.api("GET", EDGE)).text).toContain(
      '<nat b="x &amp; y" a="1"><enabled>a &lt; b</enabled></nat>',
    );
  });

  it("the summary's name, tenantId and revision follow the edge", async () => {
    const doc = (await getEdge("/api/4.0/edges/edge-1")).setTenant("tenant-followed");
    expect((await put(doc, "/api/4.0/edges/edge-1")).status).toBe(204);
    expect(await violations()).toEqual([]);
    await t.control("PATCH", "edges/edge-1", { name: "renamed" });
    const edge = xml((await t.api("GET", "/api/4.0/edges/edge-1")).text).edge as Record<string, unknown>;
    expect(edge.edgeSummary).toMatchObject({ tenantId: "tenant-followed", name: "renamed", revision: "3" });
    const summary = xml((await t.api("GET", "/api/4.0/edges/edge-1/summary")).text).edgeSummary;
    expect(summary).toMatchObject({
      id: "edge-1",
      tenantId: "tenant-followed",
      name: "renamed",
      revision: "3",
    });
  });

  it("refuses text beside child elements with a vShield Edge error, storing nothing", async () => {
    const reply = await put(smallEdge().replace("<vnics/>", "<vnics>stray<vnic/></vnics>"));
    expect(reply.status).toBe(400);
    expect(xml(reply.text).error).toMatchObject({ errorCode: "10001", moduleName: "vShield Edge" });
    expect((await getEdge()).version).toBe(4);
  });
});
