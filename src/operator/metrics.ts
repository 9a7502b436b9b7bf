/**
 * The operator's Prometheus metrics: the runtime's (controller/metrics.ts) plus the calls to NSX
 * managers and what the reconciles reported: the changes of each change list the kinds declare (a
 * counter each: tenant corrections, releases), drift found, and each pool's
 * usage and strays. The operator only forwards what a report says; nothing here decides.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { nopMetrics, registerRuntimeMetrics, type RuntimeMetrics } from "../controller/metrics.ts";
import type { RequestEvent } from "../nsx/client.ts";
import { EFFECTS, type EffectRegistry } from "../reconcile/index.ts";

export interface PoolLabels {
  namespace: string;
  name: string;
  pool: string;
}

/** The last observation of a pool, as its gauges show it. */
export interface PoolGauges {
  /** used addresses over total addresses */
  usedRatio: number;
  /** allocated addresses that spec.allowed does not allow */
  strays: number;
}

export interface OperatorMetrics extends RuntimeMetrics {
  /** `manager` names the NSXManager object (namespace/name) */
  managerRequest(
    manager: string,
    request: Pick<RequestEvent, "method" | "route" | "status" | "durationMs">,
  ): void;
  /**
   * `count` changes of a change list made on the manager (`tenantCorrections`, `releases`: the
   * kinds declare the lists and their counters, reconcile/actions.ts)
   */
  changed(list: string, count: number): void;
  driftDetected(kind: string): void;
  pool(labels: PoolLabels, gauges: PoolGauges): void;
  /** drops the pool's series, when its object is deleted or selects another pool */
  forgetPool(labels: PoolLabels): void;
}

export const nopOperatorMetrics: OperatorMetrics = {
  ...nopMetrics,
  managerRequest: () => {},
  changed: () => {},
  driftDetected: () => {},
  pool: () => {},
  forgetPool: () => {},
};

export interface MetricsOptions {
  /** register into this registry; default a new one */
  registry?: Registry;
  /** also collect Node's process_* and nodejs_* metrics; default true */
  processMetrics?: boolean;
  /** the change lists whose counters to register (a counter per list); default the built-in EFFECTS */
  effects?: EffectRegistry;
}

export interface OperatorMetricsBundle {
  registry: Registry;
  metrics: OperatorMetrics;
}

const MANAGER_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * prom-client's process and Node.js metrics, except its three gauges named `*_total`
 * (nodejs_active_handles_total, _requests_total, _resources_total), which Prometheus' naming
 * rules (`promtool check metrics`) reserve for counters; `nodejs_active_handles`,
 * `nodejs_active_requests` and `nodejs_active_resources` carry the same counts by type.
 */
function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of [
    "nodejs_active_handles_total",
    "nodejs_active_requests_total",
    "nodejs_active_resources_total",
  ])
    registry.removeSingleMetric(name);
}

/** Registers every metric of the operator and returns the registry with the typed facade. */
export function createOperatorMetrics(options: MetricsOptions = {}): OperatorMetricsBundle {
  const registry = options.registry ?? new Registry();
  if (options.processMetrics ?? true) collectProcessMetrics(registry);
  const registers = [registry];
  const poolLabels = ["namespace", "name", "pool"] as const;
  const managerRequests = new Counter({
    name: "nsxv_manager_requests_total",
    help: "Requests sent to NSX managers, by manager object, method, call name (getEdge, listPools, ...) and HTTP status",
    labelNames: ["manager", "method", "route", "status"] as const,
    registers,
  });
  const managerDuration = new Histogram({
    name: "nsxv_manager_request_duration_seconds",
    help: "Duration of requests to NSX managers, by manager object, method and call name (getEdge, listPools, ...)",
    labelNames: ["manager", "method", "route"] as const,
    buckets: MANAGER_BUCKETS,
    registers,
  });
  const changeCounters = new Map(
    Object.entries((options.effects ?? EFFECTS).changeLists).map(([list, { metric }]) => [
      list,
      new Counter({ name: metric.name, help: metric.help, registers }),
    ]),
  );
  const drift = new Counter({
    name: "nsxv_drift_detected_total",
    help: "Differences found between the declared and the observed state, by kind",
    labelNames: ["kind"] as const,
    registers,
  });
  const poolUsed = new Gauge({
    name: "nsxv_pool_used_ratio",
    help: "Used addresses over total addresses of an IP pool, from its last observation",
    labelNames: poolLabels,
    registers,
  });
  const poolStrays = new Gauge({
    name: "nsxv_pool_stray_addresses",
    help: "Allocated addresses of an IP pool that its IPPoolAllocations object does not allow, from its last observation",
    labelNames: poolLabels,
    registers,
  });
  const metrics: OperatorMetrics = {
    ...registerRuntimeMetrics(registry),
    managerRequest: (manager, r) => {
      managerRequests.inc({ manager, method: r.method, route: r.route, status: String(r.status) });
      managerDuration.observe({ manager, method: r.method, route: r.route }, r.durationMs / 1000);
    },
    changed: (list, count) => {
      const counter = changeCounters.get(list);
      if (counter === undefined) throw new Error(`no counter is registered for the change list ${list}`);
      counter.inc(count);
    },
    driftDetected: (kind) => drift.inc({ kind }),
    pool: (labels, gauges) => {
      poolUsed.set({ ...labels }, gauges.usedRatio);
      poolStrays.set({ ...labels }, gauges.strays);
    },
    forgetPool: (labels) => {
      poolUsed.remove({ ...labels });
      poolStrays.remove({ ...labels });
    },
  };
  return { registry, metrics };
}
