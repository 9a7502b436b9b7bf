/**
 * The controller: workers that take keys from a work queue, call `reconcile(key, signal)`, and
 * map the outcome back to the queue in one place (`settle`). Reconcilers never touch the queue:
 * they return a `Result` (come back after N ms, or only when the object changes) or throw; what
 * they throw says whether retrying can help (`terminal`) and whether it is worth a log line at
 * error level (`quiet`). Also home of the `Logger` shape the controller parts use.
 */
import type { Clock, Timer } from "../util/clock.ts";
import { realClock } from "../util/clock.ts";
import type { ControllerMetrics, ReconcileResultLabel, RuntimeMetrics } from "./metrics.ts";
import { nopMetrics } from "./metrics.ts";
import type { WorkQueue } from "./workqueue.ts";

/** The part of pino's logger the controller uses; a pino Logger fits as is. */
export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export const nopLogger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** What a reconcile returns when it did not throw. */
export interface Result {
  /**
   * come back after this long (drift resync, a wait the reconciler knows about), 0 = as soon as
   * this pass is done; absent: only when the object changes
   */
  requeueAfterMs?: number;
}

/**
 * How the controller reads what a reconcile throws. `terminal`: only a change of the object can
 * fix it, so it is not retried until the object changes (a new add from the source). `quiet`: an
 * expected race (a status write that lost to another writer), retried after the key's backoff
 * and logged at debug. Anything else is retried after the key's backoff and logged as an error.
 */
export interface FailureTraits {
  readonly terminal?: boolean;
  readonly quiet?: boolean;
  /** a short, stable name of what went wrong for the log line (a reason or a code) */
  readonly reason?: string;
}

export type Reconciler = (key: string, signal: AbortSignal) => Promise<Result>;

export interface ControllerOptions {
  /** label of the metrics and logs */
  name: string;
  queue: WorkQueue;
  reconcile: Reconciler;
  /** workers, that is reconciles at once; default 4 */
  concurrency?: number;
  /** after abort, how long in-flight reconciles may take before their signal fires; default 30000 */
  shutdownTimeoutMs?: number;
  clock?: Clock;
  metrics?: RuntimeMetrics;
  logger?: Logger;
}

export const CONTROLLER_DEFAULTS = { concurrency: 4, shutdownTimeoutMs: 30_000 } as const;

type Outcome = { error: unknown } | { result: Result };

export class Controller {
  readonly name: string;
  readonly #queue: WorkQueue;
  readonly #reconcile: Reconciler;
  readonly #concurrency: number;
  readonly #shutdownTimeoutMs: number;
  readonly #clock: Clock;
  readonly #metrics: ControllerMetrics;
  readonly #logger: Logger;
  readonly #inFlight = new Set<string>();

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.#queue = options.queue;
    this.#reconcile = options.reconcile;
    this.#concurrency = options.concurrency ?? CONTROLLER_DEFAULTS.concurrency;
    this.#shutdownTimeoutMs = options.shutdownTimeoutMs ?? CONTROLLER_DEFAULTS.shutdownTimeoutMs;
    this.#clock = options.clock ?? realClock;
    this.#metrics = (options.metrics ?? nopMetrics).controller(options.name);
    this.#logger = options.logger ?? nopLogger;
  }

  /**
   * Runs the workers until `signal` aborts, then shuts the queue down (no new work) and resolves
   * once the in-flight reconciles finish, or when `shutdownTimeoutMs` passes: their signal fires
   * then and the controller stops waiting for them. Also resolves if the queue is shut down.
   */
  async start(signal: AbortSignal): Promise<void> {
    const deadline = new AbortController();
    let timer: Timer | undefined;
    let onAbort = (): void => {};
    const deadlinePassed = new Promise<void>((resolve) => {
      onAbort = () => {
        void this.#queue.shutDown();
        timer = this.#clock.setTimer(this.#shutdownTimeoutMs, () => {
          deadline.abort(new DOMException("controller shutdown deadline passed", "TimeoutError"));
          resolve();
        });
      };
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    // workers start after the abort check: an aborted start must not hand out a single key
    const workers = Promise.all(Array.from({ length: this.#concurrency }, () => this.#work(deadline.signal)));
    await Promise.race([workers, deadlinePassed]);
    signal.removeEventListener("abort", onAbort);
    timer?.cancel();
    if (this.#inFlight.size > 0) {
      this.#logger.warn(
        { controller: this.name, keys: [...this.#inFlight] },
        "shutdown deadline passed with reconciles still running",
      );
    }
  }

  /** keys being reconciled right now */
  get inFlight(): readonly string[] {
    return [...this.#inFlight];
  }

  async #work(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.#queue.get();
      if (key === undefined) return;
      await this.#process(key, signal);
    }
  }

  async #process(key: string, signal: AbortSignal): Promise<void> {
    const startedMs = this.#clock.now();
    this.#inFlight.add(key);
    let outcome: Outcome;
    try {
      outcome = { result: (await this.#reconcile(key, signal)) ?? {} };
    } catch (error) {
      outcome = { error };
    }
    this.#inFlight.delete(key);
    let label: ReconcileResultLabel;
    try {
      label = this.#settle(key, outcome);
    } finally {
      this.#queue.done(key);
    }
    this.#metrics.reconciled(label, (this.#clock.now() - startedMs) / 1000);
  }

  /** The one place a reconcile's outcome becomes a queue action and a result label. */
  #settle(key: string, outcome: Outcome): ReconcileResultLabel {
    const q = this.#queue;
    if ("error" in outcome) {
      this.#metrics.reconcileError();
      const { error } = outcome;
      const traits: FailureTraits = typeof error === "object" && error !== null ? error : {};
      if (traits.terminal === true) q.forget(key);
      else q.addRateLimited(key);
      this.#logFailure(key, error, traits);
      return "error";
    }
    const { requeueAfterMs } = outcome.result;
    q.forget(key);
    if (requeueAfterMs !== undefined && requeueAfterMs >= 0) {
      q.addAfter(key, requeueAfterMs);
      return "requeue_after";
    }
    return "success";
  }

  /** One line: what failed and why; the stack only at debug, where a person debugging looks. */
  #logFailure(key: string, error: unknown, traits: FailureTraits): void {
    const fields = {
      controller: this.name,
      key,
      reason: traits.reason,
      error: error instanceof Error ? error.message : String(error),
      requeues: this.#queue.numRequeues(key),
    };
    if (traits.quiet === true) this.#logger.debug(fields, "reconcile deferred; retrying");
    else if (traits.terminal === true)
      this.#logger.warn(fields, "reconcile failed; not retrying until the object changes");
    else this.#logger.error(fields, "reconcile failed; retrying");
    if (error instanceof Error)
      this.#logger.debug({ controller: this.name, key, err: error }, "failure detail");
  }
}
