/**
 * The controller: workers that take keys from a work queue, call `reconcile(key, signal)`, and
 * map the outcome back to the queue in one place (`settle`). Reconcilers never touch the queue;
 * they return a `Result` or throw, and a `TerminalError` means "do not retry until the object
 * changes" (a new add from the source). Also home of the `Logger` shape the controller parts use.
 */
import type { Clock, Timer } from "../util/clock.ts";
import { realClock } from "../util/clock.ts";
import type { ControllerMetrics, OperatorMetrics, ReconcileResultLabel } from "./metrics.ts";
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

/** What a reconcile asks of the queue when it did not throw. */
export interface Result {
  /** come back after this long (drift resync, a wait the reconciler knows about); wins over `requeue` */
  requeueAfterMs?: number;
  /** come back after the key's backoff delay, without counting as an error (e.g. a 409 on a status write) */
  requeue?: boolean;
}

export type Reconciler = (key: string, signal: AbortSignal) => Promise<Result>;

/** Bad input that only a change of the object can fix: not retried until the object changes. */
export class TerminalError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** true when the error, or an error in its `cause` chain, is a TerminalError */
export function isTerminalError(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof TerminalError) return true;
  }
  return false;
}

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
  metrics?: OperatorMetrics;
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
      const fields = { controller: this.name, key, err: outcome.error };
      if (isTerminalError(outcome.error)) {
        q.forget(key);
        this.#logger.warn(fields, "reconcile failed; not retrying until the object changes");
      } else {
        q.addRateLimited(key);
        this.#logger.error({ ...fields, requeues: q.numRequeues(key) }, "reconcile failed; retrying");
      }
      return "error";
    }
    const { requeueAfterMs, requeue } = outcome.result;
    if (requeueAfterMs !== undefined && requeueAfterMs > 0) {
      q.forget(key);
      q.addAfter(key, requeueAfterMs);
      return "requeue_after";
    }
    if (requeue === true) {
      q.addRateLimited(key);
      return "requeue";
    }
    q.forget(key);
    return "success";
  }
}
