/**
 * List-first observation through the whole operator, on the simulator: in steady state the
 * manager gets list pages and no edge reads; with the simulator's list lagging behind its edges
 * (the staleList fault), the safety net's full reads still find hidden drift, and a summary that
 * shows drift which is not there costs a read and writes nothing. The operator runs on a fake
 * clock (sync intervals have a 10 s floor), the simulator in real time.
 */
import { describe, expect, it } from "vitest";
import type { EdgeTenant, NsxvObject } from "../../src/api/types.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { callsOf } from "../support/calls.ts";
import { edgeRef, objects, operatorHarness } from "./harness.ts";
import { advance, metricSum, settle } from "../support/operator-time.ts";
import { waitFor } from "../support/wait.ts";
import { MemorySource } from "../support/memory-source.ts";

const EDGES = 8;
const SYNC_MS = 10_000;
/** a sync interval and its jitter: every object has had its pass (advance waits for them to end) */
const STEP_MS = SYNC_MS * 1.1 + 1;

/** EDGES EdgeTenants (edge-1 …) wanting `tenant`, checked every 10 s. */
function tenants(url: string, tenant = "blue"): MemorySource {
  const wanted = Object.fromEntries(Array.from({ length: EDGES }, (_, i) => [`edge-${i + 1}`, tenant]));
  const init = objects(url, wanted);
  const every10s = init.objects.map((o): NsxvObject =>
    o.kind === "EdgeTenant" ? ({ ...o, spec: { ...o.spec, syncInterval: "10s" } } as EdgeTenant) : o,
  );
  return new MemorySource({ objects: every10s, secrets: init.secrets });
}

