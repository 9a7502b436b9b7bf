/**
 * The built CLI (`dist/`, what users and the image run) in a child process, measured: its exit
 * code, output, wall time and peak RSS (read at exit by the preloaded peak-rss.cjs, so that the
 * figure is the CLI's own and not the benchmark's carried across fork).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist/cli/main.js");
const PEAK_RSS = fileURLToPath(new URL("./peak-rss.cjs", import.meta.url));

export interface CliRun {
  code: number | null;
  /** stdout and stderr, interleaved */
  output: string;
  wallMs: number;
  peakRssKiB: number;
}

/** dist/ as `npm run build` makes it, built once per benchmark run */
export async function buildCli(): Promise<void> {
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  if (!existsSync(tsc)) throw new Error("typescript is not installed: run npm ci");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
      cwd: ROOT,
      stdio: "inherit",
    });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`tsc exited ${code}`))));
  });
}

/** `node dist/cli/main.js ARGS` with `env` over this process's environment; killed after `timeoutMs`. */
export async function runBuiltCli(
  args: readonly string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliRun> {
  const dir = mkdtempSync(join(tmpdir(), "nsxv-cli-run-"));
  const rssFile = join(dir, "rss");
  const started = performance.now();
  const child = spawn(process.execPath, ["--require", PEAK_RSS, CLI, ...args], {
    env: { ...process.env, ...options.env, NSXV_BENCH_PEAK_RSS_FILE: rssFile, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 300_000);
  try {
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    const wallMs = performance.now() - started;
    if (code === null)
      throw new Error(`${args[0]} was killed after ${Math.round(wallMs)} ms: ${output.slice(-800)}`);
    return { code, output, wallMs, peakRssKiB: Number(readFileSync(rssFile, "utf8")) / 1024 };
  } finally {
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  }
}
