/**
 * The operator side of the scale benchmarks, in its own process so that its peak RSS
 * (peak-rss.cjs) is the operator's alone: the real Operator over thousands of
 * objects from a MemorySource, a DirectorySource or a KubernetesSource. Protocol over IPC,
 * parent → child: a ScaleChildStart, then "change" (memory source: set CHANGED_TENANT on
 * EdgeTenant edge-1, as a watch event would deliver it), "reload" (directory source: time one
 * reading of every manifest), "report" (with a full GC: the last), "figures" (without), "stop".
 * Child → parent: { started } (epoch ms, the operator started), { synced }, { changed },
 * { reloaded }, { report }, or { error }.
 */
import { createRequire } from "node:module";
import { getHeapStatistics } from "node:v8";
import type { EdgeTenant, NsxvObject } from "../../src/api/types.ts";
import { DirectorySource } from "../../src/source/directory.ts";
import type { DesiredStateSource } from "../../src/source/source.ts";
import { credentialsSecret, edgeTenantObject, fleetObjects, managersFleetObjects } from "./fixtures.ts";
import { objectKey, type ObjectRef } from "../../src/api/refs.ts";
import { MemorySource } from "../../test/support/memory-source.ts";
import { CHANGED_TENANT, type ScaleChildReport, type ScaleChildStart } from "./scale-protocol.ts";
import { startOperator, type RunningOperator } from "./wiring.ts";

const { peakRssBytes } = createRequire(import.meta.url)("./peak-rss.cjs") as { peakRssBytes(): number };

/** epoch ms at which the source announced EdgeTenant edge-1 after the first pass */
let changeEmittedAtMs: number | undefined;
/** statuses the source stored */
let statusWrites = 0;

/** the largest V8 heap and off-heap (Buffers) seen, sampled: what a peak RSS is made of */
const peaks = { heapTotalBytes: 0, externalBytes: 0 };
setInterval(() => {
  const m = process.memoryUsage();
  peaks.heapTotalBytes = Math.max(peaks.heapTotalBytes, m.heapTotal);
  peaks.externalBytes = Math.max(peaks.externalBytes, m.external);
}, 50).unref();

/**
 * The figures so far. The peak RSS is read before the full GC that measures the live heap: a forced
 * mark-compact copies the heap to fresh pages and would add its own peak. Only the last report
 * forces one (`collect`), so that none counts in a later peak.
 */
function report(op: RunningOperator, collect: boolean): ScaleChildReport {
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  const maxRssBytes = peakRssBytes();
  // started with --expose-gc by the parent
  if (collect) globalThis.gc?.();
  return {
    maxRssBytes,
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
    liveHeapBytes: collect ? process.memoryUsage().heapUsed : undefined,
    peakHeapTotalBytes: peaks.heapTotalBytes,
    peakExternalBytes: peaks.externalBytes,
    constrainedMemoryBytes: process.constrainedMemory(),
    heapSizeLimitBytes: getHeapStatistics().heap_size_limit,
    changeEmittedAtMs,
    reconciled: op.probe.reconciled,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    statusWrites,
    errors: op.probe.errors.slice(0, 10),
  };
}

/** The objects of a memory source: the fleet on one manager, or on several. */
export function scaleObjects(start: ScaleChildStart): NsxvObject[] {
  const { managers } = start;
  return managers === undefined
    ? fleetObjects(start.url, start.caps, start.fleet)
    : managersFleetObjects(managers.urls, start.caps, start.fleet.edges, managers.edgeSyncInterval);
}

/** client-node only for the cluster source: it would weigh on the others' RSS */
async function sourceFor(start: ScaleChildStart): Promise<DesiredStateSource> {
  const { source } = start;
  switch (source.type) {
    case "memory":
      return new MemorySource({
        objects: scaleObjects(start),
        secrets: [credentialsSecret()],
        record: false,
      });
    case "directory":
      return new DirectorySource({ dir: source.dir });
    case "cluster": {
      const { SharedConnectionsKubeConfig } = await import("../../src/kube/config.ts");
      const { KubernetesSource } = await import("../../src/source/kubernetes.ts");
      // as `run` builds it (src/cli/run-cluster.ts)
      const kubeConfig = new SharedConnectionsKubeConfig();
      kubeConfig.loadFromFile(source.kubeconfigPath);
      return new KubernetesSource({ kubeConfig, namespace: source.namespace });
    }
  }
}

