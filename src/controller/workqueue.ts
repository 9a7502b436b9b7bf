/**
 * The work queue, with controller-runtime's semantics. It holds items (a reference to an object,
 * never the object) compared by their key (`keyOf`), and knows nothing of reconcilers:
 * - an item added twice before it is handed out is handed out once (the `dirty` set);
 * - an item is never handed to two workers at once (the `processing` set);
 * - an item added while it is processed is handed out again after `done`.
 * Delayed adds keep the soonest time per item; rate-limited adds back off per item. It decides
 * how many items are out at once, and which goes next: at most `maxInFlight` in all, and,
 * optionally, a bulkhead: items belong to groups (`groupOf`), at most `maxInFlightPerGroup`
 * items of one group are out at once, and a group with none out may always have one, beyond
 * `maxInFlight`. `get` hands out the oldest waiting item whose group may have one more. So a
 * group whose items hang or crawl (a manager that never answers, or answers just under its
 * timeout) holds at most its share, and however many groups do, every other group still gets an
 * item out at once: the items out are at most maxInFlight plus one per group.
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
  /**
   * items handed out at once, at most (the workers), a positive integer; a group with none out
   * may have one beyond it; default Infinity
   */
  maxInFlight?: number;
  /** the group of an item, read when it is queued; default: every item in one group */
  groupOf?: (item: T) => string;
  /** items of one group handed out at once, at most; a positive integer; default Infinity */
  maxInFlightPerGroup?: number;
}

export interface ShutDownOptions {
  /**
   * false (default): waiting and queued keys are dropped, `get` returns undefined at once.
   * true: keys already queued are still handed out (each when its group is under its cap); the
   * returned promise resolves when the queue is empty and every handed-out key is done.
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

  readonly #groupOf: ((item: T) => string) | undefined;
  readonly #maxInFlight: number;
  readonly #maxInFlightPerGroup: number;
  /** items handed out and not done yet, in all */
  #inFlightCount = 0;

  /**
   * keys ready to hand out, per group, each in insertion order (a Set is an ordered FIFO without
   * duplicates); a group is present only while it has keys
   */
  readonly #ready = new Map<string, Set<string>>();
  #readyCount = 0;
  /** when each ready key was queued: the oldest head of the groups under their cap goes first */
  readonly #queuedSeq = new Map<string, number>();
  #seq = 0;
  /** the group of each key ready or being processed, as read when it was queued */
  readonly #groupOfKey = new Map<string, string>();
  /** keys being processed, per group (absent: none) */
  readonly #inFlight = new Map<string, number>();
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
    this.#groupOf = options.groupOf;
    this.#maxInFlight = positiveCap(options.name, "maxInFlight", options.maxInFlight);
    this.#maxInFlightPerGroup = positiveCap(options.name, "maxInFlightPerGroup", options.maxInFlightPerGroup);
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

