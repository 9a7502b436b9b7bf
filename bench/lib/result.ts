/**
 * What every benchmark returns: named measurements, each with its unit and, where the issue sets
 * one, the target and whether it was met; notes say how the figure was obtained. run.ts turns
 * these into the printed table, latest.json and RESULTS.md.
 */

export interface Target {
  /** the target as written in the issue, e.g. ">= 0.85" */
  text: string;
  met: boolean;
}

export interface Measurement {
  /** the case within the benchmark, e.g. "1 MB" or "N=1000 L=20ms C=16" */
  case: string;
  metric: string;
  value: number;
  unit: string;
  target?: Target;
}

export interface BenchResult {
  name: string;
  /** wall time of the whole benchmark, set-up included */
  durationMs: number;
  measurements: Measurement[];
  /** how the figures were obtained, and what explains a miss */
  notes: string[];
  /** raw figures (counters per route, parameters) for latest.json */
  details: Record<string, unknown>;
}

/** Collects measurements and notes while a benchmark runs. */
export class ResultBuilder {
  readonly #name: string;
  readonly #startedMs = performance.now();
  readonly #measurements: Measurement[] = [];
  readonly #notes: string[] = [];
  readonly #details: Record<string, unknown> = {};

  constructor(name: string) {
    this.#name = name;
  }

  add(measurement: Measurement): this {
    this.#measurements.push(measurement);
    return this;
  }

  note(text: string): this {
    this.#notes.push(text);
    return this;
  }

  detail(key: string, value: unknown): this {
    this.#details[key] = value;
    return this;
  }

  build(): BenchResult {
    return {
      name: this.#name,
      durationMs: Math.round(performance.now() - this.#startedMs),
      measurements: [...this.#measurements],
      notes: [...this.#notes],
      details: { ...this.#details },
    };
  }
}

/** `value >= min`, written as the target text */
export function atLeast(value: number, min: number, unit = ""): Target {
  return { text: `>= ${min}${unit}`, met: value >= min };
}

/** `value < max` */
export function below(value: number, max: number, unit = ""): Target {
  return { text: `< ${max}${unit}`, met: value < max };
}

/** `value <= max` */
export function atMost(value: number, max: number, unit = ""): Target {
  return { text: `<= ${max}${unit}`, met: value <= max };
}

/** `value == want` */
export function exactly(value: number, want: number): Target {
  return { text: `= ${want}`, met: value === want };
}

/** `lo <= value <= hi` */
export function within(value: number, lo: number, hi: number): Target {
  return { text: `${lo}..${hi}`, met: value >= lo && value <= hi };
}
