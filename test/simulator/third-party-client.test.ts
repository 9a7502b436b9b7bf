/**
 * The simulator driven by a client written from the field notes alone, as a third-party NSX-v
 * library would be: undici requests, documents read and written with fast-xml-parser, nothing
 * from src/nsx (whose tolerance could hide what another client trips over).
 */
import { XMLBuilder, XMLParser } from "fast-xml-parser";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import {
  startSimulator,
  type RunningSimulator,
  type SimulatorStateInput,
} from "../../src/simulator/index.ts";

const ADMIN = `Basic ${Buffer.from("admin:default").toString("base64")}`;
const AUDITOR = `Basic ${Buffer.from("auditor:read-only").toString("base64")}`;

const reader = new XMLParser({ parseTagValue: false, isArray: (name) => name === "edgeSummary" });
/** order-preserving, for a read-modify-write of a whole edge */
const orderedReader = new XMLParser({ preserveOrder: true, parseTagValue: false, trimValues: true });
const writer = new XMLBuilder({ preserveOrder: true, format: true, indentBy: "\t", suppressEmptyNode: true });

let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(state: SimulatorStateInput): Promise<RunningSimulator> {
  sim = await startSimulator({
    state: { auditor: { username: "auditor", password: "read-only" }, ...state },
  });
  return sim;
}

