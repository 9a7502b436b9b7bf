/**
 * The controller: it takes every item the work queue hands out (the queue decides how many are out
 * at once, and which goes next: workqueue.ts), calls `reconcile(item, signal)` for each, and maps
 * the outcome back to the queue in one place (`settle`). Reconcilers never touch the queue:
 * they return a `Result` (come back after N ms, or only when the object changes; a failure, with
 * the longest its retry may wait; other items the outcome says need a pass now) or throw; what fails says whether retrying can help
 * (`terminal`) and whether it is worth a log line at error level (`quiet`). What sources say
 * needs a pass comes in through `enqueue`. Also home of the `Logger` shape the controller parts use.
 */
import type { Clock, Timer } from "../util/clock.ts";
import { realClock } from "../util/clock.ts";
import type { ControllerMetrics, ReconcileResultLabel, RuntimeMetrics } from "./metrics.ts";
import { nopMetrics } from "./metrics.ts";
import type { AddOptions, WorkQueue } from "./workqueue.ts";
import { withDefaults } from "../util/options.ts";

/** The part of pino's logger the controller uses; a pino Logger fits as is. */
export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export const nopLogger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** What a reconcile returns when it did not throw. */
export interface Result<T = string> {
  /**
   * come back after this long (drift resync, a wait the reconciler knows about), 0 = as soon as
   * this pass is done; absent: only when the object changes. Ignored when `error` is set.
   */
  requeueAfterMs?: number;
  /** the pass failed: retried after the item's backoff unless terminal (see FailureTraits) */
  error?: unknown;
  /**
   * with `error`: the longest the retry may wait, whatever the backoff has grown to (the object's
   * resync interval: a failing object is never left alone longer than a healthy one)
   */
  maxBackoffMs?: number;
  /** other items this outcome says need a pass now (a manager to check after its dependent was refused), as events */
  also?: readonly T[];
  /**
   * the priority of this item's requeue or retry (AddOptions); default 0, an event's. Routine
   * come-backs (a resync, a safety net's read) take LOW_PRIORITY, so they wait behind events.
   */
  priority?: number;
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

export type Reconciler<T = string> = (item: T, signal: AbortSignal) => Promise<Result<T>>;

export interface ControllerOptions<T = string> {
  /** label of the metrics and logs */
  name: string;
  queue: WorkQueue<T>;
  reconcile: Reconciler<T>;
  /** the fields that name an item in log lines; default `{ key: String(item) }` */
  describe?: (item: T) => Record<string, unknown>;
  /** after abort, how long in-flight reconciles may take before their signal fires; default 30000 */
  shutdownTimeoutMs?: number;
  clock?: Clock;
  metrics?: RuntimeMetrics;
  logger?: Logger;
}

export const CONTROLLER_DEFAULTS = { shutdownTimeoutMs: 30_000 } as const;

type Outcome<T> = { thrown: unknown } | { result: Result<T> };

export class Controller<T = string> {
  readonly name: string;
  readonly #queue: WorkQueue<T>;
  readonly #reconcile: Reconciler<T>;
  readonly #describe: (item: T) => Record<string, unknown>;
  readonly #shutdownTimeoutMs: number;
  readonly #clock: Clock;
  readonly #metrics: ControllerMetrics;
  readonly #logger: Logger;
  readonly #inFlight = new Set<T>();

  constructor(options: ControllerOptions<T>) {
    this.name = options.name;
    this.#queue = options.queue;
    this.#reconcile = options.reconcile;
    this.#describe = options.describe ?? ((item) => ({ key: String(item) }));
    const o = withDefaults(CONTROLLER_DEFAULTS, options);
    this.#shutdownTimeoutMs = o.shutdownTimeoutMs;
    this.#clock = options.clock ?? realClock;
    this.#metrics = (options.metrics ?? nopMetrics).controller(options.name);
    this.#logger = options.logger ?? nopLogger;
  }

