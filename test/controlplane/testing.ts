/**
 * Helpers for integration test files: the shared control plane started by global-setup.ts, a
 * `describe` that skips (with the reason) when there is none, a fresh namespace per test file,
 * CRD installation, the kubectl built with the servers, and a kube-apiserver restart for
 * watch-interruption tests.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  ApiException,
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
} from "@kubernetes/client-node";
import { describe, inject, it } from "vitest";
import { readCrds } from "../../src/api/schema.ts";
import { waitFor, type WaitOptions } from "../support/wait.ts";
import { makeKubeConfig, tokenFor, type ControlPlaneInfo } from "./controlplane.ts";

export type SharedControlPlane =
  | { available: true; info: ControlPlaneInfo; restart: { url: string; token: string } }
  | { available: false; reason: string };

/** What a test file gets: connection info plus the conveniences of a ControlPlane. */
export interface ControlPlaneHandle extends ControlPlaneInfo {
  makeKubeConfig(token?: string): KubeConfig;
  tokenFor(user: string): string;
  /**
   * restarts the shared kube-apiserver (same port, same etcd), `downMs` after it stopped (default
   * at once); resolves once it is ready
   */
  restartApiServer(options?: { downMs?: number }): Promise<void>;
}

export function sharedControlPlane(): SharedControlPlane {
  return (
    inject("controlPlane") ?? {
      available: false,
      reason: "no control plane was provided: integration tests run in the `integration` vitest project",
    }
  );
}

/**
 * A describe block that runs against the shared control plane, or, without one, a single test
 * skipped with the reason (how to build the binaries).
 */
export function describeWithControlPlane(name: string, body: (cp: ControlPlaneHandle) => void): void {
  const shared = sharedControlPlane();
  if (!shared.available) {
    describe(name, () => it("needs a control plane", (ctx) => ctx.skip(shared.reason)));
    return;
  }
  const { info, restart } = shared;
  describe(name, () =>
    body({
      ...info,
      makeKubeConfig: (token) => makeKubeConfig(info, token ?? info.adminToken),
      tokenFor: (user) => tokenFor(info, user),
      async restartApiServer(options = {}) {
        const url = new URL(restart.url);
        if (options.downMs !== undefined) url.searchParams.set("downMs", String(options.downMs));
        const res = await fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${restart.token}` },
        });
        if (res.status !== 204)
          throw new Error(`restarting kube-apiserver: ${res.status} ${await res.text()}`);
      },
    }),
  );
}

/**
 * Creates a namespace with a generated name and returns the name. Namespaces are never finalized
 * without a controller-manager, so every test file gets a fresh one instead of reusing one.
 */
export async function createTestNamespace(kc: KubeConfig, prefix = "nsxv-test"): Promise<string> {
  const ns = await kc.makeApiClient(CoreV1Api).createNamespace({
    body: { metadata: { generateName: `${prefix}-`, labels: { "nsxv-operator.test/owner": "integration" } } },
  });
  return ns.metadata!.name!;
}

/**
 * Creates or replaces the CRDs of `dir` (src/api/schema.ts reads them) and waits until each is
 * Established and its kind can be listed (storage comes up a moment after Established; until
 * then lists answer 429 "storage is (re)initializing"). Returns their names. CRDs are
 * cluster-wide, so installing the same ones again from another test file is expected.
 *
 * They are sent untyped through CustomObjectsApi: client-node's typed serializer
 * (KubernetesObjectApi, ApiextensionsV1Api) expects its own property names (`_default`, `_enum`,
 * `xKubernetesValidations`) and silently drops `default`, `enum` and `x-kubernetes-validations`
 * from a CRD read from YAML.
 */
export async function installCrds(kc: KubeConfig, dir: string, options: WaitOptions = {}): Promise<string[]> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const crdResource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions" };
  const crds = readCrds(dir);
  for (const { definition } of crds) {
    const metadata = definition["metadata"] as { name: string };
    try {
      const current = (await custom.getClusterCustomObject({ ...crdResource, name: metadata.name })) as {
        metadata: { resourceVersion: string };
      };
      const body = {
        ...definition,
        metadata: { ...metadata, resourceVersion: current.metadata.resourceVersion },
      };
      await custom.replaceClusterCustomObject({ ...crdResource, name: metadata.name, body });
    } catch (error) {
      if (apiStatus(error) !== 404) throw error;
      await custom.createClusterCustomObject({ ...crdResource, body: definition });
    }
  }
  const extensions = kc.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const { definition } of crds) {
    const name = (definition["metadata"] as { name: string }).name;
    const crd = await waitFor(
      `CRD ${name} to be Established`,
      async () => {
        const crd = await extensions.readCustomResourceDefinition({ name });
        const established = crd.status?.conditions?.find((c) => c.type === "Established");
        return established?.status === "True" ? crd : undefined;
      },
      options,
    );
    const { group, names: crdNames } = crd.spec;
    const version = crd.spec.versions.find((v) => v.storage)?.name ?? crd.spec.versions[0]!.name;
    await waitFor(
      `${crdNames.plural}.${group} to be served`,
      async () => custom.listClusterCustomObject({ group, version, plural: crdNames.plural, limit: 1 }),
      options,
    );
    names.push(name);
  }
  return names;
}

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface KubectlOptions {
  /** default the admin's kubeconfig of the control plane */
  kubeconfigPath?: string;
  /** default 60 s */
  timeoutMs?: number;
}

export interface KubectlResult {
  stdout: string;
  stderr: string;
}

/** A kubectl run that failed; the message carries its stderr, which says why. */
export class KubectlError extends Error {
  readonly code = "KUBECTL_FAILED";
  readonly stdout: string;
  readonly stderr: string;
  constructor(args: readonly string[], stdout: string, stderr: string, cause: unknown) {
    super(`kubectl ${args.join(" ")} failed:\n${stderr || stdout}`, { cause });
    this.name = "KubectlError";
    this.stdout = stdout;
    this.stderr = stderr;
  }
}

/**
 * Runs the kubectl built with the servers (the machine's may be too old for them) from the
 * repository root; resolves with its output, rejects with a KubectlError.
 */
export function kubectl(
  cp: Pick<ControlPlaneInfo, "kubectlPath" | "kubeconfigPath">,
  args: readonly string[],
  options: KubectlOptions = {},
): Promise<KubectlResult> {
  const { kubeconfigPath = cp.kubeconfigPath, timeoutMs = 60_000 } = options;
  const fullArgs = [`--kubeconfig=${kubeconfigPath}`, ...args];
  return new Promise((resolve, reject) => {
    execFile(
      cp.kubectlPath,
      fullArgs,
      { timeout: timeoutMs, cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new KubectlError(args, stdout, stderr, error));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/** The HTTP status of a failed API call, or undefined for anything else. */
export function apiStatus(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}