async function call(
  method: string,
  path: string,
  options: { body?: string; contentType?: string; auth?: string } = {},
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const headers: Record<string, string> = { Accept: "application/xml", Authorization: options.auth ?? ADMIN };
  if (options.body !== undefined) headers["Content-Type"] = options.contentType ?? "application/xml";
  const res = await request(`${sim!.url}${path}`, {
    method: method as "GET",
    headers,
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}

async function audit(): Promise<{ violations: unknown[] }> {
  const res = await request(`${sim!.url}/_simulator/audit`);
  return (await res.body.json()) as { violations: unknown[] };
}

type Ordered = Record<string, unknown>[];

interface ErrorElement {
  errorCode: string;
  moduleName?: string;
  errorData?: { data: unknown };
}
/** an error body as the reader gives it, in whichever shape the manager chose */
type ErrorDoc = { error: ErrorElement; errors: { error: ErrorElement } };

/** sets the text of `<edge><tenant>` in a preserveOrder tree */
function setTenant(tree: Ordered, tenant: string): void {
  const edge = tree.find((n) => "edge" in n)?.edge as Ordered;
  const field = edge.find((n) => "tenant" in n) as { tenant: Ordered };
  field.tenant = [{ "#text": tenant }];
}

describe("a third-party client against the simulator", () => {
  it("round-trips an edge in its own formatting: no audit finding, the manager's format back", async () => {
    await start({ edges: [{ generate: { count: 2, firewallRules: 5 } }] });
    const read = await call("GET", "/api/4.0/edges/edge-2");
    expect(read.status).toBe(200);
    const tree = orderedReader.parse(read.text) as Ordered;
    setTenant(tree, "tenant & <friends>");
    const sent = writer.build(tree.filter((n) => !("?xml" in n))) as string;
    expect(sent).toContain("\t<tenant>tenant &amp; &lt;friends&gt;</tenant>");
    expect((await call("PUT", "/api/4.0/edges/edge-2", { body: sent })).status).toBe(204);
    expect((await audit()).violations).toEqual([]);
    const after = await call("GET", "/api/4.0/edges/edge-2");
    expect(after.text.startsWith('<?xml version="1.0" encoding="UTF-8"?><edge><id>edge-2</id>')).toBe(true);
    const edge = reader.parse(after.text).edge as Record<string, unknown>;
    expect(edge.tenant).toBe("tenant & <friends>");
    expect(edge.version).toBe("2");
  });

  it("pages through 600 edges with the manager's defaults and bounds", async () => {
    await start({
      edges: [
        { generate: { count: 300, firewallRules: 0, tenant: "blue" } },
        { generate: { count: 300, idStart: 301, firewallRules: 0, tenant: "green" } },
      ],
    });
    const seen: string[] = [];
    const pageSizes: number[] = [];
    for (let startIndex = 0; ;) {
      const res = await call("GET", `/api/4.0/edges?startIndex=${startIndex}`);
      expect(res.status).toBe(200);
      const page = reader.parse(res.text).pagedEdgeList.edgePage;
      const info = page.pagingInfo;
      expect(info).toMatchObject({ pageSize: "256", startIndex: String(startIndex), totalCount: "600" });
      expect(info).toMatchObject({ sortOrderAscending: "true", sortBy: "id" });
      const summaries = (page.edgeSummary ?? []) as Record<string, unknown>[];
      pageSizes.push(summaries.length);
      seen.push(...summaries.map((s) => s.objectId as string));
      if (startIndex + Number(info.pageSize) >= Number(info.totalCount)) break;
      startIndex += Number(info.pageSize);
    }
    expect(pageSizes).toEqual([256, 256, 88]);
    expect(new Set(seen).size).toBe(600);
    expect(seen.slice(0, 3)).toEqual(["edge-1", "edge-2", "edge-3"]);

    const green = reader.parse((await call("GET", "/api/4.0/edges?tenant=green&pageSize=1024")).text);
    expect(green.pagedEdgeList.edgePage.pagingInfo.totalCount).toBe("300");
    expect(green.pagedEdgeList.edgePage.edgeSummary[0]).toMatchObject({ id: "edge-301", tenantId: "green" });
    const beyond = reader.parse((await call("GET", "/api/4.0/edges?startIndex=600")).text);
    expect(beyond.pagedEdgeList.edgePage.edgeSummary).toBeUndefined();
    const tooLarge = await call("GET", "/api/4.0/edges?pageSize=1025");
    expect(tooLarge.status).toBe(400);
    expect(reader.parse(tooLarge.text).error).toMatchObject({
      errorCode: "210",
      moduleName: "core-services",
    });
  });

  it("allocates on the REST path (ALLOCATE and RESERVE) and reads one pool", async () => {
    await start({
      pools: [
        {
          id: "ipaddresspool-3",
          name: "p",
          prefixLength: 24,
          ranges: [{ start: "10.1.0.10", end: "10.1.0.12" }],
        },
      ],
    });
    const path = "/api/2.0/services/ipam/pools/ipaddresspool-3/ipaddresses";
    const next = await call("POST", path, {
      body: "<ipAddressRequest><allocationMode>ALLOCATE</allocationMode></ipAddressRequest>",
    });
    expect(next.status).toBe(200);
    expect(reader.parse(next.text).allocatedIpAddress).toMatchObject({ ipAddress: "10.1.0.10" });
    const chosen =
      "<ipAddressRequest><allocationMode>RESERVE</allocationMode><ipAddress>10.1.0.12</ipAddress></ipAddressRequest>";
    expect((await call("POST", path, { body: chosen })).status).toBe(200);
    const again = await call("POST", path, { body: chosen });
    expect(again.status).toBe(400);
    expect(reader.parse(again.text).error).toMatchObject({
      errorCode: "120056",
      moduleName: "core-services",
    });
    const pool = reader.parse((await call("GET", "/api/2.0/services/ipam/pools/ipaddresspool-3")).text);
    expect(pool.ipamAddressPool).toMatchObject({ objectId: "ipaddresspool-3", usedAddressCount: "2" });
    const listed = reader.parse((await call("GET", path)).text).allocatedIpAddresses.allocatedIpAddress;
    expect(listed.map((a: { ipAddress: string }) => a.ipAddress)).toEqual(["10.1.0.10", "10.1.0.12"]);
  });

  it.each([
    { status: 401, why: "a bad password", run: () => call("GET", "/api/4.0/edges", { auth: "Basic eDp5" }) },
    {
      status: 403,
      why: "a write by the Auditor",
      run: () =>
        call("DELETE", "/api/2.0/services/ipam/pools/ipaddresspool-3/ipaddresses/10.1.0.10", {
          auth: AUDITOR,
        }),
    },
    { status: 404, why: "an unknown edge", run: () => call("GET", "/api/4.0/edges/edge-99") },
    { status: 404, why: "no such API", run: () => call("GET", "/api/4.0/nothing") },
    {
      status: 405,
      why: "POST on an edge",
      run: () => call("POST", "/api/4.0/edges/edge-1", { body: "<edge/>" }),
    },
    {
      status: 415,
      why: "JSON sent",
      run: () => call("PUT", "/api/4.0/edges/edge-1", { body: "{}", contentType: "application/json" }),
    },
  ])("answers $status for $why with a module's code, not the status", async ({ status, run }) => {
    await start({
      edges: [{ generate: { count: 1, firewallRules: 0 } }],
      pools: [
        {
          id: "ipaddresspool-3",
          name: "p",
          ranges: [{ start: "10.1.0.10", end: "10.1.0.12" }],
          allocations: [{ ip: "10.1.0.10" }],
        },
      ],
    });
    const res = await run();
    expect(res.status).toBe(status);
    const error = reader.parse(res.text).error as { errorCode: string; details: string; moduleName: string };
    expect(error.errorCode).toMatch(/^[0-9]+$/);
    expect(error.errorCode).not.toBe(String(status));
    expect(error.details.length).toBeGreaterThan(0);
    expect(error.moduleName).toBe("core-services");
    if (status === 401) expect(res.headers["www-authenticate"]).toMatch(/^Basic /);
    if (status === 405) expect(res.headers.allow).toBe("GET, PUT, DELETE");
  });

  it.each([
    { shape: "error", read: (doc: ErrorDoc) => doc.error },
    { shape: "errors", read: (doc: ErrorDoc) => doc.errors.error },
    { shape: "errorData", read: (doc: ErrorDoc) => doc.error },
    { shape: "codeOnly", read: (doc: ErrorDoc) => doc.error },
  ])("a fault in the $shape shape reads as a manager's error document", async ({ shape, read }) => {
    await start({ edges: [{ generate: { count: 1, firewallRules: 0 } }] });
    await request(`${sim!.url}/_simulator/faults`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ route: "getEdge", kind: "status", status: 503, shape, count: 1 }),
    });
    const res = await call("GET", "/api/4.0/edges/edge-1");
    expect(res.status).toBe(503);
    const error = read(reader.parse(res.text) as ErrorDoc);
    expect(error.errorCode).toBe("10020");
    if (shape === "codeOnly") expect(Object.keys(error)).toEqual(["errorCode"]);
    else expect(error.moduleName).toBe("vShield Edge");
    if (shape === "errorData")
      expect(error.errorData?.data).toMatchObject({ key: "errorCode", value: "10020" });
    expect((await call("GET", "/api/4.0/edges/edge-1")).status).toBe(200);
  });
});
