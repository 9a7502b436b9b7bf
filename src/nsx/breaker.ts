/**
 * The manager client's circuit breaker. A manager that hangs (accepts connections, never answers)
 * or cannot be reached costs every caller a full timeout per attempt; after `failures` requests
 * in a row that timed out or could not connect, the circuit opens and requests fail at once for
 * `coolDownMs`. Then one request at a time probes (half-open): an answer closes the circuit, a
 * failure opens it for another cool-down. Any answer, whatever its status, is a sign of life (but
 * a 504: a gateway timed out waiting for the manager). A failure that came back at once without
 * an answer (a reset, a TLS failure) says neither: the breaker is for waits. It decides nothing
 * about retries: the client asks it before each attempt and tells it how the attempt ended.
 */
import type { Clock } from "../util/clock.ts";
import { NsxResponseError } from "./errors.ts";
import type { AttemptOutcome } from "./transport.ts";

export interface CircuitBreakerOptions {
  /** consecutive failed requests that open the circuit; 0 never opens it */
  failures: number;
  /** how long an open circuit refuses requests before one may probe */
  coolDownMs: number;
  clock: Clock;
}

/** How an attempt ended, for the breaker; a failure says what it was in one line. */
export type AttemptVerdict =
  /** the manager answered (any status but 504, an oversized body included) */
  | { kind: "answered" }
  /** it timed out, could not connect, or a gateway said it timed out (504) */
  | { kind: "failed"; failure: string }
  /** the caller gave it up, or it failed at once without an answer (a reset, TLS): no sign either way */
  | { kind: "inconclusive" };

/** What an attempt of `method path` tells the breaker of the manager. */
export function attemptVerdict(
  request: { method: string; path: string },
  outcome: AttemptOutcome,
  signal: AbortSignal | undefined,
): AttemptVerdict {
  if (outcome.kind === "response") {
    if (outcome.status !== 504) return { kind: "answered" };
    return { kind: "failed", failure: `${request.method} ${request.path}: HTTP 504 (a gateway timed out)` };
  }
  if (signal?.aborted === true) return { kind: "inconclusive" };
  if (outcome.unreachable === true) return { kind: "failed", failure: outcome.error.message };
  // an answer too large to read is still an answer
  return outcome.error instanceof NsxResponseError ? { kind: "answered" } : { kind: "inconclusive" };
}

/** Leave to send one request; hand it back with `report`. */
export interface Permit {
  readonly probe: boolean;
}

/** Why a request may not go now. */
export interface Refusal {
  /** the consecutive failures that opened the circuit */
  failures: number;
  /** what the last of them was */
  lastFailure: string;
  /** when a probe may go (epoch ms); undefined while one is under way */
  probeAtMs: number | undefined;
}

export class CircuitBreaker {
  readonly #failuresToOpen: number;
  readonly #coolDownMs: number;
  readonly #clock: Clock;
  #consecutive = 0;
  #lastFailure = "";
  /** undefined while closed */
  #openUntilMs: number | undefined;
  #probing = false;

  constructor(options: CircuitBreakerOptions) {
    this.#failuresToOpen = options.failures;
    this.#coolDownMs = options.coolDownMs;
    this.#clock = options.clock;
  }

  /** open: requests fail at once (a probe under way included) */
  get open(): boolean {
    return this.#openUntilMs !== undefined;
  }

  /** Why a request would be refused now, without taking a permit (the probe stays free); undefined: it would not. */
  refusal(): Refusal | undefined {
    if (this.#openUntilMs === undefined) return undefined;
    if (!this.#probing && this.#clock.now() >= this.#openUntilMs) return undefined;
    return {
      failures: this.#consecutive,
      lastFailure: this.#lastFailure,
      probeAtMs: this.#probing ? undefined : this.#openUntilMs,
    };
  }

  /** A permit to send, or why not: while open, one probe once the cool-down has passed. */
  admit(): Permit | Refusal {
    const refusal = this.refusal();
    if (refusal !== undefined) return refusal;
    if (this.#openUntilMs === undefined) return { probe: false };
    this.#probing = true;
    return { probe: true };
  }

  /** How the permitted attempt ended. */
  report(permit: Permit, verdict: AttemptVerdict): void {
    if (permit.probe) this.#probing = false;
    if (verdict.kind === "inconclusive") return;
    if (verdict.kind === "answered") {
      this.#consecutive = 0;
      this.#openUntilMs = undefined;
      return;
    }
    this.#consecutive += 1;
    this.#lastFailure = verdict.failure;
    // once open, only a probe's failure starts another cool-down: a request sent before the
    // circuit opened, failing late, says nothing new
    const opens =
      this.#openUntilMs === undefined
        ? this.#failuresToOpen > 0 && this.#consecutive >= this.#failuresToOpen
        : permit.probe;
    if (opens) this.#openUntilMs = this.#clock.now() + this.#coolDownMs;
  }
}

export function isRefusal(admission: Permit | Refusal): admission is Refusal {
  return "failures" in admission;
}

/** Why requests to `url` fail at once, and until when, for the refused request's error. */
export function refusalReason(refusal: Refusal, url: string): string {
  const when =
    refusal.probeAtMs === undefined
      ? "one request is probing whether it answers again"
      : `next try at ${new Date(refusal.probeAtMs).toISOString()}`;
  return `circuit open: the last ${refusal.failures} requests to ${url} timed out or could not connect (the last: ${refusal.lastFailure}); ${when}`;
}
