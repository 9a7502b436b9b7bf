/**
 * The chart's values, with the real helm: each value changes what it says and nothing that
 * would break the install (names, selectors and grants follow the release); what the Deployment
 * passes is accepted by the operator's own flag parser. Wrong values: helm-schema.test.ts.
 */
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { type RunConfig, type RunFlags, runCommand, runConfig } from "../../src/cli/run.ts";
import { lookupBuiltTool, renderChart } from "./helm.ts";
import {
  type BindingObject,
  type Deployment,
  containerOf,
  deploymentOf,
  describeObject,
  labelsMatch,
  rolesOf,
} from "./objects.ts";
import { IN_CI, type K8sObject } from "./tools.ts";

const helm = lookupBuiltTool("helm", "helm renders the chart");
const render = (values: Record<string, unknown>, release?: { name: string; namespace: string }) =>
  renderChart(helm.path ?? "", {
    values,
    ...(release !== undefined ? { release: release.name, namespace: release.namespace } : {}),
  });
const podSpecOf = (objects: K8sObject[]) =>
  deploymentOf(objects).spec.template.spec as Deployment["spec"]["template"]["spec"] &
    Record<string, unknown>;
const argsOf = (objects: K8sObject[]) => containerOf(deploymentOf(objects)).args;
const ofKind = (objects: K8sObject[], kind: string) => objects.filter((object) => object.kind === kind);

/**
 * The Deployment's args as `nsxv-operator run` parses them (the kubelet having expanded
 * $(POD_NAMESPACE)), through the operator's own options and checks: what it would run with.
 */
function operatorConfig(args: string[], podNamespace: string): RunConfig {
  expect(args[0]).toBe("run");
  const command: Command = runCommand();
  let flags: RunFlags | undefined;
  command
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} })
    .action(function (this: Command) {
      flags = this.opts<RunFlags>();
    });
  command.parse(
    args.slice(1).map((arg) => arg.replaceAll("$(POD_NAMESPACE)", podNamespace)),
    { from: "user" },
  );
  return runConfig(flags as RunFlags, { POD_NAMESPACE: podNamespace });
}

