/** Small statistics over timing samples: median and p95 (nearest rank), and a timed repeat loop. */

export interface Summary {
  n: number;
  medianMs: number;
  p95Ms: number;
  minMs: number;
  maxMs: number;
}

/** Nearest-rank percentile of sorted values; p in (0, 100]. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function summarize(samplesMs: readonly number[]): Summary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return {
    n: sorted.length,
    medianMs: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    minMs: sorted[0] ?? Number.NaN,
    maxMs: sorted.at(-1) ?? Number.NaN,
  };
}

/** The middle value (the upper of the two middles for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export interface RepeatOptions {
  /** untimed runs first, so that the JIT has compiled the code being timed */
  warmup: number;
  /** timed runs */
  runs: number;
  /** stop timing after this long even if fewer runs were made (at least one timed run is made) */
  budgetMs: number;
}

/**
 * Runs `fn` warmup + runs times and returns the timed samples (ms). `setup` runs before each call,
 * untimed, and its value is given to `fn` (a fresh document to change, say).
 */
export function repeat<T>(options: RepeatOptions, fn: (input: T) => void, setup: () => T): number[] {
  for (let i = 0; i < options.warmup; i++) fn(setup());
  const samples: number[] = [];
  const deadline = performance.now() + options.budgetMs;
  for (let i = 0; i < options.runs && (i === 0 || performance.now() < deadline); i++) {
    const input = setup();
    const start = performance.now();
    fn(input);
    samples.push(performance.now() - start);
  }
  return samples;
}

/** Rounds for display and JSON: 3 significant digits below 100, integers above. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  if (Math.abs(value) >= 100) return Math.round(value);
  return Number(value.toPrecision(3));
}
