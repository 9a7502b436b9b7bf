import { describe, expect, it } from "vitest";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import { NsxApiError, NsxResponseError, NsxTransportError } from "../../src/nsx/errors.ts";
import { backoffDelayMs, HttpTransport, parseRetryAfterMs } from "../../src/nsx/transport.ts";
import { realClock } from "../../src/util/clock.ts";
import { clientHarness } from "./client-harness.ts";
import { closedPort, EDGE_XML, reply, TEST_CA, type TestServer } from "./test-server.ts";

const { serve, client } = clientHarness({ maxDelayMs: 5, requestTimeoutMs: 5_000 });

const POOLS = "<ipamAddressPools/>";

describe("retries", () => {
  it.each([
    { name: "TooManyRequests", reason: "the manager or a proxy rate-limited us", status: 429, retried: true },
    { name: "BadGateway", reason: "a proxy could not reach the manager", status: 502, retried: true },
    { name: "Unavailable", reason: "the manager is overloaded or restarting", status: 503, retried: true },
    { name: "GatewayTimeout", reason: "a proxy gave up waiting", status: 504, retried: true },
    { name: "ServerError", reason: "a 500 is a bug or a bad request, not load", status: 500, retried: false },
    { name: "NotFound", reason: "repeating cannot find the object", status: 404, retried: false },
    {
      name: "Conflict",
      reason: "a 409 needs a re-read, which is the caller's job",
      status: 409,
      retried: false,
    },
  ])("GET after $status: $name ($reason)", async ({ status, retried }) => {
    const server = await serve((_r, res) => reply(res, status, "<error><errorCode>1</errorCode></error>"));
    const { c, events } = client(server.url, { maxRetries: 2 });
    const error = await c.listPools("globalroot-0").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxApiError);
    expect((error as NsxApiError).status).toBe(status);
    expect(server.requests).toHaveLength(retried ? 3 : 1);
    expect(events.map((e) => e.attempt)).toEqual(retried ? [1, 2, 3] : [1]);
  });

  it("stops retrying at the first success and reports every attempt", async () => {
    let n = 0;
    const server = await serve((_r, res) => (++n < 3 ? reply(res, 503) : reply(res, 200, POOLS)));
    const { c, events } = client(server.url);
    await expect(c.listPools("globalroot-0")).resolves.toEqual([]);
    expect(events.map((e) => [e.method, e.route, e.status, e.attempt])).toEqual([
      ["GET", "listPools", 503, 1],
      ["GET", "listPools", 503, 2],
      ["GET", "listPools", 200, 3],
    ]);
    expect(events.every((e) => e.durationMs >= 0)).toBe(true);
  });

  it.each([
    {
      name: "PutAfter503",
      reason: "the manager may have stored the edge before failing",
      method: "PUT",
      status: 503,
      attempts: 1,
    },
    {
      name: "DeleteAfter502",
      reason: "the release may have happened behind the proxy",
      method: "DELETE",
      status: 502,
      attempts: 1,
    },
    {
      name: "PutAfter429",
      reason: "429 refuses a request before any processing",
      method: "PUT",
      status: 429,
      attempts: 3,
    },
    { name: "DeleteAfter429", reason: "the same for a release", method: "DELETE", status: 429, attempts: 3 },
  ])("writes: $name ($reason)", async ({ method, status, attempts }) => {
    const server = await serve((_r, res) => reply(res, status));
    const { c } = client(server.url, { maxRetries: 2 });
    const call =
      method === "PUT"
        ? c.putEdge("edge-1", EdgeDocument.parse(EDGE_XML()))
        : c.releaseAddress("ipaddresspool-1", "10.0.0.1");
    await expect(call).rejects.toBeInstanceOf(NsxApiError);
    expect(server.requests).toHaveLength(attempts);
  });

  it("does not repeat a PUT whose connection dropped after it was sent, but repeats a GET", async () => {
    const server = await serve((_r, res, raw) =>
      raw.method === "GET" && server.requests.length > 2 ? reply(res, 200, POOLS) : raw.socket.destroy(),
    );
    const { c } = client(server.url);
    const error = await c.putEdge("edge-1", EdgeDocument.parse(EDGE_XML())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxTransportError);
    expect((error as NsxTransportError).notSent).toBe(false);
    expect(server.requests).toHaveLength(1);

    await expect(c.listPools("globalroot-0")).resolves.toEqual([]);
    expect(server.requests).toHaveLength(3);
  });

  it("repeats a PUT when the connection was refused, and succeeds once the manager is up", async () => {
    const port = await closedPort();
    let server: TestServer | undefined;
    const { c, events } = client(`http://127.0.0.1:${port}`, {
      onRequest: (e) => {
        events.push(e);
        if (e.attempt === 1) void serve((_r, res) => reply(res, 204), { port }).then((s) => (server = s));
      },
      baseDelayMs: 100,
      maxDelayMs: 100,
      random: () => 0.99,
    });
    await c.putEdge("edge-1", EdgeDocument.parse(EDGE_XML()));
    // the server usually listens before the first retry; on a loaded machine one more refusal is fine
    expect(events[0]?.status).toBe("error");
    expect(events.at(-1)?.status).toBe(204);
    expect(server?.requests.map((r) => r.method)).toEqual(["PUT"]);
  });

  it("gives up after maxRetries when the connection stays refused, marking the PUT as not sent", async () => {
    const { c, events } = client(`http://127.0.0.1:${await closedPort()}`, { maxRetries: 2 });
    const error = await c.putEdge("edge-1", EdgeDocument.parse(EDGE_XML())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxTransportError);
    expect((error as NsxTransportError).notSent).toBe(true);
    expect((error as Error).message).toMatch(
      /^PUT \/api\/4\.0\/edges\/edge-1: connection refused \(ECONNREFUSED\)$/,
    );
    expect(events).toHaveLength(3);
  });

  it("honours Retry-After over the backoff, capped by maxRetryAfterMs", async () => {
    let n = 0;
    const server = await serve((_r, res) =>
      ++n === 1
        ? reply(res, 503, "", { "retry-after": "0" })
        : n === 2
          ? reply(res, 429, "", { "retry-after": "120" })
          : reply(res, 200, POOLS),
    );
    const { c } = client(server.url, {
      baseDelayMs: 20_000,
      maxDelayMs: 20_000,
      maxRetryAfterMs: 150,
      random: () => 0.99,
    });
    const startMs = performance.now();
    await c.listPools("globalroot-0");
    const elapsedMs = performance.now() - startMs;
    // 0 s, then 120 s cut to 150 ms; the 20 s backoff never applies
    expect(elapsedMs).toBeGreaterThanOrEqual(140);
    expect(elapsedMs).toBeLessThan(2_000);
  });
});

