/**
 * Scale against a real API server: 2000 objects in every full run, 10 000 with
 * `npm run bench -- --with-apiserver` (creating them and the first pass take minutes). The test control plane
 * (test/controlplane, binaries built by test/controlplane/build.sh) gets the CRDs, a namespace,
 * the Secret and the objects; the operator child follows them with the KubernetesSource, writing
 * status through the API server. Then one EdgeTenant's spec is patched and the time until the
 * simulator counts the PUT is measured, with the operator's peak RSS.
 */
import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ApiException, CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { GROUP, SECRET_BINDING_ANNOTATION, VERSION, type NsxvObject } from "../src/api/types.ts";
import { PLURALS } from "../src/api/types.ts";
import { findControlPlaneBinaries } from "../test/controlplane/binaries.ts";
import { startControlPlane } from "../test/controlplane/controlplane.ts";
import {
  credentialsSecret,
  fleetObjects,
  NAMESPACE,
  simulatorState,
  type ManagerCaps,
} from "./lib/fixtures.ts";
import { ResultBuilder, type BenchResult } from "./lib/result.ts";
import { runScale } from "./lib/scale-driver.ts";
import { CHANGED_TENANT } from "./lib/scale-protocol.ts";
import { startSimulatorProcess } from "./lib/simulator-process.ts";
import { manifestOf, reportScale, runInCaseLimit, scaleFleet } from "./scale.ts";

const CRD_DIR = fileURLToPath(new URL("../crds/", import.meta.url));

export interface ScaleApiServerCase {
  edges: number;
  pools: number;
  /** run the operator in a memory cgroup with the Deployment's limit (see scale.ts) */
  inDeploymentLimit?: boolean;
  peakRssTargetMiB: number;
}

export interface ScaleApiServerBenchOptions {
  /** each on a fresh control plane and simulator */
  cases: readonly ScaleApiServerCase[];
  caps: ManagerCaps;
  concurrency: number;
  /** the operator's resync interval; longer than the first pass, so that the queue is idle when the change comes */
  syncIntervalMs: number;
  /** creates at once while filling the API server */
  createConcurrency: number;
  syncTimeoutMs: number;
  changeTimeoutMs: number;
}

/** 2000 objects: the cluster-mode case, in every full run */
export const SCALE_APISERVER_FULL: ScaleApiServerBenchOptions = {
  cases: [
    { edges: 1_000, pools: 1_000, peakRssTargetMiB: 200 },
    { edges: 1_000, pools: 1_000, inDeploymentLimit: true, peakRssTargetMiB: 200 },
  ],
  caps: { maxConcurrentRequests: 16, requestsPerSecond: 1_000 },
  concurrency: 32,
  syncIntervalMs: 3_600_000,
  createConcurrency: 16,
  syncTimeoutMs: 1_200_000,
  changeTimeoutMs: 30_000,
};

/** 10 000 objects (`--with-apiserver`): creating them and the first pass take minutes */
export const SCALE_APISERVER_10K: ScaleApiServerBenchOptions = {
  ...SCALE_APISERVER_FULL,
  cases: [
    { edges: 5_000, pools: 5_000, peakRssTargetMiB: 256 },
    { edges: 5_000, pools: 5_000, inDeploymentLimit: true, peakRssTargetMiB: 256 },
  ],
};

export const SCALE_APISERVER_QUICK: ScaleApiServerBenchOptions = {
  ...SCALE_APISERVER_FULL,
  cases: [{ edges: 250, pools: 250, peakRssTargetMiB: 200 }],
  syncTimeoutMs: 300_000,
  changeTimeoutMs: 10_000,
};

export class ControlPlaneMissingError extends Error {
  readonly code = "BENCH_CONTROLPLANE_MISSING";
  constructor(reason: string) {
    super(`scale-apiserver needs the test control plane (bash test/controlplane/build.sh): ${reason}`);
    this.name = "ControlPlaneMissingError";
  }
}

export async function benchScaleApiServer(options: ScaleApiServerBenchOptions): Promise<BenchResult> {
  const result = new ResultBuilder("scale-apiserver");
  const lookup = findControlPlaneBinaries({ build: false });
  if (!lookup.found) throw new ControlPlaneMissingError(lookup.reason);
  for (const scaleCase of options.cases) {
    const label = `API server, ${scaleCase.edges + scaleCase.pools} objects`;
    await runInCaseLimit(result, label, scaleCase.inDeploymentLimit, (caseLabel, execPath) =>
      runCase(result, caseLabel, scaleCase, options, lookup.binDir, execPath),
    );
  }
  result.note(
    "kube-apiserver and etcd from test/controlplane (one namespace), a fresh pair and simulator per case; objects " +
      `created with ${options.createConcurrency} concurrent POSTs; the first pass writes every status through the API ` +
      "server. Change → PUT: from sending the spec patch to the simulator counting the PUT.",
  );
  return result.build();
}

