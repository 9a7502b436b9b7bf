/**
 * The operator: a desired-state source (Kubernetes or a directory) feeds keys into a work queue,
 * the controller's workers run `reconcile` (the same createReconciler as the CLI), and each
 * report goes to the source's status sink, its event recorder and the metrics. Every replica
 * follows the source (a warm standby, ready as soon as it is listed); with leader election only
 * the leader runs the workers, so only it calls managers and writes. `start(signal)` resolves
 * "stopped" after a graceful shutdown (no new work, in-flight reconciles finished within the
 * deadline, lease released) or "lease-lost", upon which the process should exit non-zero.
 */
import type { Kind, NsxvObject } from "../api/types.ts";
import { ManagerClient } from "../nsx/client.ts";
import type { ManagerClientOptions } from "../nsx/client.ts";
import type { Reason } from "../reconcile/conditions.ts";
import type { ClosableManagerApi, ManagerConnectionsOptions } from "../reconcile/connections.ts";
import { ManagerConnections } from "../reconcile/connections.ts";
import type { Reconcile, ReconcileReport, ReconcilerDeps } from "../reconcile/reconciler.ts";
import { createReconciler } from "../reconcile/reconciler.ts";
import type { ObjectRef } from "../reconcile/store.ts";
import { refOf } from "../reconcile/store.ts";
import type { Clock } from "../util/clock.ts";
import { realClock, withTimeout } from "../util/clock.ts";
import type { Logger, Result } from "./controller.ts";
import { Controller, TerminalError, nopLogger } from "./controller.ts";
import type { EventRecorder } from "./events.ts";
import type { LeaseStore } from "./leader-election.ts";
import { LeaderElector } from "./leader-election.ts";
import type { OperatorMetrics, OperatorMetricsBundle, PoolLabels } from "./metrics.ts";
import { createOperatorMetrics } from "./metrics.ts";
import type { BoundAddress } from "./probes.ts";
import { MetricsServer, ProbeServer } from "./probes.ts";
import type { DesiredStateSource, Status } from "./source.ts";
import { KINDS, objectKey, parseObjectKey } from "./source.ts";
import { WorkQueue } from "./workqueue.ts";

export interface LeaderElectionConfig {
  store: LeaseStore;
  /** the lease's name, label of leader_election_master_status; default "nsxv-operator" */
  name?: string;
  /** default `<hostname>_<uuid>` */
  identity?: string;
  /** defaults 15000, 10000, 2000 (client-go) */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface OperatorOptions {
  source: DesiredStateSource;
  /** default `new ManagerClient(options)` */
  createClient?: (options: ManagerClientOptions) => ClosableManagerApi;
  /** given to every manager client (retries, auth mode); never credentials */
  clientOptions?: ManagerConnectionsOptions["clientOptions"];
  /** reconciles at once; default 4 */
  concurrency?: number;
  /** drift resync of objects without spec.syncInterval, ±10 %; default 300000 */
  syncIntervalMs?: number;
  /** on shutdown, how long in-flight reconciles may take; default 30000 */
  shutdownTimeoutMs?: number;
  /** run the workers only while holding this lease; default: always (a single replica) */
  leaderElection?: LeaderElectionConfig;
  /** `host:port` of /metrics; "0" for none; default ":8080" */
  metricsBindAddress?: string;
  /** `host:port` of /healthz and /readyz; "0" for none; default ":8081" */
  healthProbeBindAddress?: string;
  /** default createOperatorMetrics() */
  metrics?: OperatorMetricsBundle;
  /** label of the controller in metrics and logs; default "nsxv-operator" */
  name?: string;
  /** tuning of the reconciler (tests: jitter, pool list lifetime) */
  reconciler?: Pick<ReconcilerDeps, "jitterFraction" | "random" | "poolListTtlMs" | "maxAttempts">;
  clock?: Clock;
  logger?: Logger;
}

export const OPERATOR_DEFAULTS = {
  name: "nsxv-operator",
  concurrency: 4,
  syncIntervalMs: 300_000,
  shutdownTimeoutMs: 30_000,
  metricsBindAddress: ":8080",
  healthProbeBindAddress: ":8081",
  /** how long shutdown waits for Events still being written */
  eventFlushTimeoutMs: 2_000,
} as const;

export type OperatorExit = "stopped" | "lease-lost";

/** Ready reasons that mean the manager differs from the declared state. */
const DRIFT_REASONS: ReadonlySet<string> = new Set<Reason>(["Drifted", "ReleasesPending"]);

function readyOf(status: Status | undefined): { reason?: string; message?: string } {
  return status?.conditions?.find((c) => c.type === "Ready") ?? {};
}

/** A logger that names the object of a line whose fields carry a queue `key`. */
function keyedLogger(logger: Logger): Logger {
  const wrap =
    (level: keyof Logger) =>
    (fields: Record<string, unknown>, message: string): void => {
      const ref = typeof fields.key === "string" ? parseObjectKey(fields.key) : undefined;
      logger[level](ref === undefined ? fields : { ...ref, ...fields }, message);
    };
  return { debug: wrap("debug"), info: wrap("info"), warn: wrap("warn"), error: wrap("error") };
}

export class Operator {
  readonly #source: DesiredStateSource;
  readonly #name: string;
  readonly #concurrency: number;
  readonly #shutdownTimeoutMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #bundle: OperatorMetricsBundle;
  readonly #metrics: OperatorMetrics;
  readonly #connections: ManagerConnections;
  readonly #reconcile: Reconcile;
  readonly #elector: LeaderElector | undefined;
  readonly #probes: ProbeServer | undefined;
  readonly #metricsServer: MetricsServer | undefined;
  /** pool gauge labels by object key, to drop the series when the object goes */
  readonly #pools = new Map<string, PoolLabels>();

