/**
 * A test rig for manager faults: the manager simulator on loopback, a directory of manifests
 * (an NSXManager, its Secret, an EdgeTenant with a drifted tenant, an IPPoolAllocations with
 * strays), and the operator as `run --manifests` wires it (operator.ts over a DirectorySource),
 * in-process, with every status write, Event and metric recorded so that a test can show where a
 * fault became visible. No cluster needed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import type { Kind } from "../../src/api/types.ts";
import { DirectorySource } from "../../src/source/directory.ts";
import type { EventRecorder } from "../../src/controller/events.ts";
import { createOperatorMetrics, type OperatorMetricsBundle } from "../../src/operator/metrics.ts";
import { Operator, type OperatorExit, type OperatorOptions } from "../../src/operator/operator.ts";
import type { Status, StatusWriteOutcome } from "../../src/source/source.ts";
import type { ObjectRef } from "../../src/api/refs.ts";
import {
  generateEdgeXml,
  startSimulator,
  type FaultSpec,
  type RunningSimulator,
  type SimulatorSettings,
} from "../../src/simulator/index.ts";
import { metricSum } from "../support/operator-time.ts";
import { waitFor } from "../support/wait.ts";
import type { Clock } from "../../src/util/clock.ts";
import type { RetryBudget } from "./invariants.ts";

export const NAMESPACE = "default";
export const MANAGER = "nsx";
export const SECRET = "nsx-credentials";
export const EDGE_ID = "edge-1";
export const EDGE_TENANT = "edge-1";
export const POOL_ID = "ipaddresspool-1";
export const POOL = "pool-1";
export const DESIRED_TENANT = "blue";
/** spec.allowed of the pool object */
export const ALLOWED = ["10.0.0.1-10.0.0.4", "10.0.0.20"];
/** allocated and allowed */
export const KEPT = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.20"];
/** allocated, not allowed: released (minStrayAge 0s) */
export const STRAYS = ["10.0.0.10", "10.0.0.11", "10.0.0.12"];
export const CREDENTIALS = { username: "admin", password: "first-password" };

/** Retries small enough that a fault of a few calls fails a pass; backoff short so tests stay fast. */
export const CLIENT_OPTIONS = { maxRetries: 1, baseDelayMs: 10, maxDelayMs: 50 } as const;
export const BUDGET: RetryBudget = { maxRetries: CLIENT_OPTIONS.maxRetries, maxAttempts: 3 };

/** The operator settings of the in-process fault tests: the budgets above, no HTTP endpoints, a short shutdown. */
export const FAULT_OPERATOR_OPTIONS = {
  // one manager: every worker is its own (the bulkhead keeps managers from stalling each other;
  // with half of them, its objects pass in another order and a dependent can meet the manager's
  // failure and be woken once more when it recovers, beyond the backoff bound these tests assert)
  concurrency: 4,
  concurrencyPerManager: 4,
  clientOptions: CLIENT_OPTIONS,
  reconciler: {
    maxAttempts: BUDGET.maxAttempts,
    jitterFraction: 0,
    kinds: { IPPoolAllocations: { poolListTtlMs: 250 } },
  },
  metricsBindAddress: "0",
  healthProbeBindAddress: "0",
  shutdownTimeoutMs: 2_000,
} as const satisfies Partial<OperatorOptions>;

export interface RecordedEvent {
  type: "Normal" | "Warning";
  kind: string;
  name: string;
  reason: string;
  message: string;
}

export interface StatusWrite {
  ref: ObjectRef;
  status: Status;
}

/** A DirectorySource that also keeps every status it was asked to write. */
class RecordingDirectorySource extends DirectorySource {
  readonly writes: StatusWrite[] = [];

  override writeStatus(ref: ObjectRef, status: Status): Promise<StatusWriteOutcome> {
    this.writes.push({ ref, status: structuredClone(status) });
    return super.writeStatus(ref, status);
  }
}

/** An event recorder that appends to `events`. */
export function recordingEvents(events: RecordedEvent[]): EventRecorder {
  const record = (type: RecordedEvent["type"]): EventRecorder["normal"] => {
    return (obj, reason, message) =>
      void events.push({ type, kind: obj.kind, name: obj.metadata.name, reason, message });
  };
  return { normal: record("Normal"), warning: record("Warning") };
}

