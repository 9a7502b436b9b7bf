/**
 * What one `apply` costs the machine it runs on: peak RSS and wall time of the built CLI
 * (`dist/`, what users and the image run) in a child process, against the simulator in this one.
 * Cases: one drifted edge (the smallest useful pass), 1000 drifted small edges, and edges of
 * 10 MB and 31 MB (near the 32 MiB maxResponseBytes admits), each corrected without lost content.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimulator, type SimulatorStateInput } from "../src/simulator/index.ts";
import { buildCli, runBuiltCli, writeCliManifests, type CliRun } from "./lib/cli-process.ts";
import { CREDENTIALS, DESIRED_TENANT, DRIFTED_TENANT } from "./lib/fixtures.ts";
import { atMost, exactly, ResultBuilder, type BenchResult } from "./lib/result.ts";
import { median } from "./lib/stats.ts";

export interface CliFootprintCase {
  label: string;
  edges: number;
  /** each edge about this large; the generator's default (~35 KB) when undefined */
  targetBytes?: number;
  /** firewall rules per edge when targetBytes is undefined */
  firewallRules?: number;
  rssTargetMiB?: number;
  wallTargetMs?: number;
}

export interface CliFootprintOptions {
  cases: readonly CliFootprintCase[];
  /** runs per case; the median is reported */
  runs: number;
}

export const CLI_FOOTPRINT_FULL: CliFootprintOptions = {
  cases: [
    { label: "1 edge", edges: 1, rssTargetMiB: 100, wallTargetMs: 300 },
    { label: "1000 small edges", edges: 1000, firewallRules: 0, rssTargetMiB: 160 },
    { label: "1 edge of 10 MB", edges: 1, targetBytes: 10 << 20, rssTargetMiB: 200 },
    { label: "1 edge of 31 MB", edges: 1, targetBytes: 31 << 20 },
  ],
  runs: 3,
};

export const CLI_FOOTPRINT_QUICK: CliFootprintOptions = {
  cases: [
    { label: "1 edge", edges: 1, rssTargetMiB: 100, wallTargetMs: 300 },
    { label: "1 edge of 10 MB", edges: 1, targetBytes: 10 << 20, rssTargetMiB: 200 },
  ],
  runs: 1,
};

export async function benchCliFootprint(options: CliFootprintOptions): Promise<BenchResult> {
  const result = new ResultBuilder("cli-footprint");
  await buildCli();
  const dir = mkdtempSync(join(tmpdir(), "nsxv-footprint-"));
  try {
    for (const c of options.cases) await runCase(result, c, options.runs, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  result.note(
    "`node dist/cli/main.js apply -f DIR` in a child process, its peak RSS read at exit from /proc/self/status " +
      "(VmHWM: the CLI's own, where maxRSS would carry the benchmark's from the fork); the simulator runs in the benchmark's process. Each run starts from drifted edges.",
  );
  return result.build();
}

async function runCase(result: ResultBuilder, c: CliFootprintCase, runs: number, dir: string): Promise<void> {
  const rss: number[] = [];
  const wall: number[] = [];
  const cpu: number[] = [];
  let lost = 0;
  let corrected = 0;
  for (let run = 0; run < runs; run++) {
    const sim = await startSimulator({ state: state(c), settings: { maxRequestBytes: 64 << 20 } });
    try {
      const manifests = join(dir, `${c.label.replace(/\W+/g, "-")}-${run}.yaml`);
      writeCliManifests(manifests, sim.url, c.edges, { requestsPerSecond: 1000 });
      const measured = await applyOnce(manifests);
      rss.push(measured.peakRssKiB / 1024);
      wall.push(measured.wallMs);
      cpu.push(measured.cpuMs);
      lost += sim.state.audit.snapshot().violations.length;
      corrected += sim.state.edges().filter((e) => e.doc.tenant === DESIRED_TENANT).length;
    } finally {
      await sim.close();
    }
  }
  const rssMiB = median(rss);
  const wallMs = median(wall);
  const add = (metric: string, value: number, unit: string, target?: ReturnType<typeof atMost>) =>
    result.add({ case: c.label, metric, value, unit, ...(target ? { target } : {}) });
  add(
    "peak RSS",
    rssMiB,
    "MiB",
    c.rssTargetMiB === undefined ? undefined : atMost(rssMiB, c.rssTargetMiB, " MiB"),
  );
  add("wall", wallMs, "ms", c.wallTargetMs === undefined ? undefined : atMost(wallMs, c.wallTargetMs, " ms"));
  add("CPU, user + system", median(cpu), "ms");
  add("edges corrected", corrected / runs, "edges", exactly(corrected / runs, c.edges));
  add("lost-content PUTs", lost, "PUTs", exactly(lost, 0));
}

function state(c: CliFootprintCase): SimulatorStateInput {
  const size = c.targetBytes !== undefined ? { targetBytes: c.targetBytes } : {};
  const rules = c.firewallRules !== undefined ? { firewallRules: c.firewallRules } : {};
  return {
    credentials: { ...CREDENTIALS },
    edges: [{ generate: { count: c.edges, tenant: DRIFTED_TENANT, ...size, ...rules } }],
  };
}

/** One `apply` of the built CLI; it must exit 0. */
async function applyOnce(manifests: string): Promise<CliRun> {
  const run = await runBuiltCli(["apply", "-f", manifests], {
    env: { NSX_USERNAME: CREDENTIALS.username, NSX_PASSWORD: CREDENTIALS.password },
  });
  if (run.code !== 0) throw new Error(`apply exited ${run.code}: ${run.output.slice(-800)}`);
  return run;
}
