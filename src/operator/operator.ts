/**
 * The operator: a desired-state source (Kubernetes or a directory) feeds keys into a work queue,
 * the controller's workers run `reconcile` (the same createReconciler as the CLI), and each
 * report goes to the source's status sink, its event recorder and the metrics. Events (what the
 * source says changed, what a pass wakes) go ahead of bulk work: the start's pass over everything
 * and the routine come-backs (resyncs, safety-net reads) wait at LOW_PRIORITY. Every replica
 * follows the source (a warm standby, ready as soon as it is listed); with leader election only
 * the leader runs the workers, so only it calls managers and writes. `start(signal)` resolves
 * "stopped" after a graceful shutdown within `shutdownTimeoutMs` (no new work; in-flight
 * reconciles finished or cut at the drain deadline, with nothing written after it; requests still
 * waiting on a manager aborted; the lease released) or "lease-lost", upon which the process
 * should exit non-zero.
 */
import { managerRefOf, objectKey, refOf, type ObjectRef } from "../api/refs.ts";
import { IN_USE_FINALIZER, KINDS, type NsxvObject } from "../api/types.ts";
import {
  Controller,
  CONTROLLER_DEFAULTS,
  nopLogger,
  type Logger,
  type Result,
} from "../controller/controller.ts";
import type { EventRecorder } from "../controller/events.ts";
import { LeaderElector, type LeaseStore } from "../controller/leader-election.ts";
import {
  METRICS_DEFAULTS,
  MetricsServer,
  PROBE_DEFAULTS,
  ProbeServer,
  type BoundAddress,
} from "../controller/probes.ts";
import { LOW_PRIORITY, WorkQueue } from "../controller/workqueue.ts";
import { ManagerClient, type ManagerClientOptions } from "../nsx/client.ts";
import { insecureTransport } from "../nsx/client-options.ts";
import {
  ManagerConnections,
  type ClosableManagerApi,
  type ManagerConnectionsOptions,
} from "../reconcile/connections.ts";
import {
  createReconciler,
  RECONCILER_DEFAULTS,
  type Reconcile,
  type ReconcilerDeps,
} from "../reconcile/reconciler.ts";
import { RealManagerIndex } from "../reconcile/real-managers.ts";
import { concernedBy } from "../reconcile/routing.ts";
import { StatusRefusedError, type DesiredStateSource, type StatusWriteOutcome } from "../source/source.ts";
import { findCondition } from "../reconcile/conditions.ts";
import { ReconcileError } from "../reconcile/errors.ts";
import { statusAfterRefusal, type ReconcileReport } from "../reconcile/report.ts";
import { realClock, withTimeout, type Clock } from "../util/clock.ts";
import { CodedError } from "../util/errors.ts";
import { createOperatorMetrics, type OperatorMetricsBundle } from "./metrics.ts";
import { ReportRecorder } from "./record.ts";
import { withDefaults } from "../util/options.ts";

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
  /** given to every manager client (retry tuning, a clock for tests); never credentials */
  clientOptions?: ManagerConnectionsOptions["clientOptions"];
  /**
   * reconciles at once; a manager with none running may have one beyond it, so that however
   * many managers hang, each other one goes on at once; default 4
   */
  concurrency?: number;
  /**
   * reconciles at once of the objects of one real manager (`managerGroupOf`: several NSXManager
   * objects can name one): a manager that hangs holds at most this many; default ceil(concurrency / 2)
   */
  concurrencyPerManager?: number;
  /** drift resync of objects without spec.syncInterval, ±10 %; default 300000 */
  syncIntervalMs?: number;
  /**
   * each edge is read in full at least this often, while the manager's edge list would do (the
   * safety net against summaries that are wrong); default 3600000
   */
  fullReadIntervalMs?: number;
  /**
   * at most this many safety-net full reads a minute of one NSXManager's edges: one with more
   * EdgeTenants than fit in fullReadIntervalMs at this rate has each read once per
   * EdgeTenants / fullReadsPerMinute minutes instead (its Ready message says so); default 7
   */
  fullReadsPerMinute?: number;
  /**
   * on shutdown, how long stopping may take in all: in-flight reconciles get most of it
   * (shutdownBudget), letting go of the managers, the lease and the last Events the rest; default 30000
   */
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
  /** tuning of the reconciler (tests: jitter, a kind's options such as the pool list's lifetime) */
  reconciler?: Pick<ReconcilerDeps, "jitterFraction" | "random" | "kinds" | "maxAttempts">;
  clock?: Clock;
  logger?: Logger;
}

