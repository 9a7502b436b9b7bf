/**
 * The work queue's rate limit: per-key exponential backoff (Crossplane's 1 s doubling to 60 s
 * suits a slow REST backend). It does not sleep: it says how long, and the queue acts. The token
 * bucket of the event recorder is util/token-bucket.ts, shared with the manager client.
 */

import { withDefaults } from "../util/options.ts";

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
    const o = withDefaults(BACKOFF_DEFAULTS, options);
    this.#baseDelayMs = o.baseDelayMs;
    this.#maxDelayMs = o.maxDelayMs;
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
