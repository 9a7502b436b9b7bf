/**
 * Scale, cluster-less: 10 000 objects (EdgeTenants and IPPoolAllocations, in sync) on one manager,
 * served by the real Operator in a child process (lib/scale-child.ts) whose peak RSS is read with
 * /proc/self/status (lib/peak-rss.cjs); the simulator in another. Two sources: a MemorySource (objects
 * in code; a change arrives as a watch event would) and the DirectorySource (manifest files; a
 * change is a rewritten file, seen by fs.watch, debounced, then every file read again). After the
 * first pass, with the queue otherwise idle, one EdgeTenant gets a new tenant and the time until
 * the simulator has counted the PUT is measured.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import type { NsxvObject } from "../src/api/types.ts";
import {
  credentialsSecret,
  DESIRED_TENANT,
  fleetObjects,
  simulatorState,
  type FleetOptions,
  type ManagerCaps,
} from "./lib/fixtures.ts";
import { createMemoryCgroup, deploymentMemoryLimitBytes } from "./lib/memory-cgroup.ts";
import { below, exactly, ResultBuilder, type BenchResult } from "./lib/result.ts";
import { runScale, type ScaleRun } from "./lib/scale-driver.ts";
import { CHANGED_TENANT, type ScaleChildStart } from "./lib/scale-protocol.ts";
import { startSimulatorProcess } from "./lib/simulator-process.ts";

const MIB = 2 ** 20;

export interface ScaleCase {
  source: "memory" | "directory";
  /** cap the operator's heap with a V8 flag (--max-old-space-size) */
  heapLimitMiB?: number;
  /**
   * run the operator in a memory cgroup with the Deployment's limit, default flags: Node sizes the
   * heap from the limit as it does in the pod (skipped, with the reason, where no cgroup can be made)
   */
  inDeploymentLimit?: boolean;
}

export interface ScaleBenchOptions {
  cases: readonly ScaleCase[];
  edges: number;
  pools: number;
  caps: ManagerCaps;
  /** the operator's workers */
  concurrency: number;
  /**
   * the operator's resync interval: longer than the first pass, so that the queue is idle when the
   * change comes (with the default 5 min, a first pass longer than that is followed by resyncs)
   */
  syncIntervalMs: number;
  /** documents per manifest file (directory source) */
  objectsPerFile: number;
  syncTimeoutMs: number;
  /** wait for the change's PUT at most this long */
  changeTimeoutMs: number;
}

export const SCALE_FULL: ScaleBenchOptions = {
  cases: [
    { source: "memory" },
    { source: "memory", inDeploymentLimit: true },
    { source: "memory", heapLimitMiB: 160 },
    { source: "directory" },
    { source: "directory", inDeploymentLimit: true },
  ],
  edges: 5_000,
  pools: 5_000,
  // within the CRD's limits (64, 1000): the directory source validates against them
  caps: { maxConcurrentRequests: 16, requestsPerSecond: 1_000 },
  concurrency: 32,
  syncIntervalMs: 3_600_000,
  objectsPerFile: 100,
  syncTimeoutMs: 900_000,
  changeTimeoutMs: 30_000,
};

export const SCALE_QUICK: ScaleBenchOptions = {
  ...SCALE_FULL,
  cases: [{ source: "memory" }, { source: "directory" }],
  edges: 500,
  pools: 500,
  syncTimeoutMs: 180_000,
  changeTimeoutMs: 10_000,
};

/** In sync: no drift, no strays; edges without user firewall rules (~10 KB) to keep the simulator small. */
export function scaleFleet(edges: number, pools: number): FleetOptions {
  return { edges, pools, allowedPerPool: 2, straysPerPool: 0, edgeTenant: DESIRED_TENANT, firewallRules: 0 };
}

export async function benchScale(options: ScaleBenchOptions): Promise<BenchResult> {
  const result = new ResultBuilder("scale");
  const fleet = scaleFleet(options.edges, options.pools);
  const sim = await startSimulatorProcess({ state: simulatorState(fleet) });
  try {
    for (const { source: type, heapLimitMiB, inDeploymentLimit } of options.cases) {
      const objects = fleetObjects(sim.url, options.caps, fleet);
      const heap = heapLimitMiB === undefined ? "" : `, heap ${heapLimitMiB} MiB`;
      const label = `${type} source, ${objects.length - 1} objects${heap}`;
      await runInCaseLimit(result, label, inDeploymentLimit, async (caseLabel, execPath) => {
        const dir = type === "directory" ? await mkdtemp(join(tmpdir(), "nsxv-bench-scale-")) : undefined;
        try {
          if (dir !== undefined) await writeManifests(dir, objects, options.objectsPerFile);
          const start: ScaleChildStart = {
            source: dir === undefined ? { type: "memory" } : { type: "directory", dir },
            url: sim.url,
            fleet,
            caps: options.caps,
            concurrency: options.concurrency,
            syncIntervalMs: options.syncIntervalMs,
            syncTimeoutMs: options.syncTimeoutMs,
            ...(heapLimitMiB !== undefined ? { heapLimitMiB } : {}),
          };
          const run = await runScale({
            start,
            control: sim.control,
            changeTimeoutMs: options.changeTimeoutMs,
            timeReload: dir !== undefined,
            execPath,
            makeChange: async (child) => {
              if (dir === undefined) child.send("change");
              else await writeManifests(dir, objects, options.objectsPerFile, { changeFirstEdge: true });
            },
          });
          reportScale(result, caseLabel, run, options);
          result.detail(caseLabel, {
            ...run,
            parameters: { ...fleet, ...options.caps, workers: options.concurrency },
          });
        } finally {
          if (dir !== undefined) await rm(dir, { recursive: true, force: true });
        }
      });
    }
  } finally {
    await sim.close();
  }
  result.note(
    "Operator and simulator each in their own process; RSS is the operator's (peak over the first pass and the change). " +
      "Edges are generated without user firewall rules (~10 KB) to keep the simulator's memory in bounds; the operator " +
      "holds no edge after its reconcile. Change → PUT: from the change (event emitted / file written) to the simulator " +
      `counting the PUT, polled every 5 ms; the operator runs with a resync interval of ${options.syncIntervalMs / 60_000} min ` +
      "so that no resync is due when the change comes. Heap-capped case: the V8 flag --max-old-space-size. " +
      "Cases in the Deployment's limit: the operator child in a memory cgroup with deploy/core/deployment.yaml's " +
      "limits.memory and default flags; Node reads the limit and sizes V8's heap from it, as in the pod (on this " +
      "machine without a limit, V8 grows the young generation alone to 128 MB).",
  );
  return result.build();
}