describe("backoff and Retry-After", () => {
  it.each([0, 1, 2, 3, 4, 10, 40])(
    "full jitter stays within [0, min(max, base * 2^retry)) for retry %i",
    (retry) => {
      const options = { baseDelayMs: 200, maxDelayMs: 5_000 };
      const ceiling = Math.min(5_000, 200 * 2 ** retry);
      expect(backoffDelayMs(retry, options, () => 0)).toBe(0);
      expect(backoffDelayMs(retry, options, () => 0.999_999)).toBe(ceiling - 1);
      for (let i = 0; i < 100; i++) {
        const delay = backoffDelayMs(retry, options, Math.random);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(ceiling);
      }
    },
  );

  it.each([
    { name: "Seconds", reason: "delta-seconds form", header: "3", want: 3_000 },
    { name: "Padded", reason: "whitespace around the value", header: " 1 ", want: 1_000 },
    {
      name: "Date",
      reason: "HTTP-date form, relative to now",
      header: "Thu, 01 Jan 1970 00:00:10 GMT",
      want: 5_000,
    },
    {
      name: "PastDate",
      reason: "a date in the past means now",
      header: "Thu, 01 Jan 1970 00:00:01 GMT",
      want: 0,
    },
    { name: "Absent", reason: "no header, no opinion", header: undefined, want: undefined },
    { name: "Garbage", reason: "an unreadable value is ignored", header: "soon", want: undefined },
    { name: "Negative", reason: "not a valid delta", header: "-5", want: undefined },
  ])("parseRetryAfterMs $name: $reason", ({ header, want }) => {
    expect(parseRetryAfterMs(header, 5_000)).toBe(want);
  });
});

