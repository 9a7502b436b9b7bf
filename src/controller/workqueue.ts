/**
 * The work queue, with controller-runtime's semantics. It holds keys (`namespace/name`, maybe
 * prefixed by a kind), never objects, and knows nothing of reconcilers:
 * - a key added twice before it is handed out is handed out once (the `dirty` set);
 * - a key is never handed to two workers at once (the `processing` set);
 * - a key added while it is processed is handed out again after `done`.
 * Delayed adds keep the soonest time per key; rate-limited adds back off per key.
 */
import type { Clock, Timer } from "../util/clock.ts";
import { realClock } from "../util/clock.ts";
import type { QueueMetrics, RuntimeMetrics } from "./metrics.ts";
import { nopMetrics } from "./metrics.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import { ExponentialBackoff } from "./rate-limiter.ts";

export interface WorkQueueOptions {
  /** label of the queue's metrics; the controller's name */
  name: string;
  /** default realClock */
  clock?: Clock;
  /** default ExponentialBackoff with its defaults (1 s doubling to 60 s) */
  rateLimiter?: RateLimiter;
  /** default nopMetrics */
  metrics?: RuntimeMetrics;
}

export interface ShutDownOptions {
  /**
   * false (default): waiting and queued keys are dropped, `get` returns undefined at once.
   * true: keys already queued are still handed out; the returned promise resolves when the
   * queue is empty and every handed-out key is done.
   */
  drain?: boolean;
}

export class WorkQueue {
  readonly name: string;
  readonly #clock: Clock;
  readonly #limiter: RateLimiter;
  readonly #metrics: QueueMetrics;

  /** keys ready to hand out, in insertion order (a Set is an ordered FIFO without duplicates) */
  readonly #queue = new Set<string>();
  /** keys that need processing: queued, or re-added while processing */
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #addedAtMs = new Map<string, number>();
  readonly #startedAtMs = new Map<string, number>();
  readonly #delayed = new Map<string, { dueMs: number; timer: Timer }>();
  #waiters: ((key: string | undefined) => void)[] = [];
  #idleWaiters: (() => void)[] = [];
  #shuttingDown = false;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.#clock = options.clock ?? realClock;
    this.#limiter = options.rateLimiter ?? new ExponentialBackoff();
    this.#metrics = (options.metrics ?? nopMetrics).queue(options.name);
  }

  /** Marks the key for processing; a no-op when it is already waiting or after shutdown. */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    this.#addedAtMs.set(key, this.#clock.now());
    this.#metrics.added();
    if (!this.#processing.has(key)) this.#enqueue(key);
  }

  /**
   * Adds the key after `delayMs`. When the key already has a pending delayed add, the sooner of
   * the two wins (a resync timer never postpones an earlier retry, nor the other way round).
   */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const dueMs = this.#clock.now() + delayMs;
    const pending = this.#delayed.get(key);
    if (pending !== undefined) {
      if (pending.dueMs <= dueMs) return;
      pending.timer.cancel();
    }
    const timer = this.#clock.setTimer(delayMs, () => {
      this.#delayed.delete(key);
      this.add(key);
    });
    this.#delayed.set(key, { dueMs, timer });
  }

  /** Adds the key after its backoff delay, and counts one more failure for it. */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) return;
    this.#metrics.retried();
    this.addAfter(key, this.#limiter.when(key));
  }

  /** Resets the key's backoff (the key succeeded, or will not be retried). */
  forget(key: string): void {
    this.#limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.#limiter.numRequeues(key);
  }

  /** keys waiting to be handed out (not those being processed, nor delayed adds) */
  len(): number {
    return this.#queue.size;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * The next key, once one is ready; the caller must call `done(key)` when finished with it.
   * Resolves undefined once the queue is shut down (and, when draining, empty).
   */
  get(): Promise<string | undefined> {
    const next = this.#queue.values().next();
    if (next.done !== true) {
      this.#queue.delete(next.value);
      this.#metrics.depth(this.#queue.size);
      return Promise.resolve(this.#handOut(next.value));
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** The worker finished the key; a re-add that happened meanwhile queues it again. */
  done(key: string): void {
    if (!this.#processing.delete(key)) return;
    const startedAtMs = this.#startedAtMs.get(key);
    this.#startedAtMs.delete(key);
    if (startedAtMs !== undefined) this.#metrics.workDuration((this.#clock.now() - startedAtMs) / 1000);
    if (this.#dirty.has(key)) this.#enqueue(key);
    this.#checkIdle();
  }

  /** Stops taking keys; delayed adds are cancelled. See ShutDownOptions for `drain`. */
  shutDown(options: ShutDownOptions = {}): Promise<void> {
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) timer.cancel();
    this.#delayed.clear();
    if (options.drain !== true) {
      this.#queue.clear();
      this.#dirty.clear();
      this.#addedAtMs.clear();
      this.#metrics.depth(0);
    }
    // waiters exist only while the queue is empty: none of them will get a key now
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve(undefined);
    if (options.drain !== true) return Promise.resolve();
    const idle = new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    this.#checkIdle();
    return idle;
  }

  #enqueue(key: string): void {
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      waiter(this.#handOut(key));
      return;
    }
    this.#queue.add(key);
    this.#metrics.depth(this.#queue.size);
  }

  #handOut(key: string): string {
    const nowMs = this.#clock.now();
    this.#dirty.delete(key);
    this.#processing.add(key);
    this.#startedAtMs.set(key, nowMs);
    const addedAtMs = this.#addedAtMs.get(key);
    this.#addedAtMs.delete(key);
    if (addedAtMs !== undefined) this.#metrics.queueDuration((nowMs - addedAtMs) / 1000);
    return key;
  }

  #checkIdle(): void {
    if (!this.#shuttingDown || this.#queue.size > 0 || this.#processing.size > 0) return;
    const idle = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of idle) resolve();
  }
}
