import pino from "pino";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../src/util/clock.ts";
import type { Reconciler, Result } from "../../src/controller/controller.ts";
import { Controller } from "../../src/controller/controller.ts";
import { LOW_PRIORITY, WorkQueue } from "../../src/controller/workqueue.ts";
import { deferred, recordingMetrics } from "./helpers.ts";

function setup(reconcile: Reconciler, options: { concurrency?: number; shutdownTimeoutMs?: number } = {}) {
  const clock = new FakeClock(0);
  const { metrics, recorded } = recordingMetrics();
  const { concurrency, ...rest } = options;
  const queue = new WorkQueue({ name: "edgetenant", clock, metrics, maxInFlight: concurrency ?? 4 });
  const controller = new Controller({ name: "edgetenant", queue, reconcile, clock, metrics, ...rest });
  const stop = new AbortController();
  const started = controller.start(stop.signal);
  return { clock, queue, controller, recorded, stop, started };
}

describe("Controller result mapping", () => {
  const cases: {
    name: string;
    reason: string;
    outcome: () => Promise<Result>;
    wantResult: string;
    wantErrors: number;
    wantRequeues: number;
    /** when the key is reconciled again, undefined for never (within 10 min) */
    wantAgainAfterMs: number | undefined;
  }[] = [
    {
      name: "Success",
      reason: "An empty result forgets the key: no retry, no backoff left.",
      outcome: async () => ({}),
      wantResult: "success",
      wantErrors: 0,
      wantRequeues: 0,
      wantAgainAfterMs: undefined,
    },
    {
      name: "RequeueAfter",
      reason: "requeueAfterMs forgets the backoff and comes back exactly then (drift resync).",
      outcome: async () => ({ requeueAfterMs: 300_000 }),
      wantResult: "requeue_after",
      wantErrors: 0,
      wantRequeues: 0,
      wantAgainAfterMs: 300_000,
    },
    {
      name: "QuietError",
      reason: "A quiet error (a status write that lost a race) is re-added after the key's backoff.",
      outcome: async () => {
        throw Object.assign(new Error("status conflict"), { quiet: true });
      },
      wantResult: "error",
      wantErrors: 1,
      wantRequeues: 1,
      wantAgainAfterMs: 1000,
    },
    {
      name: "Error",
      reason: "A plain error is retried after the key's backoff (1 s first).",
      outcome: async () => {
        throw new Error("manager unreachable");
      },
      wantResult: "error",
      wantErrors: 1,
      wantRequeues: 1,
      wantAgainAfterMs: 1000,
    },
    {
      name: "ErrorWithBackoffCap",
      reason: "A failure's maxBackoffMs caps its retry (an object that resyncs often waits no longer).",
      outcome: async () => ({ error: new Error("manager unreachable"), maxBackoffMs: 400 }),
      wantResult: "error",
      wantErrors: 1,
      wantRequeues: 1,
      wantAgainAfterMs: 400,
    },
    {
      name: "TerminalError",
      reason: "An error that says it is terminal is not retried until the object changes.",
      outcome: async () => {
        throw Object.assign(new Error("edgeId is not edge-<n>"), { terminal: true });
      },
      wantResult: "error",
      wantErrors: 1,
      wantRequeues: 0,
      wantAgainAfterMs: undefined,
    },
    {
      name: "TerminalOnlyAtTheTop",
      reason: "Only the thrown error says whether it is terminal: a cause is not searched for it.",
      outcome: async () => {
        throw new Error("planning failed", {
          cause: Object.assign(new Error("bad CIDR"), { terminal: true }),
        });
      },
      wantResult: "error",
      wantErrors: 1,
      wantRequeues: 1,
      wantAgainAfterMs: 1000,
    },
    {
      name: "ThrownNonError",
      reason: "Whatever is thrown is an error, retried with backoff.",
      outcome: async () => {
        throw "plain string"; // eslint-disable-line no-throw-literal -- the case under test
      },
      wantResult: "error",
      wantErrors: 1,
      wantRequeues: 1,
      wantAgainAfterMs: 1000,
    },
  ];

  it.each(cases)("$name", async (c) => {
    const calls: number[] = [];
    let first = true;
    const { clock, queue, recorded, stop, started } = setup(async () => {
      calls.push(clock.now());
      if (first) {
        first = false;
        return c.outcome();
      }
      return {};
    });
    queue.add("ns/a");
    await clock.flush();
    expect(calls, c.reason).toEqual([0]);
    expect(recorded.results, c.reason).toEqual([c.wantResult]);
    expect(recorded.errors, c.reason).toBe(c.wantErrors);
    expect(queue.numRequeues("ns/a"), c.reason).toBe(c.wantRequeues);
    if (c.wantAgainAfterMs === undefined) {
      await clock.advance(600_000);
      expect(calls, c.reason).toEqual([0]);
    } else {
      await clock.advance(c.wantAgainAfterMs - 1);
      expect(calls.length, c.reason).toBe(1);
      await clock.advance(1);
      expect(calls, c.reason).toEqual([0, c.wantAgainAfterMs]);
    }
    stop.abort();
    await started;
  });

  it("resets the backoff after a success", async () => {
    const outcomes = [false, false, true, false];
    const { clock, queue, recorded, stop, started } = setup(async () => {
      if (outcomes.shift() === false) throw new Error("flaky");
      return {};
    });
    queue.add("ns/a");
    await clock.advance(1000 + 2000);
    expect(recorded.results).toEqual(["error", "error", "success"]);
    expect(queue.numRequeues("ns/a")).toBe(0);
    queue.add("ns/a");
    await clock.flush();
    expect(queue.numRequeues("ns/a")).toBe(1);
    await clock.advance(999);
    expect(recorded.results).toHaveLength(4);
    stop.abort();
    await started;
  });

  it.each([
    { name: "Failure", traits: {}, level: "error", reason: "an ordinary failure is one error line" },
    {
      name: "Terminal",
      traits: { terminal: true },
      level: "warn",
      reason: "a terminal one waits for a change",
    },
    {
      name: "Quiet",
      traits: { quiet: true },
      level: "debug",
      reason: "an expected race is not worth an error line",
    },
  ])(
    "logs a $name failure as one line at $level, with the stack only at debug: $reason",
    async ({ traits, level }) => {
      const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
      const log = (l: string) => (fields: Record<string, unknown>, message: string) =>
        void lines.push({ level: l, fields, message });
      const logger = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
      const clock = new FakeClock(0);
      const queue = new WorkQueue({ name: "c", clock });
      const controller = new Controller({
        name: "c",
        queue,
        clock,
        logger,
        reconcile: async () => {
          throw Object.assign(new Error("HTTP 503: NSX Edge is unreachable"), {
            reason: "Unreachable",
            ...traits,
          });
        },
      });
      const stop = new AbortController();
      const started = controller.start(stop.signal);
      queue.add("ns/a");
      await clock.flush();
      stop.abort();
      await started;
      const failure = lines.filter((l) => l.fields.key === "ns/a" && l.fields.err === undefined);
      expect(failure).toHaveLength(1);
      expect(failure[0]).toMatchObject({
        level,
        fields: { reason: "Unreachable", error: "HTTP 503: NSX Edge is unreachable" },
      });
      const withStack = lines.filter((l) => l.fields.err !== undefined);
      expect(withStack.map((l) => l.level)).toEqual(["debug"]);
    },
  );
});