describe("deadlines and size limits", () => {
  it("times out an attempt that gets no headers, and reports it as possibly sent", async () => {
    const server = await serve(() => undefined);
    const { c, events } = client(server.url, { requestTimeoutMs: 150, maxRetries: 1 });
    const error = await c.putEdge("edge-1", EdgeDocument.parse(EDGE_XML())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxTransportError);
    expect((error as Error).message).toBe("PUT /api/4.0/edges/edge-1: no complete response within 150 ms");
    expect((error as NsxTransportError).notSent).toBe(false);
    expect(events.map((e) => e.status)).toEqual(["error"]);
  });

  it("covers the body too: a body that stalls times out, and a GET is repeated", async () => {
    const server = await serve((_r, res) => {
      res.writeHead(200, { "content-type": "application/xml" });
      res.write("<ipamAddressPools>");
    });
    const { c, events } = client(server.url, { requestTimeoutMs: 150, maxRetries: 1 });
    await expect(c.listPools("globalroot-0")).rejects.toThrow("no complete response within 150 ms");
    expect(events).toHaveLength(2);
  });

  it("refuses a response whose Content-Length is over the limit, without reading it", async () => {
    let closed = false;
    const server = await serve((_r, res) => {
      res.on("close", () => (closed = true));
      res.writeHead(200, { "content-type": "application/xml", "content-length": "100000" });
      res.write("<ipamAddressPools>");
    });
    const { c } = client(server.url, { maxResponseBytes: 1_000 });
    const error = await c.listPools("globalroot-0").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxResponseError);
    expect((error as Error).message).toBe(
      "GET /api/2.0/services/ipam/pools/scope/globalroot-0: response larger than maxResponseBytes (1000 bytes)",
    );
    expect(server.requests).toHaveLength(1);
    await expect.poll(() => closed).toBe(true);
  });

  it("counts bytes of a streamed response and aborts once over the limit", async () => {
    let written = 0;
    const server = await serve((_r, res) => {
      res.writeHead(200, { "content-type": "application/xml" });
      const timer = setInterval(() => {
        written += 500;
        res.write("x".repeat(500));
        if (written > 100_000) clearInterval(timer);
      }, 1);
      res.on("close", () => clearInterval(timer));
    });
    const { c } = client(server.url, { maxResponseBytes: 2_000 });
    await expect(c.getEdge("edge-1")).rejects.toThrow(
      /response larger than maxResponseBytes \(2000 bytes\)$/,
    );
    expect(written).toBeLessThan(100_000);
  });

  it("aborts when the caller's signal fires, without retrying", async () => {
    const server = await serve(() => undefined);
    const { c, events } = client(server.url);
    const controller = new AbortController();
    const call = c.getEdge("edge-1", { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("shutting down")), 50);
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxTransportError);
    expect((error as Error).message).toBe("GET /api/4.0/edges/edge-1: aborted by the caller");
    expect((error as Error).cause).toEqual(new Error("shutting down"));
    expect(events).toHaveLength(1);
  });
});

