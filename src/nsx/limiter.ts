/**
 * The per-manager request limiter: a cap on concurrent requests and a token bucket on the request
 * rate, served strictly first come, first served. Every attempt the client makes (retries and
 * token requests included) passes through `acquire`.
 */
import type { Clock, Timer } from "../util/clock.ts";
import { realClock } from "../util/clock.ts";
import { TokenBucket } from "../util/token-bucket.ts";

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
  readonly #bucket: TokenBucket;
  readonly #clock: Clock;
  #active = 0;
  #queue: Waiter[] = [];
  #timer: Timer | undefined;

  constructor(options: LimiterOptions) {
    requirePositive("maxConcurrentRequests", options.maxConcurrentRequests, { integer: true });
    requirePositive("requestsPerSecond", options.requestsPerSecond, { integer: false });
    requirePositive("burst", options.burst, { integer: true });
    this.#maxConcurrent = options.maxConcurrentRequests;
    this.#clock = options.clock ?? realClock;
    this.#bucket = new TokenBucket({
      burst: options.burst,
      // an infinite rate is an interval of 0: the bucket is always full
      refillIntervalMs: 1000 / options.requestsPerSecond,
      clock: this.#clock,
    });
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
    // nobody waits, and a slot and a token are free: granted now, with no place in line to keep
    if (this.#queue.length === 0 && this.#active < this.#maxConcurrent && this.#bucket.tryTake()) {
      this.#active += 1;
      return Promise.resolve(this.#releaseOnce());
    }
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

  #pump(): void {
    this.#cancelTimer();
    while (this.#queue.length > 0 && this.#active < this.#maxConcurrent) {
      if (!this.#bucket.tryTake()) {
        // One timer, for the moment the head of the line gets its token; a release or an abort
        // in between re-runs the pump and replaces it.
        this.#timer = this.#clock.setTimer(this.#bucket.msUntilToken(), () => {
          this.#timer = undefined;
          this.#pump();
        });
        return;
      }
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
    this.#timer?.cancel();
    this.#timer = undefined;
  }
}
