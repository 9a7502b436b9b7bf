/**
 * What the deploy proofs share: `kubectl apply -k deploy/` against the shared control plane (as
 * it runs for a user), a kustomize overlay that moves the single-namespace
 * variant into a test namespace (as deploy/README.md tells users to write one), and a KubeConfig
 * for a ServiceAccount with a token from the TokenRequest API (what a pod's projected token is).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import {
  AppsV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
} from "@kubernetes/client-node";
import { GROUP, VERSION } from "../../src/api/types.ts";
import { apiStatus, kubectl, type ControlPlaneHandle } from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const DEPLOY_DIR = join(REPO_ROOT, "deploy");
export const CRDS_DIR = join(REPO_ROOT, "crds");
export const NAMESPACED_VARIANT_DIR = join(DEPLOY_DIR, "variants", "namespaced");
export const MONITORING_DIR = join(DEPLOY_DIR, "optional", "monitoring");

/** The install's names, as deploy/ writes them. */
export const INSTALL = {
  namespace: "nsxv-system",
  serviceAccount: "nsxv-operator",
  lease: "nsxv-operator",
} as const;

/** The CRDs deploy/ installs, by plural; the kinds are namespaced, group nsxv.io. */
export const CRD_PLURALS = ["nsxmanagers", "edgetenants", "ippoolallocations"] as const;

/**
 * `kubectl apply -k` of an install (default deploy/), then waits until the CRDs are Established
 * and their kinds served (lists answer 429 for a moment after Established).
 */
export async function applyInstall(cp: ControlPlaneHandle, dir = DEPLOY_DIR): Promise<void> {
  await kubectl(cp, ["apply", "-k", dir]);
  const crds = CRD_PLURALS.map((plural) => `crd/${plural}.${GROUP}`);
  await kubectl(cp, ["wait", "--for=condition=Established", "--timeout=30s", ...crds]);
  const custom = cp.makeKubeConfig().makeApiClient(CustomObjectsApi);
  for (const plural of CRD_PLURALS) {
    await waitFor(`${plural}.${GROUP} served`, () =>
      custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural, limit: 1 }),
    );
  }
}

/** A temporary directory removed by `dispose`. */
export interface TempDir {
  path: string;
  dispose(): Promise<void>;
}

export async function makeTempDir(prefix: string): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), `${prefix}-`));
  return { path, dispose: () => rm(path, { recursive: true, force: true }) };
}

/**
 * The overlay deploy/README.md shows for an install in another namespace: `namespace: <ns>` over
 * a kustomization (`base`, default the single-namespace variant). Written to `<parent>/<name>`;
 * returns that directory, to `kubectl apply -k`.
 */
export async function writeNamespaceOverlay(options: {
  parent: string;
  name: string;
  namespace: string;
  base?: string;
}): Promise<string> {
  const { parent, name, namespace, base = NAMESPACED_VARIANT_DIR } = options;
  const dir = join(parent, name);
  await mkdir(dir, { recursive: true });
  const text = [
    "apiVersion: kustomize.config.k8s.io/v1beta1",
    "kind: Kustomization",
    `namespace: ${namespace}`,
    "resources:",
    `  - ${relative(dir, base)}`,
    "",
  ].join("\n");
  await writeFile(join(dir, "kustomization.yaml"), text);
  return dir;
}

export interface ServiceAccountAccess {
  token: string;
  kubeConfig: KubeConfig;
  /** a kubeconfig file with the token, for kubectl or `nsxv-operator run --kubeconfig` */
  kubeconfigPath: string;
}

/**
 * A bound token of a ServiceAccount through the TokenRequest API (the token a pod would get),
 * and a KubeConfig and kubeconfig file that authenticate with it.
 */
export async function serviceAccountAccess(
  cp: ControlPlaneHandle,
  options: { namespace: string; name: string; dir: string; expirationSeconds?: number },
): Promise<ServiceAccountAccess> {
  const { namespace, name, dir, expirationSeconds = 3600 } = options;
  const core = cp.makeKubeConfig().makeApiClient(CoreV1Api);
  const request = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds } },
  });
  const token = request.status?.token;
  if (token === undefined || token === "") throw new Error(`TokenRequest for ${namespace}/${name}: no token`);
  const kubeConfig = cp.makeKubeConfig(token);
  const kubeconfigPath = join(dir, `kubeconfig-${namespace}-${name}`);
  await writeFile(kubeconfigPath, kubeConfig.exportConfig(), { mode: 0o600 });
  return { token, kubeConfig, kubeconfigPath };
}

/** The API clients the RBAC cases call, all with one identity. */
export interface Apis {
  core: CoreV1Api;
  apps: AppsV1Api;
  custom: CustomObjectsApi;
  leases: CoordinationV1Api;
  rbac: RbacAuthorizationV1Api;
}

export function apisOf(kc: KubeConfig): Apis {
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    leases: kc.makeApiClient(CoordinationV1Api),
    rbac: kc.makeApiClient(RbacAuthorizationV1Api),
  };
}

/** The status of a call: 200 when it succeeded, else the API's status code (or the error's text). */
export async function statusOf(call: Promise<unknown>): Promise<number | string> {
  try {
    await call;
    return 200;
  } catch (error) {
    return apiStatus(error) ?? String(error);
  }
}

/** A SelfSubjectAccessReview's resource attributes. */
export interface Access {
  verb: string;
  resource: string;
  group?: string;
  subresource?: string;
  /** "" asks for every namespace (a cluster-wide list or watch) */
  namespace: string;
  name?: string;
}

/** Whether `kc`'s identity may do `access`, by SelfSubjectAccessReview. */
export async function accessAllowed(kc: KubeConfig, access: Access): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
    body: { spec: { resourceAttributes: { ...access, group: access.group ?? "" } } },
  });
  return review.status?.allowed === true;
}

/**
 * Runs `body` while stub Prometheus Operator CRDs (ServiceMonitor, PrometheusRule) are
 * Established, written to `dir`; deletes them afterwards. Stubs accept any spec: what they prove
 * is kinds, API versions, names and namespaces.
 */
export async function withPrometheusOperatorStubs<T>(
  cp: ControlPlaneHandle,
  dir: string,
  body: () => Promise<T>,
): Promise<T> {
  const stubs = join(dir, "prometheus-operator-stub-crds.yaml");
  await writeFile(stubs, stubCrds(["ServiceMonitor", "PrometheusRule"]));
  await kubectl(cp, ["apply", "-f", stubs]);
  try {
    await kubectl(cp, [
      "wait",
      "--for=condition=Established",
      "--timeout=30s",
      "crd/servicemonitors.monitoring.coreos.com",
      "crd/prometheusrules.monitoring.coreos.com",
    ]);
    return await body();
  } finally {
    await kubectl(cp, ["delete", "-f", stubs, "--wait=false"]);
  }
}

/** Namespaced monitoring.coreos.com/v1 CRDs that accept any spec. */
function stubCrds(kinds: readonly string[]): string {
  return kinds
    .map((kind) => {
      const plural = `${kind.toLowerCase()}s`;
      return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.monitoring.coreos.com
  labels: { nsxv-operator.test/stub: "true" }
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: { kind: ${kind}, listKind: ${kind}List, plural: ${plural}, singular: ${kind.toLowerCase()} }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`;
    })
    .join("---\n");
}
