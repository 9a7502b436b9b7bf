import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  CLIENT_DEFAULTS,
  ManagerClient,
  MAX_EDGE_LIST_PAGES,
  type ManagerClientOptions,
} from "../../src/nsx/client.ts";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import { EdgePages } from "../../src/nsx/edge-pages.ts";
import type { EdgePageMemo, EdgeSummary } from "../../src/nsx/types.ts";
import {
  NsxApiError,
  NsxDocumentError,
  NsxIncompleteEdgeError,
  NsxResponseError,
  NsxTransportError,
} from "../../src/nsx/errors.ts";
import { clientHarness } from "./client-harness.ts";
import { EDGE_XML, reply } from "./test-server.ts";

const harness = clientHarness();
const { serve } = harness;
const client = (url: string, options: Partial<ManagerClientOptions> = {}): ManagerClient =>
  harness.client(url, options).c;

const BASIC = `Basic ${Buffer.from("admin:default").toString("base64")}`;
const DECL = '<?xml version="1.0" encoding="UTF-8"?>';

describe("the five calls over HTTP", () => {
  it("reads an edge with Basic auth and Accept: application/xml", async () => {
    const server = await serve((_r, res) => reply(res, 200, EDGE_XML("edge-7", "acme")));
    const doc = await client(server.url).getEdge("edge-7");
    expect(doc.tenant).toBe("acme");
    expect(doc.serialize()).toBe(EDGE_XML("edge-7", "acme"));
    expect(server.requests).toEqual([
      expect.objectContaining({ method: "GET", url: "/api/4.0/edges/edge-7", body: "" }),
    ]);
    expect(server.requests[0]?.headers).toMatchObject({ authorization: BASIC, accept: "application/xml" });
    expect(server.requests[0]?.headers["content-type"]).toBeUndefined();
  });

  it("refuses an edge document for another edge than the one asked for", async () => {
    const server = await serve((_r, res) => reply(res, 200, EDGE_XML("edge-8")));
    await expect(client(server.url).getEdge("edge-7")).rejects.toThrow(
      'GET /api/4.0/edges/edge-7: the manager answered with edge "edge-8"',
    );
  });

  it.each([
    { name: "NoContent", reason: "the documented answer", status: 204, body: "" },
    { name: "Ok", reason: "some builds answer 200 with a body", status: 200, body: "<edge/>" },
    { name: "Accepted", reason: "any 2xx is success", status: 202, body: "not even xml" },
  ])("writes the whole edge document; $name ($reason)", async ({ status, body }) => {
    const server = await serve((_r, res) => reply(res, status, body));
    const doc = EdgeDocument.parse(EDGE_XML("edge-3")).setTenant("new & <improved>");
    await client(server.url).putEdge("edge-3", doc);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      method: "PUT",
      url: "/api/4.0/edges/edge-3",
      body: doc.serialize(),
    });
    expect(server.requests[0]?.headers).toMatchObject({
      authorization: BASIC,
      accept: "application/xml",
      "content-type": "application/xml",
    });
  });

  it("refuses to write a document to another edge's path, before any call", async () => {
    const server = await serve((_r, res) => reply(res, 204));
    await expect(
      client(server.url).putEdge("edge-3", EdgeDocument.parse(EDGE_XML("edge-4"))),
    ).rejects.toBeInstanceOf(NsxDocumentError);
    expect(server.requests).toHaveLength(0);
  });

  it("lists pools and allocations", async () => {
    const server = await serve((r, res) =>
      r.url.endsWith("/ipaddresses")
        ? reply(
            res,
            200,
            `${DECL}<allocatedIpAddresses><allocatedIpAddress><id>allocatedipaddress-4</id><ipAddress>10.0.0.4</ipAddress><allocationNote>ctrl-1</allocationNote></allocatedIpAddress></allocatedIpAddresses>`,
          )
        : reply(
            res,
            200,
            `<ipamAddressPools><ipamAddressPool><objectId>ipaddresspool-2</objectId><name>p</name><totalAddressCount>3</totalAddressCount><usedAddressCount>1</usedAddressCount><usedPercentage>33</usedPercentage><ipRanges><ipRangeDto><startAddress>10.0.0.3</startAddress><endAddress>10.0.0.5</endAddress></ipRangeDto></ipRanges></ipamAddressPool></ipamAddressPools>`,
          ),
    );
    const c = client(server.url);
    await expect(c.listPools("globalroot-0")).resolves.toEqual([
      {
        objectId: "ipaddresspool-2",
        name: "p",
        totalAddressCount: 3,
        usedAddressCount: 1,
        usedPercentage: 33,
        ranges: [{ startAddress: "10.0.0.3", endAddress: "10.0.0.5" }],
      },
    ]);
    await expect(c.listAllocations("ipaddresspool-2")).resolves.toEqual([
      { id: "allocatedipaddress-4", ipAddress: "10.0.0.4", allocationNote: "ctrl-1" },
    ]);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      "GET /api/2.0/services/ipam/pools/scope/globalroot-0",
      "GET /api/2.0/services/ipam/pools/ipaddresspool-2/ipaddresses",
    ]);
  });

  it.each([
    { name: "BareTrue", reason: "the spec's answer", body: "true", want: true },
    {
      name: "BooleanDocument",
      reason: "what real managers send",
      body: `${DECL}\n<boolean>true</boolean>\n`,
      want: true,
    },
    { name: "False", reason: "not released", body: "<boolean>false</boolean>", want: false },
    { name: "Empty", reason: "no answer is not a yes", body: "", want: false },
  ])("releases an address: $name ($reason)", async ({ body, want }) => {
    const server = await serve((_r, res) => reply(res, 200, body));
    await expect(client(server.url).releaseAddress("ipaddresspool-1", "2001:db8::5")).resolves.toMatchObject({
      released: want,
    });
    expect(server.requests[0]).toMatchObject({
      method: "DELETE",
      url: "/api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses/2001%3Adb8%3A%3A5",
    });
  });

  it("says that a 204 without a body is no answer, not false", async () => {
    const server = await serve((_r, res) => reply(res, 204, ""));
    await expect(client(server.url).releaseAddress("ipaddresspool-1", "10.0.0.5")).resolves.toEqual({
      released: false,
      answer: "nothing (an empty 204)",
    });
  });

  it("keeps a base path of the manager URL", async () => {
    const server = await serve((_r, res) => reply(res, 200, "<ipamAddressPools/>"));
    await client(`${server.url}/nsx/`).listPools("globalroot-0");
    expect(server.requests[0]?.url).toBe("/nsx/api/2.0/services/ipam/pools/scope/globalroot-0");
  });
});

