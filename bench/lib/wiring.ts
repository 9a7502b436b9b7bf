/**
 * The real Operator (src/controller/operator.ts) as the benchmarks drive it: a source, the
 * operator's WorkQueue + Controller + shared reconcile + status sink, with metrics that also
 * count what the benchmark needs (reconciles done, corrections, releases, request durations)
 * and a logger that keeps error messages. `runOperatorPass` starts an operator, which queues
 * every object of the source, waits until it has reconciled that many keys, and stops it.
 */
import type { Logger } from "../../src/controller/controller.ts";
import {
  createOperatorMetrics,
  type OperatorMetrics,
  type OperatorMetricsBundle,
} from "../../src/operator/metrics.ts";
import { Operator, type OperatorOptions } from "../../src/operator/operator.ts";

/** What one operator run saw, through its metrics and logs. */
export class OperatorProbe {
  reconciled = 0;
  reconcileErrors = 0;
  tenantCorrections = 0;
  releases = 0;
  requestDurationsMs: number[] = [];
  errors: string[] = [];
  readonly bundle: OperatorMetricsBundle;
  readonly logger: Logger;
  #waiters: { n: number; changes: number; resolve: () => void }[] = [];

  constructor() {
    const real = createOperatorMetrics({ processMetrics: false });
    const metrics: OperatorMetrics = {
      ...real.metrics,
      controller: (name) => {
        const inner = real.metrics.controller(name);
        return {
          reconciled: (result, seconds) => {
            inner.reconciled(result, seconds);
            this.reconciled++;
            this.#wake();
          },
          reconcileError: () => {
            inner.reconcileError();
            this.reconcileErrors++;
          },
        };
      },
      managerRequest: (manager, request) => {
        real.metrics.managerRequest(manager, request);
        this.requestDurationsMs.push(request.durationMs);
      },
      changed: (list, count) => {
        real.metrics.changed(list, count);
        if (list === "tenantCorrections") this.tenantCorrections += count;
        if (list === "releases") this.releases += count;
        this.#wake();
      },
    };
    this.bundle = { registry: real.registry, metrics };
    const keep = (fields: Record<string, unknown>, message: string): void => {
      const err = fields.err instanceof Error ? fields.err.message : fields.error;
      if (this.errors.length < 100)
        this.errors.push(typeof err === "string" ? `${message}: ${err}` : message);
    };
    this.logger = { debug: () => {}, info: () => {}, warn: keep, error: keep };
  }

  /**
   * resolves once `n` reconciles have finished in all and the operator made `changes` corrections
   * and releases (or at once if it has): a first correction takes two passes in `run` (the record
   * of the original, then the write), so a count of reconciles alone ends before the writes do
   */
  whenReconciled(n: number, changes = 0): Promise<void> {
    if (this.#done({ n, changes })) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ n, changes, resolve }));
  }

  #done(w: { n: number; changes: number }): boolean {
    return this.reconciled >= w.n && this.tenantCorrections + this.releases >= w.changes;
  }

  #wake(): void {
    const ready = this.#waiters.filter((w) => this.#done(w));
    this.#waiters = this.#waiters.filter((w) => !this.#done(w));
    for (const w of ready) w.resolve();
  }
}

export type BenchOperatorOptions = Pick<
  OperatorOptions,
  | "source"
  | "concurrency"
  | "concurrencyPerManager"
  | "clientOptions"
  | "reconciler"
  | "syncIntervalMs"
  | "fullReadIntervalMs"
>;

export interface RunningOperator {
  probe: OperatorProbe;
  /** aborts and waits for the operator to stop */
  stop(): Promise<void>;
}

/** Starts the real Operator with no HTTP endpoints and no leader election. */
export function startOperator(options: BenchOperatorOptions): RunningOperator {
  const probe = new OperatorProbe();
  const operator = new Operator({
    ...options,
    metrics: probe.bundle,
    logger: probe.logger,
    metricsBindAddress: "0",
    healthProbeBindAddress: "0",
  });
  const abort = new AbortController();
  const running = operator.start(abort.signal);
  return {
    probe,
    stop: async () => {
      abort.abort();
      await running;
    },
  };
}

export interface PassResult {
  elapsedMs: number;
  reconciled: number;
  errors: string[];
  tenantCorrections: number;
  releases: number;
  requestDurationsMs: number[];
  timedOut: boolean;
}

/** Starts an operator, waits until it has reconciled `objects` keys (or the time runs out), stops it. */
export async function runOperatorPass(
  options: BenchOperatorOptions & { objects: number; changes?: number; timeoutMs: number },
): Promise<PassResult> {
  const { objects, changes = 0, timeoutMs, ...operatorOptions } = options;
  const start = performance.now();
  const op = startOperator(operatorOptions);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    op.probe.whenReconciled(objects, changes).then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs))),
  ]);
  const elapsedMs = performance.now() - start;
  clearTimeout(timer);
  await op.stop();
  const { probe } = op;
  return {
    elapsedMs,
    reconciled: probe.reconciled,
    errors: probe.errors,
    tenantCorrections: probe.tenantCorrections,
    releases: probe.releases,
    requestDurationsMs: probe.requestDurationsMs,
    timedOut,
  };
}
