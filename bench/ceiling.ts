/**
 * The field's ceiling on one replica (issue 32): 8 managers x 2000 EdgeTenants, `syncInterval:
 * 10s`, started with no status, both ways the operator runs: from a directory of manifests
 * (`ceiling`) and on a real API server (`ceiling-apiserver`: test/controlplane's binaries; there
 * also the API server's requests per interval, and the operator's memory with 16 000 watched
 * objects). Targets: steady within 45 s; an out-of-band change made 3 s after the start corrected
 * within 15 s; then over 30 s at most 3 s of the operator's CPU and 12 calls per manager; a drift
 * corrected within 15 s; peak RSS within 768 MiB (the Deployment's limit is 1 GiB). The run itself
 * is lib/fleet-case.ts's, as fleet-interval's.
 */
import { CoreV1Api } from "@kubernetes/client-node";
import { Agent, request } from "undici";
import { findControlPlaneBinaries } from "../test/controlplane/binaries.ts";
import { startControlPlane, type ControlPlane } from "../test/controlplane/controlplane.ts";
import {
  benchFleetInterval,
  FLEET_CAPS,
  FLEET_CONCURRENCY,
  FLEET_TIMING,
  HOUR,
  formatHours,
  type FleetIntervalOptions,
} from "./fleet-interval.ts";
import {
  DESIRED_TENANT,
  managersFleetObjects,
  NAMESPACE,
  simulatorState,
  type FleetOptions,
} from "./lib/fixtures.ts";
import { runFleetCase, type FleetTargets } from "./lib/fleet-case.ts";
import { ResultBuilder, type BenchResult } from "./lib/result.ts";
import { startSimulatorProcess } from "./lib/simulator-process.ts";
import { ControlPlaneMissingError, createAll, installCrds } from "./scale-apiserver.ts";
import { runInCaseLimit } from "./scale.ts";

export const CEILING_TARGETS: FleetTargets = {
  steadyMs: 45_000,
  startDriftToPutMs: 15_000,
  windowCpuSeconds: 3,
  callsPerManagerInWindow: 12,
  driftToPutMs: 15_000,
  peakRssMiB: 768,
};

export const CEILING_FULL: FleetIntervalOptions = {
  name: "ceiling",
  cases: [
    { managers: 8, source: "directory", targets: CEILING_TARGETS },
    { managers: 8, source: "directory", fullReadIntervalMs: 4 * HOUR, targets: CEILING_TARGETS },
    { managers: 8, source: "directory", inDeploymentLimit: true, targets: CEILING_TARGETS },
  ],
  timing: { ...FLEET_TIMING, windowStartMs: 45_000, syncTimeoutMs: 600_000 },
  caps: FLEET_CAPS,
  concurrency: FLEET_CONCURRENCY,
};

export const CEILING_QUICK: FleetIntervalOptions = {
  ...CEILING_FULL,
  cases: [{ managers: 2, source: "directory", targets: CEILING_TARGETS }],
  timing: { ...CEILING_FULL.timing, edges: 200, windowMs: 10_000, syncTimeoutMs: 120_000 },
};

export function benchCeiling(options: FleetIntervalOptions): Promise<BenchResult> {
  return benchFleetInterval(options);
}

export interface CeilingApiServerOptions {
  managers: number;
  fullReadIntervalMs?: number;
  inDeploymentLimit?: boolean;
  base: FleetIntervalOptions;
  /** creates at once while filling the API server */
  createConcurrency: number;
}

export const CEILING_APISERVER_FULL: CeilingApiServerOptions = {
  managers: 8,
  inDeploymentLimit: true,
  base: CEILING_FULL,
  createConcurrency: 16,
};

export const CEILING_APISERVER_QUICK: CeilingApiServerOptions = {
  ...CEILING_APISERVER_FULL,
  managers: 2,
  inDeploymentLimit: false,
  base: CEILING_QUICK,
};