describe("ids are checked before any call", () => {
  const doc = (): EdgeDocument => EdgeDocument.parse(EDGE_XML());
  it.each([
    {
      name: "EdgeWithSlash",
      reason: "path traversal",
      call: (c: ManagerClient) => c.getEdge("edge-1/../../x"),
    },
    {
      name: "EdgeWrongPrefix",
      reason: "only edge-<n> names an edge",
      call: (c: ManagerClient) => c.getEdge("vm-1"),
    },
    { name: "EdgeEmpty", reason: "nothing to address", call: (c: ManagerClient) => c.getEdge("") },
    {
      name: "PutEdgeQuery",
      reason: "a query would change the call",
      call: (c: ManagerClient) => c.putEdge("edge-1?x=1", doc()),
    },
    {
      name: "ScopeWithSlash",
      reason: "scope ids are one path segment",
      call: (c: ManagerClient) => c.listPools("global/root"),
    },
    {
      name: "ScopeWithSpace",
      reason: "outside [A-Za-z0-9_.:-]",
      call: (c: ManagerClient) => c.listPools("global root"),
    },
    {
      name: "PoolName",
      reason: "a pool name is not its id",
      call: (c: ManagerClient) => c.listAllocations("my-pool"),
    },
    {
      name: "PoolNewline",
      reason: "anchored match, no trailing newline",
      call: (c: ManagerClient) => c.listAllocations("ipaddresspool-1\n"),
    },
    {
      name: "ReleaseBadPool",
      reason: "the pool is checked for a release too",
      call: (c: ManagerClient) => c.releaseAddress("pool-1", "10.0.0.1"),
    },
    {
      name: "ReleaseNotAnIp",
      reason: "only addresses are released",
      call: (c: ManagerClient) => c.releaseAddress("ipaddresspool-1", "10.0.0.1/24"),
    },
    {
      name: "ReleaseZone",
      reason: "zone ids are not addresses",
      call: (c: ManagerClient) => c.releaseAddress("ipaddresspool-1", "fe80::1%eth0"),
    },
  ])("$name: $reason", async ({ call }) => {
    const server = await serve((_r, res) => reply(res, 200, "true"));
    await expect(call(client(server.url))).rejects.toBeInstanceOf(NsxDocumentError);
    expect(server.connections()).toBe(0);
  });
});