  /**
   * Adds the item after its backoff delay, and counts one more failure for it. `maxDelayMs` caps
   * this one delay (an object that resyncs every 10 s waits no longer than that for a retry); the
   * failure still counts, so the backoff goes on from where it was.
   */
  addRateLimited(item: T, options: { maxDelayMs?: number | undefined } = {}): void {
    if (this.#shuttingDown) return;
    this.#metrics.retried();
    const delayMs = this.#limiter.when(this.#keyOf(item));
    const cap = options.maxDelayMs;
    this.addAfter(item, cap !== undefined && cap >= 0 ? Math.min(delayMs, cap) : delayMs);
  }

  /** Resets the item's backoff (it succeeded, or will not be retried). */
  forget(item: T): void {
    this.#limiter.forget(this.#keyOf(item));
  }

  numRequeues(item: T): number {
    return this.#limiter.numRequeues(this.#keyOf(item));
  }

  /** keys waiting to be handed out, held back by their group's cap included (not those being processed, nor delayed adds) */
  len(): number {
    return this.#readyCount;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * The next item, once one is ready (and its group under its cap); the caller must call
   * `done(item)` when finished with it. Resolves undefined once the queue is shut down (and,
   * when draining, empty).
   */
  get(): Promise<T | undefined> {
    const key = this.#takeNext();
    if (key !== undefined) return Promise.resolve(this.#handOut(key));
    if (this.#shuttingDown && this.#readyCount === 0) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** The worker finished the item; a re-add that happened meanwhile queues it again. */
  done(item: T): void {
    const key = this.#keyOf(item);
    if (!this.#processing.delete(key)) return;
    const startedAtMs = this.#startedAtMs.get(key);
    this.#startedAtMs.delete(key);
    if (startedAtMs !== undefined) this.#metrics.workDuration((this.#clock.now() - startedAtMs) / 1000);
    const group = this.#groupOfKey.get(key) ?? "";
    this.#groupOfKey.delete(key);
    this.#inFlightCount -= 1;
    const inFlight = (this.#inFlight.get(group) ?? 1) - 1;
    if (inFlight > 0) this.#inFlight.set(group, inFlight);
    else this.#inFlight.delete(group);
    if (this.#dirty.has(key)) this.#enqueue(key);
    else if (!this.#delayed.has(key)) this.#items.delete(key);
    // the group, and the queue, have room again: a waiting key may go to a waiting worker
    this.#dispatch();
    this.#checkIdle();
  }

  /** Stops taking keys; delayed adds are cancelled. See ShutDownOptions for `drain`. */
  shutDown(options: ShutDownOptions = {}): Promise<void> {
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) timer.cancel();
    this.#delayed.clear();
    if (options.drain !== true) {
      this.#ready.clear();
      this.#readyCount = 0;
      this.#queuedSeq.clear();
      this.#dirty.clear();
      this.#addedAtMs.clear();
      for (const key of this.#items.keys()) {
        if (this.#processing.has(key)) continue;
        this.#items.delete(key);
        this.#groupOfKey.delete(key);
      }
      this.#metrics.depth(0);
    }
    // waiters exist only while nothing can be handed out: with nothing left, none of them will get a key
    this.#dispatch();
    if (options.drain !== true) return Promise.resolve();
    const idle = new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    this.#checkIdle();
    return idle;
  }

  #enqueue(key: string): void {
    const group = this.#groupOf === undefined ? "" : this.#groupOf(this.#items.get(key) as T);
    this.#groupOfKey.set(key, group);
    let keys = this.#ready.get(group);
    if (keys === undefined) this.#ready.set(group, (keys = new Set()));
    keys.add(key);
    this.#readyCount += 1;
    this.#queuedSeq.set(key, this.#seq++);
    this.#metrics.depth(this.#readyCount);
    this.#dispatch();
  }

  /** Hands ready keys to waiting workers while both exist; after a shutdown with nothing left, releases the waiters. */
  #dispatch(): void {
    while (this.#waiters.length > 0) {
      const key = this.#takeNext();
      if (key === undefined) break;
      (this.#waiters.shift() as (item: T | undefined) => void)(this.#handOut(key));
    }
    if (this.#shuttingDown && this.#readyCount === 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const resolve of waiters) resolve(undefined);
    }
  }

  /**
   * Removes and returns the oldest ready key whose group may have one more out: under its cap,
   * and either the queue under maxInFlight or the group with none out; O(groups).
   */
  #takeNext(): string | undefined {
    let next: { key: string; group: string; seq: number } | undefined;
    const full = this.#inFlightCount >= this.#maxInFlight;
    for (const [group, keys] of this.#ready) {
      const out = this.#inFlight.get(group) ?? 0;
      if (out >= this.#maxInFlightPerGroup || (full && out > 0)) continue;
      const key = keys.values().next().value as string;
      const seq = this.#queuedSeq.get(key) ?? 0;
      if (next === undefined || seq < next.seq) next = { key, group, seq };
    }
    if (next === undefined) return undefined;
    const keys = this.#ready.get(next.group) as Set<string>;
    keys.delete(next.key);
    if (keys.size === 0) this.#ready.delete(next.group);
    this.#readyCount -= 1;
    this.#queuedSeq.delete(next.key);
    this.#inFlightCount += 1;
    this.#inFlight.set(next.group, (this.#inFlight.get(next.group) ?? 0) + 1);
    this.#metrics.depth(this.#readyCount);
    return next.key;
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
    if (!this.#shuttingDown || this.#readyCount > 0 || this.#processing.size > 0) return;
    const idle = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of idle) resolve();
  }
}

/** A cap option: a positive integer, or Infinity when not given. */
function positiveCap(queue: string, name: string, value: number | undefined): number {
  const cap = value ?? Infinity;
  if (!(cap === Infinity || (Number.isSafeInteger(cap) && cap > 0)))
    throw new RangeError(`work queue ${queue}: ${name} must be a positive integer, got ${cap}`);
  return cap;
}
