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
 * Once the bucket runs dry, the line waits for the tokens of this long, not for one: woken per
 * token, a client at a high rate spends much of its CPU waking up (`apply` of 1000 edges at
 * 1000/s, half of its calls paced: 807 ms of CPU woken per token, 720 in groups of 50). The rate
 * is the same; a request waits up to this much longer. At the default rate (20/s) a group is one
 * token, and it is never more than half the burst: a timer fires late, and the tokens that come
 * meanwhile must find room in the bucket, not be lost at its brim.
 */
export const GROUP_WAIT_MS = 50;

/**
 * Concurrency cap plus token bucket, FIFO. A waiter is granted a slot only when a slot is free and
 * a token is available, and never ahead of an earlier waiter; once the rate binds, waiters start
 * in groups (GROUP_WAIT_MS). No timer runs while nobody waits.
 */
export class RequestLimiter {
  readonly #maxConcurrent: number;
  readonly #bucket: TokenBucket;
  /** the tokens the line waits for once the bucket ran dry */
  readonly #group: number;
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
    const perGroup = Math.floor((options.requestsPerSecond * GROUP_WAIT_MS) / 1000);
    this.#group = Math.max(1, Math.min(Math.floor(options.burst / 2), perGroup));
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
        if (this.#queue.length === 0) this.#cancelTimer();
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
    // the line waits for its group: a slot freed meanwhile starts nothing
    if (this.#timer !== undefined) return;
    while (this.#queue.length > 0 && this.#active < this.#maxConcurrent) {
      if (!this.#bucket.tryTake()) {
        this.#timer = this.#clock.setTimer(this.#bucket.msUntilTokens(this.#group), () => {
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
