/**
 * Static checks of deploy/: every YAML parses; RBAC grants exactly the calls the operator makes;
 * the Deployment is hardened and its probes and ports agree with its flags; labels and selectors
 * agree. The kustomizations are rendered with `kubectl kustomize`, which is what
 * `kubectl apply -k` sends. Proofs against an API server (dry run, apply, acting as the
 * ServiceAccount) live with the control-plane tests.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import {
  IN_CI,
  type K8sObject,
  type PolicyRule,
  listFiles,
  lookupTool,
  parseYamlDocuments,
  readRepoFile,
  renderKustomization,
  repoPath,
  ruleRows,
} from "./tools.ts";
import {
  type BindingObject,
  type PrometheusRule,
  type ServiceMonitor,
  containerOf,
  deploymentOf,
  describeObject,
  flagValue,
  labelsMatch,
  quantity,
  rolesOf,
} from "./objects.ts";

const NAMESPACE = "nsxv-system";
const SERVICE_ACCOUNT = "nsxv-operator";
const LEASE_NAME = "nsxv-operator";
const METRICS_PORT = 8080;
const PROBE_PORT = 8081;
const USER_ID = 65532;
const COMMON_LABELS = {
  "app.kubernetes.io/name": "nsxv-operator",
  "app.kubernetes.io/part-of": "nsxv-operator",
};

/**
 * What the operator calls on its three kinds, Secrets and Events, one row per grant
 * (`ruleRows`); the cluster-wide ClusterRole and the single-namespace Role must grant exactly this.
 */
const OPERATOR_GRANTS = [
  ...["nsxmanagers", "edgetenants", "ippoolallocations"].flatMap((resource) => [
    ...["get", "list", "watch"].map((verb) => `nsxv.io ${resource} ${verb} (any)`),
    ...["get", "patch"].map((verb) => `nsxv.io ${resource}/status ${verb} (any)`),
  ]),
  // the restore finalizer of EdgeTenants with deletionPolicy Restore
  "nsxv.io edgetenants patch (any)",
  // the in-use finalizer of NSXManagers
  "nsxv.io nsxmanagers patch (any)",
  // by name only: never a list or watch of every Secret
  "core secrets get (any)",
  // the in-use finalizer of the Secrets a pending restore needs
  "core secrets patch (any)",
  ...["create", "patch"].map((verb) => `core events ${verb} (any)`),
].sort();

/** Cluster-wide only: namespaces' labels, whom an NSXManager shares itself with (none within one namespace). */
const NAMESPACE_GRANTS = ["list", "watch"].map((verb) => `core namespaces ${verb} (any)`);

/** Leader election, in the operator's own namespace only. */
const LEASE_GRANTS = [
  "coordination.k8s.io leases create (any)",
  `coordination.k8s.io leases get ${LEASE_NAME}`,
  `coordination.k8s.io leases update ${LEASE_NAME}`,
].sort();

const kubectl = lookupTool(
  "kubectl",
  "install kubectl; it renders the kustomizations as `kubectl apply -k` does",
);

describe("deploy/ files", () => {
  // the Helm chart's files are templates and values, not manifests: helm-chart.test.ts checks them
  const files = listFiles("deploy", [".yaml", ".yml"]).filter((file) => !file.startsWith("deploy/helm/"));

  it("finds the manifests", () => {
    expect(files).toContain("deploy/kustomization.yaml");
    expect(files.length).toBeGreaterThan(8);
  });

  it.each(files)("%s parses and every document names apiVersion and kind", (file) => {
    const documents = parseYamlDocuments(readRepoFile(file), file) as Partial<K8sObject>[];
    expect(documents.length).toBeGreaterThan(0);
    for (const document of documents) {
      expect(typeof document.apiVersion, `${file}: apiVersion`).toBe("string");
      expect(typeof document.kind, `${file}: kind`).toBe("string");
    }
  });

  it("no RBAC rule in any file uses a wildcard", () => {
    for (const file of files) {
      for (const document of parseYamlDocuments(readRepoFile(file), file) as Partial<K8sObject>[]) {
        const rules = (document.rules ?? []) as PolicyRule[];
        for (const rule of rules) {
          const values = [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...(rule.verbs ?? [])];
          expect(
            values.filter((value) => value.includes("*")),
            `${file} ${document.metadata?.name}`,
          ).toEqual([]);
        }
      }
    }
  });

  it("crds/kustomization.yaml lists every CRD file of crds/, and nothing else", () => {
    const crdFiles = listFiles("crds", [".yaml", ".yml"]).filter((file) =>
      (parseYamlDocuments(readRepoFile(file), file) as Partial<K8sObject>[]).some(
        (document) => document.kind === "CustomResourceDefinition",
      ),
    );
    const kustomization = parseYamlDocuments(readRepoFile("crds/kustomization.yaml"), "crds")[0] as {
      resources: string[];
    };
    expect(kustomization.resources.map((resource) => `crds/${resource}`).sort()).toEqual(crdFiles);
    expect(crdFiles).toHaveLength(3);
  });
});

