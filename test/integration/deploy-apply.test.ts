/**
 * `kubectl apply -k deploy/` on a real kube-apiserver, with the kubectl built at the same version
 * (its `apply` validates fields strictly: an unknown or misspelled field fails the apply): a
 * server-side dry run first, then for real, and every object it declares exists afterwards with
 * the CRDs Established. The single-namespace variant goes into a test namespace through the
 * overlay deploy/README.md shows, and the monitoring kustomization is dry-run against stub
 * Prometheus Operator CRDs (no real ones are available offline).
 *
 * There is no kubelet and no controller-manager: the Deployment never gets a ReplicaSet or Pods.
 * What a kubelet would be asked to run is proven instead by a server-side dry run of a Pod made
 * from the Deployment's template, which the namespace's Pod Security admission (`restricted`)
 * must accept.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AppsV1Api, CoreV1Api, type V1Pod, type V1PodSpec } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  apiStatus,
  createTestNamespace,
  describeWithOwnControlPlane,
  kubectl,
} from "../controlplane/testing.ts";
import {
  CRDS_DIR,
  DEPLOY_DIR,
  INSTALL,
  MONITORING_DIR,
  makeTempDir,
  withPrometheusOperatorStubs,
  writeNamespaceOverlay,
  type TempDir,
} from "./deploy-support.ts";

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Condition {
  type: string;
  status: string;
}

/** `kind/name` as kubectl prints it (`deployment.apps/nsxv-operator`), namespace-qualified when namespaced. */
function objectId(object: KubeObject): string {
  const group = object.apiVersion.includes("/") ? `.${object.apiVersion.split("/")[0]}` : "";
  const ns = object.metadata.namespace === undefined ? "" : `${object.metadata.namespace}:`;
  return `${ns}${object.kind.toLowerCase()}${group}/${object.metadata.name}`;
}

/** The lines `kubectl apply` prints, one per object: `deployment.apps/nsxv-operator created`. */
function appliedLines(stdout: string): string[] {
  return stdout.split("\n").filter((line) => line.trim() !== "");
}

/** resourceVersion by objectId: what a no-op apply must leave as it is */
function versionsOf(objects: Map<string, KubeObject>): Record<string, string | undefined> {
  return Object.fromEntries(
    [...objects].map(([id, object]) => [
      id,
      (object.metadata as { resourceVersion?: string }).resourceVersion,
    ]),
  );
}

/** the message of a failed API call's Status body */
function statusMessage(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  try {
    return (JSON.parse(String(body)) as { message?: string }).message ?? String(body);
  } catch {
    return String(body);
  }
}

function kindName(object: KubeObject): string {
  return objectId(object).replace(/^[^:]*:/, "");
}

