import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../src/util/clock.ts";
import { Controller } from "../../src/controller/controller.ts";
import { nopMetrics, registerRuntimeMetrics } from "../../src/controller/metrics.ts";
import { WorkQueue } from "../../src/controller/workqueue.ts";

describe("registerRuntimeMetrics", () => {
  it("registers the queue, controller and leader election metrics under controller-runtime's names", async () => {
    const registry = new Registry();
    registerRuntimeMetrics(registry);
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(names).toEqual(
      [
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds",
        "controller_runtime_reconcile_total",
        "leader_election_master_status",
        "workqueue_adds_total",
        "workqueue_depth",
        "workqueue_queue_duration_seconds",
        "workqueue_retries_total",
        "workqueue_work_duration_seconds",
      ].sort(),
    );
  });

  it("leader_election_master_status is 1 while leading", async () => {
    const registry = new Registry();
    registerRuntimeMetrics(registry).leaderStatus("nsxv-operator", true);
    expect(await registry.metrics()).toContain('leader_election_master_status{name="nsxv-operator"} 1');
  });

  it("counts reconciles and queue activity of a running controller", async () => {
    const registry = new Registry();
    const metrics = registerRuntimeMetrics(registry);
    const clock = new FakeClock(0);
    const queue = new WorkQueue({ name: "edgetenant", clock, metrics });
    let calls = 0;
    const controller = new Controller({
      name: "edgetenant",
      queue,
      clock,
      metrics,
      reconcile: async () => {
        calls++;
        await clock.sleep(250);
        if (calls === 1) throw new Error("first fails");
        return { requeueAfterMs: 60_000 };
      },
    });
    const stop = new AbortController();
    const started = controller.start(stop.signal);
    queue.add("ns/a");
    await clock.advance(250 + 1000 + 250);
    stop.abort();
    await started;
    const text = await registry.metrics();
    for (const line of [
      'controller_runtime_reconcile_total{controller="edgetenant",result="error"} 1',
      'controller_runtime_reconcile_total{controller="edgetenant",result="requeue_after"} 1',
      'controller_runtime_reconcile_total{controller="edgetenant",result="success"} 0',
      'controller_runtime_reconcile_errors_total{controller="edgetenant"} 1',
      'controller_runtime_reconcile_time_seconds_sum{controller="edgetenant"} 0.5',
      'workqueue_adds_total{controller="edgetenant",name="edgetenant"} 2',
      'workqueue_retries_total{controller="edgetenant",name="edgetenant"} 1',
      'workqueue_depth{controller="edgetenant",name="edgetenant"} 0',
    ]) {
      expect(text).toContain(line);
    }
  });

  it("nopMetrics accepts every call", () => {
    nopMetrics.queue("q").added();
    nopMetrics.controller("c").reconciled("success", 1);
    expect(nopMetrics.queue("a")).toBe(nopMetrics.queue("b"));
  });
});
