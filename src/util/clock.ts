/**
 * The one clock of the operator (manager client, limiter, queue, leader election, events):
 * `realClock` in production, `FakeClock` in tests, so that timers, backoff and rate limits are
 * tested without sleeping for real. Lives outside nsx/ and controller/ so both may use it.
 */

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /**
   * milliseconds since the epoch (wall time: it goes into Events, leases and status, and is
   * compared with the manager's token expiry); it may step back, so rate computations treat a
   * negative elapsed time as 0
   */
  now(): number;
  /** runs `callback` once after `delayMs`; a negative delay counts as 0 */
  setTimer(delayMs: number, callback: () => void): Timer;
  /** resolves after `delayMs`, or as soon as `signal` aborts (never rejects: callers check the signal) */
  sleep(delayMs: number, signal?: AbortSignal): Promise<void>;
}

/** setTimeout fires at once for delays over 2^31-1 ms; longer timers are capped (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

function sleepOn(clock: Clock, delayMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimer(delayMs, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The promise's outcome, or `fallback` when it has not settled within `timeoutMs`. The promise
 * is not cancelled, only no longer waited for: use it for calls that may hang.
 */
export async function withTimeout<T>(
  clock: Clock,
  promise: Promise<T>,
  timeoutMs: number,
  fallback: T,
): Promise<T> {
  let timer: Timer | undefined;
  const timedOut = new Promise<T>((resolve) => {
    timer = clock.setTimer(timeoutMs, () => resolve(fallback));
  });
  try {
    return await Promise.race([promise, timedOut]);
  } finally {
    timer?.cancel();
  }
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, callback) {
    const handle = setTimeout(callback, Math.min(Math.max(0, delayMs), MAX_TIMER_MS));
    return { cancel: () => clearTimeout(handle) };
  },
  sleep(delayMs, signal) {
    return sleepOn(realClock, delayMs, signal);
  },
};

interface FakeTimer {
  dueMs: number;
  seq: number;
  callback: () => void;
}

/** Lets every queued promise callback run (microtasks drain before the next macrotask). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A clock that moves only when told to. Timers fire in due order, each at its due time. */
export class FakeClock implements Clock {
  #nowMs: number;
  #seq = 0;
  #timers: FakeTimer[] = [];

  constructor(startMs = Date.UTC(2025, 0, 1)) {
    this.#nowMs = startMs;
  }

  now(): number {
    return this.#nowMs;
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    const timer: FakeTimer = { dueMs: this.#nowMs + Math.max(0, delayMs), seq: this.#seq++, callback };
    this.#timers.push(timer);
    return {
      cancel: () => {
        this.#timers = this.#timers.filter((t) => t !== timer);
      },
    };
  }

  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, delayMs, signal);
  }

  /** timers scheduled and not yet fired or cancelled */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order; after each timer (and before the
   * first) pending promise callbacks run, so async code reacting to a timer sees the time it fired at.
   */
  async advance(ms: number): Promise<void> {
    const targetMs = this.#nowMs + ms;
    await settle();
    for (;;) {
      const next = this.#nextDue(targetMs);
      if (next === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#nowMs = next.dueMs;
      next.callback();
      await settle();
    }
    this.#nowMs = targetMs;
    await settle();
  }

  /** lets pending promise callbacks and timers due now run, without moving time */
  flush(): Promise<void> {
    return this.advance(0);
  }

  #nextDue(targetMs: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers) {
      if (t.dueMs > targetMs) continue;
      if (best === undefined || t.dueMs < best.dueMs || (t.dueMs === best.dueMs && t.seq < best.seq))
        best = t;
    }
    return best;
  }
}

/** The second formatted last: a pass formats its `now` several times, and a CLI pass runs thousands within a second. */
let lastFormatted: { second: number; text: string } | undefined;

/** RFC 3339 with whole seconds, as metav1.Time stores it (so a write read back compares equal). */
export function formatTime(time: Date | number): string {
  const ms = typeof time === "number" ? time : time.getTime();
  const second = Math.floor(ms / 1000);
  // NaN never equals: an invalid time still throws below
  if (lastFormatted?.second === second) return lastFormatted.text;
  // toISOString always ends in `.sssZ`
  const text = `${new Date(ms).toISOString().slice(0, -5)}Z`;
  lastFormatted = { second, text };
  return text;
}