describe("only whole edges are written", () => {
  const whole = EDGE_XML();
  const ALL_FEATURES = ["firewall", "routing", "highAvailability", "syslog", "ipsec", "dhcp", "nat"];
  const DLR = `<edge><id>edge-1</id><version>3</version><type>distributedRouter</type><appliances/><cliSettings/><mgmtInterface><index>0</index></mgmtInterface><interfaces><interface><index>2</index></interface></interfaces><features><firewall/><routing/></features></edge>`;
  it.each([
    {
      name: "IdAndDescriptionOnly",
      reason: "a well-formed answer that is not an edge: 1 MB of description and an id",
      xml: `<edge><id>edge-1</id><description>${"x".repeat(1 << 20)}</description></edge>`,
      missing: ["<version>", "<type>", "<appliances>", "<cliSettings>", "<features>"],
    },
    {
      name: "NoFeatures",
      reason: "a cut answer that lost the firewall, NAT and routing configuration",
      xml: whole.replace(/<features>.*<\/features>/, ""),
      missing: ["<features>", ...ALL_FEATURES.map((f) => `<${f}> in <features>`)],
    },
    {
      name: "NoVnics",
      reason: "an ESG without its interfaces: the PUT would remove them",
      xml: whole.replace(/<vnics>.*<\/vnics>/, ""),
      missing: ["<vnics>"],
    },
    {
      name: "OneVnicLost",
      reason: "a deployed ESG lists all ten vNICs, connected or not: one missing is one removed",
      xml: whole.replace("<vnic><index>3</index></vnic>", ""),
      missing: ["<vnic> with index 3 in <vnics>"],
    },
    {
      name: "NoFirewall",
      reason: "every ESG carries its firewall section, rules or not: without it the rules would go",
      xml: whole.replace("<firewall><enabled>false</enabled></firewall>", ""),
      missing: ["<firewall> in <features>"],
    },
    {
      name: "NoType",
      reason: "every ESG and DLR says what it is",
      xml: whole.replace("<type>gatewayServices</type>", ""),
      missing: ["<type>"],
    },
    {
      name: "UnknownType",
      reason: "a type that is neither would escape the rules of both",
      xml: whole.replace("<type>gatewayServices</type>", "<type>somethingElse</type>"),
      missing: ['a <type> of gatewayServices or distributedRouter (it says "somethingElse")'],
    },
    {
      name: "DlrWithoutInterfaces",
      reason: "a DLR's interfaces are its configuration as an ESG's vNICs are",
      xml: DLR.replace(/<interfaces>.*<\/interfaces>/, ""),
      missing: ["<interfaces>"],
    },
  ])("refuses $name before any call: $reason", async ({ xml, missing }) => {
    const server = await serve((_r, res) => reply(res, 204, ""));
    const put = client(server.url).putEdge("edge-1", EdgeDocument.parse(xml).setTenant("blue"));
    await expect(put).rejects.toBeInstanceOf(NsxIncompleteEdgeError);
    await expect(put).rejects.toThrow(
      `putEdge edge-1: refusing to write a document that is not a whole edge: it lacks ${missing.join(", ")}, which every`,
    );
    await expect(put).rejects.toMatchObject({ code: "NSX_ERR_BAD_DOCUMENT", edgeId: "edge-1", missing });
    expect(server.connections(), "nothing sent").toBe(0);
  });

  it.each([
    { name: "Esg", reason: "ten vNICs and the seven features", xml: whole },
    { name: "Dlr", reason: "its interfaces, firewall and routing", xml: DLR },
  ])("writes a whole $name: $reason", async ({ xml }) => {
    const server = await serve((_r, res) => reply(res, 204, ""));
    await client(server.url).putEdge("edge-1", EdgeDocument.parse(xml).setTenant("blue"));
    expect(server.requests).toHaveLength(1);
  });
});

