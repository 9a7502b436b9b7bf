/**
 * The chart with the real helm against the real kube-apiserver, as a user runs it: what `helm
 * template` renders passes a server-side dry run (default values, scope namespace, the
 * monitoring pieces against stub Prometheus Operator CRDs); `helm install` on a cluster without
 * the CRDs installs them and every object, and `nsxv-operator run` with the installed
 * Deployment's arguments, as the chart's ServiceAccount, takes a drifted edge tenant and a stray
 * address to convergence against the simulator (deploy-scenario.ts); `helm upgrade` with other
 * values changes the Deployment and the Lease grant, and the operator converges again under
 * them; `helm uninstall` removes every object of the release and leaves the CRDs and the custom
 * resources, as Helm does with a chart's crds/.
 *
 * On a control plane of its own: a cluster without the CRDs is one no other file can use.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CustomObjectsApi, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { GROUP, VERSION } from "../../src/api/types.ts";
import { controlPlaneBinDir } from "../controlplane/binaries.ts";
import { createTestNamespace, describeWithOwnControlPlane, kubectl } from "../controlplane/testing.ts";
import { CHART_DIR, runHelm } from "../deploy/helm.ts";
import { reconcileAsServiceAccount } from "./deploy-scenario.ts";
import {
  CRD_PLURALS,
  makeTempDir,
  serviceAccountAccess,
  type TempDir,
  withPrometheusOperatorStubs,
} from "./deploy-support.ts";

const RELEASE = "helm-test";
/** the chart's name for every object of the release (release name + chart name) */
const FULLNAME = "helm-test-nsxv-operator";
const CRD_NAMES = CRD_PLURALS.map((plural) => `${plural}.${GROUP}`);

interface ReleaseStatus {
  version: number;
  info: { status: string };
}

interface ManifestObject {
  kind: string;
  metadata: { name: string; namespace?: string };
}