export const OPERATOR_DEFAULTS = {
  name: "nsxv-operator",
  concurrency: 4,
  syncIntervalMs: RECONCILER_DEFAULTS.defaultSyncIntervalMs,
  fullReadIntervalMs: RECONCILER_DEFAULTS.kinds.EdgeTenant.fullReadIntervalMs,
  fullReadsPerMinute: RECONCILER_DEFAULTS.kinds.EdgeTenant.fullReadsPerMinute,
  shutdownTimeoutMs: CONTROLLER_DEFAULTS.shutdownTimeoutMs,
  metricsBindAddress: METRICS_DEFAULTS.bindAddress,
  healthProbeBindAddress: PROBE_DEFAULTS.bindAddress,
  /** how long shutdown waits for Events still being written, at most */
  eventFlushTimeoutMs: 2_000,
  /** of the shutdown timeout, what is kept after the drain for letting go, at most */
  shutdownReserveMs: 5_000,
} as const;

/**
 * How the shutdown timeout is spent after SIGTERM: reconciles in flight may run for `drainMs`;
 * what follows (aborting what still waits on a manager, releasing the lease, the last Events) has
 * the rest, `reserveMs`: a quarter of the timeout, at most 5 s. So the lease is let go within the
 * timeout whatever the managers do, and a pod whose grace period equals it is not killed first.
 */
export function shutdownBudget(timeoutMs: number): { drainMs: number; reserveMs: number } {
  const reserveMs = Math.min(OPERATOR_DEFAULTS.shutdownReserveMs, Math.round(timeoutMs / 4));
  return { drainMs: timeoutMs - reserveMs, reserveMs };
}

export type OperatorExit = "stopped" | "lease-lost";

/** Half the workers, at least one: what one manager may hold when `concurrencyPerManager` is not set. */
export function defaultConcurrencyPerManager(concurrency: number): number {
  return Math.max(1, Math.ceil(concurrency / 2));
}

/**
 * The manager an object's reconcile calls, which decides its share of the workers: the real
 * manager (`realManagerOf`) its NSXManager names (an NSXManager's own, a dependent's
 * spec.managerRef), so that several NSXManager objects naming one manager share one share; the
 * NSXManager object itself when its real manager is not known (its URL does not parse). An
 * object that is gone (or not readable now) calls no manager and gets a group of its own, so it
 * never waits behind one.
 */
export function managerGroupOf(
  ref: ObjectRef,
  object: NsxvObject | undefined,
  realManagerOf: (manager: ObjectRef) => string | undefined,
): string {
  const manager = ref.kind === "NSXManager" ? ref : object === undefined ? undefined : managerRefOf(object);
  if (manager === undefined) return objectKey(ref);
  return realManagerOf(manager) ?? objectKey(manager);
}

/** The object changed since its status was read (HTTP 409 on the write): read it again, quietly. */
export class StatusConflictError extends CodedError {
  readonly quiet = true;
  readonly reason = "StatusConflict";
  constructor(ref: ObjectRef) {
    super(
      "STATUS_CONFLICT",
      `${ref.kind} ${ref.namespace}/${ref.name}: the object changed while its status was written`,
    );
  }
}

export class Operator {
  readonly #source: DesiredStateSource;
  readonly #name: string;
  readonly #concurrency: number;
  readonly #concurrencyPerManager: number;
  readonly #shutdownTimeoutMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #bundle: OperatorMetricsBundle;
  readonly #recorder: ReportRecorder;
  readonly #connections: ManagerConnections;
  readonly #reconcile: Reconcile;
  readonly #elector: LeaderElector | undefined;
  readonly #probes: ProbeServer | undefined;
  readonly #metricsServer: MetricsServer | undefined;

