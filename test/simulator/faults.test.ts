import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assertSafeXml } from "../../src/nsx/xml.ts";
import type { FaultView } from "../../src/simulator/index.ts";
import { waitFor } from "../support/wait.ts";
import { POOL_V4, TestSimulator, smallEdge, storedSmallEdge, xml } from "./helpers.ts";

let t: TestSimulator;
beforeEach(async () => {
  t = await TestSimulator.start({ state: { pools: [POOL_V4], edges: [{ xml: smallEdge() }] } });
});
afterEach(() => t.close());

const POOLS = "/api/2.0/services/ipam/pools/scope/globalroot-0";
const RELEASE = "/api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses/10.0.0.10";
const EDGE = "/api/4.0/edges/edge-7";

async function fault(spec: Record<string, unknown>): Promise<FaultView> {
  const reply = await t.control<FaultView>("POST", "faults", spec);
  expect(reply.status).toBe(201);
  return reply.json;
}

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const result = await run();
  return [result, performance.now() - start];
}

async function statuses(n: number, path = POOLS): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await t.api("GET", path)).status);
  return out;
}

async function used(): Promise<number> {
  return t.state.pool("ipaddresspool-1")!.usedAddressCount;
}

describe("latency", () => {
  it("adds a fixed latency to the route's calls only", async () => {
    await fault({ route: "listPools", kind: "latency", latencyMs: 300 });
    const [, slow] = await timed(() => t.api("GET", POOLS));
    const [, fast] = await timed(() => t.api("GET", EDGE));
    expect(slow).toBeGreaterThanOrEqual(295);
    expect(fast).toBeLessThan(250);
  });

  it("adds jitter within the bound given, the same for the same seed", async () => {
    await fault({ kind: "latency", latencyMs: 20, jitterMs: 60, seed: 3 });
    const delays = Array.from({ length: 50 }, () => t.state.faults.plan("listPools").delayMs);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(20);
    expect(Math.max(...delays)).toBeLessThanOrEqual(80);
    expect(new Set(delays).size).toBeGreaterThan(10);
    await t.control("DELETE", "faults");
    await fault({ kind: "latency", latencyMs: 20, jitterMs: 60, seed: 3 });
    expect(Array.from({ length: 50 }, () => t.state.faults.plan("getEdge").delayMs)).toEqual(delays);
  });

  it("takes the global latency as the call's whole time: the call acts when it arrives, its answer waits", async () => {
    await t.control("PUT", "settings", { latencyMs: 1_000 });
    const sent = performance.now();
    let answeredAt: number | undefined;
    const put = t
      .api("PUT", EDGE, {
        body: storedSmallEdge().replace("<tenant>default</tenant>", "<tenant>moved</tenant>"),
      })
      .then((reply) => {
        answeredAt = performance.now();
        return reply;
      });
    await waitFor("the PUT stored", () => t.state.edge("edge-7")?.doc.tenant === "moved", {
      timeoutMs: 5_000,
    });
    const storedAfter = performance.now() - sent;
    expect(answeredAt, "stored before the answer was sent").toBeUndefined();
    expect(storedAfter, "stored on arrival, not after the latency").toBeLessThan(700);
    expect((await put).status).toBe(204);
    expect(answeredAt! - sent, "answered after the latency").toBeGreaterThanOrEqual(995);
  });

  it("adds a latency fault's delay before the call acts, and the global latency after it", async () => {
    await t.control("PUT", "settings", { latencyMs: 300 });
    await fault({ route: "putEdge", kind: "latency", latencyMs: 1_000, count: 1 });
    const body = storedSmallEdge().replace("<tenant>default</tenant>", "<tenant>moved</tenant>");
    const [reply, elapsed] = await timed(async () => {
      const put = t.api("PUT", EDGE, { body });
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(t.state.edge("edge-7")?.doc.tenant, "not acted on during the fault's delay").toBe("default");
      return put;
    });
    expect(reply.status).toBe(204);
    expect(elapsed).toBeGreaterThanOrEqual(1_295);
  });

  it("adds the global latency setting to API calls, not to control calls", async () => {
    await t.control("PUT", "settings", { latencyMs: 300 });
    const [, api] = await timed(() => t.api("GET", POOLS));
    const [, control] = await timed(() => t.control("GET", "counters"));
    expect(api).toBeGreaterThanOrEqual(295);
    expect(control).toBeLessThan(250);
  });
});

