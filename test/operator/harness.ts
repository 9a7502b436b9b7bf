/**
 * What the operator tests share: the objects of one manager (for a MemorySource), and
 * `operatorHarness`, which starts simulators and operators and stops them after each test.
 */
import { afterEach } from "vitest";
import type { ObjectRef } from "../../src/api/refs.ts";
import type { EdgeTenant, NSXManager, NsxvObject, Secret } from "../../src/api/types.ts";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import { Operator, type OperatorOptions } from "../../src/operator/operator.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import type { Status } from "../../src/source/source.ts";
import { FakeClock } from "../../src/util/clock.ts";
import type { MemorySource } from "../support/memory-source.ts";

export const NS = "ops";

export function objects(
  url: string,
  tenants: Record<string, string>,
): { objects: NsxvObject[]; secrets: Secret[] } {
  const manager: NSXManager = {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "NSXManager",
    metadata: { name: "nsx", namespace: NS, generation: 1 },
    spec: { url, credentialsSecretRef: { name: "creds" } },
  };
  const edges = Object.entries(tenants).map(([edgeId, tenant]): EdgeTenant => ({
    apiVersion: "nsxv.io/v1alpha1",
    kind: "EdgeTenant",
    metadata: { name: edgeId, namespace: NS, generation: 1, creationTimestamp: "2025-01-01T00:00:00Z" },
    spec: { managerRef: { name: "nsx" }, edgeId, tenant, syncInterval: "1h" },
  }));
  const secret: Secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "creds", namespace: NS },
    stringData: { username: "admin", password: "default" },
  };
  return { objects: [manager, ...edges], secrets: [secret] };
}

/** the EdgeTenant `name` of the objects() above */
export const edgeRef = (name: string): ObjectRef => ({ kind: "EdgeTenant", namespace: NS, name });

export const ready = (status: Status | undefined) =>
  status?.conditions?.find((c) => c.type === "Ready")?.status;

/**
 * Call once inside a describe: `simulator` starts one and `run` starts an operator on a source
 * (no HTTP endpoints, an hour between resyncs), both stopped after each test, newest first (an
 * operator on a FakeClock by moving its clock until it has stopped).
 */
export function operatorHarness() {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function simulator(tenants: string[], latencyMs = 0): Promise<RunningSimulator> {
    const sim = await startSimulator({
      state: { edges: tenants.map((tenant, i) => ({ generate: { count: 1, idStart: i + 1, tenant } })) },
      settings: { latencyMs },
    });
    cleanup.push(() => sim.close());
    return sim;
  }

  function run(source: MemorySource, options: Partial<OperatorOptions> = {}) {
    const bundle = createOperatorMetrics({ processMetrics: false });
    const operator = new Operator({
      source,
      metrics: bundle,
      metricsBindAddress: "0",
      healthProbeBindAddress: "0",
      syncIntervalMs: 3_600_000,
      ...options,
    });
    const stop = new AbortController();
    const exit = operator.start(stop.signal);
    const { clock } = options;
    cleanup.push(async () => {
      stop.abort();
      if (!(clock instanceof FakeClock)) return exit;
      // its shutdown timeout and the timeouts of calls still in flight are on that clock
      let exited = false;
      void exit.finally(() => (exited = true));
      while (!exited) await clock.advance(100);
      return exit;
    });
    return { operator, exit, stop, registry: bundle.registry };
  }

  return { run, simulator };
}
