/**
 * Deletion in any order, on a real kube-apiserver with kube-controller-manager's namespace and
 * garbage-collector controllers: a Secret, an NSXManager and an EdgeTenant with deletionPolicy
 * Restore go together (the namespace deleted, or `kubectl delete -f` of the files that made them,
 * as a Flux or Argo CD prune does), in whatever order the API server takes them. What the restore
 * needs stays available (the in-use finalizer of the NSXManager and of its Secret, the
 * credentials the operator holds), the edge gets its original tenant back and everything goes,
 * also when the operator restarts between the Secret's deletion and the restore; a manager gone
 * for good is let go with the nsxv.io/skip-restore annotation and a Warning.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { stringify } from "yaml";
import { IN_USE_FINALIZER, RESTORE_FINALIZER, type EdgeTenant } from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { startControllerManager, type RunningControllerManager } from "../controlplane/controller-manager.ts";
import {
  apiStatus,
  createTestNamespace,
  describeWithControlPlane,
  installCrds,
  kubectl,
} from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";
import {
  CRDS_DIR,
  Resources,
  condition,
  startTestOperator,
  tenantOn,
  type TestOperator,
} from "./operator-harness.ts";

describeWithControlPlane("deletion in any order", (cp) => {
  const kc = cp.makeKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  let kcm: RunningControllerManager;
  let sim: RunningSimulator;
  const operators: TestOperator[] = [];

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    kcm = startControllerManager(cp);
    sim = await startSimulator({
      state: { edges: [{ generate: { count: 3, idStart: 1, tenant: "legacy" } }] },
    });
  });

  afterAll(async () => {
    for (const operator of operators) await operator.stop();
    await kcm?.stop();
    await sim?.close();
  });

  /** The three objects of one team, as files, pointing at `url`: Secret and NSXManager first. */
  function manifests(url: string, edgeId: string): Record<string, object> {
    return {
      "1-secret.yaml": {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "nsx-credentials", annotations: { "nsxv.io/allowed-manager-urls": url } },
        stringData: { username: "admin", password: "default" },
      },
      "2-manager.yaml": {
        apiVersion: "nsxv.io/v1alpha1",
        kind: "NSXManager",
        metadata: { name: "nsx" },
        spec: { url, credentialsSecretRef: { name: "nsx-credentials" } },
      },
      "3-edge.yaml": {
        apiVersion: "nsxv.io/v1alpha1",
        kind: "EdgeTenant",
        metadata: { name: "edge" },
        spec: { managerRef: { name: "nsx" }, edgeId, tenant: "blue", deletionPolicy: "Restore" },
      },
    };
  }

  /** A namespace with the three objects applied from files, the edge corrected and every finalizer in place. */
  async function scene(prefix: string, manager: RunningSimulator, edgeId: string) {
    const namespace = await createTestNamespace(kc, prefix);
    const k8s = new Resources(kc, namespace);
    operators.push(await startTestOperator(kc, namespace));
    const dir = await mkdtemp(join(tmpdir(), "nsxv-deletion-"));
    for (const [file, object] of Object.entries(manifests(manager.url, edgeId)))
      await writeFile(join(dir, file), stringify(object));
    await kubectl(cp, ["apply", "-n", namespace, "-f", dir]);
    await waitFor("corrected", async () => (tenantOn(manager, edgeId) === "blue" ? true : undefined));
    await k8s.waitFor<EdgeTenant>("EdgeTenant", "edge", "its restore finalizer", (o) =>
      (o.metadata.finalizers ?? []).includes(RESTORE_FINALIZER),
    );
    await k8s.waitFor("NSXManager", "nsx", "its in-use finalizer", (o) =>
      (o.metadata.finalizers ?? []).includes(IN_USE_FINALIZER),
    );
    return { namespace, k8s, dir };
  }

  const namespaceGone = (namespace: string) =>
    waitFor(
      `namespace ${namespace} gone`,
      async () => {
        const status = await core.readNamespace({ name: namespace }).then(
          () => 200,
          (error: unknown) => apiStatus(error),
        );
        return status === 404 ? true : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );

  it("deleting the namespace writes the original tenant back, and the namespace goes", async () => {
    const { namespace, dir } = await scene("nsxv-del-ns", sim, "edge-1");
    await core.deleteNamespace({ name: namespace });
    await waitFor("restored", async () => (tenantOn(sim, "edge-1") === "legacy" ? true : undefined), {
      timeoutMs: 60_000,
    });
    await namespaceGone(namespace);
    await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it("an operator restarted after the namespace's deletion began still restores: the Secret waits for it", async () => {
    const { namespace, k8s, dir } = await scene("nsxv-del-restart", sim, "edge-3");
    const secret = () => core.readNamespacedSecret({ name: "nsx-credentials", namespace });
    // held before the first correction, and said so in the manager's status
    expect((await secret()).metadata?.finalizers).toContain(IN_USE_FINALIZER);
    expect((await k8s.get("NSXManager", "nsx")).status).toMatchObject({ heldSecrets: ["nsx-credentials"] });
    // the operator goes down (a restart, a failover): no credentials held in memory any more
    await operators.pop()?.stop();
    await core.deleteNamespace({ name: namespace });
    await waitFor("the Secret marked for deletion, and kept", async () =>
      (await secret()).metadata?.deletionTimestamp !== undefined ? true : undefined,
    );
    await k8s.waitFor(
      "EdgeTenant",
      "edge",
      "marked for deletion",
      (o) => o.metadata.deletionTimestamp !== undefined,
    );
    expect(tenantOn(sim, "edge-3"), "nothing restored without an operator").toBe("blue");

    operators.push(await startTestOperator(kc, namespace));
    await waitFor("restored", async () => (tenantOn(sim, "edge-3") === "legacy" ? true : undefined), {
      timeoutMs: 60_000,
    });
    await namespaceGone(namespace);
    await rm(dir, { recursive: true, force: true });
  }, 150_000);

  it("kubectl delete -f of the files (Secret and NSXManager first) writes the original tenant back, and all go", async () => {
    const { namespace, k8s, dir } = await scene("nsxv-del-files", sim, "edge-2");
    await kubectl(cp, ["delete", "-n", namespace, "-f", dir, "--wait=false"]);
    await waitFor("restored", async () => (tenantOn(sim, "edge-2") === "legacy" ? true : undefined), {
      timeoutMs: 60_000,
    });
    for (const kind of ["EdgeTenant", "NSXManager"] as const) {
      await waitFor(`${kind} gone`, async () =>
        (await k8s.get(kind, kind === "EdgeTenant" ? "edge" : "nsx").then(
          () => false,
          (error: unknown) => apiStatus(error) === 404,
        ))
          ? true
          : undefined,
      );
    }
    await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it("a manager gone for good: nsxv.io/skip-restore lets the object go, with a Warning saying so", async () => {
    const doomed = await startSimulator({
      state: { edges: [{ generate: { count: 1, idStart: 9, tenant: "legacy" } }] },
    });
    const { namespace, k8s, dir } = await scene("nsxv-del-gone", doomed, "edge-9");
    await doomed.close();
    await k8s.delete("EdgeTenant", "edge");
    const stuck = await k8s.waitFor<EdgeTenant>(
      "EdgeTenant",
      "edge",
      "held: the manager is gone",
      (o) => condition(o, "Synced")?.status === "False",
    );
    expect(stuck.metadata.deletionTimestamp, "being deleted, held by its finalizer").toBeDefined();
    await k8s.patch("EdgeTenant", "edge", { metadata: { annotations: { "nsxv.io/skip-restore": "true" } } });
    await waitFor("gone", async () =>
      (await k8s.get("EdgeTenant", "edge").then(
        () => false,
        (error: unknown) => apiStatus(error) === 404,
      ))
        ? true
        : undefined,
    );
    // the Event is recorded beside the finalizer's removal, not before it: wait for it
    const abandoned = await waitFor("the RestoreAbandoned Warning", async () => {
      const { items } = await core.listNamespacedEvent({ namespace });
      const warnings = items.filter((e) => e.reason === "RestoreAbandoned" && e.type === "Warning");
      return warnings.length > 0 ? warnings.map((e) => e.message) : undefined;
    });
    expect(abandoned, "a Warning says the original was not written back").toEqual([
      expect.stringContaining("nsxv.io/skip-restore"),
    ]);
    // its NSXManager follows once nothing names it
    await k8s.delete("NSXManager", "nsx");
    await waitFor("NSXManager gone", async () =>
      (await k8s.get("NSXManager", "nsx").then(
        () => false,
        (error: unknown) => apiStatus(error) === 404,
      ))
        ? true
        : undefined,
    );
    await rm(dir, { recursive: true, force: true });
  }, 120_000);
});
