/** Test doubles shared by the controller tests: metrics that remember what they were told, and a scripted queue run. */
import { expect } from "vitest";
import type {
  ControllerMetrics,
  QueueMetrics,
  ReconcileResultLabel,
  RuntimeMetrics,
} from "../../src/controller/metrics.ts";
import type { WorkQueue } from "../../src/controller/workqueue.ts";

export interface Recorded {
  adds: number;
  depths: number[];
  queueSeconds: number[];
  workSeconds: number[];
  retries: number;
  results: ReconcileResultLabel[];
  reconcileSeconds: number[];
  errors: number;
  leader: boolean[];
}

export function recordingMetrics(): { metrics: RuntimeMetrics; recorded: Recorded } {
  const recorded: Recorded = {
    adds: 0,
    depths: [],
    queueSeconds: [],
    workSeconds: [],
    retries: 0,
    results: [],
    reconcileSeconds: [],
    errors: 0,
    leader: [],
  };
  const queue: QueueMetrics = {
    added: () => void recorded.adds++,
    depth: (n) => void recorded.depths.push(n),
    queueDuration: (s) => void recorded.queueSeconds.push(s),
    workDuration: (s) => void recorded.workSeconds.push(s),
    retried: () => void recorded.retries++,
  };
  const controller: ControllerMetrics = {
    reconciled: (result, seconds) => {
      recorded.results.push(result);
      recorded.reconcileSeconds.push(seconds);
    },
    reconcileError: () => void recorded.errors++,
  };
  const metrics: RuntimeMetrics = {
    queue: () => queue,
    controller: () => controller,
    leaderStatus: (_name, leading) => void recorded.leader.push(leading),
  };
  return { metrics, recorded };
}

/** A promise with its resolve function outside, to hold a reconcile or a check open. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * one step of a scripted queue case: `add` with an optional priority, `get` awaits a key that must
 * be ready, `len` checks the ready count
 */
export type Step =
  ["add", string] | ["add", string, number] | ["get", string] | ["done", string] | ["len", number];

/** Runs the steps on the queue; a failure names the case's reason and the step. */
export async function runSteps(
  queue: WorkQueue<string>,
  steps: readonly Step[],
  reason: string,
): Promise<void> {
  for (const [i, step] of steps.entries()) {
    const where = `${reason} (step ${i}: ${step.join(" ")})`;
    if (step[0] === "add") queue.add(step[1], { priority: step[2] });
    else if (step[0] === "done") queue.done(step[1]);
    else if (step[0] === "len") expect(queue.len(), where).toBe(step[1]);
    else expect(await queue.get(), where).toBe(step[1]);
  }
}
