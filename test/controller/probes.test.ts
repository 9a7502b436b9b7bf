import { afterEach, describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { registerRuntimeMetrics } from "../../src/controller/metrics.ts";
import type { Check } from "../../src/controller/probes.ts";
import {
  BindAddressError,
  MetricsServer,
  ProbeServer,
  parseBindAddress,
} from "../../src/controller/probes.ts";

/** every server a test starts is stopped after it, even when the test fails */
const stops: { stop: AbortController; done: Promise<void> }[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) {
    s.stop.abort();
    await s.done;
  }
});

async function startProbes(
  checks: { health?: Record<string, Check>; ready?: Record<string, Check> },
  checkTimeoutMs = 1000,
) {
  const server = new ProbeServer({ bindAddress: "127.0.0.1:0", checkTimeoutMs });
  for (const [name, check] of Object.entries(checks.health ?? {})) server.addHealthCheck(name, check);
  for (const [name, check] of Object.entries(checks.ready ?? {})) server.addReadyCheck(name, check);
  const stop = new AbortController();
  const done = server.start(stop.signal);
  stops.push({ stop, done });
  const { port } = await server.listening;
  return { url: `http://127.0.0.1:${port}`, stop, done };
}

describe("ProbeServer", () => {
  const cases: {
    name: string;
    reason: string;
    ready: Record<string, Check>;
    path: string;
    wantStatus: number;
    wantBody: string[];
  }[] = [
    {
      name: "NoChecks",
      reason: "With nothing registered the endpoint is healthy.",
      ready: {},
      path: "/readyz",
      wantStatus: 200,
      wantBody: ["ok"],
    },
    {
      name: "AllPass",
      reason: "Passing checks give a bare ok, which is what the kubelet needs.",
      ready: { watches: () => undefined, leader: async () => undefined },
      path: "/readyz",
      wantStatus: 200,
      wantBody: ["ok"],
    },
    {
      name: "AllPassVerbose",
      reason: "?verbose lists each check, as controller-runtime does.",
      ready: { watches: () => undefined },
      path: "/readyz?verbose",
      wantStatus: 200,
      wantBody: ["[+]watches ok", "readyz check passed"],
    },
    {
      name: "OneFails",
      reason: "A failing check gives 500 and names the check and why.",
      ready: { leader: () => undefined, watches: () => "EdgeTenant watch down since 12:00" },
      path: "/readyz",
      wantStatus: 500,
      wantBody: [
        "[+]leader ok",
        "[-]watches failed: EdgeTenant watch down since 12:00",
        "readyz check failed",
      ],
    },
    {
      name: "CheckThrows",
      reason: "A check that throws fails with the error's message instead of breaking the server.",
      ready: {
        cache: () => {
          throw new Error("cache not built");
        },
      },
      path: "/readyz",
      wantStatus: 500,
      wantBody: ["[-]cache failed: cache not built"],
    },
    {
      name: "CheckHangs",
      reason: "A check without an answer fails at the check timeout, so the probe itself answers.",
      ready: { stuck: () => new Promise<undefined>(() => {}) },
      path: "/readyz",
      wantStatus: 500,
      wantBody: ["[-]stuck failed: no answer within 50 ms"],
    },
    {
      name: "UnknownPath",
      reason: "Only the two probe paths exist.",
      ready: {},
      path: "/metrics",
      wantStatus: 404,
      wantBody: ["not found"],
    },
  ];

  it.each(cases)("$name", async ({ reason, ready, path, wantStatus, wantBody }) => {
    const { url } = await startProbes({ ready }, 50);
    const res = await fetch(`${url}${path}`);
    const body = await res.text();
    expect(res.status, reason).toBe(wantStatus);
    for (const line of wantBody) expect(body, reason).toContain(line);
  });

  it("keeps liveness apart from readiness", async () => {
    const { url } = await startProbes({
      health: { ping: () => undefined },
      ready: { leader: () => "standby" },
    });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(500);
  });

  it("answers 405 to other methods", async () => {
    const { url } = await startProbes({});
    expect((await fetch(`${url}/healthz`, { method: "POST" })).status).toBe(405);
  });

  it("start resolves after abort, with keep-alive connections closed", async () => {
    const { url, stop, done } = await startProbes({});
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    stop.abort();
    await done;
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it("reports a port already in use through start and listening", async () => {
    const { url } = await startProbes({});
    const port = new URL(url).port;
    const second = new ProbeServer({ bindAddress: `127.0.0.1:${port}` });
    const stop = new AbortController();
    await expect(second.start(stop.signal)).rejects.toMatchObject({ code: "EADDRINUSE" });
    await expect(second.listening).rejects.toMatchObject({ code: "EADDRINUSE" });
  });
});

describe("MetricsServer", () => {
  it("serves the registry in the Prometheus text format", async () => {
    const registry = new Registry();
    registerRuntimeMetrics(registry).leaderStatus("nsxv-operator", true);
    const server = new MetricsServer({ registry, bindAddress: "127.0.0.1:0" });
    const stop = new AbortController();
    const done = server.start(stop.signal);
    stops.push({ stop, done });
    const { host, port } = await server.listening;
    expect(host).toBe("127.0.0.1");
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(await res.text()).toContain('leader_election_master_status{name="nsxv-operator"} 1');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(404);
  });
});

describe("parseBindAddress", () => {
  const valid = [
    {
      name: "PortOnly",
      reason: "':8081' binds every interface.",
      text: ":8081",
      want: { host: undefined, port: 8081 },
    },
    {
      name: "LoopbackAnyPort",
      reason: "Port 0 asks for a free port.",
      text: "127.0.0.1:0",
      want: { host: "127.0.0.1", port: 0 },
    },
    {
      name: "IPv6",
      reason: "IPv6 hosts come in brackets.",
      text: "[::1]:9090",
      want: { host: "::1", port: 9090 },
    },
    {
      name: "Hostname",
      reason: "A name is passed to listen as is.",
      text: "localhost:80",
      want: { host: "localhost", port: 80 },
    },
  ];
  it.each(valid)("accepts $name", ({ reason, text, want }) => {
    expect(parseBindAddress(text), reason).toEqual(want);
  });

  const invalid = [
    { name: "NoColon", reason: "A bare port is ambiguous; the flag syntax is [host]:port.", text: "8081" },
    { name: "NotANumber", reason: "Ports are numbers.", text: ":http" },
    { name: "TooLarge", reason: "Ports stop at 65535.", text: ":70000" },
    { name: "Empty", reason: "Nothing is not an address.", text: "" },
    { name: "UnclosedBracket", reason: "Brackets must pair.", text: "[::1:80" },
  ];
  it.each(invalid)("rejects $name", ({ reason, text }) => {
    expect(() => parseBindAddress(text), reason).toThrow(BindAddressError);
    expect(() => new ProbeServer({ bindAddress: text }), reason).toThrow(BindAddressError);
  });
});