describe("Controller priorities", () => {
  it("a routine requeue (LOW_PRIORITY) waits behind an event due at the same time; enqueue carries its priority", async () => {
    const seen: string[] = [];
    const gate = deferred();
    let holding = false;
    const outcomes: Record<string, Result> = {
      routine: { requeueAfterMs: 10_000, priority: LOW_PRIORITY },
      event: { requeueAfterMs: 10_000 },
    };
    const { clock, controller, stop, started } = setup(
      async (key) => {
        seen.push(key);
        if (key === "gate" && holding) await gate.promise;
        return outcomes[key] ?? {};
      },
      { concurrency: 1 },
    );
    controller.enqueue(["routine"]);
    controller.enqueue(["event"]);
    await clock.flush();
    // the one worker is held while both come back at 10 s, the routine one first
    holding = true;
    await clock.advance(5_000);
    controller.enqueue(["gate"]);
    await clock.advance(5_000);
    seen.length = 0;
    gate.resolve();
    await clock.flush();
    expect(seen).toEqual(["event", "routine"]);
    // what a start queues at LOW_PRIORITY waits behind an event enqueued after it
    holding = false;
    seen.length = 0;
    outcomes["routine"] = {};
    outcomes["event"] = {};
    controller.enqueue(["bulk-1", "bulk-2"], { priority: LOW_PRIORITY });
    controller.enqueue(["new"]);
    await clock.flush();
    expect(seen).toEqual(["bulk-1", "new", "bulk-2"]);
    stop.abort();
    await started;
  });
});

