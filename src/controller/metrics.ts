/**
 * The operator's Prometheus metrics: controller-runtime's names for the queue, the reconciles and
 * leader election (so existing dashboards work), plus the calls to NSX managers and what the
 * operator changed. Callers see `OperatorMetrics`, a set of methods; only this module touches
 * prom-client. `nopMetrics` is the default everywhere, so tests never need a registry.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { RouteName } from "../nsx/client-options.ts";

export type ReconcileResultLabel = "success" | "error" | "requeue" | "requeue_after";

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

/** One call to an NSX manager, as the manager client's `onRequest` hook reports it. */
export interface ManagerRequest {
  method: string;
  /** the call's name (`getEdge`, `listPools`, ...), never its path: bounded cardinality */
  route: RouteName;
  status: number | "error";
  durationMs: number;
}

export interface PoolLabels {
  namespace: string;
  name: string;
  pool: string;
}

export interface OperatorMetrics {
  queue(name: string): QueueMetrics;
  controller(name: string): ControllerMetrics;
  /** leader_election_master_status{name}: 1 while this replica holds the lease */
  leaderStatus(name: string, leading: boolean): void;
  /** `manager` names the NSXManager object (namespace/name) */
  managerRequest(manager: string, request: ManagerRequest): void;
  edgeTenantCorrected(): void;
  ipsReleased(count: number): void;
  driftDetected(kind: string): void;
  poolUsedRatio(labels: PoolLabels, ratio: number): void;
  /** drops the pool's series, when its object is deleted */
  forgetPool(labels: PoolLabels): void;
}

const nopQueue: QueueMetrics = {
  added: () => {},
  depth: () => {},
  queueDuration: () => {},
  workDuration: () => {},
  retried: () => {},
};

const nopController: ControllerMetrics = { reconciled: () => {}, reconcileError: () => {} };

export const nopMetrics: OperatorMetrics = {
  queue: () => nopQueue,
  controller: () => nopController,
  leaderStatus: () => {},
  managerRequest: () => {},
  edgeTenantCorrected: () => {},
  ipsReleased: () => {},
  driftDetected: () => {},
  poolUsedRatio: () => {},
  forgetPool: () => {},
};

/** controller-runtime's reconcile_time_seconds buckets */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue buckets: 1e-8 s to 1e3 s by powers of ten */
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));
const MANAGER_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface MetricsOptions {
  /** register into this registry; default a new one */
  registry?: Registry;
  /** also collect Node's process_* and nodejs_* metrics; default true */
  processMetrics?: boolean;
}

export interface OperatorMetricsBundle {
  registry: Registry;
  metrics: OperatorMetrics;
}

function defineMetrics(registry: Registry) {
  const registers = [registry];
  return {
    reconcileTotal: new Counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller",
      labelNames: ["controller", "result"] as const,
      registers,
    }),
    reconcileErrors: new Counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames: ["controller"] as const,
      registers,
    }),
    reconcileTime: new Histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames: ["controller"] as const,
      buckets: RECONCILE_BUCKETS,
      registers,
    }),
    depth: new Gauge({
      name: "workqueue_depth",
      help: "Current depth of workqueue",
      labelNames: ["controller", "name"] as const,
      registers,
    }),
    adds: new Counter({
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
      labelNames: ["controller", "name"] as const,
      registers,
    }),
    queueDuration: new Histogram({
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested",
      labelNames: ["controller", "name"] as const,
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    workDuration: new Histogram({
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes",
      labelNames: ["controller", "name"] as const,
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    retries: new Counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames: ["controller", "name"] as const,
      registers,
    }),
    leader: new Gauge({
      name: "leader_election_master_status",
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
      labelNames: ["name"] as const,
      registers,
    }),
    managerRequests: new Counter({
      name: "nsxv_manager_requests_total",
      help: "Requests sent to NSX managers, by manager object, method, call name (getEdge, listPools, ...) and HTTP status",
      labelNames: ["manager", "method", "route", "status"] as const,
      registers,
    }),
    managerDuration: new Histogram({
      name: "nsxv_manager_request_duration_seconds",
      help: "Duration of requests to NSX managers, by manager object, method and call name (getEdge, listPools, ...)",
      labelNames: ["manager", "method", "route"] as const,
      buckets: MANAGER_BUCKETS,
      registers,
    }),
    corrections: new Counter({
      name: "nsxv_edge_tenant_corrections_total",
      help: "Edge tenant values the operator wrote back to the declared value",
      registers,
    }),
    releases: new Counter({
      name: "nsxv_ip_releases_total",
      help: "Stray IP allocations the operator released",
      registers,
    }),
    drift: new Counter({
      name: "nsxv_drift_detected_total",
      help: "Differences found between the declared and the observed state, by kind",
      labelNames: ["kind"] as const,
      registers,
    }),
    poolUsed: new Gauge({
      name: "nsxv_pool_used_ratio",
      help: "Used addresses over total addresses of an IP pool, from its last observation",
      labelNames: ["namespace", "name", "pool"] as const,
      registers,
    }),
  };
}

type Defined = ReturnType<typeof defineMetrics>;

function queueMetrics(m: Defined, name: string): QueueMetrics {
  const labels = { controller: name, name };
  return {
    added: () => m.adds.inc(labels),
    depth: (keys) => m.depth.set(labels, keys),
    queueDuration: (seconds) => m.queueDuration.observe(labels, seconds),
    workDuration: (seconds) => m.workDuration.observe(labels, seconds),
    retried: () => m.retries.inc(labels),
  };
}

function controllerMetrics(m: Defined, controller: string): ControllerMetrics {
  // controller-runtime initialises every result series to 0 so rate() works from the start
  for (const result of ["success", "error", "requeue", "requeue_after"] as const) {
    m.reconcileTotal.inc({ controller, result }, 0);
  }
  m.reconcileErrors.inc({ controller }, 0);
  return {
    reconciled: (result, seconds) => {
      m.reconcileTotal.inc({ controller, result });
      m.reconcileTime.observe({ controller }, seconds);
    },
    reconcileError: () => m.reconcileErrors.inc({ controller }),
  };
}

/** Registers every metric of the operator and returns the registry with the typed facade. */
export function createOperatorMetrics(options: MetricsOptions = {}): OperatorMetricsBundle {
  const registry = options.registry ?? new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  const m = defineMetrics(registry);
  const metrics: OperatorMetrics = {
    queue: (name) => queueMetrics(m, name),
    controller: (name) => controllerMetrics(m, name),
    leaderStatus: (name, leading) => m.leader.set({ name }, leading ? 1 : 0),
    managerRequest: (manager, r) => {
      m.managerRequests.inc({ manager, method: r.method, route: r.route, status: String(r.status) });
      m.managerDuration.observe({ manager, method: r.method, route: r.route }, r.durationMs / 1000);
    },
    edgeTenantCorrected: () => m.corrections.inc(),
    ipsReleased: (count) => m.releases.inc(count),
    driftDetected: (kind) => m.drift.inc({ kind }),
    poolUsedRatio: (labels, ratio) => m.poolUsed.set({ ...labels }, ratio),
    forgetPool: (labels) => m.poolUsed.remove({ ...labels }),
  };
  return { registry, metrics };
}