  constructor(options: OperatorOptions) {
    const o = withDefaults(OPERATOR_DEFAULTS, options);
    this.#source = options.source;
    this.#name = o.name;
    this.#concurrency = o.concurrency;
    this.#concurrencyPerManager =
      options.concurrencyPerManager ?? defaultConcurrencyPerManager(this.#concurrency);
    this.#shutdownTimeoutMs = o.shutdownTimeoutMs;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? nopLogger;
    this.#bundle = options.metrics ?? createOperatorMetrics();
    const { metrics } = this.#bundle;
    this.#recorder = new ReportRecorder(this.#source.events, metrics);
    const createClient = options.createClient ?? ((o: ManagerClientOptions) => new ManagerClient(o));
    this.#connections = new ManagerConnections({
      // every call to a manager is counted under its NSXManager's namespace/name
      createClient: (clientOptions, manager) => {
        const insecure = insecureTransport(clientOptions);
        // said when a client is built (after a start, after a change), whatever the status already says
        if (insecure !== undefined) this.#logger.warn({ kind: "NSXManager", ...manager }, insecure.message);
        return createClient({
          ...clientOptions,
          onRequest: (event) => metrics.managerRequest(`${manager.namespace}/${manager.name}`, event),
        });
      },
      ...(options.clientOptions !== undefined ? { clientOptions: options.clientOptions } : {}),
      onCloseError: (err) => this.#logger.warn({ err }, "closing a replaced manager client failed"),
    });
    this.#reconcile = createReconciler({
      ...options.reconciler,
      store: this.#source.store,
      connections: this.#connections,
      clock: this.#clock,
      defaultSyncIntervalMs: o.syncIntervalMs,
      kinds: {
        ...options.reconciler?.kinds,
        EdgeTenant: { fullReadIntervalMs: o.fullReadIntervalMs, fullReadsPerMinute: o.fullReadsPerMinute },
      },
    });
    const le = options.leaderElection;
    this.#elector =
      le === undefined
        ? undefined
        : new LeaderElector({
            ...le,
            // one write, within the shutdown's reserve: the Events' flush has the rest of it
            releaseTimeoutMs: shutdownBudget(this.#shutdownTimeoutMs).reserveMs / 2,
            clock: this.#clock,
            metrics,
            logger: this.#logger,
          });
    const probeAddress = o.healthProbeBindAddress;
    const logger = this.#logger;
    this.#probes =
      probeAddress === "0"
        ? undefined
        : new ProbeServer({ bindAddress: probeAddress, clock: this.#clock, logger })
            .addHealthCheck("ping", () => undefined)
            .addReadyCheck("source", () => this.#source.notReady());
    const metricsAddress = o.metricsBindAddress;
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
    // when stopping began: everything after the drain fits in what is left of the timeout
    let stoppingAtMs: number | undefined;
    const onStop = (): void => void (stoppingAtMs ??= this.#clock.now());
    if (signal.aborted) onStop();
    else signal.addEventListener("abort", onStop, { once: true });
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
      signal.removeEventListener("abort", onStop);
      stop.abort();
      await Promise.all(parts);
      await this.#destroyClients();
      const events = this.#source.events as EventRecorder & { flush?: () => Promise<void> };
      if (events.flush !== undefined) {
        const leftMs =
          stoppingAtMs === undefined ? Infinity : stoppingAtMs + this.#shutdownTimeoutMs - this.#clock.now();
        const flushMs = Math.max(0, Math.min(OPERATOR_DEFAULTS.eventFlushTimeoutMs, leftMs));
        await withTimeout(this.#clock, events.flush(), flushMs, undefined);
      }
    }
    this.#logger.info({ exit }, "operator stopped");
    return exit;
  }

  /** The leader's work: once the source is listed, every object is queued and the workers run. */
  async #lead(signal: AbortSignal): Promise<void> {
    if (!(await this.#source.synced(signal))) return;
    const { metrics } = this.#bundle;
    const { store } = this.#source;
    const realManagers = new RealManagerIndex(() => store.list("NSXManager"));
    const queue = new WorkQueue<ObjectRef>({
      name: this.#name,
      clock: this.#clock,
      metrics,
      keyOf: objectKey,
      maxInFlight: this.#concurrency,
      // both sources answer from memory; an object a store cannot give at once is its own group
      groupOf: (ref) => {
        const object = store.get(ref);
        return managerGroupOf(ref, object instanceof Promise ? undefined : object, (m) => realManagers.of(m));
      },
      maxInFlightPerGroup: this.#concurrencyPerManager,
    });
    const controller = new Controller<ObjectRef>({
      name: this.#name,
      queue,
      reconcile: (ref, s) => this.#reconcileRef(ref, s),
      describe: (ref) => ({ ...ref }),
      shutdownTimeoutMs: shutdownBudget(this.#shutdownTimeoutMs).drainMs,
      clock: this.#clock,
      metrics,
      logger: this.#logger,
    });
    const everything = (): NsxvObject[] => KINDS.flatMap((kind) => store.list(kind));
    const unsubscribe = this.#source.subscribe((change) =>
      controller.enqueue(concernedBy(change, everything)),
    );
    try {
      // start-up work: what the source says from now on (a change, a new object) goes first
      controller.enqueue(everything().map(refOf), { priority: LOW_PRIORITY });
      this.#logger.info({ controller: this.#name, queued: queue.len() }, "controller started");
      await controller.start(signal);
    } finally {
      unsubscribe();
      // before the lease goes: a reconcile cut at the drain deadline may still wait on a manager
      await this.#destroyClients();
    }
  }

  /** The report's Secret finalizer changes, in order; false when one lost a race (read it again). */
  async #setSecretFinalizers(report: ReconcileReport): Promise<boolean> {
    const set = this.#source.setSecretFinalizer?.bind(this.#source);
    for (const { namespace, name, present } of report.secretFinalizers) {
      if (set === undefined) throw new Error(`Secret ${namespace}/${name}: this source cannot hold Secrets`);
      const result = await set(namespace, name, IN_USE_FINALIZER, present);
      this.#logger.info(
        { kind: "Secret", namespace, name, finalizer: IN_USE_FINALIZER, present, result },
        "finalizer changed",
      );
      if (result === "conflict") return false;
    }
    return true;
  }

  /** Every manager request still in flight aborted, every client dropped: nothing waits on a manager. */
  async #destroyClients(): Promise<void> {
    await this.#connections
      .destroy()
      .catch((err: unknown) => this.#logger.warn({ err }, "closing clients failed"));
  }

  /**
   * One object through reconcile and back: the report's events and metrics are recorded, its
   * status written, and its outcome returned to the controller with the managers it says to check
   * now (a failure as the ReconcileError it is, a lost status race as a quiet StatusConflictError).
   */
  async #reconcileRef(ref: ObjectRef, signal: AbortSignal): Promise<Result<ObjectRef>> {
    const report = await this.#reconcile(ref, { signal });
    // cut by the shutdown's deadline: the lease is being let go, so nothing more is written
    if (signal.aborted) return {};
    this.#recorder.record(report);
    for (const note of report.notes) this.#logger.debug({ ...ref }, note);
    const also = report.wake;
    // a Secret held before the status says so; released before the status forgets it
    if (!(await this.#setSecretFinalizers(report))) return { error: new StatusConflictError(ref), also };
    if (report.status !== undefined) {
      let written: StatusWriteOutcome;
      try {
        written = await this.#source.writeStatus(ref, report.status);
      } catch (error) {
        if (!(error instanceof StatusRefusedError)) throw error;
        return { ...(await this.#statusRefused(report, error)), also };
      }
      const reason = (type: string) => report.status?.conditions?.find((c) => c.type === type)?.reason;
      const { observedGeneration } = report.status;
      // one line: what a reader of the status sees first; the messages are in the status and the Events
      this.#logger.info(
        { ...ref, written, ready: reason("Ready"), synced: reason("Synced"), observedGeneration },
        "status changed",
      );
      if (written === "conflict") return { error: new StatusConflictError(ref), also };
    }
    if (report.finalizer !== undefined) {
      const { name, present } = report.finalizer;
      const set = await this.#source.setFinalizer(ref, name, present);
      this.#logger.info({ ...ref, finalizer: name, present, result: set }, "finalizer changed");
      if (set === "conflict") return { error: new StatusConflictError(ref), also };
    }
    const { outcome } = report;
    if (outcome.type === "failed") return { error: outcome.error, maxBackoffMs: outcome.maxBackoffMs, also };
    if (outcome.requeueAfterMs === undefined) return { also };
    const priority = outcome.routine === true ? { priority: LOW_PRIORITY } : {};
    return { requeueAfterMs: outcome.requeueAfterMs, also, ...priority };
  }

  /**
   * The status a pass wrote was refused as invalid: a minimal one says why (the status the object
   * had, Synced=False reason StatusRefused), with a Warning, and the object is retried after its
   * backoff, never longer than its resync: it does not freeze on a status it cannot store.
   */
  async #statusRefused(report: ReconcileReport, refusal: StatusRefusedError): Promise<Result<ObjectRef>> {
    const { ref } = report;
    const status = statusAfterRefusal(report.object, refusal.message, new Date(this.#clock.now()));
    const message = findCondition(status.conditions, "Synced")?.message ?? refusal.message;
    this.#logger.warn(
      { ...ref, err: refusal.message },
      "status refused by the API server; wrote a minimal one",
    );
    if (report.object !== undefined) this.#source.events.warning(report.object, "StatusRefused", message);
    await this.#source.writeStatus(ref, status);
    const { outcome } = report;
    const maxBackoffMs = outcome.type === "failed" ? outcome.maxBackoffMs : outcome.requeueAfterMs;
    const error = new ReconcileError({ reason: "StatusRefused", message, cause: refusal });
    return { error, ...(maxBackoffMs !== undefined ? { maxBackoffMs } : {}) };
  }
}
