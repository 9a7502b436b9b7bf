/**
 * The manager client's circuit breaker: after N requests in a row that timed out or could not
 * connect, requests fail at once (NSX_ERR_CONNECTION, saying why and until when) for a cool-down,
 * then one request at a time probes. The breaker alone on a fake clock, then inside the client
 * against a test server that never answers (its timeouts on the fake clock).
 */
import { describe, expect, it } from "vitest";
import {
  attemptVerdict,
  CircuitBreaker,
  isRefusal,
  type AttemptVerdict,
  type Permit,
  type Refusal,
} from "../../src/nsx/breaker.ts";
import { NsxCircuitOpenError, NsxResponseError, NsxTransportError } from "../../src/nsx/errors.ts";
import type { AttemptOutcome } from "../../src/nsx/transport.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { clientHarness } from "./client-harness.ts";
import { closedPort, EDGE_XML, reply } from "./test-server.ts";
import { waitFor } from "../support/wait.ts";

const FAILED: AttemptVerdict = { kind: "failed", failure: "GET /x: no complete response within 30000 ms" };
const ANSWERED: AttemptVerdict = { kind: "answered" };

function breaker(failures = 3, coolDownMs = 30_000) {
  const clock = new FakeClock(0);
  return { clock, b: new CircuitBreaker({ failures, coolDownMs, clock }) };
}

/** admits a request and reports how it ended; the permit must be granted */
function send(b: CircuitBreaker, verdict: AttemptVerdict): Permit {
  const permit = b.admit();
  if (isRefusal(permit)) throw new Error(`refused: ${JSON.stringify(permit)}`);
  b.report(permit, verdict);
  return permit;
}

describe("CircuitBreaker", () => {
  it("opens after N failures in a row and refuses, saying how many, the last, and until when", async () => {
    const { b, clock } = breaker(3, 30_000);
    send(b, FAILED);
    send(b, FAILED);
    expect(b.open).toBe(false);
    await clock.advance(1_000);
    send(b, FAILED);
    expect(b.open).toBe(true);
    expect(b.admit()).toEqual<Refusal>({ failures: 3, lastFailure: FAILED.failure, probeAtMs: 31_000 });
    expect(b.refusal()).toEqual(b.admit());
  });

  it.each([
    {
      name: "Answer",
      between: ANSWERED,
      reason: "any answer shows the manager alive: the count starts again",
    },
    {
      name: "Inconclusive",
      between: { kind: "inconclusive" } as AttemptVerdict,
      reason: "a request given up or reset says nothing, so it neither counts nor resets",
      opens: true,
    },
  ])("$name between failures: $reason", ({ between, opens }) => {
    const { b } = breaker(3);
    send(b, FAILED);
    send(b, FAILED);
    send(b, between);
    send(b, FAILED);
    expect(b.open).toBe(opens === true);
  });

  it("lets one probe through after the cool-down; an answer closes the circuit", async () => {
    const { b, clock } = breaker(1, 30_000);
    send(b, FAILED);
    await clock.advance(29_999);
    expect(isRefusal(b.admit()), "still cooling down").toBe(true);
    await clock.advance(1);
    expect(b.refusal(), "a probe may go: asking does not take it").toBeUndefined();
    const probe = b.admit() as Permit;
    expect(probe).toEqual({ probe: true });
    expect(b.admit(), "one probe at a time").toEqual({
      failures: 1,
      lastFailure: FAILED.failure,
      probeAtMs: undefined,
    });
    b.report(probe, ANSWERED);
    expect(b.open).toBe(false);
    expect(b.admit()).toEqual({ probe: false });
  });

  it("a failed probe opens the circuit for another cool-down", async () => {
    const { b, clock } = breaker(1, 30_000);
    send(b, FAILED);
    await clock.advance(30_000);
    const probe = b.admit() as Permit;
    await clock.advance(5_000);
    b.report(probe, FAILED);
    expect(b.admit()).toEqual({ failures: 2, lastFailure: FAILED.failure, probeAtMs: 65_000 });
  });

  it("an inconclusive probe (given up, reset) frees the place for the next one", async () => {
    const { b, clock } = breaker(1);
    send(b, FAILED);
    await clock.advance(30_000);
    b.report(b.admit() as Permit, { kind: "inconclusive" });
    expect(b.admit()).toEqual({ probe: true });
  });

  it("a request sent before the circuit opened, failing late, does not push the cool-down back", async () => {
    const { b, clock } = breaker(2, 30_000);
    const late = b.admit() as Permit;
    send(b, FAILED);
    send(b, FAILED);
    await clock.advance(10_000);
    b.report(late, FAILED);
    expect((b.admit() as Refusal).probeAtMs).toBe(30_000);
  });

  it("a late answer of a request sent before the circuit opened closes it", () => {
    const { b } = breaker(1);
    const late = b.admit() as Permit;
    send(b, FAILED);
    b.report(late, ANSWERED);
    expect(b.open).toBe(false);
  });

  it("with failures 0 it never opens", () => {
    const { b } = breaker(0);
    for (let i = 0; i < 20; i++) send(b, FAILED);
    expect(b.open).toBe(false);
  });
});