await describeWithOwnControlPlane(
  "helm install, upgrade and uninstall of deploy/helm/nsxv-operator",
  (cp) => {
    const admin = cp.makeKubeConfig();
    const helmPath = join(controlPlaneBinDir(), "helm");
    const helm = (args: readonly string[], values?: Record<string, unknown>) =>
      runHelm(helmPath, [...args, "--kubeconfig", cp.kubeconfigPath], values);
    let temp: TempDir;
    let namespace = "";

    /** `helm template` of the chart (CRDs included) into a file, for kubectl; and how many objects */
    async function renderToFile(
      name: string,
      release: string,
      values: Record<string, unknown>,
    ): Promise<{ file: string; count: number }> {
      const file = join(temp.path, `${name}.yaml`);
      const text = helm(["template", release, CHART_DIR, "--namespace", namespace, "--include-crds"], values);
      await writeFile(file, text);
      return { file, count: parseAllDocuments(text).filter((document) => document.contents !== null).length };
    }

    async function serverDryRun(file: string): Promise<string[]> {
      const { stdout } = await kubectl(cp, ["apply", "--server-side", "--dry-run=server", "-f", file]);
      return stdout.split("\n").filter((line) => line.trim() !== "");
    }

    /**
     * deploy-scenario.ts's full reconcile: the operator with the installed Deployment's arguments,
     * as the release's ServiceAccount (a TokenRequest token), objects in a fresh namespace.
     */
    async function reconcileAsRelease(lease: string, objectsPrefix: string): Promise<void> {
      const sa = await serviceAccountAccess(cp, { namespace, name: FULLNAME, dir: temp.path });
      await reconcileAsServiceAccount({
        admin,
        installNamespace: namespace,
        objectsNamespace: await createTestNamespace(admin, objectsPrefix),
        kubeconfigPath: sa.kubeconfigPath,
        deployment: FULLNAME,
        lease,
      });
    }

    const releaseStatus = () =>
      JSON.parse(helm(["status", RELEASE, "--namespace", namespace, "--output", "json"])) as ReleaseStatus;

    beforeAll(async () => {
      temp = await makeTempDir("nsxv-helm");
      namespace = await createTestNamespace(admin, "nsxv-helm");
    });
    afterAll(async () => {
      await temp?.dispose();
    });

    it.each([
      { name: "the default values", values: {} },
      { name: "scope namespace", values: { scope: "namespace" } },
    ])("what helm template renders for $name passes a server-side dry run", async ({ name, values }) => {
      const { file, count } = await renderToFile(name, "helm-dryrun", values);
      const lines = await serverDryRun(file);
      expect(lines.length, lines.join("\n")).toBe(count);
      for (const line of lines) expect(line).toMatch(/ serverside-applied \(server dry run\)$/);
    });

    it("what helm template renders for the monitoring pieces passes a server-side dry run (stub CRDs)", async () => {
      const values = {
        monitoring: {
          serviceMonitor: { enabled: true },
          prometheusRule: { enabled: true },
          grafanaDashboard: { enabled: true },
        },
      };
      const { file } = await renderToFile("monitoring", "helm-dryrun", values);
      const lines = await withPrometheusOperatorStubs(cp, temp.path, () => serverDryRun(file));
      for (const kind of [
        "servicemonitor.monitoring.coreos.com",
        "prometheusrule.monitoring.coreos.com",
        "configmap",
      ]) {
        expect(lines).toContain(
          `${kind}/helm-dryrun-nsxv-operator${kind === "configmap" ? "-dashboard" : ""} serverside-applied (server dry run)`,
        );
      }
    });

    it("helm install on a cluster without the CRDs installs them and every object of the release", async () => {
      const crdsBefore = await kubectl(cp, [
        "get",
        "crd",
        ...CRD_NAMES,
        "--ignore-not-found",
        "--output=name",
      ]);
      expect(crdsBefore.stdout.trim(), "no CRD before the install").toBe("");
      const installed = helm(["install", RELEASE, CHART_DIR, "--namespace", namespace]);
      // the chart's NOTES: what to run next, with this release's names
      expect(installed).toContain(`kubectl -n ${namespace} rollout status deployment/${FULLNAME}`);
      expect(installed).toContain(`kubectl -n ${namespace} get lease ${FULLNAME}`);
      expect(releaseStatus()).toMatchObject({ version: 1, info: { status: "deployed" } });
      await kubectl(cp, [
        "wait",
        "--for=condition=Established",
        "--timeout=30s",
        ...CRD_NAMES.map((n) => `crd/${n}`),
      ]);
      // every object of the release's manifest is on the server
      const manifest = join(temp.path, "manifest.yaml");
      await writeFile(manifest, helm(["get", "manifest", RELEASE, "--namespace", namespace]));
      const { stdout } = await kubectl(cp, ["get", "-f", manifest, "--output=json"]);
      const kinds = (JSON.parse(stdout) as { items: ManifestObject[] }).items.map((o) => o.kind).sort();
      expect(kinds).toEqual([
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "PodDisruptionBudget",
        "Role",
        "RoleBinding",
        "Service",
        "ServiceAccount",
      ]);
    });

    it("the operator, as the chart's ServiceAccount with the Deployment's arguments, converges an EdgeTenant and a pool", async () => {
      await reconcileAsRelease(FULLNAME, "nsxv-helm-objects");
    }, 90_000);

    it("helm upgrade with other values changes the Deployment and the Lease grant, and the operator converges under them", async () => {
      const lease = "helm-test-upgraded";
      helm(["upgrade", RELEASE, CHART_DIR, "--namespace", namespace], {
        logLevel: "debug",
        syncInterval: "2m",
        leaderElection: { id: lease },
        extraArgs: ["--shutdown-timeout=20s"],
        podAnnotations: { "example.com/upgraded": "yes" },
      });
      expect(releaseStatus()).toMatchObject({ version: 2, info: { status: "deployed" } });
      const { stdout } = await kubectl(cp, [
        "get",
        "deployment",
        FULLNAME,
        "--namespace",
        namespace,
        "--output=json",
      ]);
      const template = (JSON.parse(stdout) as { spec: { template: PodTemplate } }).spec.template;
      expect(template.metadata.annotations["example.com/upgraded"]).toBe("yes");
      expect(template.spec.containers[0]?.args).toEqual(
        expect.arrayContaining([
          `--leader-election-id=${lease}`,
          "--log-level=debug",
          "--sync-interval=2m",
          "--shutdown-timeout=20s",
        ]),
      );
      const role = await admin
        .makeApiClient(RbacAuthorizationV1Api)
        .readNamespacedRole({ name: `${FULLNAME}-leader-election`, namespace });
      expect((role.rules ?? []).flatMap((rule) => rule.resourceNames ?? [])).toEqual([lease]);
      await reconcileAsRelease(lease, "nsxv-helm-upgraded");
    }, 90_000);

    it("helm uninstall removes every object of the release and leaves the CRDs and the custom resources", async () => {
      const manifest = join(temp.path, "manifest-before-uninstall.yaml");
      await writeFile(manifest, helm(["get", "manifest", RELEASE, "--namespace", namespace]));
      const custom = admin.makeApiClient(CustomObjectsApi);
      const edgeTenants = () =>
        custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: "edgetenants" });
      const before = ((await edgeTenants()) as { items: unknown[] }).items.length;
      expect(before, "the scenarios' EdgeTenants").toBeGreaterThanOrEqual(2);

      helm(["uninstall", RELEASE, "--namespace", namespace]);

      const { stdout } = await kubectl(cp, ["get", "-f", manifest, "--ignore-not-found", "--output=name"]);
      expect(stdout.trim(), "objects of the release left behind").toBe("");
      expect(helm(["list", "--namespace", namespace, "--short"]).trim()).toBe("");
      const crds = await kubectl(cp, ["get", ...CRD_NAMES.map((n) => `crd/${n}`), "--output=name"]);
      expect(crds.stdout.trim().split("\n").sort()).toEqual(
        CRD_NAMES.map((n) => `customresourcedefinition.apiextensions.k8s.io/${n}`).sort(),
      );
      expect(((await edgeTenants()) as { items: unknown[] }).items.length).toBe(before);
    });
  },
);

interface PodTemplate {
  metadata: { annotations: Record<string, string> };
  spec: { containers: { args: string[] }[] };
}