describe("Controller concurrency", () => {
  /** a reconciler that holds each call open until released, recording what ran when */
  function gated() {
    const running = new Set<string>();
    const seen: string[] = [];
    const overlaps: string[] = [];
    const gates = new Map<string, () => void>();
    let most = 0;
    // recorded, not asserted inside: a throw in reconcile would only count as a reconcile error
    const reconcile: Reconciler = async (key) => {
      seen.push(key);
      if (running.has(key)) overlaps.push(key);
      running.add(key);
      most = Math.max(most, running.size);
      const gate = deferred();
      gates.set(key, () => gate.resolve());
      await gate.promise;
      running.delete(key);
      return {};
    };
    const release = (key: string) => gates.get(key)?.();
    return { reconcile, running, seen, overlaps, release, most: () => most };
  }

  it("runs as many reconciles at once as the queue hands out: its maxInFlight", async () => {
    const g = gated();
    const { clock, queue, stop, started } = setup(g.reconcile, { concurrency: 3 });
    for (const k of ["a", "b", "c", "d", "e"]) queue.add(k);
    await clock.flush();
    expect([...g.running].sort()).toEqual(["a", "b", "c"]);
    g.release("b");
    await clock.flush();
    expect([...g.running].sort()).toEqual(["a", "c", "d"]);
    for (const k of ["a", "c", "d", "e"]) {
      g.release(k);
      await clock.flush();
    }
    expect(g.most()).toBe(3);
    expect(g.seen).toEqual(["a", "b", "c", "d", "e"]);
    stop.abort();
    await started;
  });

  it("never runs one key twice at once: a key added while running runs again after", async () => {
    const g = gated();
    const { clock, queue, stop, started } = setup(g.reconcile, { concurrency: 2 });
    queue.add("a");
    queue.add("b");
    await clock.flush();
    queue.add("a");
    g.release("b");
    await clock.flush();
    expect([...g.running]).toEqual(["a"]);
    g.release("a");
    await clock.flush();
    expect(g.seen).toEqual(["a", "b", "a"]);
    g.release("a");
    await clock.flush();
    expect(g.overlaps).toEqual([]);
    stop.abort();
    await started;
  });
});

describe("Controller shutdown", () => {
  it("stops taking work and resolves once the in-flight reconcile finishes", async () => {
    const gate = deferred();
    const seen: string[] = [];
    let abortedWhenDone: boolean | undefined;
    const { clock, queue, controller, stop, started } = setup(
      async (key, signal) => {
        seen.push(key);
        await gate.promise;
        abortedWhenDone = signal.aborted;
        return {};
      },
      { concurrency: 1 },
    );
    let done = false;
    void started.then(() => (done = true));
    queue.add("a");
    queue.add("b");
    await clock.flush();
    expect(controller.inFlight).toEqual(["a"]);
    stop.abort();
    await clock.advance(5000);
    expect(done).toBe(false);
    gate.resolve();
    await clock.flush();
    expect(done).toBe(true);
    expect(seen).toEqual(["a"]);
    expect(abortedWhenDone).toBe(false);
    expect(queue.shuttingDown).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it("at the deadline aborts the reconcile's signal and resolves without waiting further", async () => {
    let reconcileSignal: AbortSignal | undefined;
    const { clock, queue, stop, started } = setup(
      async (_key, signal) => {
        reconcileSignal = signal;
        await new Promise(() => {}); // ignores its signal: the controller must not wait forever
        return {};
      },
      { shutdownTimeoutMs: 10_000 },
    );
    let done = false;
    void started.then(() => (done = true));
    queue.add("a");
    await clock.flush();
    stop.abort();
    await clock.advance(9999);
    expect(done).toBe(false);
    expect(reconcileSignal?.aborted).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
    expect(reconcileSignal?.aborted).toBe(true);
  });

  it("started with an aborted signal, reconciles nothing", async () => {
    const clock = new FakeClock(0);
    const queue = new WorkQueue({ name: "t", clock });
    queue.add("a");
    let calls = 0;
    const controller = new Controller({
      name: "t",
      queue,
      clock,
      reconcile: async () => {
        calls++;
        return {};
      },
    });
    await controller.start(AbortSignal.abort());
    expect(calls).toBe(0);
  });

  it("accepts a pino logger and logs failures through it", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(line) });
    const clock = new FakeClock(0);
    const queue = new WorkQueue({ name: "t", clock });
    const controller = new Controller({
      name: "t",
      queue,
      clock,
      logger,
      reconcile: async () => {
        throw new Error("boom");
      },
    });
    const stop = new AbortController();
    const started = controller.start(stop.signal);
    queue.add("ns/a");
    await clock.flush();
    stop.abort();
    await started;
    expect(lines.join("")).toContain("reconcile failed; retrying");
    expect(lines.join("")).toContain("boom");
  });
});
