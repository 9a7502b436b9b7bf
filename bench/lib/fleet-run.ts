/**
 * One fleet against one simulator child: starts the simulator with the fleet's state and a
 * latency, builds the objects (cluster-less, in a MemorySource), and runs measured passes of the
 * real Operator, reporting for each the calls the simulator counted per route, the client's
 * request durations, and how loaded the client's event loop and the simulator were. Each pass is
 * a fresh Operator over the same source: it queues every object once, as at start-up or at a
 * resync (the pool list, cached 30 s, is fetched again as it would be after a resync interval).
 */
import {
  credentialsSecret,
  fleetObjects,
  simulatorState,
  type FleetOptions,
  type ManagerCaps,
} from "./fixtures.ts";
import { MemorySource } from "../../test/support/memory-source.ts";
import { startLoadProbe } from "./process-cpu.ts";
import { totalsByRoute } from "../../test/support/calls.ts";
import { failedCalls, startSimulatorProcess, type SimulatorProcess } from "./simulator-process.ts";
import { summarize } from "./stats.ts";
import { runOperatorPass, type PassResult } from "./wiring.ts";

export interface FleetRunOptions {
  fleet: FleetOptions;
  caps: ManagerCaps;
  /** added by the simulator to every API call */
  latencyMs: number;
  /** the controller's workers */
  concurrency: number;
}

export interface MeasuredPass extends Omit<PassResult, "requestDurationsMs"> {
  calls: Record<string, number>;
  /** calls not answered 2xx, by "route status" */
  failed: Record<string, number>;
  /** PUTs the simulator found would have lost content */
  lostContent: number;
  request: { n: number; meanMs: number; medianMs: number; p95Ms: number };
  clientEventLoopUtilization: number;
  clientCpuSeconds: number;
  simulatorCpuSeconds: number | undefined;
}

export interface FleetRun {
  simulator: SimulatorProcess;
  source: MemorySource;
  /** `changes`: the corrections and releases the pass must have made before it ends */
  pass(options?: { timeoutMs?: number; changes?: number }): Promise<MeasuredPass>;
  close(): Promise<void>;
}

export async function startFleetRun(options: FleetRunOptions): Promise<FleetRun> {
  const simulator = await startSimulatorProcess({
    state: simulatorState(options.fleet),
    settings: { latencyMs: options.latencyMs },
  });
  const objects = fleetObjects(simulator.url, options.caps, options.fleet);
  const source = new MemorySource({ objects, secrets: [credentialsSecret()], record: false });
  return {
    simulator,
    source,
    pass: async ({ timeoutMs = 300_000, changes = 0 } = {}) => {
      await simulator.control.resetCounters();
      await simulator.control.resetAudit();
      const probe = startLoadProbe(simulator.pid);
      const { requestDurationsMs, ...result } = await runOperatorPass({
        source,
        concurrency: options.concurrency,
        // one manager: every worker is its own (the bulkhead keeps managers from stalling each other)
        concurrencyPerManager: options.concurrency,
        objects: objects.length,
        changes,
        timeoutMs,
      });
      const load = probe.stop();
      const counters = await simulator.control.counters();
      const audit = await simulator.control.audit();
      const s = summarize(requestDurationsMs);
      return {
        ...result,
        calls: totalsByRoute(counters),
        failed: failedCalls(counters),
        lostContent: audit.violations.length,
        request: {
          n: s.n,
          meanMs: requestDurationsMs.reduce((a, b) => a + b, 0) / Math.max(1, requestDurationsMs.length),
          medianMs: s.medianMs,
          p95Ms: s.p95Ms,
        },
        clientEventLoopUtilization: load.eventLoopUtilization,
        clientCpuSeconds: load.ownCpuSeconds,
        simulatorCpuSeconds: load.otherCpuSeconds,
      };
    },
    close: () => simulator.close(),
  };
}
