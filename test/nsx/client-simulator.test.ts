/**
 * The client against the manager simulator over real HTTP(S): every call, every error shape, and
 * the faults the simulator's control API injects (src/simulator/control.ts, faults.ts).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ManagerClient, type ManagerClientOptions } from "../../src/nsx/client.ts";
import { NsxApiError, NsxResponseError, NsxTransportError } from "../../src/nsx/errors.ts";
import {
  startSimulator,
  type RunningSimulator,
  type SimulatorStateInput,
} from "../../src/simulator/index.ts";
import { clientHarness } from "./client-harness.ts";
import { TEST_CA } from "./test-server.ts";

const STATE: SimulatorStateInput = {
  edges: [{ generate: { count: 2, idStart: 1, tenant: "t-old" } }],
  pools: [
    {
      id: "ipaddresspool-1",
      name: "controllers",
      // the spec's form; pool 2 has the manager's default, allocatedipaddress-<n>
      allocationIds: "integer",
      prefixLength: 24,
      gateway: "10.0.0.1",
      ranges: [{ start: "10.0.0.10", end: "10.0.0.12" }],
      allocations: [{ ip: "10.0.0.10", note: "controller-1" }],
    },
    {
      id: "ipaddresspool-2",
      name: "vteps-v6",
      ranges: [{ start: "2001:db8::10", end: "2001:db8::1f" }],
    },
  ],
};

const harness = clientHarness({ maxDelayMs: 5 });

async function simulator(options: Parameters<typeof startSimulator>[0] = {}): Promise<RunningSimulator> {
  const sim = await startSimulator({ state: STATE, ...options });
  harness.onCleanup(() => sim.close());
  return sim;
}

function client(sim: RunningSimulator, options: Partial<ManagerClientOptions> = {}) {
  return harness.client(sim.url, options);
}

async function control(
  sim: RunningSimulator,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const res = await fetch(`${sim.url}/_simulator/${path}`, {
    method,
    ...(body !== undefined
      ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } }
      : {}),
  });
  const json: unknown = await res.json();
  if (res.status >= 300) throw new Error(`control ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const fault = (sim: RunningSimulator, spec: Record<string, unknown>): Promise<unknown> =>
  control(sim, "POST", "faults", spec);

describe("the five calls against the simulator", () => {
  it("reads an edge, changes its tenant, writes it back whole, and the manager keeps the rest", async () => {
    const sim = await simulator();
    const { c } = client(sim);
    const before = await c.getEdge("edge-1");
    expect(before.id).toBe("edge-1");
    expect(before.tenant).toBe("t-old");
    await c.putEdge("edge-1", before.clone().setTenant("t-new"));
    const after = await c.getEdge("edge-1");
    expect(after.tenant).toBe("t-new");
    expect(after.version).toBeGreaterThan(before.version ?? 0);
    expect(await control(sim, "GET", "audit")).toMatchObject({ violations: [] });
  });

  it("lists pools with counts and inclusive ranges, and sees allocations made elsewhere", async () => {
    const sim = await simulator();
    const { c } = client(sim);
    const pools = await c.listPools("globalroot-0");
    expect(
      pools.map((p) => [p.objectId, p.name, p.totalAddressCount, p.usedAddressCount, p.scopeId]),
    ).toEqual([
      ["ipaddresspool-1", "controllers", 3, 1, "globalroot-0"],
      ["ipaddresspool-2", "vteps-v6", 16, 0, "globalroot-0"],
    ]);
    expect(pools[0]?.ranges).toEqual([
      expect.objectContaining({ startAddress: "10.0.0.10", endAddress: "10.0.0.12" }),
    ]);
    await control(sim, "POST", "pools/ipaddresspool-1/allocations", { note: "controller-2" });
    expect((await c.listPools("globalroot-0"))[0]).toMatchObject({ usedAddressCount: 2 });
  });

  it("lists allocations: empty, integer ids with notes, prefixed string ids", async () => {
    const sim = await simulator();
    const { c } = client(sim);
    await expect(c.listAllocations("ipaddresspool-2")).resolves.toEqual([]);
    expect(await c.listAllocations("ipaddresspool-1")).toEqual([
      expect.objectContaining({
        ipAddress: "10.0.0.10",
        allocationNote: "controller-1",
        id: expect.stringMatching(/^\d+$/),
      }),
    ]);
    await control(sim, "POST", "pools/ipaddresspool-2/allocations", {
      mode: "RESERVE",
      ip: "2001:db8::15",
      note: "vtep-1",
    });
    expect(await c.listAllocations("ipaddresspool-2")).toEqual([
      expect.objectContaining({
        ipAddress: "2001:db8::15",
        id: expect.stringMatching(/^allocatedipaddress-\d+$/),
      }),
    ]);
  });

  it("releases an address (IPv6 in the path too), and a second release is the manager's 120056", async () => {
    const sim = await simulator();
    const { c } = client(sim);
    await control(sim, "POST", "pools/ipaddresspool-2/allocations", { mode: "RESERVE", ip: "2001:db8::15" });
    await expect(c.releaseAddress("ipaddresspool-2", "2001:db8::15")).resolves.toEqual({
      released: true,
      answer: "<boolean>true</boolean>",
    });
    await expect(c.releaseAddress("ipaddresspool-1", "10.0.0.10")).resolves.toMatchObject({ released: true });
    expect(await c.listAllocations("ipaddresspool-1")).toEqual([]);
    const error = await c.releaseAddress("ipaddresspool-1", "10.0.0.10").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxApiError);
    expect(error).toMatchObject({ status: 400, errorCode: "120056", moduleName: "core-services" });
  });

  it.each([
    {
      name: "UnknownEdge",
      reason: "errorCode 202 for a missing object",
      call: (c: ManagerClient) => c.getEdge("edge-99"),
      want: { status: 404, errorCode: "202" },
    },
    {
      name: "UnknownPool",
      reason: "IPAM's own code for a missing pool",
      call: (c: ManagerClient) => c.listAllocations("ipaddresspool-99"),
      want: { status: 400, errorCode: "120054" },
    },
    {
      name: "UnknownScope",
      reason: "a scope that does not exist",
      call: (c: ManagerClient) => c.listPools("vdnscope-99"),
      want: { status: 404, errorCode: "202" },
    },
  ])("surfaces manager errors: $name ($reason)", async ({ call, want }) => {
    const sim = await simulator();
    const { c } = client(sim);
    const error = await call(c).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxApiError);
    expect(error).toMatchObject({ ...want, moduleName: "core-services" });
    expect((error as NsxApiError).details).toBeTruthy();
  });
});

describe("error shapes", () => {
  const errors = [
    {
      errorCode: "120051",
      details: "No free address",
      moduleName: "core-services",
      data: { poolId: "ipaddresspool-1" },
    },
    { errorCode: "7", details: "second" },
  ];
  it.each([
    {
      shape: "error",
      reason: "one <error>",
      want: {
        errorCode: "120051",
        details: "No free address",
        moduleName: "core-services",
        errors: [{ errorCode: "120051", details: "No free address", moduleName: "core-services" }],
      },
    },
    {
      shape: "errors",
      reason: "every entry inside <errors>",
      want: {
        errorCode: "120051",
        errors: [expect.objectContaining({ errorCode: "120051" }), { errorCode: "7", details: "second" }],
      },
    },
    {
      shape: "errorData",
      reason: "<error> with <errorData> pairs",
      want: {
        errorCode: "120051",
        errors: [expect.objectContaining({ data: { poolId: "ipaddresspool-1" } })],
      },
    },
    {
      shape: "codeOnly",
      reason: "some 500s carry only a code",
      want: { errorCode: "120051", details: undefined, moduleName: undefined },
    },
  ])("$shape: $reason", async ({ shape, want }) => {
    const sim = await simulator();
    await fault(sim, { route: "listPools", kind: "status", status: 400, shape, errors });
    const { c } = client(sim);
    const error = await c.listPools("globalroot-0").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxApiError);
    expect(error).toMatchObject({
      status: 400,
      method: "GET",
      path: "/api/2.0/services/ipam/pools/scope/globalroot-0",
      ...want,
    });
    expect((error as Error).message).toMatch(/HTTP 400: .*errorCode 120051/);
  });
});

describe("faults", () => {
  it("retries a read through 503s and counts each attempt", async () => {
    const sim = await simulator();
    await fault(sim, { route: "getEdge", kind: "status", status: 503, count: 2 });
    const { c, events } = client(sim);
    await expect(c.getEdge("edge-2")).resolves.toBeDefined();
    expect(events.map((e) => e.status)).toEqual([503, 503, 200]);
    expect(await control(sim, "GET", "counters")).toMatchObject({ getEdge: { "503": 2, "200": 1 } });
  });

  it("does not repeat a PUT the manager answered 409, nor one whose connection was reset", async () => {
    const sim = await simulator();
    const { c } = client(sim);
    const doc = (await c.getEdge("edge-1")).setTenant("x");
    await fault(sim, { kind: "conflict" });
    await expect(c.putEdge("edge-1", doc)).rejects.toMatchObject({ status: 409 });
    await fault(sim, { route: "putEdge", kind: "reset", count: 1 });
    const error = await c.putEdge("edge-1", doc).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxTransportError);
    expect(error).toMatchObject({ notSent: false });
    expect(await control(sim, "GET", "counters")).toMatchObject({ putEdge: { "409": 1, reset: 1 } });
  });

  it("does not repeat a release whose answer was lost: the manager did release it", async () => {
    const sim = await simulator();
    await fault(sim, { route: "releaseAddress", kind: "reset", afterAction: true, count: 1 });
    const { c } = client(sim);
    await expect(c.releaseAddress("ipaddresspool-1", "10.0.0.10")).rejects.toBeInstanceOf(NsxTransportError);
    expect(await control(sim, "GET", "counters")).toMatchObject({ releaseAddress: { reset: 1 } });
    expect(await c.listAllocations("ipaddresspool-1")).toEqual([]);
  });

  it("repeats a PUT refused with 429, since nothing was done", async () => {
    const sim = await simulator();
    const { c } = client(sim);
    const doc = (await c.getEdge("edge-1")).setTenant("after-429");
    await fault(sim, { route: "putEdge", kind: "status", status: 429, count: 1 });
    await c.putEdge("edge-1", doc);
    expect((await c.getEdge("edge-1")).tenant).toBe("after-429");
  });

  it("refuses a truncated body", async () => {
    const sim = await simulator();
    await fault(sim, { route: "listAllocations", kind: "malformed" });
    const { c } = client(sim);
    await expect(c.listAllocations("ipaddresspool-1")).rejects.toBeInstanceOf(NsxResponseError);
  });

  it("times out a body that trickles past the deadline", async () => {
    const sim = await simulator();
    await fault(sim, { route: "getEdge", kind: "trickle", bytesPerInterval: 100, intervalMs: 50 });
    const { c } = client(sim, { requestTimeoutMs: 200, maxRetries: 0 });
    await expect(c.getEdge("edge-1")).rejects.toThrow("no complete response within 200 ms");
  });

  it("retries a read after a connection reset", async () => {
    const sim = await simulator();
    await fault(sim, { route: "listPools", kind: "reset", count: 1 });
    const { c, events } = client(sim);
    await expect(c.listPools("globalroot-0")).resolves.toHaveLength(2);
    expect(events.map((e) => e.status)).toEqual(["error", 200]);
  });
});

describe("authentication against the simulator", () => {
  it("uses tokens when Basic is disabled, and renews one the manager has expired", async () => {
    const sim = await simulator({ settings: { basicAuthEnabled: false } });
    const basic = client(sim).c;
    await expect(basic.listPools("globalroot-0")).rejects.toMatchObject({ status: 401 });
    const { c, events } = client(sim, { auth: "token" });
    await c.listPools("globalroot-0");
    await control(sim, "POST", "clock", { advanceMs: 91 * 60_000 });
    await c.listPools("globalroot-0");
    expect(events.map((e) => `${e.route} ${e.status}`)).toEqual([
      "token 200",
      "listPools 200",
      "listPools 401",
      "token 200",
      "listPools 200",
    ]);
  });

  it("fails with a 401 once the credentials are rotated", async () => {
    const sim = await simulator();
    const { c } = client(sim);
    await c.listPools("globalroot-0");
    await control(sim, "PUT", "credentials", { username: "admin", password: "rotated" });
    await expect(c.listPools("globalroot-0")).rejects.toMatchObject({
      status: 401,
      code: "NSX_ERR_UNAUTHORIZED",
    });
  });

  it("talks HTTPS to a simulator with a certificate from the configured CA", async () => {
    const dir = new URL("../fixtures/tls/", import.meta.url);
    const tls = {
      cert: readFileSync(new URL("server.pem", dir), "utf8"),
      key: readFileSync(new URL("server.key", dir), "utf8"),
    };
    const sim = await simulator({ tls });
    const { c } = client(sim, { ca: TEST_CA });
    await expect(c.getEdge("edge-1")).resolves.toMatchObject({ id: "edge-1" });
  });
});

describe("edge list and summaries", () => {
  it("listEdges follows every page (600 edges, pages of 256) and reports progress", async () => {
    const sim = await simulator({
      state: { edges: [{ generate: { count: 600, firewallRules: 0, tenant: "t-many" } }] },
    });
    const progress: [number, number][] = [];
    const edges = await client(sim).c.listEdges({
      pageSize: 256,
      onPage: (fetched, total) => progress.push([fetched, total]),
    });
    expect(edges).toHaveLength(600);
    expect(new Set(edges.map((e) => e.id)).size).toBe(600);
    expect(edges[599]).toMatchObject({ id: "edge-600", tenant: "t-many", revision: 1 });
    expect(progress).toEqual([
      [256, 600],
      [512, 600],
      [600, 600],
    ]);
    expect(sim.state.counters.snapshot()).toMatchObject({ listEdges: { "200": 3 } });
  });

  it("listEdges retries a page answered 503 and reads small pages to the end", async () => {
    const sim = await simulator({ state: { edges: [{ generate: { count: 5, firewallRules: 0 } }] } });
    await control(sim, "POST", "faults", { route: "listEdges", kind: "status", status: 503, count: 1 });
    const edges = await client(sim).c.listEdges({ pageSize: 2 });
    expect(edges.map((e) => e.id)).toEqual(["edge-1", "edge-2", "edge-3", "edge-4", "edge-5"]);
  });

  it("getEdgeSummary reads one edge's summary; an unknown edge is NSX_ERR_NOT_FOUND", async () => {
    const sim = await simulator();
    expect(await client(sim).c.getEdgeSummary("edge-2")).toMatchObject({
      id: "edge-2",
      tenant: "t-old",
      edgeType: "gatewayServices",
    });
    const error = await client(sim)
      .c.getEdgeSummary("edge-77")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxApiError);
    expect((error as NsxApiError).code).toBe("NSX_ERR_NOT_FOUND");
  });
});