async function control(sim: RunningSimulator, method: string, path: string, body?: unknown) {
  const res = await fetch(`${sim.url}/_simulator/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.ok, `${method} /_simulator/${path}`).toBe(true);
  return res.status === 204 ? undefined : ((await res.json()) as unknown);
}

const statusOf = (source: MemorySource, name: string) =>
  source.statusOf(edgeRef(name)) as EdgeTenant["status"];
const all = (source: MemorySource, count = EDGES) =>
  Array.from({ length: count }, (_, i) => statusOf(source, `edge-${i + 1}`));
const readyAll = (source: MemorySource) =>
  all(source).every((s) => s?.conditions?.find((c) => c.type === "Ready")?.status === "True");

describe("list-first observation in the operator", () => {
  const { run, simulator } = operatorHarness();

  it("started with no status, observes from the list: no edge read; in steady state no pass of its own and no status write", async () => {
    const sim = await simulator(Array.from({ length: EDGES }, () => "blue"));
    const source = tenants(sim.url);
    // the first full reads fall due at each edge's phase of the hour after the start: edge-5's,
    // the earliest of edge-1 to edge-8, at 0.09 h, after the steps below
    const clock = new FakeClock(Date.now());
    const { registry } = run(source, { clock });
    await waitFor("every EdgeTenant Ready", () => readyAll(source));
    await settle(registry);
    expect(callsOf(sim).getEdge ?? 0, "the start reads no edge: the list shows each one").toBe(0);
    sim.state.counters.reset();
    const writes = source.writes.length;
    const passes = await metricSum(registry, "controller_runtime_reconcile_total");
    for (let i = 0; i < 3; i++) await advance(clock, registry, STEP_MS);
    const seen = callsOf(sim);
    expect(seen.getEdge ?? 0, "no edge read in steady state").toBe(0);
    expect(seen.putEdge ?? 0).toBe(0);
    expect(seen.listEdges, "one list per interval").toBeGreaterThanOrEqual(3);
    expect(seen.listEdges).toBeLessThanOrEqual(4);
    // one page per check: EDGES edges
    const checks = seen.listEdges ?? 0;
    expect(
      (await metricSum(registry, "controller_runtime_reconcile_total")) - passes,
      "the manager's checks only: an EdgeTenant the list shows in sync has no pass of its own",
    ).toBe(checks);
    expect(source.writes.length - writes, "nothing a reader sees changed: no status written").toBe(0);
    for (const status of all(source)) {
      expect(status?.observedVia).toBe("EdgeList");
      expect(
        status?.lastFullReadTime,
        "no full read yet: the safety net's falls due within the hour",
      ).toBeUndefined();
      expect(status?.conditions?.find((c) => c.type === "Ready")?.status, "kept: the list observes it").toBe(
        "True",
      );
    }
  });

  it("a spec changed during the start is acted on ahead of the start's passes still queued", async () => {
    const many = 30;
    const sim = await simulator(Array.from({ length: many }, () => "blue"));
    // no list to observe from: each pass of the start reads its edge, 40 ms a read
    await control(sim, "POST", "faults", { kind: "status", status: 403, route: "listEdges" });
    await control(sim, "POST", "faults", { kind: "latency", latencyMs: 40, route: "getEdge" });
    const wanted = Object.fromEntries(Array.from({ length: many }, (_, i) => [`edge-${i + 1}`, "blue"]));
    const source = new MemorySource(objects(sim.url, wanted));
    // one reconcile at a time: the start's passes wait in the queue one behind another
    run(source, { concurrency: 1, concurrencyPerManager: 1 });
    const looked = () => all(source, many).filter((s) => s?.observedGeneration !== undefined).length;
    await waitFor("the start's first passes", () => looked() >= 2);
    const last = source.store.get(edgeRef(`edge-${many}`)) as EdgeTenant;
    source.change({
      ...last,
      metadata: { ...last.metadata, generation: 2 },
      spec: { ...last.spec, tenant: "green" },
    });
    await waitFor("the changed spec applied", () => statusOf(source, `edge-${many}`)?.lastCorrectionTime);
    expect(looked(), "most of the start still queued when the change was acted on").toBeLessThan(many / 2);
  });
  it("a new object created during the start is acted on ahead of the start's passes still queued", async () => {
    const many = 30;
    const sim = await simulator([...Array.from({ length: many }, () => "blue"), "red"]);
    // no list to observe from: each pass of the start reads its edge, 40 ms a read
    await control(sim, "POST", "faults", { kind: "status", status: 403, route: "listEdges" });
    await control(sim, "POST", "faults", { kind: "latency", latencyMs: 40, route: "getEdge" });
    const wanted = Object.fromEntries(Array.from({ length: many }, (_, i) => [`edge-${i + 1}`, "blue"]));
    const source = new MemorySource(objects(sim.url, wanted));
    run(source, { concurrency: 1, concurrencyPerManager: 1 });
    const looked = () => all(source, many).filter((s) => s?.observedGeneration !== undefined).length;
    await waitFor("the start's first passes", () => looked() >= 2);
    // edge-31 carries red: a new EdgeTenant wanting blue, like the others
    const template = source.store.get(edgeRef("edge-1")) as EdgeTenant;
    const name = `edge-${many + 1}`;
    source.change({
      ...template,
      metadata: { ...template.metadata, name, uid: `uid-${name}`, resourceVersion: "1" },
      spec: { ...template.spec, edgeId: name },
      status: undefined,
    } as EdgeTenant);
    await waitFor("the new object corrected", () => statusOf(source, name)?.lastCorrectionTime);
    expect(looked(), "most of the start still queued when the new object was acted on").toBeLessThan(
      many / 2,
    );
  });

  it("finds drift a frozen list hides at the edge's full read, and reads before it writes", async () => {
    const fullReadMs = 60_000;
    const sim = await simulator(Array.from({ length: EDGES }, () => "blue"));
    const source = tenants(sim.url);
    const clock = new FakeClock(Date.now());
    // a budget that leaves the interval as it is: 8 edges a minute at most
    const { registry } = run(source, { clock, fullReadIntervalMs: fullReadMs, fullReadsPerMinute: 8 });
    await waitFor("every EdgeTenant Ready", () => readyAll(source));
    await control(sim, "POST", "faults", { kind: "staleList", route: "*" });
    await control(sim, "PATCH", "edges/edge-3", { tenant: "intruder" });
    sim.state.counters.reset();
    const fromMs = clock.now();
    // the list still says blue: only edge-3's full read, due once a minute at its own phase, sees it
    for (let i = 0; i < 8 && statusOf(source, "edge-3")?.lastCorrectionTime === undefined; i++) {
      await advance(clock, registry, STEP_MS);
    }
    const correctedMs = Date.parse(statusOf(source, "edge-3")?.lastCorrectionTime ?? "");
    expect(correctedMs - fromMs, "within the full-read interval and a sync interval").toBeLessThanOrEqual(
      fullReadMs + STEP_MS,
    );
    const state = (await control(sim, "GET", "state")) as { edges: { id: string; tenant?: string }[] };
    expect(state.edges.find((e) => e.id === "edge-3")?.tenant).toBe("blue");
    const seen = callsOf(sim);
    expect(seen.putEdge, "one correction").toBe(1);
    expect(
      seen.getEdge,
      "full reads only: at most one per edge per interval, and none more",
    ).toBeLessThanOrEqual(2 * EDGES);
  });

  it("a list that shows drift which is not there costs one read per pass and writes nothing", async () => {
    const sim = await simulator(Array.from({ length: EDGES }, () => "old"));
    // the list frozen while every edge says "old"; the operator corrects them, the list goes on saying "old"
    await control(sim, "POST", "faults", { kind: "staleList", route: "*" });
    const source = tenants(sim.url);
    const clock = new FakeClock(Date.now());
    const { registry } = run(source, { clock });
    await waitFor("every EdgeTenant Ready", () => readyAll(source));
    sim.state.counters.reset();
    for (let i = 0; i < 2; i++) await advance(clock, registry, STEP_MS);
    const seen = callsOf(sim);
    expect(seen.putEdge ?? 0, "a stale summary never causes a write").toBe(0);
    expect(seen.getEdge, "each pass reads the edge the list shows drifted").toBeGreaterThanOrEqual(2 * EDGES);
    for (const status of all(source)) {
      expect(status?.observedVia, "what it knows, it read").toBe("Read");
      expect(status?.observedTenant).toBe("blue");
    }
  });
});