// Rendering needs kubectl; without it these checks cannot run (they are the ones that see the
// result of kustomize's namespace and patch transformers), so they are skipped outside CI and
// fail in CI (below).
describe.skipIf(kubectl.path === undefined)("kubectl apply -k deploy/ (rendered)", () => {
  const objects = kubectl.path === undefined ? [] : renderKustomization(kubectl.path, repoPath("deploy"));

  it("holds exactly the objects of the default install", () => {
    expect(objects.map(describeObject).sort()).toEqual(
      [
        `Namespace ${NAMESPACE}`,
        "CustomResourceDefinition edgetenants.nsxv.io",
        "CustomResourceDefinition ippoolallocations.nsxv.io",
        "CustomResourceDefinition nsxmanagers.nsxv.io",
        `ServiceAccount ${NAMESPACE}/nsxv-operator`,
        `Role ${NAMESPACE}/nsxv-operator-leader-election`,
        `RoleBinding ${NAMESPACE}/nsxv-operator-leader-election`,
        "ClusterRole nsxv-operator",
        "ClusterRoleBinding nsxv-operator",
        `Deployment ${NAMESPACE}/nsxv-operator`,
        `Service ${NAMESPACE}/nsxv-operator-metrics`,
        `PodDisruptionBudget ${NAMESPACE}/nsxv-operator`,
      ].sort(),
    );
  });

  it("grants the ServiceAccount exactly the operator's calls, cluster-wide, and leases in its namespace", () => {
    expect(grantsOf(objects)).toEqual({
      cluster: [...OPERATOR_GRANTS, ...NAMESPACE_GRANTS].sort(),
      [NAMESPACE]: LEASE_GRANTS,
    });
  });

  it("secrets are only read by name and held by their finalizer: no list or watch of every Secret, no write of one", () => {
    const rows = ruleRows(rolesOf(objects).flatMap((role) => role.rules));
    expect(rows.filter((row) => row.startsWith("core secrets ")).map((row) => row.split(" ")[2])).toEqual([
      "get",
      "patch",
    ]);
  });

  it("runs the operator cluster-wide, with leader election", () => {
    const args = containerOf(deploymentOf(objects)).args;
    expect(args[0]).toBe("run");
    expect(args).toContain("--leader-elect");
    expect(args.some((arg) => arg.startsWith("--namespace"))).toBe(false);
  });

  checkDeployment(() => objects);
  checkLabels(() => objects);
});

describe.skipIf(kubectl.path === undefined)("deploy/variants/namespaced (rendered)", () => {
  const objects =
    kubectl.path === undefined
      ? []
      : renderKustomization(kubectl.path, repoPath("deploy/variants/namespaced"));

  it("has no cluster-scoped object: no ClusterRole, no CRD, no Namespace", () => {
    expect(objects.filter((object) => object.metadata.namespace === undefined).map(describeObject)).toEqual(
      [],
    );
  });

  it("grants the operator's calls and the lease in its own namespace only", () => {
    expect(grantsOf(objects)).toEqual({ [NAMESPACE]: [...OPERATOR_GRANTS, ...LEASE_GRANTS].sort() });
  });

  it("watches only its own namespace, taken from the downward API", () => {
    const container = containerOf(deploymentOf(objects));
    expect(container.args).toContain("--namespace=$(POD_NAMESPACE)");
    // the kubelet expands $(POD_NAMESPACE) only from the container's own env
    expect(container.env).toContainEqual({
      name: "POD_NAMESPACE",
      valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
    });
  });

  checkDeployment(() => objects);
  checkLabels(() => objects);
});

