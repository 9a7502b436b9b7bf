/**
 * Helpers for integration test files: the shared control plane (started by global-setup.ts,
 * handed over by setup.ts), a `describe` that skips (with the reason) when there is none, one
 * with a control plane of its own for a file that changes the cluster for everyone, a fresh
 * namespace per test file, CRD installation, and the kubectl built with the servers.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  ApiException,
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from "@kubernetes/client-node";
import { afterAll, describe, it } from "vitest";
import { readCrds } from "../../src/api/crds.ts";
import { waitFor, type WaitOptions } from "../support/wait.ts";
import {
  makeKubeConfig,
  startControlPlane,
  tokenFor,
  type ControlPlane,
  type ControlPlaneInfo,
} from "./controlplane.ts";
import type { BinariesAnswer, ControlPlaneAnswer } from "./setup.ts";

/** What a test file gets of the shared control plane: connection info plus conveniences. */
export interface ControlPlaneHandle extends ControlPlaneInfo {
  makeKubeConfig(token?: string): KubeConfig;
  tokenFor(user: string): string;
}

let provided: { binaries: BinariesAnswer; shared: ControlPlaneAnswer | undefined } | undefined;

/** setup.ts hands over what global-setup.ts's service answered, before the test file is imported. */
export function provideControlPlane(answers: NonNullable<typeof provided>): void {
  provided = answers;
}

const NOT_PROVIDED =
  "no control plane was provided: integration tests run in the `integration` vitest project";

/**
 * A describe block that runs against the shared control plane, or, without one, a single test
 * skipped with the reason (how to build the binaries). Files run side by side on it, each in
 * namespaces of its own; a file that restarts kube-apiserver, removes the CRDs or installs
 * cluster-wide objects that another file installs too uses describeWithOwnControlPlane.
 */
export function describeWithControlPlane(name: string, body: (cp: ControlPlaneHandle) => void): void {
  const shared = provided?.shared ?? { available: false, reason: NOT_PROVIDED };
  if (!shared.available) {
    describe(name, () => it("needs a control plane", (ctx) => ctx.skip(shared.reason)));
    return;
  }
  const { info } = shared;
  describe(name, () =>
    body({
      ...info,
      makeKubeConfig: (token) => makeKubeConfig(info, token ?? info.adminToken),
      tokenFor: (user) => tokenFor(info, user),
    }),
  );
}

/**
 * A describe block with an etcd and kube-apiserver of its own (about 3 s to start), stopped after
 * the file: for a file whose tests would disturb the others on the shared one (a kube-apiserver
 * restart, the CRDs removed, deploy/'s cluster-wide objects applied and compared). Await it at
 * the top of the file. Without the binaries, a single test skipped with the reason.
 */
export async function describeWithOwnControlPlane(
  name: string,
  body: (cp: ControlPlane) => void,
): Promise<void> {
  const binaries = provided?.binaries ?? { found: false, reason: NOT_PROVIDED, failed: false };
  if (!binaries.found) {
    describe(name, () => it("needs a control plane", (ctx) => ctx.skip(binaries.reason)));
    return;
  }
  const cp = await startControlPlane({ binDir: binaries.binDir });
  afterAll(() => cp.stop());
  describe(name, () => body(cp));
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
 * Applies the CRDs of `dir` (src/api/schema.ts reads them; server-side apply, so that files
 * installing the same CRDs at once do not conflict) and waits until each is Established and its
 * kind can be listed (storage comes up a moment after Established; until then lists answer 429
 * "storage is (re)initializing"). Returns their names. CRDs are cluster-wide, so installing the
 * same ones again from another test file is expected, and changes nothing.
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
    const { name } = definition["metadata"] as { name: string };
    await custom.patchClusterCustomObject(
      { ...crdResource, name, body: definition, fieldManager: "nsxv-operator-tests", force: true },
      setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply),
    );
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
