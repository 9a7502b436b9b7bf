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
 *
 * Priorities, as controller-runtime's priority queue has them: each add may carry one (higher goes
 * first, default 0); an item waiting with a lower one is raised (and counts as queued then), a
 * pending delayed add keeps the highest of its priorities with the soonest of its times. So events
 * (a change, a new object) at the default go ahead of bulk work queued at LOW_PRIORITY (start-up,
 * resyncs), within a group and across groups: `get` hands out the highest priority first, the
 * oldest of that priority among the groups that may have one more.
 */
import type { Clock, Timer } from "../util/clock.ts";
import { realClock } from "../util/clock.ts";
import type { QueueMetrics, RuntimeMetrics } from "./metrics.ts";
import { nopMetrics } from "./metrics.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import { ExponentialBackoff } from "./rate-limiter.ts";

/** The priority of bulk work (start-up, resyncs, safety-net reads): behind every event (default 0). */
export const LOW_PRIORITY = -100;

export interface AddOptions {
  /** higher goes first; default 0 */
  priority?: number | undefined;
}

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
   * keys ready to hand out, per group, by priority (highest first), each level in insertion order
   * (a Set is an ordered FIFO without duplicates); a group is present only while it has keys
   */
  readonly #ready = new Map<string, Level[]>();
  #readyCount = 0;
  /** when each ready key was queued: the oldest head of the highest priority goes first */
  readonly #queuedSeq = new Map<string, number>();
  /** the priority of each key that needs processing (ready, or re-added while processing) */
  readonly #priorityOf = new Map<string, number>();
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
  readonly #delayed = new Map<string, { dueMs: number; priority: number; timer: Timer }>();
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

  /**
   * Marks the item for processing at `priority`; when it already waits, only raises its priority
   * (a no-op at the same or a lower one); a no-op after shutdown.
   */
  add(item: T, options: AddOptions = {}): void {
    const key = this.#keyOf(item);
    if (this.#shuttingDown) return;
    const priority = options.priority ?? 0;
    if (this.#dirty.has(key)) {
      if (priority > (this.#priorityOf.get(key) ?? 0)) this.#raise(key, priority);
      return;
    }
    this.#items.set(key, item);
    this.#dirty.add(key);
    this.#priorityOf.set(key, priority);
    this.#addedAtMs.set(key, this.#clock.now());
    this.#metrics.added();
    if (!this.#processing.has(key)) this.#enqueue(key);
  }

  /**
   * Adds the item after `delayMs`. When it already has a pending delayed add, the sooner of the
   * two times wins (a resync timer never postpones an earlier retry, nor the other way round), with
   * the higher of the two priorities.
   */
  addAfter(item: T, delayMs: number, options: AddOptions = {}): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) {
      this.add(item, options);
      return;
    }
    const key = this.#keyOf(item);
    const dueMs = this.#clock.now() + delayMs;
    let priority = options.priority ?? 0;
    const pending = this.#delayed.get(key);
    if (pending !== undefined) {
      pending.priority = Math.max(pending.priority, priority);
      if (pending.dueMs <= dueMs) return;
      priority = pending.priority;
      pending.timer.cancel();
    }
    this.#items.set(key, item);
    const timer = this.#clock.setTimer(delayMs, () => {
      const due = this.#delayed.get(key);
      this.#delayed.delete(key);
      this.add(item, { priority: due?.priority ?? priority });
    });
    this.#delayed.set(key, { dueMs, priority, timer });
  }

  /**
   * Adds the item after its backoff delay, and counts one more failure for it. `maxDelayMs` caps
   * this one delay (an object that resyncs every 10 s waits no longer than that for a retry); the
   * failure still counts, so the backoff goes on from where it was.
   */
  addRateLimited(item: T, options: AddOptions & { maxDelayMs?: number | undefined } = {}): void {
    if (this.#shuttingDown) return;
    this.#metrics.retried();
    const delayMs = this.#limiter.when(this.#keyOf(item));
    const cap = options.maxDelayMs;
    const priority = { priority: options.priority };
    this.addAfter(item, cap !== undefined && cap >= 0 ? Math.min(delayMs, cap) : delayMs, priority);
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
      this.#priorityOf.clear();
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
    this.#place(key, group, this.#priorityOf.get(key) ?? 0);
    this.#readyCount += 1;
    this.#metrics.depth(this.#readyCount);
    this.#dispatch();
  }

  /** Puts a ready key at the end of its priority's level in its group. */
  #place(key: string, group: string, priority: number): void {
    let levels = this.#ready.get(group);
    if (levels === undefined) this.#ready.set(group, (levels = []));
    let at = levels.findIndex((level) => level.priority <= priority);
    if (at === -1) at = levels.length;
    if (levels[at]?.priority !== priority) levels.splice(at, 0, { priority, keys: new Set() });
    (levels[at] as Level).keys.add(key);
    this.#queuedSeq.set(key, this.#seq++);
  }

  /** A key that needs processing is added again at a higher priority: it waits at that one now. */
  #raise(key: string, priority: number): void {
    const before = this.#priorityOf.get(key) ?? 0;
    this.#priorityOf.set(key, priority);
    // re-added while processing: it is queued at this priority when done
    if (this.#processing.has(key)) return;
    const group = this.#groupOfKey.get(key) ?? "";
    this.#unplace(key, group, before);
    this.#place(key, group, priority);
    this.#dispatch();
  }

  /** Takes a ready key out of its group's level; drops the level, and the group, once empty. */
  #unplace(key: string, group: string, priority: number): void {
    const levels = this.#ready.get(group);
    const at = levels?.findIndex((level) => level.priority === priority) ?? -1;
    if (levels === undefined || at === -1) return;
    const level = levels[at] as Level;
    level.keys.delete(key);
    if (level.keys.size === 0) levels.splice(at, 1);
    if (levels.length === 0) this.#ready.delete(group);
    this.#queuedSeq.delete(key);
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
   * Removes and returns the ready key of the highest priority, the oldest of it, whose group may
   * have one more out: under its cap, and either the queue under maxInFlight or the group with
   * none out; O(groups).
   */
  #takeNext(): string | undefined {
    let next: { key: string; group: string; priority: number; seq: number } | undefined;
    const full = this.#inFlightCount >= this.#maxInFlight;
    for (const [group, levels] of this.#ready) {
      const out = this.#inFlight.get(group) ?? 0;
      if (out >= this.#maxInFlightPerGroup || (full && out > 0)) continue;
      const { priority, keys } = levels[0] as Level;
      const key = keys.values().next().value as string;
      const seq = this.#queuedSeq.get(key) ?? 0;
      if (next === undefined || priority > next.priority || (priority === next.priority && seq < next.seq))
        next = { key, group, priority, seq };
    }
    if (next === undefined) return undefined;
    this.#unplace(next.key, next.group, next.priority);
    this.#priorityOf.delete(next.key);
    this.#readyCount -= 1;
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

/** The ready keys of one priority in a group, in the order they were queued. */
interface Level {
  priority: number;
  keys: Set<string>;
}

/** A cap option: a positive integer, or Infinity when not given. */
function positiveCap(queue: string, name: string, value: number | undefined): number {
  const cap = value ?? Infinity;
  if (!(cap === Infinity || (Number.isSafeInteger(cap) && cap > 0)))
    throw new RangeError(`work queue ${queue}: ${name} must be a positive integer, got ${cap}`);
  return cap;
}