/**
 * The objects whose status has been written at least once: with short sync intervals an object is
 * reconciled again before the first pass is over, so a count of reconciles would end it early.
 */
class FirstStatuses {
  readonly #written = new Set<string>();
  #waiter: { n: number; resolve: () => void } | undefined;

  written(ref: ObjectRef): void {
    this.#written.add(objectKey(ref));
    if (this.#waiter !== undefined && this.#written.size >= this.#waiter.n) this.#waiter.resolve();
  }

  /** resolves once `n` distinct objects have had their status written */
  whenWritten(n: number): Promise<void> {
    if (this.#written.size >= n) return Promise.resolve();
    return new Promise((resolve) => (this.#waiter = { n, resolve }));
  }
}

const firstStatuses = new FirstStatuses();

/** The source as the operator sees it, noting when it announces the object the change is made to. */
function watched(source: DesiredStateSource, isFirstPassDone: () => boolean): DesiredStateSource {
  return {
    store: source.store,
    events: source.events,
    start: (signal) => source.start(signal),
    synced: (signal) => source.synced(signal),
    notReady: () => source.notReady(),
    writeStatus: async (ref, status) => {
      const outcome = await source.writeStatus(ref, status);
      if (outcome === "written") statusWrites++;
      firstStatuses.written(ref);
      return outcome;
    },
    setFinalizer: (ref, finalizer, present) => source.setFinalizer(ref, finalizer, present),
    subscribe: (listener) =>
      source.subscribe((change) => {
        const object = change.type === "object" ? (change.after ?? change.before) : undefined;
        if (isFirstPassDone() && object?.kind === "EdgeTenant" && object.metadata.name === "edge-1") {
          changeEmittedAtMs ??= performance.timeOrigin + performance.now();
        }
        listener(change);
      }),
  };
}

async function main(start: ScaleChildStart): Promise<void> {
  // the NSXManager and every EdgeTenant and IPPoolAllocations, or each manager and its EdgeTenants
  const managers = start.managers?.urls.length;
  const objects =
    managers === undefined ? 1 + start.fleet.edges + start.fleet.pools : managers * (1 + start.fleet.edges);
  let firstPassDone = false;
  const source = await sourceFor(start);
  const began = performance.now();
  const op = startOperator({
    source: watched(source, () => firstPassDone),
    concurrency: start.concurrency,
    // one manager: every worker is its own (the bulkhead keeps managers from stalling each other)
    concurrencyPerManager: start.concurrency,
    syncIntervalMs: start.syncIntervalMs,
    ...(start.fullReadIntervalMs !== undefined ? { fullReadIntervalMs: start.fullReadIntervalMs } : {}),
  });
  process.send?.({ started: performance.timeOrigin + performance.now() });
  const ok = await Promise.race([
    (managers === undefined ? op.probe.whenReconciled(objects) : firstStatuses.whenWritten(objects)).then(
      () => true,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), start.syncTimeoutMs).unref()),
  ]);
  firstPassDone = true;
  process.send?.({ synced: { ok, ms: performance.now() - began, ...report(op, false) } });
  process.on("message", (message: unknown) => {
    if (message === "change" && source instanceof MemorySource) {
      const edge: EdgeTenant = edgeTenantObject(1);
      const changed = { ...edge, metadata: { ...edge.metadata, generation: 2 } };
      source.change({ ...changed, spec: { ...edge.spec, tenant: CHANGED_TENANT } });
      process.send?.({ changed: true });
    } else if (message === "reload" && source instanceof DirectorySource) {
      const t = performance.now();
      void source.reload().then(() => process.send?.({ reloaded: performance.now() - t }));
    } else if (message === "report") {
      process.send?.({ report: report(op, true) });
    } else if (message === "figures") {
      process.send?.({ figures: report(op, false) });
    } else if (message === "stop") {
      void op.stop().finally(() => process.exit(0));
    }
  });
  process.once("disconnect", () => void op.stop().finally(() => process.exit(0)));
}

if (process.send === undefined) {
  console.error("scale-child.ts is started by bench/lib/scale-driver.ts over IPC");
  process.exit(2);
}
process.once("message", (start: ScaleChildStart) => {
  main(start).catch((error: unknown) => {
    process.send?.({ error: error instanceof Error ? error.stack : String(error) }, () => process.exit(1));
  });
});