export interface RigOptions {
  /** faults installed before the operator starts */
  faults?: FaultSpec[];
  /** NSXManager spec.requestTimeoutSeconds; default 1 (the CRD's minimum) */
  requestTimeoutSeconds?: number;
  /** the operator's resync interval; default its own (5 min: no resync during a test) */
  syncIntervalMs?: number;
  /** simulator settings, e.g. rejectStaleVersion */
  settings?: Partial<SimulatorSettings>;
  /** spec.release of the pool; default no grace period, 10 per pass */
  release?: { minStrayAge: string; maxPerSync: number };
  /**
   * the operator's, the directory source's and the simulator's records' clock (advance it with
   * test/support/operator-time.ts); default the real one
   */
  clock?: Clock;
}

/** The manifests of the rig, as YAML documents. */
export function rigManifests(
  url: string,
  options: {
    requestTimeoutSeconds?: number;
    password?: string;
    /** spec.release of the pool; default no grace period, 10 per pass */
    release?: { minStrayAge: string; maxPerSync: number };
  } = {},
) {
  return [
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: SECRET },
      stringData: { username: CREDENTIALS.username, password: options.password ?? CREDENTIALS.password },
    },
    {
      apiVersion: "nsxv.io/v1alpha1",
      kind: "NSXManager",
      metadata: { name: MANAGER },
      spec: {
        url,
        credentialsSecretRef: { name: SECRET },
        requestTimeoutSeconds: options.requestTimeoutSeconds ?? 1,
      },
    },
    {
      apiVersion: "nsxv.io/v1alpha1",
      kind: "EdgeTenant",
      metadata: { name: EDGE_TENANT },
      spec: { managerRef: { name: MANAGER }, edgeId: EDGE_ID, tenant: DESIRED_TENANT },
    },
    {
      apiVersion: "nsxv.io/v1alpha1",
      kind: "IPPoolAllocations",
      metadata: { name: POOL },
      spec: {
        managerRef: { name: MANAGER },
        pool: { id: POOL_ID },
        allowed: ALLOWED,
        release: options.release ?? { minStrayAge: "0s", maxPerSync: 10 },
      },
    },
  ];
}

/** The drifted edge: every element of the spec, no user firewall rules (about 15 KB). */
export const EDGE_XML = generateEdgeXml({ edgeNumber: 1, tenant: "default", firewallRules: 0 });
export const EDGE_BYTES = Buffer.byteLength(EDGE_XML);

/** The simulator's state: one drifted edge, one pool with kept and stray addresses. */
export function rigState(strays: readonly string[] = STRAYS) {
  return {
    credentials: CREDENTIALS,
    edges: [{ xml: EDGE_XML }],
    pools: [
      {
        id: POOL_ID,
        name: "controllers",
        ranges: [{ start: "10.0.0.1", end: "10.0.0.50" }],
        allocations: [...KEPT, ...strays].map((ip) => ({ ip, note: `host ${ip}` })),
      },
    ],
  };
}

export class FaultRig {
  readonly sim: RunningSimulator;
  readonly dir: string;
  readonly source: RecordingDirectorySource;
  readonly metrics: OperatorMetricsBundle;
  readonly events: RecordedEvent[];
  readonly startedAtMs: number;
  readonly #stop: AbortController;
  readonly #exit: Promise<OperatorExit>;

  private constructor(init: {
    sim: RunningSimulator;
    dir: string;
    source: RecordingDirectorySource;
    metrics: OperatorMetricsBundle;
    events: RecordedEvent[];
    stop: AbortController;
    exit: Promise<OperatorExit>;
  }) {
    this.sim = init.sim;
    this.dir = init.dir;
    this.source = init.source;
    this.metrics = init.metrics;
    this.events = init.events;
    this.#stop = init.stop;
    this.#exit = init.exit;
    this.startedAtMs = Date.now();
  }