/**
 * Runs one case, in a memory cgroup with the Deployment's limit when `inDeploymentLimit`: `run`
 * gets the case's label and the `node` to start the operator child with (undefined: this one's).
 * Where no cgroup can be made, a note says why and the case is skipped.
 */
export async function runInCaseLimit(
  result: ResultBuilder,
  label: string,
  inDeploymentLimit: boolean | undefined,
  run: (caseLabel: string, execPath: string | undefined) => Promise<void>,
): Promise<void> {
  if (inDeploymentLimit !== true) return run(label, undefined);
  const made = await createMemoryCgroup(deploymentMemoryLimitBytes());
  if ("unavailable" in made) {
    result.note(`${label}, in the Deployment's memory limit: not measured: ${made.unavailable}.`);
    return;
  }
  const { cgroup } = made;
  try {
    await run(`${label}, in the Deployment's ${cgroup.limitBytes / MIB} MiB limit`, cgroup.execPath);
  } finally {
    await cgroup.remove();
  }
}

/** The measurements of one scale run, shared with the API server variant. */
export function reportScale(
  result: ResultBuilder,
  label: string,
  run: ScaleRun,
  options: Pick<ScaleBenchOptions, "changeTimeoutMs"> & { peakRssTargetMiB?: number },
): void {
  const add = (metric: string, value: number, unit: string, target?: ReturnType<typeof below>) =>
    result.add({ case: label, metric, value, unit, ...(target ? { target } : {}) });
  const peakMiB = run.after.maxRssBytes / MIB;
  add("first pass (all objects)", run.syncMs, "ms");
  add("first pass complete", run.synced ? 1 : 0, "bool", exactly(run.synced ? 1 : 0, 1));
  add("peak RSS", peakMiB, "MiB", below(peakMiB, options.peakRssTargetMiB ?? 256, " MiB"));
  add("live heap (after a full GC)", (run.after.liveHeapBytes ?? Number.NaN) / MIB, "MiB");
  add("peak V8 heap (total)", run.after.peakHeapTotalBytes / MIB, "MiB");
  add("peak off-heap (Buffers)", run.after.peakExternalBytes / MIB, "MiB");
  add("V8 heap limit (Node's choice)", run.after.heapSizeLimitBytes / MIB, "MiB");
  const changeMs = run.changeMs ?? Number.NaN;
  add("change → PUT seen", changeMs, "ms", below(changeMs, 1000, " ms"));
  if (run.changeMs === undefined) {
    result.note(`${label}: no PUT within ${options.changeTimeoutMs} ms of the change (shown as NaN).`);
  }
  if (run.emittedMs !== undefined) add("change → source event (key queued)", run.emittedMs, "ms");
  if (run.reloadMs !== undefined) add("reload of every manifest", run.reloadMs, "ms");
}

/**
 * The manifests, `perFile` documents to a file, the Secret first. With `changeFirstEdge`, EdgeTenant
 * edge-1 gets CHANGED_TENANT and only the file that holds it is written again.
 */
export async function writeManifests(
  dir: string,
  objects: readonly NsxvObject[],
  perFile: number,
  { changeFirstEdge = false } = {},
): Promise<void> {
  const isChanged = (o: NsxvObject): boolean => o.kind === "EdgeTenant" && o.metadata.name === "edge-1";
  const docs = [credentialsSecret(), ...objects.map((o) => manifestOf(o, changeFirstEdge && isChanged(o)))];
  const changedAt = 1 + objects.findIndex(isChanged);
  for (let i = 0; i < docs.length; i += perFile) {
    if (changeFirstEdge && !(changedAt >= i && changedAt < i + perFile)) continue;
    const text = docs
      .slice(i, i + perFile)
      .map((d) => stringify(d))
      .join("---\n");
    await writeFile(join(dir, `objects-${String(i / perFile).padStart(4, "0")}.yaml`), text);
  }
}

/** The object as a user writes it: no generation, no status; the changed tenant when asked. */
export function manifestOf(object: NsxvObject, changed = false): Record<string, unknown> {
  const { generation: _generation, ...metadata } = object.metadata;
  const spec =
    changed && object.kind === "EdgeTenant" ? { ...object.spec, tenant: CHANGED_TENANT } : object.spec;
  return { apiVersion: object.apiVersion, kind: object.kind, metadata, spec };
}