describe.skipIf(helm.path === undefined)("the chart's values", () => {
  it("the defaults run the operator with its defaults, cluster-wide, electing a leader in the release's namespace", () => {
    const config = operatorConfig(argsOf(render({})), "nsxv-system");
    expect(config).toMatchObject({
      source: { type: "cluster" },
      logLevel: "info",
      concurrency: 4,
      syncIntervalMs: 300_000,
      fullReadIntervalMs: 3_600_000,
      fullReadsPerMinute: 7,
      leaderElection: { id: "nsxv-operator", namespace: "nsxv-system" },
    });
    expect(config.source).not.toHaveProperty("namespace");
  });

  it("the operator runs with what the values say (its own parser reads the rendered args)", () => {
    const values = {
      scope: "namespace",
      logLevel: "debug",
      syncInterval: "1h30m",
      fullReadInterval: "20m",
      fullReadsPerMinute: 30,
      concurrency: 8,
      concurrencyPerManager: 3,
      selector: "team in (blue, green),!legacy",
      leaderElection: { id: "edge-lease" },
      extraArgs: ["--shutdown-timeout=45s", "--leader-election-lease-duration=20s"],
    };
    const config = operatorConfig(argsOf(render(values, { name: "edge", namespace: "team-a" })), "team-a");
    expect(config).toMatchObject({
      source: { type: "cluster", namespace: "team-a", selector: "team in (blue, green),!legacy" },
      logLevel: "debug",
      syncIntervalMs: 5_400_000,
      fullReadIntervalMs: 1_200_000,
      fullReadsPerMinute: 30,
      concurrency: 8,
      concurrencyPerManager: 3,
      shutdownTimeoutMs: 45_000,
      leaderElection: { id: "edge-lease", namespace: "team-a", leaseDurationMs: 20_000 },
    });
  });

  it("leaderElection.enabled false runs without a Lease and grants none", () => {
    const objects = render({ leaderElection: { enabled: false }, replicas: 1 });
    expect(operatorConfig(argsOf(objects), "nsxv-system").leaderElection).toBeUndefined();
    expect(rolesOf(objects).map(describeObject)).toEqual(["ClusterRole nsxv-operator"]);
    expect(deploymentOf(objects).spec.replicas).toBe(1);
  });

  const podCases = [
    {
      name: "image by repository and tag",
      values: {
        image: { repository: "registry.example.com/nsx/operator", tag: "1.2.3", pullPolicy: "Always" },
      },
      check: (objects: K8sObject[]) =>
        expect(containerOf(deploymentOf(objects))).toMatchObject({
          image: "registry.example.com/nsx/operator:1.2.3",
          imagePullPolicy: "Always",
        }),
    },
    {
      name: "image by digest, which wins over the tag",
      values: {
        image: { repository: "registry.example.com:5000/op", tag: "x", digest: `sha256:${"a".repeat(64)}` },
      },
      check: (objects: K8sObject[]) =>
        expect(containerOf(deploymentOf(objects)).image).toBe(
          `registry.example.com:5000/op@sha256:${"a".repeat(64)}`,
        ),
    },
    {
      name: "imagePullSecrets",
      values: { imagePullSecrets: ["regcred"] },
      check: (objects: K8sObject[]) =>
        expect(podSpecOf(objects).imagePullSecrets).toEqual([{ name: "regcred" }]),
    },
    {
      name: "resources, merged with the defaults as Helm merges maps (null removes a key)",
      values: { resources: { requests: { cpu: "250m" }, limits: { cpu: null, memory: "1Gi" } } },
      check: (objects: K8sObject[]) =>
        expect(containerOf(deploymentOf(objects)).resources).toEqual({
          requests: { cpu: "250m", memory: "320Mi" },
          limits: { memory: "1Gi" },
        }),
    },
    {
      name: "nodeSelector, tolerations and priorityClassName",
      values: {
        nodeSelector: { "kubernetes.io/os": "linux" },
        tolerations: [{ key: "infra", operator: "Exists", effect: "NoSchedule" }],
        priorityClassName: "system-cluster-critical",
      },
      check: (objects: K8sObject[]) =>
        expect(podSpecOf(objects)).toMatchObject({
          nodeSelector: { "kubernetes.io/os": "linux" },
          tolerations: [{ key: "infra", operator: "Exists", effect: "NoSchedule" }],
          priorityClassName: "system-cluster-critical",
        }),
    },
    {
      name: "affinity, which replaces the anti-affinity",
      values: {
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
        },
      },
      check: (objects: K8sObject[]) =>
        expect(podSpecOf(objects).affinity).toEqual({
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
        }),
    },
    {
      name: "podAntiAffinity hard, selecting this release's pods",
      values: { podAntiAffinity: "hard" },
      check: (objects: K8sObject[]) => {
        const anti = (
          podSpecOf(objects).affinity as {
            podAntiAffinity: Record<string, { labelSelector: { matchLabels: Record<string, string> } }[]>;
          }
        ).podAntiAffinity;
        const term = anti.requiredDuringSchedulingIgnoredDuringExecution?.[0];
        expect(
          labelsMatch(
            term?.labelSelector.matchLabels ?? {},
            deploymentOf(objects).spec.template.metadata.labels,
          ),
        ).toBe(true);
      },
    },
    {
      name: "podAntiAffinity none",
      values: { podAntiAffinity: "none" },
      check: (objects: K8sObject[]) => expect(podSpecOf(objects).affinity).toBeUndefined(),
    },
    {
      name: "podAnnotations and podLabels, beside the chart's",
      values: { podAnnotations: { "example.com/scrape": "true" }, podLabels: { team: "network" } },
      check: (objects: K8sObject[]) => {
        const metadata = deploymentOf(objects).spec.template.metadata as {
          labels: Record<string, string>;
          annotations?: Record<string, string>;
        };
        expect(metadata.annotations).toEqual({
          "example.com/scrape": "true",
          "kubectl.kubernetes.io/default-container": "operator",
        });
        expect(metadata.labels).toMatchObject({
          team: "network",
          "app.kubernetes.io/component": "controller",
        });
        expect(deploymentOf(objects).spec.selector.matchLabels).not.toHaveProperty("team");
      },
    },
    {
      name: "podDisruptionBudget",
      values: { podDisruptionBudget: { maxUnavailable: "50%" } },
      check: (objects: K8sObject[]) =>
        expect(ofKind(objects, "PodDisruptionBudget")[0]?.["spec"]).toMatchObject({ maxUnavailable: "50%" }),
    },
    {
      name: "podDisruptionBudget off",
      values: { podDisruptionBudget: { enabled: false } },
      check: (objects: K8sObject[]) => expect(ofKind(objects, "PodDisruptionBudget")).toEqual([]),
    },
  ];
  it.each(podCases)("$name", ({ values, check }) => check(render(values)));

  it("monitoring: ServiceMonitor and PrometheusRule carry the labels a Prometheus selects by; the dashboard goes where Grafana looks", () => {
    const objects = render({
      monitoring: {
        serviceMonitor: { enabled: true, interval: "1m", labels: { release: "kube-prometheus-stack" } },
        prometheusRule: { enabled: true, labels: { release: "kube-prometheus-stack" } },
        grafanaDashboard: { enabled: true, namespace: "grafana", annotations: { grafana_folder: "NSX" } },
      },
    });
    const [monitor] = ofKind(objects, "ServiceMonitor") as (K8sObject & {
      spec: { endpoints: { interval: string }[] };
    })[];
    expect(monitor?.metadata.labels).toMatchObject({ release: "kube-prometheus-stack" });
    expect(monitor?.spec.endpoints[0]?.interval).toBe("1m");
    expect(ofKind(objects, "PrometheusRule")[0]?.metadata.labels).toMatchObject({
      release: "kube-prometheus-stack",
    });
    const [dashboard] = ofKind(objects, "ConfigMap");
    expect(dashboard?.metadata).toMatchObject({
      namespace: "grafana",
      annotations: { grafana_folder: "NSX" },
      labels: { grafana_dashboard: "1" },
    });
  });

  it("no monitoring object unless asked for (their CRDs may not exist)", () => {
    expect(
      render({}).filter((object) => ["ServiceMonitor", "PrometheusRule", "ConfigMap"].includes(object.kind)),
    ).toEqual([]);
  });
});

