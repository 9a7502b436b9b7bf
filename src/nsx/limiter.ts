/**
 * The per-manager request limiter: a cap on concurrent requests and a token bucket on the request
 * rate, served strictly first come, first served. Every attempt the client makes (retries and
 * token requests included) passes through `acquire`. Also home of the small `Clock` seam that the
 * limiter and the client use, with a real and a fake implementation.
 */

/** Time and timers, injectable so that tests can drive them. */
export interface Clock {
  /** epoch milliseconds, monotonic */
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The real clock: epoch milliseconds that never step backwards (`performance.timeOrigin +
 * performance.now()`, immune to wall-clock adjustments), and the global timers.
 */
export const systemClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface FakeTimer {
  id: number;
  dueMs: number;
  callback: () => void;
}

/** A clock that only moves when told to; timers fire in due order during `advance`. */
export class FakeClock implements Clock {
  #nowMs: number;
  #timers: FakeTimer[] = [];
  #nextId = 1;

  constructor(startMs = 0) {
    this.#nowMs = startMs;
  }
  now(): number {
    return this.#nowMs;
  }
  setTimeout(callback: () => void, delayMs: number): unknown {
    const timer = { id: this.#nextId++, dueMs: this.#nowMs + Math.max(0, delayMs), callback };
    this.#timers.push(timer);
    return timer.id;
  }
  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }
  /** how many timers are pending */
  get pendingTimers(): number {
    return this.#timers.length;
  }
  /** moves time forward by `ms`, firing every timer that falls due on the way, in order */
  advance(ms: number): void {
    const targetMs = this.#nowMs + ms;
    for (;;) {
      const due = this.#timers
        .filter((t) => t.dueMs <= targetMs)
        .sort((a, b) => a.dueMs - b.dueMs || a.id - b.id)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#nowMs = Math.max(this.#nowMs, due.dueMs);
      due.callback();
    }
    this.#nowMs = targetMs;
  }
}

export interface LimiterOptions {
  /** requests in flight at once; at least 1 */
  maxConcurrentRequests: number;
  /** sustained request starts per second; `Infinity` disables the rate limit */
  requestsPerSecond: number;
  /** token bucket size: how many requests may start back to back after an idle period; at least 1 */
  burst: number;
  clock?: Clock;
}

function requirePositive(name: string, value: number, rule: { integer: boolean }): void {
  const ok = value > 0 && (rule.integer ? Number.isInteger(value) : !Number.isNaN(value));
  if (!ok) {
    throw new RangeError(
      `limiter: ${name} must be a positive ${rule.integer ? "integer" : "number"}, got ${value}`,
    );
  }
}

/** Frees the slot taken by `acquire`; calling it more than once has no further effect. */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
  detach: () => void;
}

/**
 * Concurrency cap plus token bucket, FIFO. A waiter is granted a slot only when a slot is free and
 * a token is available, and never ahead of an earlier waiter. No timer runs while nobody waits.
 */
export class RequestLimiter {
  readonly #maxConcurrent: number;
  readonly #ratePerMs: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #active = 0;
  #tokens: number;
  #lastRefillMs: number | undefined;
  #queue: Waiter[] = [];
  #timer: unknown;

  constructor(options: LimiterOptions) {
    requirePositive("maxConcurrentRequests", options.maxConcurrentRequests, { integer: true });
    requirePositive("requestsPerSecond", options.requestsPerSecond, { integer: false });
    requirePositive("burst", options.burst, { integer: true });
    this.#maxConcurrent = options.maxConcurrentRequests;
    this.#ratePerMs = options.requestsPerSecond / 1000;
    this.#burst = options.burst;
    this.#tokens = options.burst;
    this.#clock = options.clock ?? systemClock;
  }

  /** requests holding a slot */
  get active(): number {
    return this.#active;
  }
  /** callers waiting for a slot or a token */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Resolves once the caller may start one request; call the returned function when it is done.
   * Rejects with `signal.reason` when the signal aborts first (the place in line is given up).
   */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Release>((resolve, reject) => {
      const onAbort = (): void => {
        this.#queue = this.#queue.filter((w) => w !== waiter);
        reject(signal?.reason);
        this.#pump();
      };
      const waiter: Waiter = {
        grant: resolve,
        detach: () => signal?.removeEventListener("abort", onAbort),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(waiter);
      this.#pump();
    });
  }

  /** runs `task` holding one slot */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await task();
    } finally {
      release();
    }
  }

  #refill(): void {
    const nowMs = this.#clock.now();
    if (this.#ratePerMs === Infinity) {
      this.#tokens = this.#burst;
    } else if (this.#lastRefillMs !== undefined) {
      this.#tokens = Math.min(this.#burst, this.#tokens + (nowMs - this.#lastRefillMs) * this.#ratePerMs);
    }
    this.#lastRefillMs = nowMs;
  }

  #pump(): void {
    this.#cancelTimer();
    while (this.#queue.length > 0 && this.#active < this.#maxConcurrent) {
      this.#refill();
      if (this.#tokens < 1) {
        // One timer, for the moment the head of the line gets its token; a release or an abort
        // in between re-runs the pump and replaces it.
        const waitMs = Math.ceil((1 - this.#tokens) / this.#ratePerMs);
        this.#timer = this.#clock.setTimeout(() => {
          this.#timer = undefined;
          this.#pump();
        }, waitMs);
        return;
      }
      this.#tokens -= 1;
      this.#active += 1;
      const waiter = this.#queue.shift() as Waiter;
      waiter.detach();
      waiter.grant(this.#releaseOnce());
    }
  }

  #releaseOnce(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active -= 1;
      this.#pump();
    };
  }

  #cancelTimer(): void {
    if (this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }
}