describe("attemptVerdict", () => {
  const call = { method: "GET", path: "/api/4.0/edges/edge-1" };
  const response = (status: number): AttemptOutcome => ({
    kind: "response",
    status,
    headers: {},
    body: "",
    size: 0,
    digest: () => "",
  });
  const timeout = new NsxTransportError({
    ...call,
    reason: "no complete response within 30000 ms",
    notSent: false,
  });
  const aborted = new AbortController();
  aborted.abort();
  const cases: {
    name: string;
    reason: string;
    outcome: AttemptOutcome;
    signal?: AbortSignal;
    want: AttemptVerdict;
  }[] = [
    { name: "Ok", reason: "an answer", outcome: response(200), want: ANSWERED },
    { name: "NotFound", reason: "an error status is an answer too", outcome: response(404), want: ANSWERED },
    {
      name: "Unavailable",
      reason: "a 503 comes back at once: nothing hangs",
      outcome: response(503),
      want: ANSWERED,
    },
    {
      name: "GatewayTimeout",
      reason: "a 504 is a gateway that waited for the manager in vain",
      outcome: response(504),
      want: { kind: "failed", failure: "GET /api/4.0/edges/edge-1: HTTP 504 (a gateway timed out)" },
    },
    {
      name: "Timeout",
      reason: "no answer in time",
      outcome: { kind: "failure", error: timeout, transient: true, unreachable: true },
      want: { kind: "failed", failure: timeout.message },
    },
    {
      name: "ConnectionRefused",
      reason: "nothing listens: it could not connect",
      outcome: {
        kind: "failure",
        error: new NsxTransportError({ ...call, reason: "connection refused (ECONNREFUSED)", notSent: true }),
        transient: true,
        unreachable: true,
      },
      want: { kind: "failed", failure: "GET /api/4.0/edges/edge-1: connection refused (ECONNREFUSED)" },
    },
    {
      name: "Reset",
      reason: "a connection reset comes back at once, without an answer: no sign either way",
      outcome: {
        kind: "failure",
        error: new NsxTransportError({ ...call, reason: "network error: other side closed", notSent: false }),
        transient: true,
        unreachable: false,
      },
      want: { kind: "inconclusive" },
    },
    {
      name: "TlsFailure",
      reason: "a certificate refused comes back at once, without an answer: no sign either way",
      outcome: {
        kind: "failure",
        error: new NsxTransportError({ ...call, reason: "TLS handshake failed", notSent: true }),
        transient: false,
      },
      want: { kind: "inconclusive" },
    },
    {
      name: "TooLarge",
      reason: "an oversized answer is an answer",
      outcome: { kind: "failure", error: new NsxResponseError("too large"), transient: false },
      want: ANSWERED,
    },
    {
      name: "AbortedByTheCaller",
      reason: "the caller gave up: it says nothing of the manager",
      outcome: { kind: "failure", error: timeout, transient: false },
      signal: aborted.signal,
      want: { kind: "inconclusive" },
    },
  ];

  it.each(cases)("$name: $reason", ({ outcome, signal, want }) => {
    expect(attemptVerdict(call, outcome, signal)).toEqual(want);
  });
});

