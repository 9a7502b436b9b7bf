/**
 * The work queue, with controller-runtime's semantics. It holds items (a reference to an object,
 * never the object) compared by their key (`keyOf`), and knows nothing of reconcilers:
 * - an item added twice before it is handed out is handed out once (the `dirty` set);
 * - an item is never handed to two workers at once (the `processing` set);
 * - an item added while it is processed is handed out again after `done`.
 * Delayed adds keep the soonest time per item; rate-limited adds back off per item.
 */
import type { Clock, Timer } from "../util/clock.ts";
import { realClock } from "../util/clock.ts";
import type { QueueMetrics, RuntimeMetrics } from "./metrics.ts";
import { nopMetrics } from "./metrics.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import { ExponentialBackoff } from "./rate-limiter.ts";

export interface WorkQueueOptions<T> {
  /** label of the queue's metrics; the controller's name */
  name: string;
  /** what makes two items the same item; default String(item) */
  keyOf?: (item: T) => string;
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

export class WorkQueue<T = string> {
  readonly name: string;
  readonly #keyOf: (item: T) => string;
  /** the item of every key the queue knows: waiting, delayed or being processed */
  readonly #items = new Map<string, T>();
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
  #waiters: ((item: T | undefined) => void)[] = [];
  #idleWaiters: (() => void)[] = [];
  #shuttingDown = false;

  constructor(options: WorkQueueOptions<T>) {
    this.name = options.name;
    this.#keyOf = options.keyOf ?? String;
    this.#clock = options.clock ?? realClock;
    this.#limiter = options.rateLimiter ?? new ExponentialBackoff();
    this.#metrics = (options.metrics ?? nopMetrics).queue(options.name);
  }

  /** Marks the item for processing; a no-op when it is already waiting or after shutdown. */
  add(item: T): void {
    const key = this.#keyOf(item);
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#items.set(key, item);
    this.#dirty.add(key);
    this.#addedAtMs.set(key, this.#clock.now());
    this.#metrics.added();
    if (!this.#processing.has(key)) this.#enqueue(key);
  }

  /**
   * Adds the item after `delayMs`. When it already has a pending delayed add, the sooner of the
   * two wins (a resync timer never postpones an earlier retry, nor the other way round).
   */
  addAfter(item: T, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) {
      this.add(item);
      return;
    }
    const key = this.#keyOf(item);
    const dueMs = this.#clock.now() + delayMs;
    const pending = this.#delayed.get(key);
    if (pending !== undefined) {
      if (pending.dueMs <= dueMs) return;
      pending.timer.cancel();
    }
    this.#items.set(key, item);
    const timer = this.#clock.setTimer(delayMs, () => {
      this.#delayed.delete(key);
      this.add(item);
    });
    this.#delayed.set(key, { dueMs, timer });
  }

  /** Adds the item after its backoff delay, and counts one more failure for it. */
  addRateLimited(item: T): void {
    if (this.#shuttingDown) return;
    this.#metrics.retried();
    this.addAfter(item, this.#limiter.when(this.#keyOf(item)));
  }

  /** Resets the item's backoff (it succeeded, or will not be retried). */
  forget(item: T): void {
    this.#limiter.forget(this.#keyOf(item));
  }

  numRequeues(item: T): number {
    return this.#limiter.numRequeues(this.#keyOf(item));
  }

  /** keys waiting to be handed out (not those being processed, nor delayed adds) */
  len(): number {
    return this.#queue.size;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * The next item, once one is ready; the caller must call `done(item)` when finished with it.
   * Resolves undefined once the queue is shut down (and, when draining, empty).
   */
  get(): Promise<T | undefined> {
    const next = this.#queue.values().next();
    if (next.done !== true) {
      this.#queue.delete(next.value);
      this.#metrics.depth(this.#queue.size);
      return Promise.resolve(this.#handOut(next.value));
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** The worker finished the item; a re-add that happened meanwhile queues it again. */
  done(item: T): void {
    const key = this.#keyOf(item);
    if (!this.#processing.delete(key)) return;
    const startedAtMs = this.#startedAtMs.get(key);
    this.#startedAtMs.delete(key);
    if (startedAtMs !== undefined) this.#metrics.workDuration((this.#clock.now() - startedAtMs) / 1000);
    if (this.#dirty.has(key)) this.#enqueue(key);
    else if (!this.#delayed.has(key)) this.#items.delete(key);
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
      for (const key of this.#items.keys()) if (!this.#processing.has(key)) this.#items.delete(key);
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

  #handOut(key: string): T {
    const nowMs = this.#clock.now();
    this.#dirty.delete(key);
    this.#processing.add(key);
    this.#startedAtMs.set(key, nowMs);
    const addedAtMs = this.#addedAtMs.get(key);
    this.#addedAtMs.delete(key);
    if (addedAtMs !== undefined) this.#metrics.queueDuration((nowMs - addedAtMs) / 1000);
    return this.#items.get(key) as T;
  }

  #checkIdle(): void {
    if (!this.#shuttingDown || this.#queue.size > 0 || this.#processing.size > 0) return;
    const idle = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of idle) resolve();
  }
}
