/**
 * Two operators with leader election over a real Lease (3 s here, 15 s by default): only the
 * leader reconciles and writes, the standby answers its probes; a leader cut off from the API
 * server loses the lease (and says so: its process would exit non-zero) and the standby takes
 * over within the lease duration; a leader stopped gracefully releases the lease at once.
 */
import { CoordinationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { KubernetesLeaseStore } from "../../src/kube/lease-store.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { makeKubeConfig } from "../controlplane/controlplane.ts";
import { createTestNamespace, describeWithControlPlane, installCrds } from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";
import {
  CRDS_DIR,
  Resources,
  TcpProxy,
  condition,
  httpGet,
  startTestOperator,
  startWebScene,
  type TestOperator,
} from "./operator-harness.ts";

const LEASE = "nsxv-operator-test";
const LEASE_DURATION_MS = 3_000;

describeWithControlPlane("operator: leader election", (cp) => {
  const kc = cp.makeKubeConfig();
  const leases = kc.makeApiClient(CoordinationV1Api);
  let namespace = "";
  let k8s: Resources;
  let sim: RunningSimulator;
  let proxy: TcpProxy;
  const operators: TestOperator[] = [];

  const start = async (identity: string, via: "proxy" | "direct" = "direct") => {
    const url = via === "proxy" ? await proxy.start() : cp.url;
    const kubeConfig = makeKubeConfig({ ...cp, url }, cp.adminToken);
    const operator = await startTestOperator(kc, namespace, {
      kubeConfig,
      leaderElection: {
        name: LEASE,
        identity,
        store: new KubernetesLeaseStore({
          api: kubeConfig.makeApiClient(CoordinationV1Api),
          namespace,
          name: LEASE,
        }),
        leaseDurationMs: LEASE_DURATION_MS,
        renewDeadlineMs: 2_000,
        retryPeriodMs: 500,
      },
    });
    operators.push(operator);
    return operator;
  };
  const holder = async () =>
    (await leases.readNamespacedLease({ name: LEASE, namespace })).spec?.holderIdentity;
  const metric = async (operator: TestOperator, series: string) => {
    const { text } = await httpGet(operator.metrics, "/metrics");
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
  const reconciles = async (operator: TestOperator) => {
    const { text } = await httpGet(operator.metrics, "/metrics");
    return [...text.matchAll(/^controller_runtime_reconcile_total\{[^}]*\} (\d+)$/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  };

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    namespace = await createTestNamespace(kc, "nsxv-op-leader");
    k8s = new Resources(kc, namespace);
    sim = await startWebScene(k8s, 1);
    proxy = new TcpProxy(cp.url);
  });

  afterAll(async () => {
    await Promise.all(operators.map((o) => o.stop()));
    await proxy?.close();
    await sim?.close();
  });

  it("only the leader reconciles and writes; the standby answers its probes", async () => {
    const a = await start("operator-a", "proxy");
    await waitFor("a to lead", async () => (a.operator.isLeader ? true : undefined));
    const b = await start("operator-b");
    await k8s.waitFor("EdgeTenant", "web", "Ready", (o) => condition(o, "Ready")?.status === "True");
    expect(sim.state.edge("edge-1")?.doc.tenant).toBe("blue");
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    expect(await holder()).toBe("operator-a");
    expect(b.operator.isLeader).toBe(false);
    for (const o of [a, b]) {
      expect((await httpGet(o.probes, "/readyz")).status).toBe(200);
      expect((await httpGet(o.probes, "/healthz")).status).toBe(200);
    }
    expect(await metric(a, `leader_election_master_status{name="${LEASE}"}`)).toBe(1);
    expect(await metric(b, `leader_election_master_status{name="${LEASE}"}`)).toBe(0);
    expect(await reconciles(a)).toBeGreaterThan(0);
    expect(await reconciles(b)).toBe(0);
    expect(b.logs.some((l) => l.msg === "status changed")).toBe(false);
  });

  it("a leader cut off from the API server loses the lease; the standby takes over within the lease duration", async () => {
    const [a, b] = operators as [TestOperator, TestOperator];
    const cutMs = Date.now();
    proxy.cutConnections();
    expect(await a.exit).toBe("lease-lost");
    await waitFor("b to lead", async () => (b.operator.isLeader ? true : undefined), { intervalMs: 50 });
    // b sees a's last renewal within one of its polls (retry period × up to 2.2 with jitter), waits
    // the lease duration from then, and takes the lease on its next poll
    expect(Date.now() - cutMs).toBeLessThan(LEASE_DURATION_MS + 2 * 500 * 2.2 + 500);
    expect(await holder()).toBe("operator-b");

    await k8s.patch("EdgeTenant", "web", { spec: { tenant: "green" } });
    await waitFor("b to act", async () =>
      sim.state.edge("edge-1")?.doc.tenant === "green" ? true : undefined,
    );
    expect(await reconciles(b)).toBeGreaterThan(0);
  });

  it("a leader stopped gracefully releases the lease; a new replica takes over at once", async () => {
    const b = operators[1]!;
    const c = await start("operator-c");
    expect(c.operator.isLeader).toBe(false);
    const stoppedMs = Date.now();
    expect(await b.stop()).toBe("stopped");
    expect(b.logs.some((l) => l.msg === "released lease")).toBe(true);
    await waitFor("c to lead", async () => (c.operator.isLeader ? true : undefined), { intervalMs: 50 });
    expect(Date.now() - stoppedMs).toBeLessThan(LEASE_DURATION_MS);
    expect(await holder()).toBe("operator-c");
  });
});