describe.skipIf(helm.path === undefined)("another release name and namespace", () => {
  const release = { name: "edge-ops", namespace: "team-a" };
  const objects =
    helm.path === undefined
      ? []
      : render(
          { monitoring: { serviceMonitor: { enabled: true }, prometheusRule: { enabled: true } } },
          release,
        );

  it("names every object after the release, in its namespace", () => {
    for (const object of objects) {
      expect(object.metadata.name, describeObject(object)).toMatch(/^edge-ops-nsxv-operator(-|$)/);
      if (object.kind !== "ClusterRole" && object.kind !== "ClusterRoleBinding")
        expect(object.metadata.namespace, describeObject(object)).toBe("team-a");
    }
  });

  it("binds every role to the release's ServiceAccount, and the Lease grant names the Lease the operator uses", () => {
    const account = ofKind(objects, "ServiceAccount")[0]?.metadata;
    expect(deploymentOf(objects).spec.template.spec.serviceAccountName).toBe(account?.name);
    for (const binding of [
      ...ofKind(objects, "ClusterRoleBinding"),
      ...ofKind(objects, "RoleBinding"),
    ] as BindingObject[]) {
      expect(binding.subjects, describeObject(binding)).toEqual([
        { kind: "ServiceAccount", name: account?.name, namespace: "team-a" },
      ]);
      expect(
        rolesOf(objects).some(
          (role) => role.kind === binding.roleRef.kind && role.metadata.name === binding.roleRef.name,
        ),
      ).toBe(true);
    }
    const lease = operatorConfig(argsOf(objects), "team-a").leaderElection?.id;
    const leaseRule = rolesOf(objects)
      .flatMap((role) => role.rules)
      .find((rule) => rule.resourceNames !== undefined);
    expect(leaseRule?.resourceNames).toEqual([lease]);
  });

  it("the Service selects the pods, the ServiceMonitor the Service, and the alerts' job is the Service", () => {
    const podLabels = deploymentOf(objects).spec.template.metadata.labels;
    const [service] = ofKind(objects, "Service") as (K8sObject & {
      spec: { selector: Record<string, string> };
    })[];
    expect(labelsMatch(service?.spec.selector ?? {}, podLabels)).toBe(true);
    const [monitor] = ofKind(objects, "ServiceMonitor") as (K8sObject & {
      spec: { selector: { matchLabels: Record<string, string> } };
    })[];
    expect(labelsMatch(monitor?.spec.selector.matchLabels ?? {}, service?.metadata.labels ?? {})).toBe(true);
    const jobs = JSON.stringify(ofKind(objects, "PrometheusRule")).match(/job=\\"[^\\]*\\"/g) ?? [];
    expect(jobs.length).toBeGreaterThan(0);
    expect(new Set(jobs)).toEqual(new Set([`job=\\"${service?.metadata.name}\\"`]));
  });

  it("does not select the pods of a release of another name", () => {
    const other = deploymentOf(render({})).spec.template.metadata.labels;
    expect(labelsMatch(deploymentOf(objects).spec.selector.matchLabels, other)).toBe(false);
  });
});

// CI must run every check above: there a missing tool fails instead of skipping.
it("helm is there where the chart's values must be checked (CI)", () => {
  expect(helm.path !== undefined || !IN_CI, helm.missingReason).toBe(true);
});
