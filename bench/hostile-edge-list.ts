/**
 * What a hostile or broken edge list costs (issue 30): managers whose every list page is full of
 * edges never listed before (lib/hostile-manager.ts), under a count no manager reaches or padded
 * to kilobytes per summary. The built CLI runs in a child process, its peak RSS read at exit:
 * `apply` against one such manager, and `run --manifests` against several at once for a while
 * (each NSXManager checks its list at start and every syncInterval, 10 s). Before the bounds
 * (maxEdgeListEdges, maxEdgeListBytes) a list was followed for 200 pages and kept whole: `apply`
 * peaked at 1043 MiB of RSS, `run` against 8 such managers at 1401 MiB, over the Deployment's 1Gi
 * limit (measured once against the tree before, from src/, as RESULTS.md records).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { buildCli, runBuiltCli } from "./lib/cli-process.ts";
import { CREDENTIALS } from "./lib/fixtures.ts";
import { startHostileManager, type HostileManagerOptions } from "./lib/hostile-manager.ts";
import { createMemoryCgroup, deploymentMemoryLimitBytes } from "./lib/memory-cgroup.ts";
import { atMost, ResultBuilder, type BenchResult } from "./lib/result.ts";

export interface HostileEdgeListCase {
  label: string;
  command: "apply" | "run";
  /** hostile managers at once, each with one NSXManager and one EdgeTenant */
  managers: number;
  list: HostileManagerOptions;
  /** run: how long the operator runs before SIGTERM */
  runMs?: number;
}

export interface HostileEdgeListOptions {
  cases: readonly HostileEdgeListCase[];
}

/** a count no manager reaches, 4 KB summaries: before the bounds, apply peaked at 1043 MiB here */
const HUGE_COUNT: HostileManagerOptions = { totalCount: 1_000_000_000, summaryBytes: 4_000 };
/** a count within the bound whose summaries pass the byte budget on the 9th page */
const PAST_BYTES: HostileManagerOptions = { totalCount: 9_000, summaryBytes: 4_000 };
/** just within both bounds: 9000 summaries of 3.5 KB (about 30 MiB) are accepted and kept */
const AT_THE_BOUNDS: HostileManagerOptions = { totalCount: 9_000, summaryBytes: 3_500 };

export const HOSTILE_EDGE_LIST_FULL: HostileEdgeListOptions = {
  cases: [
    { label: "apply, a count no manager reaches", command: "apply", managers: 1, list: HUGE_COUNT },
    { label: "apply, pages past the byte budget", command: "apply", managers: 1, list: PAST_BYTES },
    {
      label: "run, 8 managers at the bounds",
      command: "run",
      managers: 8,
      list: AT_THE_BOUNDS,
      runMs: 25_000,
    },
    { label: "run, 8 managers past them", command: "run", managers: 8, list: PAST_BYTES, runMs: 25_000 },
  ],
};

export const HOSTILE_EDGE_LIST_QUICK: HostileEdgeListOptions = {
  cases: [
    { label: "apply, a count no manager reaches", command: "apply", managers: 1, list: HUGE_COUNT },
    { label: "run, 2 managers past the bounds", command: "run", managers: 2, list: PAST_BYTES, runMs: 5_000 },
  ],
};

export async function benchHostileEdgeList(options: HostileEdgeListOptions): Promise<BenchResult> {
  const result = new ResultBuilder("hostile-edge-list");
  await buildCli();
  const limitBytes = deploymentMemoryLimitBytes();
  const limitMiB = limitBytes / 2 ** 20;
  for (const c of options.cases) {
    const run = await runCase(c);
    const label = `${c.label}: ${c.list.totalCount} counted, ${c.list.summaryBytes} bytes a summary`;
    result.add({
      case: label,
      metric: "peak RSS",
      value: Math.round(run.peakRssKiB / 1024),
      unit: "MiB",
      target: atMost(run.peakRssKiB / 1024, limitMiB / 2, "MiB"),
    });
    result.add({ case: label, metric: "list pages asked (all managers)", value: run.pages, unit: "pages" });
    result.add({ case: label, metric: "exit code", value: run.code ?? -1, unit: "code" });
    result.detail(c.label, { output: run.output.slice(-2_000) });
    if (c.command !== "run") continue;
    // as in the pod: Node sizes V8's heap from the cgroup's limit
    const made = await createMemoryCgroup(limitBytes);
    if ("unavailable" in made) {
      result.note(`${c.label} in the Deployment's limit: not measured (${made.unavailable})`);
      continue;
    }
    try {
      const limited = await runCase(c, made.cgroup.execPath);
      const metric = `peak RSS in the Deployment's ${limitMiB} MiB limit`;
      const value = Math.round(limited.peakRssKiB / 1024);
      result.add({ case: label, metric, value, unit: "MiB", target: atMost(value, limitMiB, "MiB") });
    } finally {
      await made.cgroup.remove();
    }
  }
  result.note(
    "Each hostile manager answers every list page with new edges (lib/hostile-manager.ts), the pools of " +
      "the global scope (none) and each edge's document; its EdgeTenant reads its edge one by one once the " +
      "list is refused. Peak RSS is the CLI child's own (VmHWM at exit), default flags, no memory limit " +
      `(V8 sizes its heap from the machine): the target is half the Deployment's ${limitMiB} MiB limit.`,
  );
  return result.build();
}

async function runCase(
  c: HostileEdgeListCase,
  execPath?: string,
): Promise<{ peakRssKiB: number; pages: number; code: number | null; output: string }> {
  const managers = await Promise.all(Array.from({ length: c.managers }, () => startHostileManager(c.list)));
  const dir = mkdtempSync(join(tmpdir(), "nsxv-hostile-list-"));
  try {
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "nsx-credentials", namespace: "nsx" },
      stringData: { ...CREDENTIALS },
    };
    const docs = managers.flatMap((m, i) => [
      {
        apiVersion: "nsxv.io/v1alpha1",
        kind: "NSXManager",
        metadata: { name: `nsx-${i + 1}`, namespace: "nsx" },
        spec: { url: m.url, credentialsSecretRef: { name: "nsx-credentials" } },
      },
      {
        apiVersion: "nsxv.io/v1alpha1",
        kind: "EdgeTenant",
        metadata: { name: `edge-${i + 1}`, namespace: "nsx" },
        spec: {
          managerRef: { name: `nsx-${i + 1}` },
          edgeId: "edge-1",
          tenant: "tenant-a",
          syncInterval: "10s",
        },
      },
    ]);
    writeFileSync(join(dir, "objects.yaml"), [secret, ...docs].map((d) => stringify(d)).join("---\n"));
    const args =
      c.command === "apply"
        ? ["apply", "-f", dir]
        : [
            "run",
            "--manifests",
            dir,
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
            "--log-level=warn",
          ];
    const run = await runBuiltCli(args, {
      timeoutMs: 300_000,
      ...(c.runMs !== undefined ? { stopAfterMs: c.runMs } : {}),
      ...(execPath !== undefined ? { execPath } : {}),
    });
    return {
      peakRssKiB: run.peakRssKiB,
      pages: managers.reduce((n, m) => n + m.pages(), 0),
      code: run.code,
      output: run.output,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await Promise.all(managers.map((m) => m.close()));
  }
}