describe("manager errors", () => {
  it.each([
    {
      name: "Error",
      reason: "one <error>: details, code and module are surfaced",
      status: 400,
      body: "<error><details>No free address</details><errorCode>120051</errorCode><moduleName>core-services</moduleName></error>",
      message:
        "GET /api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses: HTTP 400: No free address, errorCode 120051, module core-services",
      fields: { status: 400, errorCode: "120051", moduleName: "core-services", details: "No free address" },
      code: "NSX_ERR_POOL_EXHAUSTED",
    },
    {
      name: "Errors",
      reason: "several errors: the first is spread, all are kept",
      status: 400,
      body: "<errors><error><errorCode>1</errorCode><details>a</details></error><error><details>b</details></error></errors>",
      message: "HTTP 400: a, errorCode 1",
      fields: { errors: [{ details: "a", errorCode: "1" }, { details: "b" }] },
      code: "NSX_ERR_BAD_REQUEST",
    },
    {
      name: "ErrorData",
      reason: "errorData is kept as data",
      status: 503,
      body: "<error><errorData><data><key>edgeId</key><value>edge-1</value></data></errorData><details>NSX Edge is unreachable</details></error>",
      message: "HTTP 503: NSX Edge is unreachable",
      fields: { errors: [{ details: "NSX Edge is unreachable", data: { edgeId: "edge-1" } }] },
      code: "NSX_ERR_UNAVAILABLE",
    },
    {
      name: "CodeOnly",
      reason: "a 500 may carry only a code",
      status: 500,
      body: "<error><errorCode>500</errorCode></error>",
      message: "HTTP 500: errorCode 500",
      fields: { details: undefined, errorCode: "500" },
      code: "NSX_ERR_SERVER",
    },
    {
      name: "Empty",
      reason: "no body: the status still makes a clear message",
      status: 403,
      body: "",
      message: "GET /api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses: HTTP 403",
      fields: { errors: [] },
      code: "NSX_ERR_FORBIDDEN",
    },
    {
      name: "PlainText",
      reason: "a proxy's text answer is shown",
      status: 404,
      body: "Not Found",
      message: "HTTP 404: Not Found",
      fields: { details: "Not Found" },
      code: "NSX_ERR_NOT_FOUND",
    },
  ])("$name: $reason", async ({ status, body, message, fields, code }) => {
    const server = await serve((_r, res) => reply(res, status, body));
    const error = await client(server.url, { maxRetries: 0 })
      .listAllocations("ipaddresspool-1")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxApiError);
    expect((error as Error).message).toContain(message);
    expect(error).toMatchObject({ code, method: "GET", ...fields });
  });

  it.each([
    {
      name: "NotXml",
      reason: "a 200 that is not XML is refused",
      body: "<ipamAddressPools>",
      message: "not well-formed",
    },
    {
      name: "Doctype",
      reason: "DTDs are refused",
      body: '<!DOCTYPE a [<!ENTITY b "c">]><ipamAddressPools/>',
      message: "DOCTYPE",
    },
    {
      name: "Html",
      reason: "a login page is not a pool list",
      body: "<html><body>login</body></html>",
      message: "expected <ipamAddressPools>",
    },
  ])("refuses a success body: $name ($reason)", async ({ body, message }) => {
    const server = await serve((_r, res) => reply(res, 200, body));
    const error = await client(server.url)
      .listPools("globalroot-0")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxResponseError);
    expect((error as Error).message).toContain(message);
  });
});

