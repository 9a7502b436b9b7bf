/**
 * An operator under test, read from its metrics registry, and driven on a FakeClock while its
 * manager answers over real HTTP: time moves only when the test moves it, and after each move the
 * test waits until every pass that the move started has finished (real I/O), so that what a test
 * sees after `advance` is what the operator did up to that time, on a busy machine as on an idle
 * one, and without waiting out grace periods, backoffs and sync intervals for real.
 */
import type { Registry } from "prom-client";
import type { FakeClock } from "../../src/util/clock.ts";
import { waitFor } from "./wait.ts";

/** The sum of a metric's samples whose labels include `labels` (histograms: name_sum, name_count). */
export async function metricSum(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  let sum = 0;
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const value of metric.values) {
      const sampleName = (value as { metricName?: string }).metricName ?? metric.name;
      if (sampleName !== name) continue;
      const sample = value.labels as Record<string, string | number>;
      if (Object.entries(labels).every(([k, v]) => String(sample[k]) === v)) sum += value.value;
    }
  }
  return sum;
}

/**
 * The operator has queued its objects (its source has delivered them; until then nothing
 * happens in the clock's time, however long the start takes for real) and every pass queued so
 * far has finished: the work queue counts an add only for a key not already waiting (as
 * client-go's does), and each such add is handed to exactly one pass.
 */
export async function operatorIdle(registry: Registry): Promise<boolean> {
  const [adds, passes] = await Promise.all([
    metricSum(registry, "workqueue_adds_total"),
    metricSum(registry, "controller_runtime_reconcile_total"),
  ]);
  return adds > 0 && adds === passes;
}

/** Waits until the operator has started and every pass queued so far has finished. */
export function settle(registry: Registry): Promise<void> {
  return waitFor("the operator's queued passes to finish", () => operatorIdle(registry)).then(() => {});
}

/** Moves `clock` on by `ms`, `stepMs` at a time, letting the passes each step starts finish. */
export async function advance(
  clock: FakeClock,
  registry: Registry,
  ms: number,
  stepMs: number = ms,
): Promise<void> {
  for (let moved = 0; moved < ms; moved += stepMs) {
    await clock.advance(Math.min(stepMs, ms - moved));
    await settle(registry);
  }
}

/**
 * Moves `clock` on `stepMs` at a time, letting each step's passes finish, until `check` returns
 * something other than undefined or false, and returns that; throws naming `what` when `limitMs`
 * of the clock's time have passed without it.
 */
export async function advanceUntil<T>(
  what: string,
  clock: FakeClock,
  registry: Registry,
  check: () => T | undefined | false,
  options: { stepMs: number; limitMs: number },
): Promise<Exclude<T, undefined | false>> {
  const untilMs = clock.now() + options.limitMs;
  for (;;) {
    await settle(registry);
    const value = check();
    if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    if (clock.now() >= untilMs) throw new Error(`${what}: not within ${options.limitMs} ms of the clock`);
    await clock.advance(options.stepMs);
  }
}
