/**
 * Client throughput against the simulator over real HTTP on loopback: calls per second of
 * getEdge (a normal-size generated edge, ~35 KB, parsed into an EdgeDocument) and of
 * listAllocations, at several concurrencies, with the client's limits set so high that they do
 * not bind. The simulator runs in a child process (no added latency), so the figure is what the
 * client process sustains with a manager that answers at once.
 */
import { ManagerClient } from "../src/nsx/client.ts";
import { CREDENTIALS, poolId, simulatorState } from "./lib/fixtures.ts";
import { ResultBuilder, type BenchResult } from "./lib/result.ts";
import { startLoadProbe } from "./lib/process-cpu.ts";
import { startSimulatorProcess, type SimulatorProcess } from "./lib/simulator-process.ts";
import { summarize } from "./lib/stats.ts";

export interface ClientThroughputBenchOptions {
  concurrencies: readonly number[];
  /** allocations in the listed pool */
  allocations: number;
  /** untimed calls at each concurrency before the timed window */
  warmupMs: number;
  /** timed window per call type and concurrency */
  durationMs: number;
}

export const CLIENT_THROUGHPUT_FULL: ClientThroughputBenchOptions = {
  concurrencies: [1, 8, 32],
  allocations: 50,
  warmupMs: 1_000,
  durationMs: 5_000,
};

export const CLIENT_THROUGHPUT_QUICK: ClientThroughputBenchOptions = {
  concurrencies: [1, 8, 32],
  allocations: 50,
  warmupMs: 300,
  durationMs: 1_000,
};

const EDGES = 32;

type Call = (worker: number, i: number) => Promise<unknown>;

export async function benchClientThroughput(options: ClientThroughputBenchOptions): Promise<BenchResult> {
  const result = new ResultBuilder("client-throughput");
  const state = simulatorState({
    edges: EDGES,
    pools: 1,
    allowedPerPool: options.allocations,
    straysPerPool: 0,
    edgeTenant: "tenant-a",
  });
  const sim = await startSimulatorProcess({ state });
  const client = new ManagerClient({
    url: sim.url,
    ...CREDENTIALS,
    maxConcurrentRequests: Math.max(...options.concurrencies) * 2,
    requestsPerSecond: Number.POSITIVE_INFINITY,
    maxRetries: 0,
  });
  try {
    const calls: Record<string, Call> = {
      getEdge: (worker, i) => client.getEdge(`edge-${((worker + i) % EDGES) + 1}`),
      listAllocations: () => client.listAllocations(poolId(1)),
    };
    for (const [name, call] of Object.entries(calls)) {
      for (const concurrency of options.concurrencies) {
        const m = await measure(sim, call, concurrency, options);
        const label = `${name} c=${concurrency}`;
        result.add({ case: label, metric: "throughput", value: m.callsPerSecond, unit: "calls/s" });
        result.add({ case: label, metric: "latency median", value: m.latency.medianMs, unit: "ms" });
        result.add({ case: label, metric: "latency p95", value: m.latency.p95Ms, unit: "ms" });
        result.add({
          case: label,
          metric: "client event-loop use",
          value: m.clientEventLoopUtilization,
          unit: "ratio",
        });
        result.detail(label, m);
      }
    }
  } finally {
    await client.close();
    await sim.close();
  }
  result.note(
    `Simulator in a child process, no added latency; the client's caps at ${Math.max(...options.concurrencies) * 2} ` +
      `concurrent requests and an unlimited rate. getEdge: ${EDGES} generated edges of ~35 KB, ` +
      `round robin; listAllocations: one pool with ${options.allocations} allocations.`,
  );
  return result.build();
}

interface Measured {
  calls: number;
  callsPerSecond: number;
  latency: ReturnType<typeof summarize>;
  clientEventLoopUtilization: number;
  simulatorCpuPerSecond: number | undefined;
}

/** `concurrency` loops calling back to back: warm-up, then a timed window. */
async function measure(
  sim: SimulatorProcess,
  call: Call,
  concurrency: number,
  options: ClientThroughputBenchOptions,
): Promise<Measured> {
  await runFor(call, concurrency, options.warmupMs, () => {});
  const latencies: number[] = [];
  const probe = startLoadProbe(sim.pid);
  const start = performance.now();
  const calls = await runFor(call, concurrency, options.durationMs, (ms) => latencies.push(ms));
  const elapsedS = (performance.now() - start) / 1000;
  const load = probe.stop();
  return {
    calls,
    callsPerSecond: calls / elapsedS,
    latency: summarize(latencies),
    clientEventLoopUtilization: load.eventLoopUtilization,
    simulatorCpuPerSecond: load.otherCpuSeconds === undefined ? undefined : load.otherCpuSeconds / elapsedS,
  };
}

async function runFor(
  call: Call,
  concurrency: number,
  durationMs: number,
  onLatency: (ms: number) => void,
): Promise<number> {
  const deadline = performance.now() + durationMs;
  let calls = 0;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; performance.now() < deadline; i++) {
      const start = performance.now();
      await call(w, i);
      onLatency(performance.now() - start);
      calls++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  return calls;
}