  /**
   * Reconciles what the queue hands out until `signal` aborts, then shuts the queue down (no new
   * work) and resolves once the in-flight reconciles finish, or when `shutdownTimeoutMs` passes:
   * their signal fires then and the controller stops waiting for them. Also resolves if the queue
   * is shut down.
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
    // taking starts after the abort check: an aborted start must not hand out a single key
    await Promise.race([this.#work(deadline.signal), deadlinePassed]);
    signal.removeEventListener("abort", onAbort);
    timer?.cancel();
    if (this.#inFlight.size > 0) {
      this.#logger.warn(
        { controller: this.name, keys: [...this.#inFlight] },
        "shutdown deadline passed with reconciles still running",
      );
    }
  }

  /** items being reconciled right now */
  get inFlight(): readonly T[] {
    return [...this.#inFlight];
  }

  /**
   * Items a source says need a pass: the one way into the queue besides an outcome. Events at the
   * default priority; what every item gets at a start, at LOW_PRIORITY.
   */
  enqueue(items: Iterable<T>, options: AddOptions = {}): void {
    for (const item of items) this.#queue.add(item, options);
  }

  /** Every item the queue hands out, each reconciled at once; resolves when the queue is done and they finished. */
  async #work(signal: AbortSignal): Promise<void> {
    const running = new Set<Promise<void>>();
    for (;;) {
      const item = await this.#queue.get();
      if (item === undefined) break;
      const processing = this.#process(item, signal)
        .catch((err: unknown) =>
          this.#logger.error({ controller: this.name, err }, "settling a reconcile failed"),
        )
        .finally(() => running.delete(processing));
      running.add(processing);
    }
    await Promise.all(running);
  }

  async #process(item: T, signal: AbortSignal): Promise<void> {
    const startedMs = this.#clock.now();
    this.#inFlight.add(item);
    let outcome: Outcome<T>;
    try {
      outcome = { result: (await this.#reconcile(item, signal)) ?? {} };
    } catch (thrown) {
      outcome = { thrown };
    }
    this.#inFlight.delete(item);
    let label: ReconcileResultLabel;
    try {
      label = this.#settle(item, outcome);
    } finally {
      this.#queue.done(item);
    }
    this.#metrics.reconciled(label, (this.#clock.now() - startedMs) / 1000);
  }

  /** The one place a reconcile's outcome becomes queue actions and a result label. */
  #settle(item: T, outcome: Outcome<T>): ReconcileResultLabel {
    const q = this.#queue;
    const result: Result<T> = "thrown" in outcome ? { error: outcome.thrown } : outcome.result;
    for (const other of result.also ?? []) q.add(other);
    if (result.error !== undefined) {
      this.#metrics.reconcileError();
      const { error } = result;
      const traits: FailureTraits = typeof error === "object" && error !== null ? error : {};
      if (traits.terminal === true) q.forget(item);
      else q.addRateLimited(item, { maxDelayMs: result.maxBackoffMs, priority: result.priority });
      this.#logFailure(item, error, traits);
      return "error";
    }
    const { requeueAfterMs } = result;
    q.forget(item);
    if (requeueAfterMs !== undefined && requeueAfterMs >= 0) {
      q.addAfter(item, requeueAfterMs, { priority: result.priority });
      return "requeue_after";
    }
    return "success";
  }

  /** One line: what failed and why; the stack only at debug, where a person debugging looks. */
  #logFailure(item: T, error: unknown, traits: FailureTraits): void {
    const fields = {
      controller: this.name,
      ...this.#describe(item),
      reason: traits.reason,
      error: error instanceof Error ? error.message : String(error),
      requeues: this.#queue.numRequeues(item),
    };
    if (traits.quiet === true) this.#logger.debug(fields, "reconcile deferred; retrying");
    else if (traits.terminal === true)
      this.#logger.warn(fields, "reconcile failed; not retrying until the object changes");
    else this.#logger.error(fields, "reconcile failed; retrying");
    if (error instanceof Error)
      this.#logger.debug({ controller: this.name, ...this.#describe(item), err: error }, "failure detail");
  }
}
