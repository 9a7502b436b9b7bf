/**
 * The built CLI (`dist/`, what users and the image run) in a child process, measured: its exit
 * code, output, wall time, CPU time and peak RSS (read at exit by the preloaded peak-rss.cjs, so that the
 * figure is the CLI's own and not the benchmark's carried across fork).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { DESIRED_TENANT } from "./fixtures.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/cli/main.js");
const PEAK_RSS = fileURLToPath(new URL("./peak-rss.cjs", import.meta.url));

export interface CliRun {
  code: number | null;
  /** stdout and stderr, interleaved */
  output: string;
  wallMs: number;
  peakRssKiB: number;
  /** CPU time (user + system) of the CLI's process */
  cpuMs: number;
}

let built: Promise<void> | undefined;

/** dist/ as `npm run build` makes it, built once per process (the benchmarks of a run share it) */
export function buildCli(): Promise<void> {
  built ??= compile();
  return built;
}

async function compile(): Promise<void> {
  if (!existsSync(join(ROOT, "node_modules/typescript/bin/tsc"))) {
    throw new Error("typescript is not installed: run npm ci");
  }
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "scripts/build.ts")], { cwd: ROOT, stdio: "inherit" });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`the build exited ${code}`))));
  });
}

/**
 * `node dist/cli/main.js ARGS` with `env` over this process's environment; sent SIGTERM after
 * `stopAfterMs` (a command that runs until stopped, such as `run`), killed after `timeoutMs`.
 * `cli`: another build's main.js (a reference build, lib/reference-build.ts).
 */
export async function runBuiltCli(
  args: readonly string[],
  options: {
    env?: Record<string, string>;
    timeoutMs?: number;
    cli?: string;
    stopAfterMs?: number;
    /** the node to run it with; default this one's (a memory cgroup's wrapper: lib/memory-cgroup.ts) */
    execPath?: string;
  } = {},
): Promise<CliRun> {
  const dir = mkdtempSync(join(tmpdir(), "nsxv-cli-run-"));
  const rssFile = join(dir, "rss");
  const started = performance.now();
  const child = spawn(
    options.execPath ?? process.execPath,
    ["--require", PEAK_RSS, options.cli ?? CLI, ...args],
    {
      env: { ...process.env, ...options.env, NSXV_BENCH_PEAK_RSS_FILE: rssFile, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 300_000);
  const stop =
    options.stopAfterMs === undefined
      ? undefined
      : setTimeout(() => child.kill("SIGTERM"), options.stopAfterMs);
  try {
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    const wallMs = performance.now() - started;
    if (code === null)
      throw new Error(`${args[0]} was killed after ${Math.round(wallMs)} ms: ${output.slice(-800)}`);
    const measured = JSON.parse(readFileSync(rssFile, "utf8")) as { peakRssBytes: number; cpuMs: number };
    return { code, output, wallMs, peakRssKiB: measured.peakRssBytes / 1024, cpuMs: measured.cpuMs };
  } finally {
    clearTimeout(timer);
    clearTimeout(stop);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One manifest file for the CLI: NSXManager `nsx` at `url` (credentials from NSX_USERNAME and
 * NSX_PASSWORD) with `managerSpec` added to its spec, and EdgeTenants edge-1..edge-N for DESIRED_TENANT.
 */
export function writeCliManifests(
  file: string,
  url: string,
  edges: number,
  managerSpec: Record<string, unknown> = {},
): void {
  const manager = {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "NSXManager",
    metadata: { name: "nsx" },
    spec: { url, credentialsSecretRef: { name: "nsx-credentials" }, ...managerSpec },
  };
  const tenants = Array.from({ length: edges }, (_, i) => ({
    apiVersion: "nsxv.io/v1alpha1",
    kind: "EdgeTenant",
    metadata: { name: `edge-${i + 1}` },
    spec: { managerRef: { name: "nsx" }, edgeId: `edge-${i + 1}`, tenant: DESIRED_TENANT },
  }));
  writeFileSync(file, [manager, ...tenants].map((o) => stringify(o)).join("---\n"));
}
