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
    expect((await t.api("GET", EDGE)).text).toContain("<features></features>");
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
    expect(xml(reply.text).error).toMatchObject({ errorCode: "409", moduleName: "vShield Edge" });
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