describe("error status", () => {
  it("answers the status for the next N calls, then normally, counting how often it fired", async () => {
    const added = await fault({ route: "listPools", kind: "status", status: 503, count: 2 });
    expect(await statuses(3)).toEqual([503, 503, 200]);
    const { json } = await t.control<FaultView[]>("GET", "faults");
    expect(json).toEqual([
      { id: added.id, spec: expect.objectContaining({ status: 503, count: 2 }), fired: 2 },
    ]);
  });

  it("fires at a rate, reproducibly for a seed", async () => {
    await fault({ route: "listPools", kind: "status", status: 500, rate: 0.5, seed: 7 });
    const first = await statuses(40);
    await t.control("DELETE", "faults");
    await fault({ route: "listPools", kind: "status", status: 500, rate: 0.5, seed: 7 });
    const second = await statuses(40);
    expect(second).toEqual(first);
    const failures = first.filter((s) => s === 500).length;
    expect(failures).toBeGreaterThan(8);
    expect(failures).toBeLessThan(32);
  });

  it("does not perform the call it fails", async () => {
    await fault({ route: "releaseAddress", kind: "status", status: 503, count: 1 });
    expect((await t.api("DELETE", RELEASE)).status).toBe(503);
    expect(await used()).toBe(2);
  });

  it("applies to every route with route *", async () => {
    await fault({ kind: "status", status: 502 });
    expect((await t.api("GET", POOLS)).status).toBe(502);
    expect((await t.api("GET", EDGE)).status).toBe(502);
  });

  it.each([
    {
      name: "Errors",
      spec: {
        shape: "errors",
        errors: [
          { errorCode: "10001", details: "first", moduleName: "vShield Edge" },
          { errorCode: "10002", details: "second", moduleName: "vShield Edge" },
        ],
      },
      want: {
        errors: {
          error: [
            { errorCode: "10001", details: "first", moduleName: "vShield Edge" },
            { errorCode: "10002", details: "second", moduleName: "vShield Edge" },
          ],
        },
      },
      reason: "several <error> inside <errors>",
    },
    {
      name: "ErrorData",
      spec: { shape: "errorData", errors: [{ errorCode: "7", details: "d", data: { objectId: "edge-7" } }] },
      want: {
        error: { details: "d", errorCode: "7", errorData: { data: { key: "objectId", value: "edge-7" } } },
      },
      reason: "an <error> carrying key/value data",
    },
    {
      name: "CodeOnly",
      spec: { status: 500, shape: "codeOnly" },
      want: { error: { errorCode: "100" } },
      reason: "a 500 with nothing but errorCode, as some managers send",
    },
  ])("$name: renders $reason", async ({ spec, want }) => {
    await fault({ route: "getEdge", kind: "status", status: 503, ...spec });
    const reply = await t.api("GET", EDGE);
    expect(reply.status).toBe(spec.status ?? 503);
    expect(xml(reply.text)).toEqual(want);
  });

  it("shapes the route's own errors with an errorShape fault", async () => {
    await fault({ route: "getEdge", kind: "errorShape", shape: "errorData" });
    const reply = await t.api("GET", "/api/4.0/edges/edge-404");
    expect(reply.status).toBe(404);
    expect(xml(reply.text).error).toMatchObject({
      errorCode: "202",
      errorData: { data: { key: "objectId", value: "edge-404" } },
    });
  });
});

describe("conflict", () => {
  it("answers 409 on the next PUT only, storing nothing", async () => {
    await fault({ kind: "conflict" });
    expect((await t.api("GET", EDGE)).status).toBe(200);
    const body = smallEdge().replace("<tenant>default</tenant>", "<tenant>t</tenant>");
    const first = await t.api("PUT", EDGE, { body });
    expect(first.status).toBe(409);
    expect(xml(first.text).error).toMatchObject({ errorCode: "10003", moduleName: "vShield Edge" });
    expect(t.state.edge("edge-7")?.version).toBe(4);
    expect((await t.api("PUT", EDGE, { body })).status).toBe(204);
  });
});

describe("connection reset", () => {
  it("destroys the socket before answering, without performing the call", async () => {
    await fault({ route: "releaseAddress", kind: "reset", count: 1 });
    await expect(t.api("DELETE", RELEASE)).rejects.toThrow();
    expect(await used()).toBe(2);
    expect((await t.api("DELETE", RELEASE)).status).toBe(200);
    const { json } = await t.control<Record<string, Record<string, number>>>("GET", "counters");
    expect(json.releaseAddress).toEqual({ reset: 1, "200": 1 });
  });

  it("with afterAction, performs the call and then destroys the socket", async () => {
    await fault({ route: "releaseAddress", kind: "reset", afterAction: true, count: 1 });
    await expect(t.api("DELETE", RELEASE)).rejects.toThrow();
    expect(await used()).toBe(1);
    expect((await t.api("DELETE", RELEASE)).status).toBe(400);
  });
});