await describeWithOwnControlPlane("kubectl apply -k deploy/", (cp) => {
  let temp: TempDir;
  /** what `kubectl apply -k deploy/` sends */
  let rendered: KubeObject[] = [];

  async function render(dir: string): Promise<KubeObject[]> {
    const { stdout } = await kubectl(cp, ["kustomize", dir]);
    return parseAllDocuments(stdout).map((document) => document.toJS() as KubeObject);
  }

  /** every object of a kustomization as the server holds it, by objectId */
  async function serverObjects(dir: string): Promise<Map<string, KubeObject>> {
    const { stdout } = await kubectl(cp, ["get", "-k", dir, "--output=json"]);
    const list = JSON.parse(stdout) as { items: KubeObject[] };
    return new Map(list.items.map((item) => [objectId(item), item]));
  }

  beforeAll(async () => {
    temp = await makeTempDir("nsxv-deploy-apply");
    rendered = await render(DEPLOY_DIR);
  });
  afterAll(async () => {
    await temp?.dispose();
  });

  it("a server-side dry run on a cluster without the namespace fails only for the objects inside it", async () => {
    // A cluster that has never seen the install: the same kustomization moved to a namespace
    // that does not exist. A dry run creates nothing, so the namespace is still missing when
    // the objects inside it are checked (deploy/README.md says so and what to do).
    const fresh = `nsxv-dryrun-${randomBytes(4).toString("hex")}`;
    const overlay = await writeNamespaceOverlay({
      parent: temp.path,
      name: fresh,
      namespace: fresh,
      base: DEPLOY_DIR,
    });
    const objects = await render(overlay);
    const failure = await kubectl(cp, ["apply", "-k", overlay, "--server-side", "--dry-run=server"]).then(
      () => undefined,
      (error: { stdout: string; stderr: string }) => error,
    );
    expect(failure, "the dry run must fail while the namespace is missing").toBeDefined();
    const clusterScoped = objects.filter((o) => o.metadata.namespace === undefined).map(kindName);
    const dryRunApplied = appliedLines(failure!.stdout).map((line) => line.split(" ")[0]);
    expect(dryRunApplied.sort()).toEqual(clusterScoped.sort());
    // warnings are not failures: over objects an earlier `kubectl apply` wrote, a dry run also
    // warns that it could not migrate their last-applied annotation
    const errors = appliedLines(failure!.stderr).filter((line) => !line.startsWith("Warning: "));
    expect(errors.length, failure!.stderr).toBe(objects.length - clusterScoped.length);
    for (const line of errors)
      expect(line).toBe(`Error from server (NotFound): namespaces "${fresh}" not found`);
    const read = await cp
      .makeKubeConfig()
      .makeApiClient(CoreV1Api)
      .readNamespace({ name: fresh })
      .catch((error: unknown) => apiStatus(error));
    expect(read, "a dry run creates nothing").toBe(404);
  });

  it("a server-side dry run of deploy/ passes for every object once the namespace exists", async () => {
    await kubectl(cp, ["apply", "--server-side", "-f", join(DEPLOY_DIR, "namespace.yaml")]);
    const { stdout } = await kubectl(cp, ["apply", "-k", DEPLOY_DIR, "--server-side", "--dry-run=server"]);
    const lines = appliedLines(stdout);
    expect(lines.map((line) => line.split(" ")[0]).sort()).toEqual(rendered.map(kindName).sort());
    for (const line of lines) expect(line).toMatch(/ serverside-applied \(server dry run\)$/);
  });

  it("applies for real, and a second apply changes nothing", async () => {
    const first = await kubectl(cp, ["apply", "-k", DEPLOY_DIR]);
    expect(
      appliedLines(first.stdout)
        .map((line) => line.split(" ")[0])
        .sort(),
    ).toEqual(rendered.map(kindName).sort());
    const before = versionsOf(await serverObjects(DEPLOY_DIR));
    // a client-side apply prints "configured" for the PodDisruptionBudget every time, whatever it
    // declares: kubectl's strategic merge patch always sends spec.selector, whose patch strategy is
    // "replace" (deploy/README.md says so); the server changes nothing, as resourceVersions show
    await kubectl(cp, ["apply", "-k", DEPLOY_DIR]);
    expect(versionsOf(await serverObjects(DEPLOY_DIR))).toEqual(before);
  });

  it("re-applied as deploy/README.md says, reports no object changed, and kubectl diff shows none", async () => {
    // the install command as the README gives it: what a person runs again to upgrade
    const readme = readFileSync(join(DEPLOY_DIR, "README.md"), "utf8");
    const install = readme.slice(readme.indexOf("## Install (cluster-wide)")).match(/^kubectl apply (.*)$/m);
    const args = ["apply", ...(install?.[1] ?? "").split(/\s+/)].map((arg) =>
      arg === "deploy/" ? DEPLOY_DIR : arg,
    );
    expect(args).toContain(DEPLOY_DIR);
    await kubectl(cp, args);
    const before = versionsOf(await serverObjects(DEPLOY_DIR));
    const { stdout } = await kubectl(cp, args);
    const lines = appliedLines(stdout);
    expect(lines.length).toBe(rendered.length);
    for (const line of lines) expect(line, "nothing reported changed").not.toMatch(/ configured$/);
    expect(versionsOf(await serverObjects(DEPLOY_DIR)), "nothing changed on the server").toEqual(before);
    // kubectl diff prints nothing (and exits 0) when the cluster holds what deploy/ declares
    for (const mode of [[], ["--server-side"]]) {
      const diff = await kubectl(cp, ["diff", "-k", DEPLOY_DIR, ...mode]);
      expect(diff.stdout, `kubectl diff ${mode.join(" ")}`).toBe("");
    }
  });

  it("takes a server-side apply over a client-side one without conflicts (kubectl --server-side, Flux)", async () => {
    const { stdout } = await kubectl(cp, ["apply", "-k", DEPLOY_DIR, "--server-side"]);
    const lines = appliedLines(stdout);
    expect(lines.length).toBe(rendered.length);
    for (const line of lines) expect(line).toMatch(/ serverside-applied$/);
  });

  it("leaves every declared object on the server with every declared field", async () => {
    const onServer = await serverObjects(DEPLOY_DIR);
    expect([...onServer.keys()].sort()).toEqual(rendered.map(objectId).sort());
    // nothing declared was dropped or changed by the server (defaults and metadata come on top)
    for (const object of rendered)
      expect(onServer.get(objectId(object)), objectId(object)).toMatchObject(object);
    const binding = onServer.get("clusterrolebinding.rbac.authorization.k8s.io/nsxv-operator");
    expect(binding?.["subjects"]).toEqual([
      { kind: "ServiceAccount", name: INSTALL.serviceAccount, namespace: INSTALL.namespace },
    ]);
    const kinds = [...new Set(rendered.map((o) => o.kind))].sort();
    expect(kinds).toEqual([
      "ClusterRole",
      "ClusterRoleBinding",
      "CustomResourceDefinition",
      "Deployment",
      "Namespace",
      "PodDisruptionBudget",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
    ]);
  });

  it("has the three CRDs Established with their names accepted", async () => {
    const crds = rendered.filter((o) => o.kind === "CustomResourceDefinition");
    expect(crds.map((crd) => crd.metadata.name).sort()).toEqual([
      "edgetenants.nsxv.io",
      "ippoolallocations.nsxv.io",
      "nsxmanagers.nsxv.io",
    ]);
    const names = crds.map((crd) => `crd/${crd.metadata.name}`);
    await kubectl(cp, ["wait", "--for=condition=Established", "--timeout=30s", ...names]);
    const { stdout } = await kubectl(cp, ["get", ...names, "--output=json"]);
    const items = (JSON.parse(stdout) as { items: { status: { conditions: Condition[] } }[] }).items;
    for (const item of items) {
      const status = Object.fromEntries(item.status.conditions.map((c) => [c.type, c.status]));
      expect(status).toMatchObject({ Established: "True", NamesAccepted: "True" });
    }
  });

  it("runs a Pod of the Deployment's template under the namespace's restricted Pod Security", async () => {
    const kc = cp.makeKubeConfig();
    const deployment = await kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: "nsxv-operator", namespace: INSTALL.namespace });
    expect(deployment.spec?.replicas).toBe(2);
    const template = deployment.spec!.template;
    const core = kc.makeApiClient(CoreV1Api);
    const podOf = (spec: V1PodSpec): V1Pod => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { generateName: "nsxv-operator-", labels: template.metadata?.labels ?? {} },
      spec,
    });
    const admitted = await core.createNamespacedPod({
      namespace: INSTALL.namespace,
      body: podOf(template.spec!),
      dryRun: "All",
    });
    expect(admitted.spec?.containers[0]?.securityContext?.readOnlyRootFilesystem).toBe(true);
    // the control: the same Pod without its security settings is refused, so the check is on
    const container = { ...template.spec!.containers[0]!, securityContext: {} };
    const refused = await core
      .createNamespacedPod({
        namespace: INSTALL.namespace,
        body: podOf({ ...template.spec!, securityContext: {}, containers: [container] }),
        dryRun: "All",
      })
      .then(
        () => "admitted",
        (error: unknown) => `${apiStatus(error)} ${statusMessage(error)}`,
      );
    expect(refused).toMatch(/^403 .*violates PodSecurity "restricted:latest"/);
  });

  it("installs the single-namespace variant into another namespace, after the CRDs", async () => {
    const kc = cp.makeKubeConfig();
    const namespace = await createTestNamespace(kc, "nsxv-team");
    // deploy/README.md: a cluster admin installs the CRDs once, then each team its variant
    await kubectl(cp, ["apply", "-k", CRDS_DIR]);
    const overlay = await writeNamespaceOverlay({ parent: temp.path, name: namespace, namespace });
    const objects = await render(overlay);
    const dryRun = await kubectl(cp, ["apply", "-k", overlay, "--server-side", "--dry-run=server"]);
    expect(appliedLines(dryRun.stdout).length).toBe(objects.length);
    await kubectl(cp, ["apply", "-k", overlay]);
    const onServer = await serverObjects(overlay);
    expect([...onServer.keys()].sort()).toEqual(objects.map(objectId).sort());
    for (const object of onServer.values())
      expect(object.metadata.namespace, objectId(object)).toBe(namespace);
    // the operator's Role and the leader-election Role, both bound in the team's namespace
    const bindings = objects.filter((o) => o.kind === "RoleBinding");
    expect(bindings.length).toBe(2);
    for (const binding of bindings) {
      expect(onServer.get(objectId(binding))?.["subjects"], binding.metadata.name).toEqual([
        { kind: "ServiceAccount", name: INSTALL.serviceAccount, namespace },
      ]);
    }
    const deployment = onServer.get(`${namespace}:deployment.apps/nsxv-operator`) as
      { spec: { template: { spec: { containers: { args: string[] }[] } } } } | undefined;
    expect(deployment?.spec.template.spec.containers[0]?.args).toContain("--namespace=$(POD_NAMESPACE)");
  });

  it("dry-runs the monitoring kustomization against stub Prometheus Operator CRDs", async () => {
    // Stubs, not the real CRDs (none are available offline): they accept any spec, so this
    // proves the kinds, API versions, names and namespace, not the fields of the spec.
    await withPrometheusOperatorStubs(cp, temp.path, async () => {
      const objects = await render(MONITORING_DIR);
      const { stdout } = await kubectl(cp, [
        "apply",
        "-k",
        MONITORING_DIR,
        "--server-side",
        "--dry-run=server",
      ]);
      const lines = appliedLines(stdout);
      expect(lines.map((line) => line.split(" ")[0]).sort()).toEqual(objects.map(kindName).sort());
      for (const line of lines) expect(line).toMatch(/ serverside-applied \(server dry run\)$/);
      for (const object of objects) expect(object.metadata.namespace).toBe(INSTALL.namespace);
    });
  });
});