async function runCase(
  result: ResultBuilder,
  label: string,
  scaleCase: ScaleApiServerCase,
  options: ScaleApiServerBenchOptions,
  binDir: string,
  execPath: string | undefined,
): Promise<void> {
  const fleet = scaleFleet(scaleCase.edges, scaleCase.pools);
  const sim = await startSimulatorProcess({ state: simulatorState(fleet) });
  const cp = await startControlPlane({ binDir }).catch(async (error: unknown) => {
    await sim.close();
    throw error;
  });
  try {
    const kc = cp.makeKubeConfig();
    await installCrds(cp.kubectlPath, cp.kubeconfigPath);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
    const objects = fleetObjects(sim.url, options.caps, fleet);
    const createStart = performance.now();
    await createAll(kc, objects, options.createConcurrency);
    const createMs = performance.now() - createStart;
    const custom = kc.makeApiClient(CustomObjectsApi);
    const run = await runScale({
      start: {
        source: { type: "cluster", kubeconfigPath: cp.kubeconfigPath, namespace: NAMESPACE },
        url: sim.url,
        fleet,
        caps: options.caps,
        concurrency: options.concurrency,
        syncIntervalMs: options.syncIntervalMs,
        syncTimeoutMs: options.syncTimeoutMs,
      },
      control: sim.control,
      changeTimeoutMs: options.changeTimeoutMs,
      timeReload: false,
      execPath,
      makeChange: async () => {
        await custom.patchNamespacedCustomObject({
          ...params("EdgeTenant"),
          name: "edge-1",
          body: [{ op: "replace", path: "/spec/tenant", value: CHANGED_TENANT }],
        });
      },
    });
    result.add({ case: label, metric: `create ${objects.length} objects`, value: createMs, unit: "ms" });
    reportScale(result, label, run, { ...options, peakRssTargetMiB: scaleCase.peakRssTargetMiB });
    result.detail(label, {
      ...run,
      createMs,
      parameters: { ...fleet, ...options.caps, workers: options.concurrency },
    });
  } finally {
    await cp.stop();
    await sim.close();
  }
}

function params(kind: NsxvObject["kind"]) {
  return { group: GROUP, version: VERSION, namespace: NAMESPACE, plural: PLURALS[kind] };
}

export async function installCrds(kubectl: string, kubeconfig: string): Promise<void> {
  const run = promisify(execFile);
  const files = (await readdir(CRD_DIR)).filter((f) => f.startsWith("nsxv.io_")).map((f) => join(CRD_DIR, f));
  await run(kubectl, [
    "--kubeconfig",
    kubeconfig,
    "apply",
    "--server-side",
    ...files.flatMap((f) => ["-f", f]),
  ]);
  await run(kubectl, [
    "--kubeconfig",
    kubeconfig,
    "wait",
    "--for=condition=Established",
    "crd",
    "--all",
    "--timeout=60s",
  ]);
}

/** The Secret, then every object; a 429 or 5xx (storage still initialising) is retried a few times. */
export async function createAll(
  kc: KubeConfig,
  objects: readonly NsxvObject[],
  concurrency: number,
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const { metadata, stringData } = credentialsSecret();
  // in a cluster the credentials go only to the managers their Secret names
  const urls = [...new Set(objects.flatMap((o) => (o.kind === "NSXManager" ? [o.spec.url] : [])))].join(" ");
  const body = {
    metadata: {
      name: metadata.name,
      namespace: NAMESPACE,
      annotations: { [SECRET_BINDING_ANNOTATION]: urls },
    },
    ...(stringData ? { stringData } : {}),
  };
  await core.createNamespacedSecret({ namespace: NAMESPACE, body });
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < objects.length) {
      const object = objects[next++] as NsxvObject;
      await retrying(() =>
        custom.createNamespacedCustomObject({ ...params(object.kind), body: manifestOf(object) }),
      );
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function retrying<T>(call: () => Promise<T>, attempts = 20): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const code = error instanceof ApiException ? error.code : 0;
      if (attempt >= attempts || !(code === 429 || code >= 500)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
