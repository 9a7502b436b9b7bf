/**
 * The Helm chart (deploy/helm/nsxv-operator) against deploy/: `helm lint --strict`, and for the
 * default values, for scope namespace and for the monitoring pieces, what `helm template`
 * renders compared object by object with what `kubectl kustomize` renders of deploy/, the
 * single-namespace variant and optional/monitoring (chart-drift.ts), the differences that are
 * meant listed below with their reasons. The files the chart carries as copies (the CRDs, the
 * dashboard, the alerts) are compared byte for byte with their sources.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  HELM_LABELS,
  HELM_LABELS_DIFFERENCE,
  type IntendedDifference,
  compareRenders,
} from "./chart-drift.ts";
import { CHART_DIR, lookupBuiltTool, renderChart, runHelm } from "./helm.ts";
import { IN_CI, type K8sObject, readRepoFile, renderKustomization, repoPath } from "./tools.ts";

const helm = lookupBuiltTool("helm", "helm lints and renders the chart");
const kubectl = lookupBuiltTool("kubectl", "kubectl renders deploy/ as `kubectl apply -k` does");
const tools = helm.path !== undefined && kubectl.path !== undefined;

/** every monitoring piece on, as deploy/optional/monitoring has them */
const MONITORING_ON = {
  monitoring: {
    serviceMonitor: { enabled: true },
    prometheusRule: { enabled: true },
    grafanaDashboard: { enabled: true },
  },
};

const NO_NAMESPACE_OBJECT: IntendedDifference = {
  name: "no Namespace object",
  reason:
    "a chart does not own its release's namespace (helm uninstall would delete it with everything " +
    "in it): `helm install --create-namespace` or the user creates it, and labels it for the " +
    "restricted Pod Security Standard as deploy/README.md shows",
  kustomize: (object) => (object.kind === "Namespace" ? undefined : object),
};

const DASHBOARD_LABELS: IntendedDifference = {
  name: "the dashboard ConfigMap's common labels",
  reason:
    "the chart labels every object it makes alike; kustomize's configMapGenerator gives the " +
    "ConfigMap only grafana_dashboard",
  chart: (object) => {
    if (object.kind !== "ConfigMap") return object;
    const labels = { ...object.metadata.labels };
    for (const key of ["app.kubernetes.io/name", "app.kubernetes.io/part-of", "app.kubernetes.io/component"])
      delete labels[key];
    return { ...object, metadata: { ...object.metadata, labels } };
  },
};

const MONITORING_KINDS = new Set(["ServiceMonitor", "PrometheusRule", "ConfigMap"]);

describe("the drift comparison itself", () => {
  /** a ClusterRole as the chart (with Helm's labels) or deploy/ (without) renders it */
  const role = (verbs: string[], side: "chart" | "kustomize"): K8sObject =>
    ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: {
        name: "x",
        labels: { "app.kubernetes.io/name": "x", ...(side === "chart" ? { "helm.sh/chart": "x-1" } : {}) },
      },
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs }],
    }) as K8sObject;

  it("reports a rule that differs, and ignores Helm's labels", () => {
    const drifted = compareRenders(
      [role(["get"], "chart")],
      [role(["get", "list"], "kustomize")],
      [HELM_LABELS_DIFFERENCE],
    );
    expect(drifted.chart).not.toEqual(drifted.kustomize);
    const same = compareRenders(
      [role(["get"], "chart")],
      [role(["get"], "kustomize")],
      [HELM_LABELS_DIFFERENCE],
    );
    expect(same.chart).toEqual(same.kustomize);
    expect(same.stale).toEqual([]);
  });

  it("reports an object one side lacks", () => {
    const { chart, kustomize } = compareRenders([], [role(["get"], "kustomize")], []);
    expect(Object.keys(kustomize)).toEqual(["ClusterRole x"]);
    expect(chart).toEqual({});
  });

  it("calls an intended difference that changes nothing stale", () => {
    const unlabelled = role(["get"], "kustomize");
    expect(compareRenders([unlabelled], [unlabelled], [HELM_LABELS_DIFFERENCE]).stale).toEqual([
      HELM_LABELS_DIFFERENCE.name,
    ]);
  });
});