describe("malformed body", () => {
  it("cuts the body so that it is not well-formed XML", async () => {
    await fault({ route: "listPools", kind: "malformed", count: 1 });
    const reply = await t.api("GET", POOLS);
    expect(reply.status).toBe(200);
    expect(reply.text.startsWith("<?xml")).toBe(true);
    expect(() => assertSafeXml(reply.text, "pools")).toThrow(/not well-formed/);
    const next = await t.api("GET", POOLS);
    expect(() => assertSafeXml(next.text, "pools")).not.toThrow();
  });

  it("answers a PUT with 200 and a cut body, the PUT being done", async () => {
    await fault({ route: "putEdge", kind: "malformed" });
    const reply = await t.api("PUT", EDGE, { body: smallEdge() });
    expect(reply.status).toBe(200);
    expect(() => assertSafeXml(reply.text, "put")).toThrow();
    expect(t.state.edge("edge-7")?.version).toBe(5);
  });
});

describe("trickle", () => {
  it("sends the body in small pieces at an interval, complete in the end", async () => {
    await fault({ route: "getEdge", kind: "trickle", bytesPerInterval: 200, intervalMs: 30 });
    const [reply, ms] = await timed(() => t.api("GET", EDGE));
    expect(reply.text).toBe(storedSmallEdge());
    const pieces = Math.ceil(Buffer.byteLength(storedSmallEdge()) / 200);
    expect(ms).toBeGreaterThanOrEqual((pieces - 1) * 30 - 5);
  });
});

describe("fault management", () => {
  it("removes one fault or all of them", async () => {
    const a = await fault({ route: "listPools", kind: "status", status: 500 });
    await fault({ route: "getEdge", kind: "status", status: 500 });
    expect(await t.control("DELETE", `faults/${a.id}`)).toEqual({ status: 200, json: { removed: a.id } });
    expect((await t.api("GET", POOLS)).status).toBe(200);
    expect((await t.api("GET", EDGE)).status).toBe(500);
    await t.control("DELETE", "faults");
    expect((await t.api("GET", EDGE)).status).toBe(200);
    expect((await t.control("DELETE", "faults/99")).status).toBe(404);
  });

  it.each([
    {
      name: "NoKind",
      spec: { route: "getEdge" },
      error: "kind: is required",
      reason: "the kind decides the rest",
    },
    {
      name: "BadRoute",
      spec: { kind: "reset", route: "getEdges" },
      error: "route: must be one of",
      reason: "a typo",
    },
    {
      name: "NoStatus",
      spec: { kind: "status" },
      error: "status: is required",
      reason: "which status to answer",
    },
    {
      name: "BadRate",
      spec: { kind: "reset", rate: 2 },
      error: "rate: must be between 0 and 1",
      reason: "a probability",
    },
    {
      name: "Foreign",
      spec: { kind: "reset", latencyMs: 5 },
      error: "latencyMs: unknown field",
      reason: "fields of another kind",
    },
    {
      name: "BadShape",
      spec: { kind: "errorShape", shape: "html" },
      error: "shape: must be one of",
      reason: "four shapes exist",
    },
  ])("$name: refuses the fault ($reason)", async ({ spec, error }) => {
    const reply = await t.control<{ error: string }>("POST", "faults", spec);
    expect(reply.status).toBe(400);
    expect(reply.json.error).toContain(error);
  });
});

describe("counters", () => {
  it("counts calls per route and status, unknown paths included, and resets", async () => {
    await t.api("GET", POOLS);
    await t.api("GET", POOLS);
    await t.api("GET", EDGE, { auth: null });
    await t.api("GET", "/api/4.0/edges/edge-404");
    await t.api("GET", "/api/9.9/nothing");
    await t.api("POST", "/api/2.0/services/auth/token");
    const { json } = await t.control("GET", "counters");
    expect(json).toEqual({
      listPools: { "200": 2 },
      getEdge: { "401": 1, "404": 1 },
      unknown: { "404": 1 },
      token: { "200": 1 },
    });
    await t.control("DELETE", "counters");
    expect((await t.control("GET", "counters")).json).toEqual({});
  });
});