describe.skipIf(kubectl.path === undefined)("an overlay that moves the namespaced variant to team-a", () => {
  const dir = mkdtempSync(join(tmpdir(), "nsxv-overlay-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, "kustomization.yaml"),
    `namespace: team-a\nresources:\n  - ${relative(dir, repoPath("deploy/variants/namespaced"))}\n`,
  );
  const objects = kubectl.path === undefined ? [] : renderKustomization(kubectl.path, dir);

  it("puts every object, and every binding's subject, into team-a", () => {
    expect(new Set(objects.map((object) => object.metadata.namespace))).toEqual(new Set(["team-a"]));
    expect(grantsOf(objects)).toEqual({ "team-a": [...OPERATOR_GRANTS, ...LEASE_GRANTS].sort() });
  });
});

describe.skipIf(kubectl.path === undefined)("deploy/optional/monitoring (rendered)", () => {
  const objects =
    kubectl.path === undefined
      ? []
      : renderKustomization(kubectl.path, repoPath("deploy/optional/monitoring"));
  const service =
    kubectl.path === undefined
      ? undefined
      : renderKustomization(kubectl.path, repoPath("deploy")).find((object) => object.kind === "Service");

  it("ships the Grafana dashboard in a ConfigMap that Grafana's dashboard sidecar picks up", () => {
    const map = objects.find((object) => object.kind === "ConfigMap") as
      | {
          metadata: { name: string; namespace: string; labels: Record<string, string> };
          data: Record<string, string>;
        }
      | undefined;
    expect(map?.metadata).toMatchObject({
      name: "nsxv-operator-dashboard",
      namespace: NAMESPACE,
      labels: { grafana_dashboard: "1" },
    });
    expect(map?.data["grafana-dashboard.json"]).toBe(
      readRepoFile("deploy/optional/monitoring/grafana-dashboard.json"),
    );
  });

  it("the ServiceMonitor scrapes the metrics Service's `metrics` port", () => {
    const monitor = objects.find((object) => object.kind === "ServiceMonitor") as ServiceMonitor | undefined;
    expect(monitor?.metadata.namespace).toBe(NAMESPACE);
    expect(labelsMatch(monitor?.spec.selector.matchLabels ?? {}, service?.metadata.labels ?? {})).toBe(true);
    expect(monitor?.spec.endpoints.map((endpoint) => endpoint.port)).toEqual(["metrics"]);
  });

  const rules =
    (
      objects.find((object) => object.kind === "PrometheusRule") as PrometheusRule | undefined
    )?.spec.groups.flatMap((group) => group.rules) ?? [];

  const wanted = [
    {
      alert: "NsxvPoolNearExhaustion",
      metric: "nsxv_pool_used_ratio",
      reason: "a pool above 90% is the issue's first alert",
    },
    {
      alert: "NsxvReconcileErrors",
      metric: "controller_runtime_reconcile_errors_total",
      reason: "failing reconciles need a person",
    },
    {
      alert: "NsxvEdgeTenantCorrectionBurst",
      metric: "nsxv_edge_tenant_corrections_total",
      reason: "many corrections mean another writer fights the operator",
    },
    {
      alert: "NsxvIpReleaseBurst",
      metric: "nsxv_ip_releases_total",
      reason: "many releases may mean an incomplete allowed list",
    },
  ];
  it.each(wanted)("alert $alert reads $metric ($reason)", ({ alert, metric }) => {
    const rule = rules.find((candidate) => candidate.alert === alert);
    expect(rule?.expr).toContain(metric);
  });

  it("every alert has a duration, a severity, a summary and a description", () => {
    expect(rules.length).toBeGreaterThanOrEqual(wanted.length);
    for (const rule of rules) {
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(["warning", "critical"], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description, rule.alert).toBeTruthy();
    }
  });

  it("every operator metric an alert reads is one the operator registers", async () => {
    // the registry itself, not a grep of the sources: a kind's counters are declared in its folder
    const registered = new Set(
      (await createOperatorMetrics({ processMetrics: false }).registry.getMetricsAsJSON()).map(
        (metric) => metric.name,
      ),
    );
    const names = new Set(
      rules.flatMap(
        (rule) => rule.expr.match(/\b(?:nsxv|controller_runtime|leader_election)_[a-z_]+\b/g) ?? [],
      ),
    );
    expect(names.size).toBeGreaterThanOrEqual(wanted.length);
    for (const name of names) {
      const base = name.replace(/_(?:bucket|sum|count)$/, "");
      expect(registered.has(name) || registered.has(base), `${name} is registered`).toBe(true);
    }
  });
});

// CI must run every check above: there a missing tool fails instead of skipping.
it("kubectl is on PATH where the rendered checks must run (CI)", () => {
  expect(kubectl.path !== undefined || !IN_CI, kubectl.missingReason).toBe(true);
});

/**
 * What the operator's ServiceAccount may do, by scope ("cluster" or a namespace), following each
 * binding to its role; fails on a binding to anything but that ServiceAccount or to a missing role.
 */
function grantsOf(objects: K8sObject[]): Record<string, string[]> {
  const roles = rolesOf(objects);
  const serviceAccountNamespace = objects.find((object) => object.kind === "ServiceAccount")?.metadata
    .namespace;
  const rulesByScope: Record<string, PolicyRule[]> = {};
  for (const binding of objects.filter((object) => object.kind.endsWith("Binding")) as BindingObject[]) {
    expect(binding.subjects, describeObject(binding)).toEqual([
      { kind: "ServiceAccount", name: SERVICE_ACCOUNT, namespace: serviceAccountNamespace },
    ]);
    const scope = binding.kind === "ClusterRoleBinding" ? "cluster" : (binding.metadata.namespace ?? "");
    const role = roles.find(
      (candidate) =>
        candidate.kind === binding.roleRef.kind &&
        candidate.metadata.name === binding.roleRef.name &&
        (candidate.kind === "ClusterRole" || candidate.metadata.namespace === binding.metadata.namespace),
    );
    expect(
      role,
      `${describeObject(binding)} → ${binding.roleRef.kind} ${binding.roleRef.name}`,
    ).toBeDefined();
    (rulesByScope[scope] ??= []).push(...(role?.rules ?? []));
  }
  expect(roles.length, "every role is bound").toBe(objects.filter((o) => o.kind.endsWith("Binding")).length);
  return Object.fromEntries(Object.entries(rulesByScope).map(([scope, rules]) => [scope, ruleRows(rules)]));
}

function checkDeployment(objects: () => K8sObject[]): void {
  const podSettings = [
    { path: "runAsNonRoot", value: true, reason: "the restricted Pod Security Standard requires it" },
    { path: "runAsUser", value: USER_ID, reason: "the image's user, and not root" },
    {
      path: "seccompProfile",
      value: { type: "RuntimeDefault" },
      reason: "syscalls filtered by the runtime's profile",
    },
  ];
  const containerSettings = [
    ...podSettings,
    { path: "readOnlyRootFilesystem", value: true, reason: "the operator writes nothing but /tmp" },
    { path: "allowPrivilegeEscalation", value: false, reason: "no setuid path to more rights" },
    { path: "capabilities", value: { drop: ["ALL"] }, reason: "the operator needs no capability" },
  ];

  it.each(podSettings)("pod securityContext.$path ($reason)", ({ path, value }) => {
    expect(deploymentOf(objects()).spec.template.spec.securityContext[path]).toEqual(value);
  });

  it.each(containerSettings)("container securityContext.$path ($reason)", ({ path, value }) => {
    expect(containerOf(deploymentOf(objects())).securityContext[path]).toEqual(value);
  });

  it("runs two replicas as the operator's ServiceAccount, with leader election in its namespace", () => {
    const deployment = deploymentOf(objects());
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.template.spec.serviceAccountName).toBe(SERVICE_ACCOUNT);
    const container = containerOf(deployment);
    expect(container.args).toContain("--leader-elect");
    expect(flagValue(container.args, "--leader-election-id")).toBe(LEASE_NAME);
    // the lease namespace defaults to POD_NAMESPACE, which the Role's namespace must be
    expect(container.args.some((arg) => arg.startsWith("--leader-election-namespace"))).toBe(false);
    expect(container.env).toContainEqual({
      name: "POD_NAMESPACE",
      valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
    });
  });

  it("probes and ports agree with the bind-address flags", () => {
    const container = containerOf(deploymentOf(objects()));
    expect(flagValue(container.args, "--metrics-bind-address")).toBe(`:${METRICS_PORT}`);
    expect(flagValue(container.args, "--health-probe-bind-address")).toBe(`:${PROBE_PORT}`);
    const portNumber = (port: string | number) =>
      typeof port === "number"
        ? port
        : container.ports.find((candidate) => candidate.name === port)?.containerPort;
    expect(container.livenessProbe.httpGet.path).toBe("/healthz");
    expect(portNumber(container.livenessProbe.httpGet.port)).toBe(PROBE_PORT);
    expect(container.readinessProbe.httpGet.path).toBe("/readyz");
    expect(portNumber(container.readinessProbe.httpGet.port)).toBe(PROBE_PORT);
    expect(portNumber("metrics")).toBe(METRICS_PORT);
  });

  it("requests and limits cpu and memory, requests within limits", () => {
    const { requests, limits } = containerOf(deploymentOf(objects())).resources;
    for (const resource of ["cpu", "memory"]) {
      expect(quantity(requests[resource]), resource).toBeGreaterThan(0);
      expect(quantity(requests[resource]), resource).toBeLessThanOrEqual(quantity(limits[resource]));
    }
    // the bench's target is under 256 MB at 10 000 objects: the limit must allow it
    expect(quantity(limits.memory)).toBeGreaterThanOrEqual(256 * 2 ** 20);
  });

  it("the image's tag is the package's version", () => {
    const version = (JSON.parse(readRepoFile("package.json")) as { version: string }).version;
    expect(containerOf(deploymentOf(objects())).image).toMatch(
      new RegExp(`:${version.replaceAll(".", "\\.")}$`),
    );
  });

  it("the metrics Service selects the pods on the `metrics` port 8080", () => {
    const service = objects().find((object) => object.kind === "Service") as
      | (K8sObject & { spec: { selector: Record<string, string>; ports: Record<string, unknown>[] } })
      | undefined;
    const podLabels = deploymentOf(objects()).spec.template.metadata.labels;
    expect(labelsMatch(service?.spec.selector ?? {}, podLabels)).toBe(true);
    expect(service?.spec.ports).toEqual([
      { name: "metrics", port: METRICS_PORT, targetPort: "metrics", protocol: "TCP" },
    ]);
  });
}

function checkLabels(objects: () => K8sObject[]): void {
  it("every object of the operator carries the common labels; selectors match the pod template", () => {
    for (const object of objects().filter((candidate) => candidate.kind !== "CustomResourceDefinition")) {
      expect(object.metadata.labels, describeObject(object)).toMatchObject(COMMON_LABELS);
    }
    const deployment = deploymentOf(objects());
    const podLabels = deployment.spec.template.metadata.labels;
    expect(podLabels).toMatchObject(COMMON_LABELS);
    expect(labelsMatch(deployment.spec.selector.matchLabels, podLabels)).toBe(true);
    for (const budget of objects().filter((object) => object.kind === "PodDisruptionBudget") as (K8sObject & {
      spec: { selector: { matchLabels: Record<string, string> } };
    })[]) {
      expect(labelsMatch(budget.spec.selector.matchLabels, podLabels)).toBe(true);
    }
  });
}