describe("the chart's files copied from the kustomize tree (deploy/helm/sync-shared-files.sh)", () => {
  const fix = "run `sh deploy/helm/sync-shared-files.sh`";
  const crdFiles = readdirSync(repoPath("crds")).filter((file) => file !== "kustomization.yaml");

  it("crds/ holds every CRD of crds/, and nothing else", () => {
    expect(readdirSync(join(CHART_DIR, "crds")).sort(), fix).toEqual(crdFiles.sort());
    expect(crdFiles.length).toBe(3);
  });

  const copies = [
    ...crdFiles.map((file) => ({ copy: `crds/${file}`, source: `crds/${file}` })),
    { copy: "files/grafana-dashboard.json", source: "deploy/optional/monitoring/grafana-dashboard.json" },
    { copy: "files/prometheusrule.yaml", source: "deploy/optional/monitoring/prometheusrule.yaml" },
  ];
  it.each(copies)("$copy is $source to the byte", ({ copy, source }) => {
    expect(readFileSync(join(CHART_DIR, copy), "utf8") === readRepoFile(source), `${copy}: ${fix}`).toBe(
      true,
    );
  });
});

describe("Chart.yaml", () => {
  it("carries the package's version as its version and appVersion (one release number)", () => {
    const chart = parse(readFileSync(join(CHART_DIR, "Chart.yaml"), "utf8")) as Record<string, string>;
    const { version } = JSON.parse(readRepoFile("package.json")) as { version: string };
    expect({ version: chart.version, appVersion: chart.appVersion }).toEqual({
      version,
      appVersion: version,
    });
  });
});

describe.skipIf(helm.path === undefined)("helm lint --strict", () => {
  const cases = [
    { name: "the default values", values: {} },
    { name: "scope namespace", values: { scope: "namespace" } },
    { name: "every monitoring piece", values: MONITORING_ON },
    { name: "without leader election", values: { leaderElection: { enabled: false }, replicas: 1 } },
  ];
  it.each(cases)("passes with $name", ({ values }) => {
    const output = runHelm(helm.path ?? "", ["lint", "--strict", CHART_DIR], values);
    expect(output).toContain("1 chart(s) linted, 0 chart(s) failed");
    expect(output).not.toMatch(/\[(WARNING|ERROR)\]/);
  });
});

describe.skipIf(!tools)("helm template against kubectl kustomize", () => {
  const render = (values: Record<string, unknown>, includeCrds = false) =>
    renderChart(helm.path ?? "", { values, includeCrds });
  const kustomize = (dir: string) => renderKustomization(kubectl.path ?? "", repoPath(dir));

  it.each(HELM_LABELS)("the chart sets %s on every object it templates", (label) => {
    for (const object of render(MONITORING_ON))
      expect(object.metadata.labels, object.kind).toHaveProperty([label]);
  });

  const cases = [
    {
      name: "the default values render deploy/ (CRDs included)",
      chart: () => render({}, true),
      kustomize: () => kustomize("deploy"),
      intended: [HELM_LABELS_DIFFERENCE, NO_NAMESPACE_OBJECT],
    },
    {
      name: "scope namespace renders deploy/variants/namespaced",
      chart: () => render({ scope: "namespace" }),
      kustomize: () => kustomize("deploy/variants/namespaced"),
      intended: [HELM_LABELS_DIFFERENCE],
    },
    {
      name: "the monitoring values render deploy/optional/monitoring",
      chart: () => render(MONITORING_ON).filter((object) => MONITORING_KINDS.has(object.kind)),
      kustomize: () => kustomize("deploy/optional/monitoring"),
      intended: [HELM_LABELS_DIFFERENCE, DASHBOARD_LABELS],
    },
  ];
  it.each(cases)("$name, but for the intended differences", ({ chart, kustomize, intended }) => {
    const comparison = compareRenders(chart(), kustomize(), intended);
    expect(comparison.stale, "intended differences that no longer apply").toEqual([]);
    expect(Object.keys(comparison.chart).sort(), "the same objects").toEqual(
      Object.keys(comparison.kustomize).sort(),
    );
    for (const [id, object] of Object.entries(comparison.kustomize)) {
      expect(comparison.chart[id], `${id}: the chart must render what deploy/ holds`).toEqual(object);
    }
  });
});

// CI must run every check above: there a missing tool fails instead of skipping.
it("helm and kubectl are there where the chart must be checked (CI)", () => {
  expect(helm.path !== undefined || !IN_CI, helm.missingReason).toBe(true);
  expect(kubectl.path !== undefined || !IN_CI, kubectl.missingReason).toBe(true);
});
