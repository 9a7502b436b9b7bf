/**
 * Rate limits of the controller: per-key exponential backoff for the work queue (Crossplane's
 * 1 s doubling to 60 s suits a slow REST backend) and a synchronous token bucket (used per object
 * by the event recorder). Neither sleeps: they say how long, or whether, and the caller acts.
 */
import type { Clock } from "./clock.ts";
import { realClock } from "./clock.ts";

/** What the work queue asks when a key fails. */
export interface RateLimiter {
  /** the delay before the key's next attempt; counts one more failure */
  when(key: string): number;
  /** the key succeeded (or gave up): its next failure starts from the base delay again */
  forget(key: string): void;
  /** failures counted since the last `forget` */
  numRequeues(key: string): number;
}

export interface ExponentialBackoffOptions {
  /** delay after the first failure; default 1000 */
  baseDelayMs?: number;
  /** cap; default 60000 */
  maxDelayMs?: number;
}

export const BACKOFF_DEFAULTS = { baseDelayMs: 1000, maxDelayMs: 60_000 } as const;

/** base * 2^failures, capped (client-go ItemExponentialFailureRateLimiter, Crossplane's bounds). */
export class ExponentialBackoff implements RateLimiter {
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #failures = new Map<string, number>();

  constructor(options: ExponentialBackoffOptions = {}) {
    this.#baseDelayMs = options.baseDelayMs ?? BACKOFF_DEFAULTS.baseDelayMs;
    this.#maxDelayMs = options.maxDelayMs ?? BACKOFF_DEFAULTS.maxDelayMs;
  }

  when(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    // 2 ** 1100 is Infinity, which Math.min caps: no overflow guard needed
    return Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** failures);
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

export interface TokenBucketOptions {
  /** tokens at the start and most tokens kept */
  burst: number;
  /** one token comes back every this many ms */
  refillIntervalMs: number;
  clock?: Clock;
}

/** A token bucket that answers at once: `tryTake()` is true when a token was available. */
export class TokenBucket {
  readonly #burst: number;
  readonly #refillIntervalMs: number;
  readonly #clock: Clock;
  #tokens: number;
  #lastMs: number | undefined;

  constructor(options: TokenBucketOptions) {
    this.#burst = options.burst;
    this.#refillIntervalMs = options.refillIntervalMs;
    this.#clock = options.clock ?? realClock;
    this.#tokens = options.burst;
  }

  tryTake(): boolean {
    const nowMs = this.#clock.now();
    if (this.#lastMs !== undefined && this.#refillIntervalMs > 0) {
      const refill = (nowMs - this.#lastMs) / this.#refillIntervalMs;
      this.#tokens = Math.min(this.#burst, this.#tokens + refill);
    }
    this.#lastMs = nowMs;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
