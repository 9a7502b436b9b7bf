/**
 * The operator keeps following the cluster when its watches break: connections cut (through a
 * proxy) and a kube-apiserver restart. While a watch is down /readyz says so; once back, changes
 * made meanwhile are acted on. And the Secrets managers reference: a missing one or bad
 * credentials make the manager Ready=False and its dependents ManagerNotReady without a write to
 * the manager, and a created or changed Secret takes effect without a restart.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EdgeTenant, NSXManager } from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { makeKubeConfig } from "../controlplane/controlplane.ts";
import { createTestNamespace, describeWithOwnControlPlane, installCrds } from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";
import {
  CRDS_DIR,
  Resources,
  TcpProxy,
  condition,
  httpGet,
  startTestOperator,
  startWebScene,
  tenantOn,
  type TestOperator,
} from "./operator-harness.ts";
import { callsOf } from "../support/calls.ts";

await describeWithOwnControlPlane("operator: watch interruptions and credentials", (cp) => {
  const kc = cp.makeKubeConfig();
  let namespace = "";
  let k8s: Resources;
  let sim: RunningSimulator;
  let proxy: TcpProxy;
  let operator: TestOperator;
  /** /readyz answers, sampled every 100 ms */
  const readiness: { atMs: number; status: number; text: string }[] = [];
  let sampling: ReturnType<typeof setInterval> | undefined;

  const untilTenant = (s: RunningSimulator, edgeId: string, tenant: string) =>
    waitFor(`${edgeId} to carry ${tenant}`, async () => (tenantOn(s, edgeId) === tenant ? true : undefined), {
      timeoutMs: 30_000,
    });
  const readySince = (sinceMs: number) => readiness.filter((r) => r.atMs >= sinceMs);

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    namespace = await createTestNamespace(kc, "nsxv-op-watch");
    k8s = new Resources(kc, namespace);
    sim = await startWebScene(k8s, 2);
    proxy = new TcpProxy(cp.url);
    const url = await proxy.start();
    operator = await startTestOperator(kc, namespace, {
      kubeConfig: makeKubeConfig({ ...cp, url }, cp.adminToken),
    });
    sampling = setInterval(() => {
      const atMs = Date.now();
      httpGet(operator.probes, "/readyz").then(
        ({ status, text }) => readiness.push({ atMs, status, text }),
        () => {},
      );
    }, 100);
  });

  afterAll(async () => {
    clearInterval(sampling);
    await operator?.stop();
    await proxy?.close();
    await sim?.close();
  });

  it("connections cut: /readyz reports the watch down; changes made meanwhile are acted on once back", async () => {
    await k8s.waitFor("EdgeTenant", "web", "Ready", (o) => condition(o, "Ready")?.status === "True");
    expect(tenantOn(sim, "edge-1")).toBe("blue");
    const cutMs = Date.now();
    proxy.cutConnections();
    await waitFor("/readyz to fail", async () => readySince(cutMs).find((r) => r.status === 500));
    expect(readySince(cutMs).find((r) => r.status === 500)?.text).toMatch(/\[-\]source failed: .*watch/);

    await k8s.patch("EdgeTenant", "web", { spec: { tenant: "green" } });
    await k8s.create<EdgeTenant>({
      kind: "EdgeTenant",
      metadata: { name: "app" },
      spec: { managerRef: { name: "nsx" }, edgeId: "edge-2", tenant: "blue" },
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(tenantOn(sim, "edge-1"), "nothing seen while cut").toBe("blue");

    const resumedMs = Date.now();
    proxy.resume();
    await untilTenant(sim, "edge-1", "green");
    await untilTenant(sim, "edge-2", "blue");
    await waitFor("/readyz to pass", async () => readySince(resumedMs).find((r) => r.status === 200));
    expect(operator.logs.some((l) => l.msg === "watch failed; restarting")).toBe(true);
  });

  it("kube-apiserver restarted: the operator resumes and acts on changes made after", async () => {
    const restartMs = Date.now();
    await cp.restartApiServer();
    await k8s.patch("EdgeTenant", "web", { spec: { tenant: "yellow" } });
    await untilTenant(sim, "edge-1", "yellow");
    const web = await k8s.waitFor<EdgeTenant>(
      "EdgeTenant",
      "web",
      "generation 3 observed",
      (o) => o.status?.observedGeneration === 3 && condition(o, "Ready")?.status === "True",
    );
    expect(web.status?.observedTenant).toBe("yellow");
    expect(
      readySince(restartMs).some((r) => r.status === 500),
      "not ready while the server was away",
    ).toBe(true);
    await waitFor("/readyz to pass", async () => (readiness.at(-1)?.status === 200 ? true : undefined));
  });

  it("a missing Secret: manager Ready=False, dependents ManagerNotReady, no write; creating it takes effect", async () => {
    const late = await startSimulator({
      state: { edges: [{ generate: { count: 1, idStart: 5, tenant: "red" } }] },
    });
    try {
      await k8s.create<NSXManager>({
        kind: "NSXManager",
        metadata: { name: "late" },
        spec: { url: late.url, credentialsSecretRef: { name: "late-credentials" } },
      });
      await k8s.create<EdgeTenant>({
        kind: "EdgeTenant",
        metadata: { name: "late-edge" },
        spec: { managerRef: { name: "late" }, edgeId: "edge-5", tenant: "blue" },
      });
      const manager = await k8s.waitFor(
        "NSXManager",
        "late",
        "not ready",
        (o) => condition(o, "Ready")?.status === "False",
      );
      expect(condition(manager, "Ready")?.reason).toBe("ManagerNotReady");
      expect(condition(manager, "Ready")?.message).toContain("late-credentials");
      const edge = await k8s.waitFor(
        "EdgeTenant",
        "late-edge",
        "ManagerNotReady",
        (o) => condition(o, "Synced")?.reason === "ManagerNotReady",
      );
      expect(condition(edge, "Synced")?.status).toBe("False");
      expect(callsOf(late)).toEqual({});

      await k8s.secret("late-credentials", { username: "admin", password: "default" }, late.url);
      await untilTenant(late, "edge-5", "blue");
      await k8s.waitFor("NSXManager", "late", "Ready", (o) => condition(o, "Ready")?.status === "True");
      await k8s.waitFor("EdgeTenant", "late-edge", "Ready", (o) => condition(o, "Ready")?.status === "True");

      // bad credentials: the manager is rotated, the Secret not yet
      const rotated = await fetch(`${late.url}/_simulator/credentials`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password: "rotated" }),
      });
      expect(rotated.status).toBe(200);
      const unauthorized = await k8s.waitFor<NSXManager>(
        "NSXManager",
        "late",
        "unauthorized",
        (o) => o.status?.authenticated === false,
      );
      expect(condition(unauthorized, "Ready")).toMatchObject({ status: "False", reason: "Unauthorized" });
      const writes = late.state.counters.snapshot().putEdge ?? {};
      await k8s.patch("EdgeTenant", "late-edge", { spec: { tenant: "green" } });
      await k8s.waitFor(
        "EdgeTenant",
        "late-edge",
        "ManagerNotReady",
        (o) => o.status?.observedGeneration === 2 && condition(o, "Synced")?.reason === "ManagerNotReady",
      );
      expect(late.state.counters.snapshot().putEdge ?? {}, "nothing written").toEqual(writes);
      expect(tenantOn(late, "edge-5")).toBe("blue");

      await k8s.replaceSecret("late-credentials", { username: "admin", password: "rotated" });
      await untilTenant(late, "edge-5", "green");
      await k8s.waitFor<NSXManager>(
        "NSXManager",
        "late",
        "authenticated",
        (o) => o.status?.authenticated === true,
      );
    } finally {
      await late.close();
    }
  });
});
