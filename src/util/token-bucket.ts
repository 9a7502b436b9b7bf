/**
 * The one token bucket of the operator: the manager client's request limiter waits on it (FIFO,
 * with abort, in nsx/limiter.ts) and the event recorder asks it per object whether an Event may
 * be written now. It never sleeps: it answers whether a token is there, or how long until one is.
 */
import type { Clock } from "./clock.ts";
import { realClock } from "./clock.ts";

export interface TokenBucketOptions {
  /** tokens at the start and most tokens kept; at least 1 */
  burst: number;
  /** one token comes back every this many ms; 0: tokens come back at once (no rate limit) */
  refillIntervalMs: number;
  clock?: Clock;
}

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

  /** takes a token when one is there; false (and nothing taken) otherwise */
  tryTake(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /**
   * how long until the bucket holds `count` tokens (never more than its burst): 0 when it does now;
   * with a count of 1, until `tryTake` can succeed
   */
  msUntilTokens(count: number): number {
    this.#refill();
    const wanted = Math.min(count, this.#burst);
    return this.#tokens >= wanted ? 0 : Math.ceil((wanted - this.#tokens) * this.#refillIntervalMs);
  }

  #refill(): void {
    const nowMs = this.#clock.now();
    if (this.#refillIntervalMs <= 0) this.#tokens = this.#burst;
    else if (this.#lastMs !== undefined) {
      // the wall clock may step back: no tokens are taken away for it
      const elapsedMs = Math.max(0, nowMs - this.#lastMs);
      this.#tokens = Math.min(this.#burst, this.#tokens + elapsedMs / this.#refillIntervalMs);
    }
    this.#lastMs = nowMs;
  }
}
