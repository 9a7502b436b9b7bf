import { describe, expect, it } from "vitest";
import { createOperatorMetrics, type OperatorMetrics } from "../../src/operator/metrics.ts";

describe("createOperatorMetrics", () => {
  it("registers the runtime's metrics and the operator's own nsxv_ ones", async () => {
    const { registry } = createOperatorMetrics({ processMetrics: false });
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.startsWith("nsxv_"));
    expect(names.sort()).toEqual(
      [
        "nsxv_drift_detected_total",
        "nsxv_edge_tenant_corrections_total",
        "nsxv_ip_releases_total",
        "nsxv_manager_request_duration_seconds",
        "nsxv_manager_requests_total",
        "nsxv_pool_stray_addresses",
        "nsxv_pool_used_ratio",
      ].sort(),
    );
    expect((await registry.getMetricsAsJSON()).map((m) => m.name)).toContain("workqueue_depth");
  });

  it("adds process metrics by default", async () => {
    const { registry } = createOperatorMetrics();
    expect(await registry.metrics()).toContain("process_cpu_user_seconds_total");
  });

  const cases: { name: string; reason: string; act: (m: OperatorMetrics) => void; want: string[] }[] = [
    {
      name: "ManagerRequest",
      reason: "Requests count by manager, method, call name and status; durations in seconds.",
      act: (m) => {
        m.managerRequest("ns/mgr", { method: "GET", route: "getEdge", status: 200, durationMs: 120 });
        m.managerRequest("ns/mgr", { method: "GET", route: "getEdge", status: "error", durationMs: 5 });
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
      act: (m) => {
        m.changed("tenantCorrections", 2);
        m.changed("releases", 3);
        m.driftDetected("EdgeTenant");
      },
      want: [
        "nsxv_edge_tenant_corrections_total 2",
        "nsxv_ip_releases_total 3",
        'nsxv_drift_detected_total{kind="EdgeTenant"} 1',
      ],
    },
    {
      name: "PoolGauges",
      reason: "The pool gauges hold the last ratio and stray count per object and pool.",
      act: (m) => {
        const labels = { namespace: "ns", name: "pods", pool: "ipaddresspool-1" };
        m.pool(labels, { usedRatio: 0.5, strays: 4 });
        m.pool(labels, { usedRatio: 0.75, strays: 2 });
      },
      want: [
        'nsxv_pool_used_ratio{namespace="ns",name="pods",pool="ipaddresspool-1"} 0.75',
        'nsxv_pool_stray_addresses{namespace="ns",name="pods",pool="ipaddresspool-1"} 2',
      ],
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
    metrics.pool(labels, { usedRatio: 0.5, strays: 1 });
    metrics.forgetPool(labels);
    expect(await registry.metrics()).not.toContain('pool="ipaddresspool-1"');
  });
});