describe("ManagerClient with a manager that never answers", () => {
  const { serve, client } = clientHarness();

  /** a server that holds every request open while `hang` is true, and answers edge-1 otherwise */
  async function freezable() {
    const state = { hang: true };
    const server = await serve((_req, res) => {
      if (!state.hang) reply(res, 200, EDGE_XML());
    });
    return { server, state };
  }

  it("fails at once with NSX_ERR_CONNECTION once open, without sending; then one probe, and an answer closes it", async () => {
    const { server, state } = await freezable();
    const clock = new FakeClock(0);
    const { c, events } = client(server.url, {
      clock,
      requestTimeoutMs: 1_000,
      maxRetries: 0,
      circuitBreakerFailures: 2,
      circuitBreakerCoolDownMs: 30_000,
    });
    const first = c.getEdge("edge-1").catch((e: unknown) => e);
    const second = c.getEdge("edge-1").catch((e: unknown) => e);
    await waitFor("both requests reach the server", () => server.requests.length === 2);
    await clock.advance(1_000);
    for (const error of [await first, await second])
      expect((error as Error).message).toMatch(/no complete response within 1000 ms/);

    const refused = await c.getEdge("edge-2").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NsxCircuitOpenError);
    expect(refused).toMatchObject({ code: "NSX_ERR_CONNECTION", notSent: true, retryAtMs: 31_000 });
    expect((refused as Error).message).toBe(
      `GET /api/4.0/edges/edge-2: circuit open: the last 2 requests to ${server.url} timed out or could not connect ` +
        "(the last: GET /api/4.0/edges/edge-1: no complete response within 1000 ms); next try at 1970-01-01T00:00:31.000Z",
    );
    expect(server.requests, "nothing was sent").toHaveLength(2);
    expect(events, "a refused request is no attempt").toHaveLength(2);

    await clock.advance(30_000);
    state.hang = false;
    const probe = c.getEdge("edge-1");
    await clock.flush();
    await expect(c.getEdge("edge-1"), "one probe at a time").rejects.toThrow(
      /circuit open: .*; one request is probing whether it answers again$/,
    );
    expect((await probe).id).toBe("edge-1");
    expect((await c.getEdge("edge-1")).id, "closed again").toBe("edge-1");
    expect(server.requests).toHaveLength(4);
  });

  it("ends a call's retries when the circuit opens during them", async () => {
    const { server } = await freezable();
    const clock = new FakeClock(0);
    const { c, events } = client(server.url, {
      clock,
      random: () => 0,
      requestTimeoutMs: 1_000,
      maxRetries: 3,
      circuitBreakerFailures: 2,
    });
    const call = c.listPools("globalroot-0").catch((e: unknown) => e);
    await waitFor("the first attempt reaches the server", () => server.requests.length === 1);
    await clock.advance(1_000);
    await waitFor("the retry reaches the server", () => server.requests.length === 2);
    await clock.advance(1_000);
    const error = await call;
    expect(error).toBeInstanceOf(NsxCircuitOpenError);
    expect((error as Error).message).toMatch(
      /^GET \/api\/2\.0\/services\/ipam\/pools\/scope\/globalroot-0: circuit open: the last 2 requests/,
    );
    expect(
      events.map((e) => e.attempt),
      "two attempts of the four allowed",
    ).toEqual([1, 2]);
  });

  it("opens on connections refused, within one call's retries", async () => {
    const { c, events } = client(`http://127.0.0.1:${await closedPort()}`, {
      random: () => 0,
      maxRetries: 3,
      circuitBreakerFailures: 3,
    });
    const error = await c.getEdge("edge-1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxCircuitOpenError);
    expect((error as Error).message).toMatch(
      /\(the last: GET \/api\/4\.0\/edges\/edge-1: connection refused \(ECONNREFUSED\)\)/,
    );
    expect(events, "three attempts, the fourth refused at once").toHaveLength(3);
  });

  it("does not open on connections reset: they come back at once", async () => {
    const server = await serve((_req, _res, raw) => raw.socket.destroy());
    const { c } = client(server.url, { random: () => 0, maxRetries: 0, circuitBreakerFailures: 2 });
    for (let i = 0; i < 4; i++) {
      const error = await c.getEdge("edge-1").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NsxTransportError);
      expect(error).not.toBeInstanceOf(NsxCircuitOpenError);
    }
    expect(server.requests).toHaveLength(4);
  });

  it("never opens with circuitBreakerFailures 0", async () => {
    const { server } = await freezable();
    const clock = new FakeClock(0);
    const { c } = client(server.url, {
      clock,
      requestTimeoutMs: 1_000,
      maxRetries: 0,
      circuitBreakerFailures: 0,
    });
    for (let i = 1; i <= 4; i++) {
      const call = c.getEdge("edge-1").catch((e: unknown) => e);
      await waitFor(`request ${i} reaches the server`, () => server.requests.length === i);
      await clock.advance(1_000);
      expect((await call) as Error).not.toBeInstanceOf(NsxCircuitOpenError);
    }
  });
});