  constructor(options: OperatorOptions) {
    const d = OPERATOR_DEFAULTS;
    this.#source = options.source;
    this.#name = options.name ?? d.name;
    this.#concurrency = options.concurrency ?? d.concurrency;
    this.#shutdownTimeoutMs = options.shutdownTimeoutMs ?? d.shutdownTimeoutMs;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? nopLogger;
    this.#bundle = options.metrics ?? createOperatorMetrics();
    this.#metrics = this.#bundle.metrics;
    const createClient = options.createClient ?? ((o: ManagerClientOptions) => new ManagerClient(o));
    this.#connections = new ManagerConnections({
      // every call to a manager is counted under its NSXManager's namespace/name
      createClient: (clientOptions, manager) =>
        createClient({
          ...clientOptions,
          onRequest: (event) => this.#metrics.managerRequest(`${manager.namespace}/${manager.name}`, event),
        }),
      ...(options.clientOptions !== undefined ? { clientOptions: options.clientOptions } : {}),
      onCloseError: (err) => this.#logger.warn({ err }, "closing a replaced manager client failed"),
    });
    this.#reconcile = createReconciler({
      ...options.reconciler,
      store: this.#source.store,
      connections: this.#connections,
      clock: this.#clock,
      defaultSyncIntervalMs: options.syncIntervalMs ?? d.syncIntervalMs,
    });
    const le = options.leaderElection;
    this.#elector =
      le === undefined
        ? undefined
        : new LeaderElector({ ...le, clock: this.#clock, metrics: this.#metrics, logger: this.#logger });
    const probeAddress = options.healthProbeBindAddress ?? d.healthProbeBindAddress;
    const logger = this.#logger;
    this.#probes =
      probeAddress === "0"
        ? undefined
        : new ProbeServer({ bindAddress: probeAddress, clock: this.#clock, logger })
            .addHealthCheck("ping", () => undefined)
            .addReadyCheck("source", () => this.#source.notReady());
    const metricsAddress = options.metricsBindAddress ?? d.metricsBindAddress;
    this.#metricsServer =
      metricsAddress === "0"
        ? undefined
        : new MetricsServer({ registry: this.#bundle.registry, bindAddress: metricsAddress, logger });
  }

  /** the addresses bound, once listening (undefined for an endpoint switched off) */
  get listening(): Promise<{ probes: BoundAddress | undefined; metrics: BoundAddress | undefined }> {
    return Promise.all([this.#probes?.listening, this.#metricsServer?.listening]).then(
      ([probes, metrics]) => ({
        probes,
        metrics,
      }),
    );
  }

  get isLeader(): boolean {
    return this.#elector?.isLeader ?? true;
  }

  /** Runs until `signal` aborts ("stopped") or the lease is lost ("lease-lost"); rejects if a port cannot be bound. */
  async start(signal: AbortSignal): Promise<OperatorExit> {
    const stop = new AbortController();
    const parts = [
      this.#source.start(stop.signal),
      ...[this.#probes, this.#metricsServer].map((server) => server?.start(stop.signal)),
    ].map((part) => Promise.resolve(part).catch(() => {}));
    let exit: OperatorExit = "stopped";
    try {
      await this.listening;
      if (this.#elector === undefined) await this.#lead(signal);
      // a replica that cannot read the desired state does not take the lease from one that can
      else if (await this.#source.synced(signal)) {
        await this.#elector.start(signal, {
          onStartedLeading: (leading) => this.#lead(leading),
          onStoppedLeading: () => {
            if (!signal.aborted) exit = "lease-lost";
          },
        });
      }
    } finally {
      stop.abort();
      await Promise.all(parts);
      await this.#connections
        .close()
        .catch((err: unknown) => this.#logger.warn({ err }, "closing clients failed"));
      const events = this.#source.events as EventRecorder & { flush?: () => Promise<void> };
      if (events.flush !== undefined) {
        await withTimeout(this.#clock, events.flush(), OPERATOR_DEFAULTS.eventFlushTimeoutMs, undefined);
      }
    }
    this.#logger.info({ exit }, "operator stopped");
    return exit;
  }

  /** The leader's work: once the source is listed, every object is queued and the workers run. */
  async #lead(signal: AbortSignal): Promise<void> {
    if (!(await this.#source.synced(signal))) return;
    const queue = new WorkQueue({ name: this.#name, clock: this.#clock, metrics: this.#metrics });
    const controller = new Controller({
      name: this.#name,
      queue,
      reconcile: (key, s) => this.#reconcileKey(key, s),
      concurrency: this.#concurrency,
      shutdownTimeoutMs: this.#shutdownTimeoutMs,
      clock: this.#clock,
      metrics: this.#metrics,
      logger: keyedLogger(this.#logger),
    });
    const unsubscribe = this.#source.subscribe((ref) => queue.add(objectKey(ref)));
    try {
      for (const kind of KINDS) {
        for (const object of await this.#source.store.list(kind)) queue.add(objectKey(refOf(object)));
      }
      this.#logger.info({ controller: this.#name, queued: queue.len() }, "controller started");
      await controller.start(signal);
    } finally {
      unsubscribe();
    }
  }

  async #reconcileKey(key: string, signal: AbortSignal): Promise<Result> {
    const ref = parseObjectKey(key);
    if (ref === undefined) throw new TerminalError("INVALID_KEY", `not an object key: ${key}`);
    const before = await this.#source.store.get(ref);
    const report = await this.#reconcile(ref, { signal });
    this.#record(report, before);
    let conflict = false;
    if (report.status !== undefined) {
      const written = await this.#source.writeStatus(ref, report.status);
      conflict = written === "conflict";
      const ready = readyOf(report.status);
      this.#logger.info(
        { ...ref, written, ready: ready.reason, observedGeneration: report.status.observedGeneration },
        "status changed",
      );
    }
    const { outcome } = report;
    if (outcome.type === "error") {
      if (!outcome.terminal) throw outcome.error;
      const code = (outcome.error as { code?: unknown }).code;
      throw new TerminalError(typeof code === "string" ? code : "RECONCILE_TERMINAL", outcome.error.message, {
        cause: outcome.error,
      });
    }
    if (conflict) {
      this.#logger.debug({ ...ref }, "status write conflict; requeued");
      return { requeue: true };
    }
    this.#logger.debug({ ...ref, requeueAfterMs: outcome.requeueAfterMs }, "reconciled");
    return outcome.requeueAfterMs === undefined ? {} : { requeueAfterMs: outcome.requeueAfterMs };
  }

  /** Events and metrics of one report: changes made, drift found, pool usage. */
  #record(report: ReconcileReport, before: NsxvObject | undefined): void {
    const object = before;
    if (object !== undefined) {
      for (const { type, reason, message } of report.events) {
        if (type === "Normal") this.#source.events.normal(object, reason, message);
        else this.#source.events.warning(object, reason, message);
      }
    }
    const { tenantCorrections, releases } = report.changes;
    for (let i = 0; i < tenantCorrections.length; i++) this.#metrics.edgeTenantCorrected();
    if (releases.length > 0) this.#metrics.ipsReleased(releases.length);
    const wasDrifted = DRIFT_REASONS.has(readyOf(before?.status).reason ?? "");
    const nowReady = readyOf(report.status);
    const changed = tenantCorrections.length > 0 || releases.length > 0;
    if (!wasDrifted && (changed || DRIFT_REASONS.has(nowReady.reason ?? ""))) {
      this.#metrics.driftDetected(report.ref.kind);
      // a correction has its own event; drift left in place (Observe, grace period) gets this one
      if (!changed && object !== undefined && nowReady.reason === "Drifted") {
        this.#source.events.warning(object, "Drifted", nowReady.message ?? "drift detected");
      }
    }
    this.#recordPool(report.ref, report.status ?? before?.status, before === undefined);
  }

  #recordPool(ref: ObjectRef, status: Status | undefined, gone: boolean): void {
    if (ref.kind !== ("IPPoolAllocations" satisfies Kind)) return;
    const key = objectKey(ref);
    const previous = this.#pools.get(key);
    const pool = status as
      { poolId?: string; usedAddressCount?: number; totalAddressCount?: number } | undefined;
    const labels = { namespace: ref.namespace, name: ref.name, pool: pool?.poolId ?? "" };
    if (previous !== undefined && (gone || previous.pool !== labels.pool)) {
      this.#metrics.forgetPool(previous);
      this.#pools.delete(key);
    }
    if (gone || pool?.poolId === undefined || !pool.totalAddressCount) return;
    this.#metrics.poolUsedRatio(labels, (pool.usedAddressCount ?? 0) / pool.totalAddressCount);
    this.#pools.set(key, labels);
  }
}