describe("options and lifecycle", () => {
  it("starts no I/O in the constructor and closes cleanly without ever connecting", async () => {
    const server = await serve((_r, res) => reply(res, 200, "true"));
    const c = new ManagerClient({ url: server.url, username: "admin", password: "default" });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(server.connections()).toBe(0);
    await c.close();
    await expect(c.listPools("globalroot-0")).rejects.toThrow("the client is closed");
    expect(server.connections()).toBe(0);
  });

  it("never mutates the caller's options and keeps defaults in one frozen object", () => {
    const options = { url: "http://127.0.0.1:1", username: "a", password: "b" };
    const copy = structuredClone(options);
    new ManagerClient(options);
    expect(options).toEqual(copy);
    expect(Object.isFrozen(CLIENT_DEFAULTS)).toBe(true);
    expect(CLIENT_DEFAULTS).toMatchObject({
      requestTimeoutMs: 30_000,
      maxConcurrentRequests: 8,
      requestsPerSecond: 20,
      burst: null,
      maxRetries: 3,
      baseDelayMs: 200,
      maxDelayMs: 5_000,
      maxResponseBytes: 32 * 1024 * 1024,
      insecureSkipVerify: false,
    });
  });

  it("keeps calling when the onRequest hook throws", async () => {
    const server = await serve((_r, res) => reply(res, 200, "<ipamAddressPools/>"));
    const c = client(server.url, {
      onRequest: () => {
        throw new Error("metrics broke");
      },
    });
    await expect(c.listPools("globalroot-0")).resolves.toEqual([]);
  });

  it.each([
    {
      name: "UserinfoInUrl",
      reason: "credentials belong in username/password, never in a URL",
      patch: { url: "https://admin:Secr3tPw@nsx.example" },
    },
    { name: "NotHttp", reason: "only http(s)", patch: { url: "ftp://nsx.example" } },
    { name: "NotAUrl", reason: "unparsable", patch: { url: "nsx.example Secr3tPw" } },
    {
      name: "QueryInUrl",
      reason: "a query would be appended to every path",
      patch: { url: "https://nsx.example/?a=Secr3tPw" },
    },
    { name: "ColonInUsername", reason: "Basic auth cannot carry it", patch: { username: "a:b" } },
    { name: "ZeroConcurrency", reason: "nothing could ever run", patch: { maxConcurrentRequests: 0 } },
    { name: "NegativeRetries", reason: "a count", patch: { maxRetries: -1 } },
    { name: "FractionalTimeout", reason: "milliseconds are whole", patch: { requestTimeoutMs: 1.5 } },
    { name: "ZeroRate", reason: "no request could ever start", patch: { requestsPerSecond: 0 } },
    { name: "BadAuth", reason: "only basic and token exist", patch: { auth: "digest" as "basic" } },
  ])("refuses bad options: $name ($reason)", ({ patch }) => {
    const make = (): ManagerClient =>
      new ManagerClient({ url: "https://nsx.example", username: "admin", password: "Secr3tPw", ...patch });
    expect(make).toThrow(NsxDocumentError);
    try {
      make();
    } catch (error) {
      expect(String((error as Error).message)).not.toContain("Secr3tPw");
    }
  });

  it("aborts a call that waits for the limiter, without sending it", async () => {
    const server = await serve((_r, res) => setTimeout(() => reply(res, 200, "<ipamAddressPools/>"), 100));
    const c = client(server.url, { maxConcurrentRequests: 1 });
    const first = c.listPools("a");
    const controller = new AbortController();
    const second = c.listPools("b", { signal: controller.signal });
    controller.abort(new Error("stop"));
    const error = await second.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxTransportError);
    expect(error).toMatchObject({ notSent: true });
    expect((error as Error).message).toContain("while waiting for the request limiter");
    await first;
    expect(server.requests.map((r) => r.url)).toEqual(["/api/2.0/services/ipam/pools/scope/a"]);
  });
});

