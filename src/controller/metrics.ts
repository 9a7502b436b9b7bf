/**
 * The controller machinery's Prometheus metrics, under controller-runtime's names (so existing
 * dashboards work): the work queue, the reconciles and leader election. Callers see
 * `RuntimeMetrics`, a set of methods; only this module and the operator's own metrics touch
 * prom-client. `nopMetrics` is the default everywhere, so tests never need a registry.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export type ReconcileResultLabel = "success" | "error" | "requeue_after";

/** What a work queue reports; one per queue name. */
export interface QueueMetrics {
  /** a key became dirty (duplicate adds are not counted) */
  added(): void;
  /** keys waiting to be handed out */
  depth(keys: number): void;
  /** from add to `get` */
  queueDuration(seconds: number): void;
  /** from `get` to `done` */
  workDuration(seconds: number): void;
  /** a rate-limited re-add */
  retried(): void;
}

/** What a controller reports; one per controller name. */
export interface ControllerMetrics {
  reconciled(result: ReconcileResultLabel, seconds: number): void;
  reconcileError(): void;
}

/** The metrics of the queue, the controller and leader election. */
export interface RuntimeMetrics {
  queue(name: string): QueueMetrics;
  controller(name: string): ControllerMetrics;
  /** leader_election_master_status{name}: 1 while this replica holds the lease */
  leaderStatus(name: string, leading: boolean): void;
}

const nopQueue: QueueMetrics = {
  added: () => {},
  depth: () => {},
  queueDuration: () => {},
  workDuration: () => {},
  retried: () => {},
};

const nopController: ControllerMetrics = { reconciled: () => {}, reconcileError: () => {} };

export const nopMetrics: RuntimeMetrics = {
  queue: () => nopQueue,
  controller: () => nopController,
  leaderStatus: () => {},
};

/** controller-runtime's reconcile_time_seconds buckets */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue buckets: 1e-8 s to 1e3 s by powers of ten */
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

const RESULTS: readonly ReconcileResultLabel[] = ["success", "error", "requeue_after"];

/** The collectors of the reconciles, per controller. */
function controllerCollectors(registers: Registry[]) {
  return {
    total: new Counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller",
      labelNames: ["controller", "result"] as const,
      registers,
    }),
    errors: new Counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames: ["controller"] as const,
      registers,
    }),
    time: new Histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames: ["controller"] as const,
      buckets: RECONCILE_BUCKETS,
      registers,
    }),
  };
}

/** The collectors of the work queues, per queue. */
function queueCollectors(registers: Registry[]) {
  const labelNames = ["controller", "name"] as const;
  const histogram = (name: string, help: string) =>
    new Histogram({ name, help, labelNames, buckets: QUEUE_BUCKETS, registers });
  return {
    depth: new Gauge({ name: "workqueue_depth", help: "Current depth of workqueue", labelNames, registers }),
    adds: new Counter({
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
      labelNames,
      registers,
    }),
    queueDuration: histogram(
      "workqueue_queue_duration_seconds",
      "How long in seconds an item stays in workqueue before being requested",
    ),
    workDuration: histogram(
      "workqueue_work_duration_seconds",
      "How long in seconds processing an item from workqueue takes",
    ),
    retries: new Counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames,
      registers,
    }),
  };
}

/** Registers the runtime metrics in `registry` and returns their facade. */
export function registerRuntimeMetrics(registry: Registry): RuntimeMetrics {
  const registers = [registry];
  const reconciles = controllerCollectors(registers);
  const queues = queueCollectors(registers);
  const leader = new Gauge({
    name: "leader_election_master_status",
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
    labelNames: ["name"] as const,
    registers,
  });
  return {
    queue: (name) => {
      const labels = { controller: name, name };
      return {
        added: () => queues.adds.inc(labels),
        depth: (keys) => queues.depth.set(labels, keys),
        queueDuration: (seconds) => queues.queueDuration.observe(labels, seconds),
        workDuration: (seconds) => queues.workDuration.observe(labels, seconds),
        retried: () => queues.retries.inc(labels),
      };
    },
    controller: (controller) => {
      // controller-runtime initialises every result series to 0 so rate() works from the start
      for (const result of RESULTS) reconciles.total.inc({ controller, result }, 0);
      reconciles.errors.inc({ controller }, 0);
      return {
        reconciled: (result, seconds) => {
          reconciles.total.inc({ controller, result });
          reconciles.time.observe({ controller }, seconds);
        },
        reconcileError: () => reconciles.errors.inc({ controller }),
      };
    },
    leaderStatus: (name, leading) => leader.set({ name }, leading ? 1 : 0),
  };
}
