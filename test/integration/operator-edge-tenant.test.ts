/**
 * The operator against a real kube-apiserver and the simulator, for EdgeTenants: the demo example
 * applied with kubectl converges, drift made out of band is corrected within the sync interval,
 * Observe only reports, paused makes no call, a status write makes no call while a spec or
 * annotation change is acted on at once, conflicts stall, and status, Events, metrics and logs
 * carry what GitOps tools and people read.
 */
import { cp as copy, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { EdgeTenant } from "../../src/api/types.ts";
import { loadStateFile, startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import {
  createTestNamespace,
  describeWithControlPlane,
  installCrds,
  kubectl,
  KubectlError,
} from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";
import { kstatus } from "./kstatus.ts";
import {
  CRDS_DIR,
  EXAMPLES_DIR,
  Resources,
  SYNC_INTERVAL_MS,
  condition,
  httpGet,
  startTestOperator,
  tenantOn,
  type TestOperator,
} from "./operator-harness.ts";
import { callsOf } from "../support/calls.ts";

/** "at once": far below the object's hourly resync, with room for a busy machine */
const AT_ONCE_MS = 5_000;

describeWithControlPlane("operator: EdgeTenant", (cp) => {
  const kc = cp.makeKubeConfig();
  let namespace = "";
  let k8s: Resources;
  let demo: RunningSimulator;
  /** a manager of its own: its calls are those of the one EdgeTenant pointed at it */
  let quiet: RunningSimulator;
  let operator: TestOperator;
  let manifests = "";

  const edgeCalls = (sim: RunningSimulator) => {
    const counts = callsOf(sim);
    return (counts.getEdge ?? 0) + (counts.putEdge ?? 0);
  };

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    namespace = await createTestNamespace(kc, "nsxv-op-edge");
    k8s = new Resources(kc, namespace);
    demo = await startSimulator({
      state: await loadStateFile(join(EXAMPLES_DIR, "demo/simulator-state.yaml")),
    });
    quiet = await startSimulator({
      state: { edges: [{ generate: { count: 1, idStart: 7, tenant: "old" } }] },
    });
    // the demo manifests, pointed at the simulator as `--manager-url lab=URL` would
    manifests = await mkdtemp(join(tmpdir(), "nsxv-demo-"));
    await copy(join(EXAMPLES_DIR, "demo/manifests"), manifests, { recursive: true });
    const manager = join(manifests, "manager.yaml");
    // the NSXManager's URL and the Secret's binding to it
    const text = await readFile(manager, "utf8");
    await writeFile(manager, text.replaceAll("https://nsx-manager.lab.example", demo.url));
    operator = await startTestOperator(kc, namespace);
  });

  afterAll(async () => {
    await operator?.stop();
    await Promise.all([demo?.close(), quiet?.close()]);
    if (manifests !== "") await rm(manifests, { recursive: true, force: true });
  });

  it("kubectl applies the demo example; the API server refuses a bad object at apply time", async () => {
    const applied = await kubectl(cp, ["apply", "-n", namespace, "-f", manifests]);
    expect(applied.stderr).toBe("");
    expect(applied.stdout).toContain("edgetenant.nsxv.io/esg-web created");
    expect(applied.stdout).toContain("ippoolallocations.nsxv.io/controllers created");

    const bad = join(manifests, "..", `bad-${namespace}.yaml`);
    await writeFile(
      bad,
      "apiVersion: nsxv.io/v1alpha1\nkind: EdgeTenant\nmetadata: { name: bad }\n" +
        "spec: { managerRef: { name: lab }, edgeId: edge-one, tenant: x }\n",
    );
    const refused: unknown = await kubectl(cp, ["apply", "-n", namespace, "-f", bad]).then(
      () => undefined,
      (error: unknown) => error,
    );
    await rm(bad, { force: true });
    expect(refused, "kubectl apply exits non-zero").toBeInstanceOf(KubectlError);
    expect((refused as KubectlError).stderr).toContain("spec.edgeId");
  });

  it("every example is accepted by the API server as it is written (server-side dry run)", async () => {
    const api = KubernetesObjectApi.makeApiClient(kc);
    // a namespace of its own: the demo objects applied above have the same names
    const dryRunNamespace = await createTestNamespace(kc, "nsxv-op-examples");
    const files = (await readdir(EXAMPLES_DIR, { recursive: true }))
      .filter((f) => f.endsWith(".yaml") && !f.endsWith("simulator-state.yaml"))
      .sort();
    let accepted = 0;
    for (const file of files) {
      for (const doc of parseAllDocuments(await readFile(join(EXAMPLES_DIR, file), "utf8"))) {
        const object = doc.toJS() as KubernetesObject | null;
        if (object?.kind === undefined) continue;
        // the examples name their own namespaces; this test file owns only one
        object.metadata = { ...object.metadata, namespace: dryRunNamespace };
        await expect(
          api.create(object, undefined, "All"),
          `${file}: ${object.kind} ${object.metadata.name}`,
        ).resolves.toBeDefined();
        accepted++;
      }
    }
    expect(accepted).toBeGreaterThanOrEqual(15);
  });

  it("an EdgeTenant converges, with observedGeneration and conditions that kstatus reads as Current", async () => {
    const web = await k8s.waitFor<EdgeTenant>(
      "EdgeTenant",
      "esg-web",
      "Ready",
      (o) => condition(o, "Ready")?.status === "True",
    );
    expect(tenantOn(demo, "edge-1")).toBe("tenant-blue");
    expect(web.status?.observedGeneration).toBe(web.metadata.generation);
    for (const c of web.status?.conditions ?? [])
      expect(c.observedGeneration, c.type).toBe(web.metadata.generation);
    expect(condition(web, "Synced")?.status).toBe("True");
    expect(kstatus(web)).toEqual({ status: "Current", message: "Resource is Ready" });
    expect(web.status?.observedTenant).toBe("tenant-blue");
    const manager = await k8s.waitFor(
      "NSXManager",
      "lab",
      "Ready",
      (o) => condition(o, "Ready")?.status === "True",
    );
    expect(kstatus(manager).status).toBe("Current");
  });

  it("a tenant changed out of band on the manager is corrected within the sync interval", async () => {
    await waitFor("edge-2 corrected first", async () =>
      tenantOn(demo, "edge-2") === "tenant-green" ? true : undefined,
    );
    const res = await fetch(`${demo.url}/_simulator/edges/edge-2`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tenant: "intruder" }),
    });
    expect(res.status).toBe(200);
    const startedMs = Date.now();
    await waitFor(
      "edge-2 corrected again",
      async () => (tenantOn(demo, "edge-2") === "tenant-green" ? true : undefined),
      {
        intervalMs: 50,
      },
    );
    // the resync comes after the sync interval ±10 %; the rest is one reconcile
    expect(Date.now() - startedMs).toBeLessThan(SYNC_INTERVAL_MS * 1.1 + 2_000);
  });

  it("Observe reports Drifted and changes nothing", async () => {
    const version = demo.state.edge("edge-3")?.version;
    const db = await k8s.waitFor<EdgeTenant>(
      "EdgeTenant",
      "esg-db",
      "Drifted",
      (o) => condition(o, "Ready")?.reason === "Drifted",
    );
    expect(condition(db, "Ready")?.status).toBe("False");
    expect(condition(db, "Synced")?.status).toBe("True");
    expect(db.status?.observedTenant).toBe("legacy-ops");
    await new Promise((resolve) => setTimeout(resolve, SYNC_INTERVAL_MS * 1.2));
    expect(tenantOn(demo, "edge-3")).toBe("legacy-ops");
    expect(demo.state.edge("edge-3")?.version).toBe(version);
  });

  it("paused makes no manager call; removing the annotation is acted on at once", async () => {
    await k8s.manager("quiet", quiet.url);
    await k8s.create<EdgeTenant>({
      kind: "EdgeTenant",
      metadata: { name: "quiet-edge", annotations: { "nsxv.io/paused": "true" } },
      spec: { managerRef: { name: "quiet" }, edgeId: "edge-7", tenant: "new", syncInterval: "1h" },
    });
    const paused = await k8s.waitFor(
      "EdgeTenant",
      "quiet-edge",
      "paused",
      (o) => condition(o, "Synced")?.reason === "ReconcilePaused",
    );
    expect(condition(paused, "Synced")?.status).toBe("False");
    await new Promise((resolve) => setTimeout(resolve, SYNC_INTERVAL_MS * 1.5));
    expect(edgeCalls(quiet)).toBe(0);
    expect(tenantOn(quiet, "edge-7")).toBe("old");

    const startedMs = Date.now();
    await k8s.patch("EdgeTenant", "quiet-edge", { metadata: { annotations: { "nsxv.io/paused": null } } });
    await k8s.waitFor("EdgeTenant", "quiet-edge", "Ready", (o) => condition(o, "Ready")?.status === "True");
    expect(tenantOn(quiet, "edge-7")).toBe("new");
    // quiet-edge resyncs hourly: only the change itself explains a pass this soon
    expect(Date.now() - startedMs).toBeLessThan(AT_ONCE_MS);
  });

  it("a status write causes no manager call; a spec change is acted on at once", async () => {
    // quiet-edge resyncs every hour: any call from here on comes from a change
    await new Promise((resolve) => setTimeout(resolve, 500));
    const calls = edgeCalls(quiet);
    await k8s.patchStatus("EdgeTenant", "quiet-edge", { observedTenant: "written-by-someone-else" });
    await new Promise((resolve) => setTimeout(resolve, SYNC_INTERVAL_MS * 1.2));
    expect(edgeCalls(quiet), "the operator's own status writes and this one").toBe(calls);

    const startedMs = Date.now();
    await k8s.patch("EdgeTenant", "quiet-edge", { spec: { tenant: "newer" } });
    const changed = await k8s.waitFor<EdgeTenant>(
      "EdgeTenant",
      "quiet-edge",
      "generation 2 observed",
      (o) => o.status?.observedGeneration === 2 && condition(o, "Ready")?.status === "True",
    );
    // quiet-edge resyncs hourly: only the change itself explains a pass this soon
    expect(Date.now() - startedMs).toBeLessThan(AT_ONCE_MS);
    expect(tenantOn(quiet, "edge-7")).toBe("newer");
    expect(changed.status?.observedTenant).toBe("newer");
  });

  it("the younger of two EdgeTenants for one edge is Stalled with reason Conflict", async () => {
    await k8s.create<EdgeTenant>({
      kind: "EdgeTenant",
      metadata: { name: "esg-web-copy" },
      spec: { managerRef: { name: "lab" }, edgeId: "edge-1", tenant: "tenant-other" },
    });
    const copy = await k8s.waitFor(
      "EdgeTenant",
      "esg-web-copy",
      "Stalled",
      (o) => condition(o, "Stalled")?.status === "True",
    );
    expect(condition(copy, "Stalled")?.reason).toBe("Conflict");
    expect(condition(copy, "Synced")?.reason).toBe("Conflict");
    expect(kstatus(copy).status).toBe("Failed");
    expect(tenantOn(demo, "edge-1")).toBe("tenant-blue");
  });

  it("Events, metrics and JSON logs appear under the documented names", async () => {
    const events = await waitFor("the events", async () => {
      const list = await k8s.core.listNamespacedEvent({ namespace });
      const reasons = new Set(list.items.map((e) => `${e.involvedObject.name}/${e.type}/${e.reason}`));
      return reasons.has("esg-web/Normal/UpdatedEdgeTenant") && reasons.has("esg-db/Warning/Drifted")
        ? list.items
        : undefined;
    });
    const corrected = events.find(
      (e) => e.reason === "UpdatedEdgeTenant" && e.involvedObject.name === "esg-web",
    );
    expect(corrected?.involvedObject.kind).toBe("EdgeTenant");
    expect(corrected?.source?.component).toBe("nsxv-operator");
    expect(events.some((e) => e.reason === "Conflict" && e.involvedObject.name === "esg-web-copy")).toBe(
      true,
    );

    const { status, text } = await httpGet(operator.metrics, "/metrics");
    expect(status).toBe(200);
    for (const series of [
      'controller_runtime_reconcile_total{controller="nsxv-operator",result="requeue_after"}',
      'controller_runtime_reconcile_time_seconds_count{controller="nsxv-operator"}',
      'workqueue_depth{controller="nsxv-operator",name="nsxv-operator"}',
      'workqueue_adds_total{controller="nsxv-operator",name="nsxv-operator"}',
      'workqueue_queue_duration_seconds_count{controller="nsxv-operator",name="nsxv-operator"}',
      `nsxv_manager_requests_total{manager="${namespace}/lab",method="PUT",route="putEdge",status="204"}`,
      `nsxv_manager_request_duration_seconds_count{manager="${namespace}/lab",method="GET",route="getEdge"}`,
      "nsxv_edge_tenant_corrections_total",
      'nsxv_drift_detected_total{kind="EdgeTenant"}',
      `nsxv_pool_used_ratio{namespace="${namespace}",name="controllers",pool="ipaddresspool-1"}`,
    ]) {
      expect(text).toContain(series);
    }
    const corrections = Number(/^nsxv_edge_tenant_corrections_total (\d+)/m.exec(text)?.[1]);
    expect(corrections).toBeGreaterThanOrEqual(3); // edge-1, edge-2 twice, edge-7

    const line = operator.logs.find((l) => l.msg === "status changed" && l.name === "esg-web");
    expect(line).toMatchObject({ kind: "EdgeTenant", namespace, name: "esg-web", level: 30 });
    expect((await httpGet(operator.probes, "/readyz")).status).toBe(200);
    expect((await httpGet(operator.probes, "/healthz")).status).toBe(200);
  });

  it("stops gracefully", async () => {
    expect(await operator.stop()).toBe("stopped");
    expect(operator.logs.some((l) => l.msg === "operator stopped")).toBe(true);
  });
});