describe("listEdges against managers that page in their own way", () => {
  const page = (startIndex: number, total: number, ids: number[], pageSize = 2): string =>
    `${DECL}<pagedEdgeList><edgePage><pagingInfo><pageSize>${pageSize}</pageSize><startIndex>${startIndex}</startIndex>` +
    `<totalCount>${total}</totalCount><sortOrderAscending>true</sortOrderAscending><sortBy>id</sortBy></pagingInfo>` +
    ids.map((n) => `<edgeSummary><objectId>edge-${n}</objectId><name>e${n}</name></edgeSummary>`).join("") +
    "</edgePage></pagedEdgeList>";

  it("goes on from what a page holds when the manager sends fewer than asked", async () => {
    const server = await serve((r, res) => {
      const start = Number(new URL(r.url, "http://x").searchParams.get("startIndex"));
      reply(
        res,
        200,
        page(
          start,
          3,
          [start + 1].filter((n) => n <= 3),
          1,
        ),
      );
    });
    const edges = await client(server.url).listEdges({ pageSize: 1024 });
    expect(edges.map((e) => e.id)).toEqual(["edge-1", "edge-2", "edge-3"]);
    expect(server.requests.map((r) => r.url)).toEqual([
      "/api/4.0/edges?startIndex=0&pageSize=1024",
      "/api/4.0/edges?startIndex=1&pageSize=1024",
      "/api/4.0/edges?startIndex=2&pageSize=1024",
    ]);
  });

  it("refuses a list whose page is empty before the count it gives: an import must not miss edges", async () => {
    const server = await serve((_r, res) => reply(res, 200, page(0, 5, [])));
    await expect(client(server.url).listEdges()).rejects.toThrow(
      "edge list: the manager counts 5 edges but the page at 0 is empty",
    );
  });

  it("stops after MAX_EDGE_LIST_PAGES pages of a count within the bound, served an edge at a time", async () => {
    const server = await serve((r, res) => {
      const start = Number(new URL(r.url, "http://x").searchParams.get("startIndex"));
      reply(res, 200, page(start, 5_000, [start + 1], 1));
    });
    // no rate limit: the bound is in pages, not in time
    const fast = client(server.url, { requestsPerSecond: 100_000, burst: 1_000 });
    await expect(fast.listEdges()).rejects.toThrow(
      `edge list: the manager counts 5000 edges and ${MAX_EDGE_LIST_PAGES} pages held ${MAX_EDGE_LIST_PAGES}; stopped at ${MAX_EDGE_LIST_PAGES} pages`,
    );
    expect(server.requests).toHaveLength(MAX_EDGE_LIST_PAGES);
  });

  it.each([
    {
      name: "HugeCount",
      reason: "a count no manager reaches is refused on the first page, before it is followed",
      answer: (start: number) => page(start, 1_000_000_000, [start + 1, start + 2]),
      options: {},
      refusal:
        "edge list: the manager counts or sends 1000000000 edges, more than the 10000 one list may hold",
      requests: 1,
    },
    {
      name: "PagesOfNewIds",
      reason:
        "a manager that counts few but fills every page with new ids is refused once it sent more than the bound",
      answer: (start: number) => page(start, 8, [start * 10 + 1, start * 10 + 2, start * 10 + 3]),
      options: { maxEdgeListEdges: 8 },
      refusal: "edge list: the manager counts or sends 9 edges, more than the 8 one list may hold",
      requests: 3,
    },
    {
      name: "BytesOfAllPages",
      reason: "the pages of one list share a byte budget: a page that would go past it is refused unread",
      answer: (start: number) =>
        page(start, 100, [start + 1, start + 2]).replace("<name>", `<name>${"x".repeat(600)}`),
      options: { maxEdgeListBytes: 2_500 },
      refusal: "of the 2500 bytes the pages of one edge list may take together (maxEdgeListBytes)",
      requests: 3,
    },
  ])("bounds what one list may cost: $name, $reason", async ({ answer, options, refusal, requests }) => {
    const server = await serve((r, res) => {
      const start = Number(new URL(r.url, "http://x").searchParams.get("startIndex"));
      reply(res, 200, answer(start));
    });
    const bounded = client(server.url, { requestsPerSecond: 100_000, burst: 1_000, ...options });
    await expect(bounded.listEdges()).rejects.toThrow(refusal);
    expect(server.requests).toHaveLength(requests);
  });

  it("with a page memo, takes a page whose bytes are those of the last complete read from it, and parses one that changed", async () => {
    const names = new Map([
      [1, "e1"],
      [2, "e2"],
      [3, "e3"],
    ]);
    const pageOf = (start: number): string =>
      page(
        start,
        3,
        [start + 1, start + 2].filter((n) => n <= 3),
      ).replace(/<name>e(\d)<\/name>/g, (_m, n: string) => `<name>${names.get(Number(n))}</name>`);
    const server = await serve((r, res) =>
      reply(res, 200, pageOf(Number(new URL(r.url, "http://x").searchParams.get("startIndex")))),
    );
    const c = client(server.url);
    const pages = new EdgePages();
    const keep = (summary: EdgeSummary): EdgeSummary => ({ id: summary.id, name: summary.name });
    const first = await c.listEdges({ pageSize: 2, keep, pages });
    const same = await c.listEdges({ pageSize: 2, keep, pages });
    // the same objects: not parsed again (and kept as `keep` kept them)
    expect(same[0]).toBe(first[0]);
    expect(same[2]).toBe(first[2]);
    names.set(3, "renamed");
    const changed = await c.listEdges({ pageSize: 2, keep, pages });
    expect(changed[0], "the first page is unchanged").toBe(first[0]);
    expect(changed[2], "the second page was parsed again").toEqual({ id: "edge-3", name: "renamed" });
    expect(server.requests).toHaveLength(6);
  });

  it("a page memo is given the digest of the bytes as they came, and does not decode a page it knows", async () => {
    const names = new Map([[3, "e3"]]);
    const server = await serve((r, res) => {
      const start = Number(new URL(r.url, "http://x").searchParams.get("startIndex"));
      const bytes = Buffer.from(
        page(
          start,
          3,
          [start + 1, start + 2].filter((n) => n <= 3),
        ).replace("<name>e3</name>", `<name>${names.get(3)}</name>`),
      );
      // in several chunks, cut inside a multi-byte character: the digest is of the bytes, not of one chunk
      res.writeHead(200, { "content-type": "application/xml" });
      for (let at = 0; at < bytes.length; at += 7) res.write(bytes.subarray(at, at + 7));
      res.end();
    });
    const c = client(server.url);
    const memo = new EdgePages();
    const digests: string[] = [];
    let decoded = 0;
    const pages: EdgePageMemo = {
      page: (startIndex, pageSize, answer, parse) => {
        digests.push(answer.digest());
        const watched = {
          digest: () => answer.digest(),
          get body() {
            decoded++;
            return answer.body;
          },
        };
        return memo.page(startIndex, pageSize, watched, parse);
      },
      complete: () => memo.complete(),
      abandon: () => memo.abandon(),
    };
    names.set(3, "é3—ünïcode");
    const first = await c.listEdges({ pageSize: 2, pages });
    expect(first[2]?.name).toBe("é3—ünïcode");
    expect(decoded, "both pages decoded once").toBe(2);
    const sha = (text: string): string => createHash("sha256").update(Buffer.from(text)).digest("base64");
    const second = page(2, 3, [3]).replace("<name>e3</name>", "<name>é3—ünïcode</name>");
    expect(digests[1]).toBe(sha(second));
    await c.listEdges({ pageSize: 2, pages });
    expect(decoded, "unchanged pages: not decoded again").toBe(2);
    names.set(3, "renamed");
    const changed = await c.listEdges({ pageSize: 2, pages });
    expect(decoded, "only the changed page decoded").toBe(3);
    expect(changed[2]?.name).toBe("renamed");
  });

  it("a page memo keeps the last complete read when a read fails half-way", async () => {
    let failSecond = false;
    const server = await serve((r, res) => {
      const start = Number(new URL(r.url, "http://x").searchParams.get("startIndex"));
      if (failSecond && start > 0) reply(res, 200, "<pagedEdgeList><broken");
      else
        reply(
          res,
          200,
          page(
            start,
            3,
            [start + 1, start + 2].filter((n) => n <= 3),
          ),
        );
    });
    const c = client(server.url);
    const pages = new EdgePages();
    const first = await c.listEdges({ pageSize: 2, pages });
    failSecond = true;
    await expect(c.listEdges({ pageSize: 2, pages })).rejects.toThrow();
    failSecond = false;
    const again = await c.listEdges({ pageSize: 2, pages });
    expect(again[2], "the second page still remembered from the complete read").toBe(first[2]);
  });

  it("names the summary and the field that cannot be read", async () => {
    const server = await serve((_r, res) =>
      reply(
        res,
        200,
        page(0, 1, []).replace(
          "</pagingInfo>",
          "</pagingInfo><edgeSummary><objectId>vm-1</objectId></edgeSummary>",
        ),
      ),
    );
    await expect(client(server.url).listEdges()).rejects.toThrow(
      'edge list: edgeSummary #1: objectId is not edge-<n>: "vm-1"',
    );
  });
});