describe("limits per manager", () => {
  it("never has more than maxConcurrentRequests in flight", async () => {
    const server = await serve((_r, res) => setTimeout(() => reply(res, 200, POOLS), 30));
    const { c } = client(server.url, { maxConcurrentRequests: 2, requestsPerSecond: 1_000 });
    await Promise.all(Array.from({ length: 8 }, () => c.listPools("globalroot-0")));
    expect(server.requests).toHaveLength(8);
    expect(server.inFlight.max).toBe(2);
  });

  it("opens at most maxConcurrentRequests connections and keeps reusing them", async () => {
    const server = await serve((_r, res) => setTimeout(() => reply(res, 200, POOLS), 10));
    const { c } = client(server.url, { maxConcurrentRequests: 2, requestsPerSecond: 1_000 });
    await Promise.all(Array.from({ length: 8 }, () => c.listPools("globalroot-0")));
    for (let i = 0; i < 3; i++) await c.listPools("globalroot-0");
    expect(server.requests).toHaveLength(11);
    expect(server.connections()).toBe(2);
  });

  it("queues attempts beyond its connections on the transport itself, one at a time per socket", async () => {
    const server = await serve((_r, res) => setTimeout(() => reply(res, 200, POOLS), 10));
    const transport = new HttpTransport({
      origin: server.url,
      insecureSkipVerify: false,
      connections: 2,
      requestTimeoutMs: 5_000,
      connectTimeoutMs: 5_000,
      maxResponseBytes: 1_000,
      clock: realClock,
      redact: (text) => text,
    });
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, (_, i) => transport.send({ method: "GET", path: `/${i}`, headers: {} })),
    );
    expect(outcomes.map((o) => (o.kind === "response" ? o.status : o.error.message))).toEqual([
      200, 200, 200, 200, 200,
    ]);
    expect(server.requests.map((r) => r.url).sort()).toEqual(["/0", "/1", "/2", "/3", "/4"]);
    expect([server.connections(), server.inFlight.max]).toEqual([2, 2]);
    await transport.close();
    const late = await transport.send({ method: "GET", path: "/late", headers: {} });
    expect(late.kind === "failure" && late.error instanceof NsxTransportError && late.error.notSent).toBe(
      true,
    );
    expect(server.requests).toHaveLength(5);
  });

  it("spaces requests by the rate once the burst is spent, retries included", async () => {
    let n = 0;
    const server = await serve((_r, res) => (++n === 1 ? reply(res, 503) : reply(res, 200, POOLS)));
    const { c } = client(server.url, { requestsPerSecond: 10, burst: 1 });
    const startMs = performance.now();
    await Promise.all([c.listPools("a"), c.listPools("b"), c.listPools("c")]);
    // 4 attempts (one retry) at 10/s with a burst of 1: at least 300 ms
    expect(server.requests).toHaveLength(4);
    expect(performance.now() - startMs).toBeGreaterThanOrEqual(290);
  });
});

describe("TLS", () => {
  it("trusts a manager signed by the configured CA", async () => {
    const server = await serve((_r, res) => reply(res, 200, POOLS), { tls: true });
    const { c } = client(server.url, { ca: TEST_CA });
    await expect(c.listPools("globalroot-0")).resolves.toEqual([]);
  });

  it("refuses an unknown certificate by default, as not sent and not worth repeating", async () => {
    const server = await serve((_r, res) => reply(res, 200, POOLS), { tls: true });
    const { c, events } = client(server.url);
    const error = await c.putEdge("edge-1", EdgeDocument.parse(EDGE_XML())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxTransportError);
    expect((error as Error).message).toMatch(/TLS handshake failed: .*\(set ca, or insecureSkipVerify/);
    expect((error as NsxTransportError).notSent).toBe(true);
    expect(events).toHaveLength(1);
    expect(server.requests).toHaveLength(0);
  });

  it("says that a plain HTTP server does not speak TLS, rather than OpenSSL's text and a CA hint", async () => {
    const server = await serve((_r, res) => reply(res, 200, POOLS));
    const { c, events } = client(server.url.replace("http://", "https://"));
    const error = await c.listPools("globalroot-0").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxTransportError);
    expect((error as Error).message).toMatch(
      /the server at https:\/\/127\.0\.0\.1:\d+ does not speak TLS: use http:\/\//,
    );
    expect((error as Error).message).not.toMatch(/SSL routines|set ca/);
    expect(events, "not worth repeating").toHaveLength(1);
  });

  it("resumes the TLS session of its first connection on the others", async () => {
    const server = await serve((_r, res) => setTimeout(() => reply(res, 200, POOLS), 20), { tls: true });
    const { c } = client(server.url, { ca: TEST_CA, maxConcurrentRequests: 3 });
    await c.listPools("globalroot-0");
    await Promise.all(Array.from({ length: 3 }, () => c.listPools("globalroot-0")));
    expect(server.connections()).toBe(3);
    expect(server.resumedSessions()).toBe(2);
  });

  it("skips verification only when insecureSkipVerify is set", async () => {
    const server = await serve((_r, res) => reply(res, 200, POOLS), { tls: true });
    const { c } = client(server.url, { insecureSkipVerify: true });
    await expect(c.listPools("globalroot-0")).resolves.toEqual([]);
  });
});
