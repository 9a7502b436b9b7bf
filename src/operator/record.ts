/**
 * What the operator does with a report besides status and the queue: its events go to the
 * source's recorder, its changes, drift and pool usage to the metrics. Nothing is worked out
 * again here: every figure is the report's. The pool gauges' labels are remembered per object
 * so that a deleted object, or one that now selects another pool, drops its old series.
 */
import { objectKey } from "../api/refs.ts";
import type { EventRecorder } from "../controller/events.ts";
import type { ReconcileReport } from "../reconcile/report.ts";
import type { OperatorMetrics, PoolLabels } from "./metrics.ts";

export class ReportRecorder {
  readonly #events: EventRecorder;
  readonly #metrics: OperatorMetrics;
  /** pool gauge labels by object key */
  readonly #pools = new Map<string, PoolLabels>();

  constructor(events: EventRecorder, metrics: OperatorMetrics) {
    this.#events = events;
    this.#metrics = metrics;
  }

  record(report: ReconcileReport): void {
    const { object, changes } = report;
    if (object !== undefined) {
      for (const { type, reason, message } of report.events) {
        if (type === "Normal") this.#events.normal(object, reason, message);
        else this.#events.warning(object, reason, message);
      }
    }
    // each change list has its counter: what a change counts as is its action's effect, not known here
    for (const [list, records] of Object.entries(changes))
      if (records.length > 0) this.#metrics.changed(list, records.length);
    if (report.driftDetected) this.#metrics.driftDetected(report.ref.kind);
    this.#recordPool(report);
  }

  #recordPool(report: ReconcileReport): void {
    const { ref, pool } = report;
    if (ref.kind !== "IPPoolAllocations") return;
    const key = objectKey(ref);
    const previous = this.#pools.get(key);
    const gone = report.object === undefined;
    if (previous !== undefined && (gone || (pool !== undefined && previous.pool !== pool.poolId))) {
      this.#metrics.forgetPool(previous);
      this.#pools.delete(key);
    }
    if (gone || pool === undefined || pool.totalAddressCount <= 0) return;
    const labels = { namespace: ref.namespace, name: ref.name, pool: pool.poolId };
    this.#metrics.pool(labels, {
      usedRatio: pool.usedAddressCount / pool.totalAddressCount,
      strays: pool.strays,
    });
    this.#pools.set(key, labels);
  }
}
