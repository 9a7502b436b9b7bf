import { describe, expect, it } from "vitest";
import { FakeClock } from "../../src/util/clock.ts";
import { Controller } from "../../src/controller/controller.ts";
import { createOperatorMetrics, nopMetrics } from "../../src/controller/metrics.ts";
import { WorkQueue } from "../../src/controller/workqueue.ts";

describe("createOperatorMetrics", () => {
  it("registers every metric under its controller-runtime or nsxv name", async () => {
    const { registry } = createOperatorMetrics({ processMetrics: false });
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(names).toEqual(
      [
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds",
        "controller_runtime_reconcile_total",
        "leader_election_master_status",
        "nsxv_drift_detected_total",
        "nsxv_edge_tenant_corrections_total",
        "nsxv_ip_releases_total",
        "nsxv_manager_request_duration_seconds",
        "nsxv_manager_requests_total",
        "nsxv_pool_used_ratio",
        "workqueue_adds_total",
        "workqueue_depth",
        "workqueue_queue_duration_seconds",
        "workqueue_retries_total",
        "workqueue_work_duration_seconds",
      ].sort(),
    );
  });

  it("adds process metrics by default", async () => {
    const { registry } = createOperatorMetrics();
    expect(await registry.metrics()).toContain("process_cpu_user_seconds_total");
  });

  const cases = [
    {
      name: "ManagerRequest",
      reason: "Requests count by manager, method, call name and status; durations in seconds.",
      act: (m: typeof nopMetrics) => {
        m.managerRequest("ns/mgr", {
          method: "GET",
          route: "getEdge",
          status: 200,
          durationMs: 120,
        });
        m.managerRequest("ns/mgr", {
          method: "GET",
          route: "getEdge",
          status: "error",
          durationMs: 5,
        });
      },
      want: [
        'nsxv_manager_requests_total{manager="ns/mgr",method="GET",route="getEdge",status="200"} 1',
        'nsxv_manager_requests_total{manager="ns/mgr",method="GET",route="getEdge",status="error"} 1',
        'nsxv_manager_request_duration_seconds_sum{manager="ns/mgr",method="GET",route="getEdge"} 0.125',
      ],
    },
    {
      name: "Changes",
      reason: "What the operator changed is counted.",
      act: (m: typeof nopMetrics) => {
        m.edgeTenantCorrected();
        m.ipsReleased(3);
        m.driftDetected("EdgeTenant");
      },
      want: [
        "nsxv_edge_tenant_corrections_total 1",
        "nsxv_ip_releases_total 3",
        'nsxv_drift_detected_total{kind="EdgeTenant"} 1',
      ],
    },
    {
      name: "PoolRatio",
      reason: "The pool gauge holds the last ratio per object and pool.",
      act: (m: typeof nopMetrics) => {
        m.poolUsedRatio({ namespace: "ns", name: "pods", pool: "ipaddresspool-1" }, 0.5);
        m.poolUsedRatio({ namespace: "ns", name: "pods", pool: "ipaddresspool-1" }, 0.75);
      },
      want: ['nsxv_pool_used_ratio{namespace="ns",name="pods",pool="ipaddresspool-1"} 0.75'],
    },
    {
      name: "Leader",
      reason: "leader_election_master_status is 1 while leading.",
      act: (m: typeof nopMetrics) => m.leaderStatus("nsxv-operator", true),
      want: ['leader_election_master_status{name="nsxv-operator"} 1'],
    },
  ];

  it.each(cases)("$name", async ({ reason, act, want }) => {
    const { registry, metrics } = createOperatorMetrics({ processMetrics: false });
    act(metrics);
    const text = await registry.metrics();
    for (const line of want) expect(text, reason).toContain(line);
  });

  it("forgetPool drops the pool's series", async () => {
    const { registry, metrics } = createOperatorMetrics({ processMetrics: false });
    const labels = { namespace: "ns", name: "pods", pool: "ipaddresspool-1" };
    metrics.poolUsedRatio(labels, 0.5);
    metrics.forgetPool(labels);
    expect(await registry.metrics()).not.toContain('pool="ipaddresspool-1"');
  });

  it("counts reconciles and queue activity of a running controller", async () => {
    const { registry, metrics } = createOperatorMetrics({ processMetrics: false });
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
