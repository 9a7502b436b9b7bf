/**
 * deletionPolicy Restore on a real kube-apiserver: the operator puts its finalizer on the object,
 * a delete writes the edge's original tenant back and then lets the object go; while the manager
 * cannot be reached the finalizer holds the object and its status says why; an Orphan object has
 * no finalizer and goes at once, its tenant left as it is.
 */
import { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import { Operator } from "../../src/operator/operator.ts";
import { KubernetesSource, type ObjectApi } from "../../src/source/kubernetes.ts";
import { RESTORE_FINALIZER, type EdgeTenant } from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { createTestNamespace, describeWithControlPlane, installCrds } from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";
import {
  CRDS_DIR,
  Resources,
  condition,
  startTestOperator,
  tenantOn,
  type TestOperator,
} from "./operator-harness.ts";

describeWithControlPlane("operator: EdgeTenant deletionPolicy", (cp) => {
  const kc = cp.makeKubeConfig();
  let k8s: Resources;
  let sim: RunningSimulator;
  let operator: TestOperator;

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    k8s = new Resources(kc, await createTestNamespace(kc, "nsxv-op-restore"));
    sim = await startSimulator({
      state: { edges: [{ generate: { count: 4, idStart: 1, tenant: "legacy" } }] },
    });
    await k8s.manager("nsx", sim.url);
    operator = await startTestOperator(kc, k8s.namespace);
  });

  afterAll(async () => {
    await operator?.stop();
    await sim?.close();
  });

  const gone = (name: string) =>
    waitFor(`EdgeTenant ${name} gone`, async () =>
      (await k8s.get("EdgeTenant", name).then(
        () => false,
        () => true,
      ))
        ? true
        : undefined,
    );

  async function corrected(
    name: string,
    edgeId: string,
    deletionPolicy: "Orphan" | "Restore",
  ): Promise<EdgeTenant> {
    await k8s.create<EdgeTenant>({
      kind: "EdgeTenant",
      metadata: { name },
      spec: { managerRef: { name: "nsx" }, edgeId, tenant: "blue", deletionPolicy },
    });
    return k8s.waitFor<EdgeTenant>(
      "EdgeTenant",
      name,
      "corrected",
      (o) => o.status?.originalTenant === "legacy" && o.status.observedTenant === "blue",
    );
  }

  it("Restore: the finalizer holds the object until the original tenant is written back", async () => {
    await corrected("restore", "edge-1", "Restore");
    const held = await k8s.waitFor<EdgeTenant>("EdgeTenant", "restore", "its finalizer", (o) =>
      (o.metadata.finalizers ?? []).includes(RESTORE_FINALIZER),
    );
    expect(held.metadata.finalizers).toEqual([RESTORE_FINALIZER]);
    expect(tenantOn(sim, "edge-1")).toBe("blue");

    await k8s.delete("EdgeTenant", "restore");
    await gone("restore");
    expect(tenantOn(sim, "edge-1"), "restored before the object went").toBe("legacy");
    // one Event says what happened: restored, and not also "skipped"
    const reasons = await waitFor("the restore's Event", async () => {
      const events = await k8s.core.listNamespacedEvent({
        namespace: k8s.namespace,
        fieldSelector: "involvedObject.name=restore",
      });
      const found = events.items.map((e) => e.reason ?? "");
      return found.includes("RestoredEdgeTenant") ? found : undefined;
    });
    expect(reasons.filter((r) => r.startsWith("Restore"))).toEqual(["RestoredEdgeTenant"]);
  });

  it("Restore: a restore whose finalizer removal lost a race says RestoredEdgeTenant only", async () => {
    // its own operator, whose first removal of the restore finalizer meets a real 409: another
    // writer updated the object between the restore and the patch
    await operator.stop();
    const real = kc.makeApiClient(CustomObjectsApi);
    let raced = false;
    const objectApi: ObjectApi = {
      async patchNamespacedCustomObject(param, options) {
        const body = param.body as { metadata?: { finalizers?: string[] } };
        const removing = !(body.metadata?.finalizers ?? []).includes(RESTORE_FINALIZER);
        if (!raced && param.name === "raced" && removing) {
          raced = true;
          await k8s.patchStatus("EdgeTenant", "raced", { edgeName: "written-by-a-rival" });
        }
        return real.patchNamespacedCustomObject(param, options);
      },
    };
    const source = new KubernetesSource({ kubeConfig: kc, namespace: k8s.namespace, objectApi });
    const racing = new Operator({
      source,
      syncIntervalMs: 2_000,
      metricsBindAddress: "0",
      healthProbeBindAddress: "0",
      metrics: createOperatorMetrics({ processMetrics: false }),
    });
    const stop = new AbortController();
    const exit = racing.start(stop.signal);
    try {
      await corrected("raced", "edge-3", "Restore");
      await k8s.waitFor<EdgeTenant>("EdgeTenant", "raced", "its finalizer", (o) =>
        (o.metadata.finalizers ?? []).includes(RESTORE_FINALIZER),
      );
      await k8s.delete("EdgeTenant", "raced");
      await gone("raced");
    } finally {
      stop.abort();
      await exit;
      operator = await startTestOperator(kc, k8s.namespace);
    }
    expect(raced, "the finalizer's removal lost a race").toBe(true);
    expect(tenantOn(sim, "edge-3")).toBe("legacy");
    const reasons = await waitFor("the restore's Event", async () => {
      const events = await k8s.core.listNamespacedEvent({
        namespace: k8s.namespace,
        fieldSelector: "involvedObject.name=raced",
      });
      const found = events.items.map((e) => e.reason ?? "");
      return found.includes("RestoredEdgeTenant") ? found : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(reasons.filter((r) => r.startsWith("Restore"))).toEqual(["RestoredEdgeTenant"]);
  });

  it("Restore: while the manager cannot be reached, the object stays and its status says why", async () => {
    await corrected("held", "edge-2", "Restore");
    await k8s.waitFor<EdgeTenant>("EdgeTenant", "held", "its finalizer", (o) =>
      (o.metadata.finalizers ?? []).includes(RESTORE_FINALIZER),
    );
    sim.state.faults.add({ route: "getEdge", kind: "status", status: 503, count: 1_000 });
    try {
      await k8s.delete("EdgeTenant", "held");
      const waiting = await k8s.waitFor<EdgeTenant>("EdgeTenant", "held", "the restore failing", (o) =>
        (condition(o, "Synced")?.message ?? "").includes("restoring the original tenant"),
      );
      expect(waiting.metadata.deletionTimestamp).toBeTypeOf("string");
      expect(condition(waiting, "Synced")).toMatchObject({ status: "False", reason: "Unreachable" });
      expect(tenantOn(sim, "edge-2")).toBe("blue");
    } finally {
      sim.state.faults.clear();
    }
    await gone("held");
    expect(tenantOn(sim, "edge-2"), "restored once the manager answered").toBe("legacy");
  });

  it("Orphan: no finalizer, the object goes at once and the tenant stays", async () => {
    const object = await corrected("orphan", "edge-4", "Orphan");
    expect(object.metadata.finalizers ?? []).toEqual([]);
    await k8s.delete("EdgeTenant", "orphan");
    await gone("orphan");
    expect(tenantOn(sim, "edge-4")).toBe("blue");
  });
});