  /** Starts the simulator (faults installed), writes the manifests and starts the operator on them. */
  static async start(options: RigOptions = {}): Promise<FaultRig> {
    const { clock } = options;
    const sim = await startSimulator({
      state: rigState(),
      ...(options.settings !== undefined ? { settings: options.settings } : {}),
      ...(clock !== undefined ? { nowMs: () => clock.now() } : {}),
    });
    for (const fault of options.faults ?? []) sim.state.faults.add(fault);
    const dir = mkdtempSync(join(tmpdir(), "nsxv-faults-"));
    writeManifests(dir, rigManifests(sim.url, options));
    const events: RecordedEvent[] = [];
    const source = new RecordingDirectorySource({
      dir,
      events: recordingEvents(events),
      ...(clock !== undefined ? { clock } : {}),
    });
    const metrics = createOperatorMetrics({ processMetrics: false });
    const operator = new Operator({
      source,
      metrics,
      ...FAULT_OPERATOR_OPTIONS,
      ...(options.syncIntervalMs !== undefined ? { syncIntervalMs: options.syncIntervalMs } : {}),
      ...(clock !== undefined ? { clock } : {}),
    });
    const stop = new AbortController();
    const exit = operator.start(stop.signal);
    exit.catch(() => {});
    return new FaultRig({ sim, dir, source, metrics, events, stop, exit });
  }

  /** Replaces the manifests (e.g. a rotated Secret) and has the source read them at once. */
  async rewrite(options: { password?: string; requestTimeoutSeconds?: number }): Promise<void> {
    writeManifests(this.dir, rigManifests(this.sim.url, options));
    await this.source.reload();
  }

  status(kind: Kind, name: string): Status | undefined {
    return (this.source.store.get({ kind, namespace: NAMESPACE, name }) as { status?: Status } | undefined)
      ?.status;
  }

  condition(kind: Kind, name: string, type: string) {
    return this.status(kind, name)?.conditions?.find((c) => c.type === type);
  }

  /** The manager holds the declared state and every object says Ready and Synced. */
  converged(): boolean {
    const edge = this.sim.state.edge(EDGE_ID);
    const pool = this.sim.state.pool(POOL_ID);
    const left = pool?.allocations().map((a) => a.ipAddress) ?? [];
    const ready = (kind: Kind, name: string) =>
      this.condition(kind, name, "Ready")?.status === "True" &&
      this.condition(kind, name, "Synced")?.status === "True";
    return (
      edge?.doc.tenant === DESIRED_TENANT &&
      left.length === KEPT.length &&
      left.every((ip) => KEPT.includes(ip)) &&
      ready("NSXManager", MANAGER) &&
      ready("EdgeTenant", EDGE_TENANT) &&
      ready("IPPoolAllocations", POOL)
    );
  }

  /** Waits for convergence; returns how long it took from the start of the rig. */
  async waitConverged(timeoutMs = 15_000): Promise<number> {
    try {
      await waitFor("convergence", async () => (this.converged() ? true : undefined), {
        timeoutMs,
        intervalMs: 25,
      });
    } catch (error) {
      throw new Error(`${(error as Error).message}; ${this.describe()}`, { cause: error });
    }
    return Date.now() - this.startedAtMs;
  }

  /** What the manager holds, the conditions and the calls: the message of a test that did not converge. */
  describe(): string {
    const conditions = (kind: Kind, name: string) =>
      (this.status(kind, name)?.conditions ?? []).map(
        (c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`,
      );
    return JSON.stringify({
      tenant: this.sim.state.edge(EDGE_ID)?.doc.tenant,
      allocated: this.sim.state
        .pool(POOL_ID)
        ?.allocations()
        .map((a) => a.ipAddress),
      manager: conditions("NSXManager", MANAGER),
      edgeTenant: conditions("EdgeTenant", EDGE_TENANT),
      pool: conditions("IPPoolAllocations", POOL),
      counters: this.sim.state.counters.snapshot(),
      faults: this.sim.state.faults.list(),
    });
  }

  /** The status writes of one object whose Synced condition was False. */
  failures(kind: Kind, name: string): { reason: string; message: string }[] {
    return this.source.writes
      .filter((w) => w.ref.kind === kind && w.ref.name === name)
      .flatMap((w) => w.status.conditions?.filter((c) => c.type === "Synced" && c.status === "False") ?? []);
  }

  /** The sum of a metric's samples whose labels include `labels` (histograms: name_sum, name_count). */
  metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    return metricSum(this.metrics.registry, name, labels);
  }

  /** Reconcile passes of every key so far (controller_runtime_reconcile_total). */
  passes(): Promise<number> {
    return this.metric("controller_runtime_reconcile_total");
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await this.#exit.catch(() => undefined);
    await this.sim.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function writeManifests(dir: string, documents: readonly object[]): void {
  writeFileSync(join(dir, "objects.yaml"), documents.map((d) => stringify(d)).join("---\n"));
}
