/**
 * The messages between the scale benchmarks (scale.ts, scale-apiserver.ts, fleet-interval.ts,
 * ceiling.ts) and their operator child.
 */
import type { FleetOptions, ManagerCaps } from "./fixtures.ts";

export type ScaleSource =
  /** the objects built in the child, in a MemorySource */
  | { type: "memory" }
  /** the manifests the parent wrote */
  | { type: "directory"; dir: string }
  /** a Kubernetes API server, one namespace */
  | { type: "cluster"; kubeconfigPath: string; namespace: string };

export interface ScaleChildStart {
  source: ScaleSource;
  url: string;
  fleet: FleetOptions;
  caps: ManagerCaps;
  concurrency: number;
  /** the operator's resync interval (--sync-interval) */
  syncIntervalMs: number;
  /** --max-old-space-size of the child, as Node derives it from a container's memory limit; default Node's own */
  heapLimitMiB?: number;
  /**
   * several managers instead of the fleet's one (memory and directory sources): the fleet's edges
   * per manager, each EdgeTenant with this syncInterval (fixtures.ts managersFleetObjects)
   */
  managers?: { urls: string[]; edgeSyncInterval: string };
  /** give up waiting for the first pass after this long */
  syncTimeoutMs: number;
  /** the operator's --full-read-interval; default the operator's (1 h) */
  fullReadIntervalMs?: number;
}

export interface ScaleChildReport {
  /** the child's own peak RSS (peak-rss.cjs), in bytes */
  maxRssBytes: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** heap in use right after a full garbage collection: what the operator keeps alive (the last report only) */
  liveHeapBytes: number | undefined;
  /** the largest process.memoryUsage().heapTotal and .external seen while it ran */
  peakHeapTotalBytes: number;
  peakExternalBytes: number;
  /** process.constrainedMemory(): the memory limit Node found (0: none) */
  constrainedMemoryBytes: number;
  /** V8's heap limit, which Node derives from that limit or the machine's memory */
  heapSizeLimitBytes: number;
  /** epoch ms at which the source announced the changed object (EdgeTenant edge-1), if it did */
  changeEmittedAtMs: number | undefined;
  reconciled: number;
  /** user + system CPU seconds the child used so far */
  cpuSeconds: number;
  /** statuses the source stored so far */
  statusWrites: number;
  errors: string[];
}

export interface ScaleSynced extends ScaleChildReport {
  ok: boolean;
  ms: number;
}

export const CHANGED_TENANT = "tenant-b";