export async function benchCeilingApiServer(options: CeilingApiServerOptions): Promise<BenchResult> {
  const result = new ResultBuilder("ceiling-apiserver");
  const lookup = findControlPlaneBinaries({ build: false });
  if (!lookup.found) throw new ControlPlaneMissingError(lookup.reason);
  const { timing, caps, concurrency } = options.base;
  const fleet: FleetOptions = {
    edges: timing.edges,
    pools: 0,
    allowedPerPool: 0,
    straysPerPool: 0,
    edgeTenant: DESIRED_TENANT,
    firewallRules: 0,
  };
  const fullRead = formatHours(options.fullReadIntervalMs ?? HOUR);
  const label = `${options.managers} managers x ${timing.edges}, API server, full reads every ${fullRead}`;
  const sims = await Promise.all(
    Array.from({ length: options.managers }, () => startSimulatorProcess({ state: simulatorState(fleet) })),
  );
  let cp: ControlPlane | undefined;
  try {
    cp = await startControlPlane({ binDir: lookup.binDir });
    const kc = cp.makeKubeConfig();
    await installCrds(cp.kubectlPath, cp.kubeconfigPath);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
    const interval = `${timing.syncIntervalSeconds}s`;
    const urls = sims.map((s) => s.url);
    const objects = managersFleetObjects(urls, caps, timing.edges, interval);
    const createStart = performance.now();
    await createAll(kc, objects, options.createConcurrency);
    result.add({
      case: label,
      metric: `create ${objects.length} objects`,
      value: performance.now() - createStart,
      unit: "ms",
    });
    const plane = cp;
    const agent = new Agent({ connect: { ca: Buffer.from(plane.caData, "base64").toString("utf8") } });
    await runInCaseLimit(result, label, options.inDeploymentLimit, (caseLabel, execPath) =>
      runFleetCase({
        result,
        label: caseLabel,
        sims,
        start: {
          source: { type: "cluster", kubeconfigPath: plane.kubeconfigPath, namespace: NAMESPACE },
          url: urls[0] ?? "",
          fleet,
          caps,
          concurrency,
          syncIntervalMs: timing.syncIntervalSeconds * 1000,
          syncTimeoutMs: timing.syncTimeoutMs,
          managers: { urls, edgeSyncInterval: interval },
          ...(options.fullReadIntervalMs !== undefined
            ? { fullReadIntervalMs: options.fullReadIntervalMs }
            : {}),
        },
        timing,
        targets: options.base.cases[0]?.targets ?? CEILING_TARGETS,
        execPath,
        apiServerRequests: () => apiServerRequests(plane, agent),
      }),
    );
    await agent.close();
  } finally {
    await cp?.stop();
    await Promise.all(sims.map((s) => s.close()));
  }
  result.note(
    "kube-apiserver and etcd from test/controlplane (one namespace); the objects created before the operator " +
      `starts (${options.createConcurrency} concurrent POSTs), each with the status the CRD defaults ` +
      "(observedGeneration -1). The rest as in the ceiling benchmark; API server requests per interval: " +
      "apiserver_request_total (every verb and resource, watches included) over the steady window, per sync interval.",
  );
  return result.build();
}

/** The API server's apiserver_request_total, summed by verb and resource (its /metrics, as the admin). */
async function apiServerRequests(cp: ControlPlane, agent: Agent): Promise<Record<string, number>> {
  const res = await request(`${cp.url}/metrics`, {
    dispatcher: agent,
    headers: { authorization: `Bearer ${cp.adminToken}` },
  });
  const text = await res.body.text();
  const totals: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const labels = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}"));
    const label = (name: string) => new RegExp(`(?:^|,)${name}="([^"]*)"`).exec(labels)?.[1] ?? "";
    const resource = label("resource");
    // /metrics, /healthz and the like: not the operator's
    if (resource === "") continue;
    const subresource = label("subresource");
    const key = `${label("verb")} ${resource}${subresource === "" ? "" : `/${subresource}`}`;
    totals[key] = (totals[key] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return totals;
}
