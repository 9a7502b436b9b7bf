/**
 * A build of an earlier commit beside the current one, so that a benchmark can measure both in
 * the same run: the machine's speed varies up to 2x from day to day and with what else runs, and
 * only a ratio measured side by side means something. The commit is checked out as a detached
 * `git worktree` under .cache/cli-reference/<commit> (never committed), installed with its own
 * `npm ci` and built with its own tsc; a later run reuses the build. Where that cannot be done (no
 * git history, no registry), the reason is returned instead: the benchmark says so in its results.
 */
import { spawn } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export type ReferenceBuild =
  | { commit: string; available: true; /** its dist/cli/main.js */ cli: string }
  | { commit: string; available: false; reason: string };

/** The built CLI of `commit` (a reference build made once and kept under .cache/), or why there is none. */
export async function referenceBuild(commit: string): Promise<ReferenceBuild> {
  const dir = join(ROOT, ".cache", "cli-reference", commit);
  const cli = join(dir, "dist/cli/main.js");
  // written last: a build interrupted half-way is made again, not used
  const done = join(dir, ".nsxv-reference-built");
  if (existsSync(done) && existsSync(cli)) return { commit, available: true, cli };
  try {
    if (existsSync(dir)) {
      await run("git", ["worktree", "remove", "--force", dir], ROOT).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
    // a worktree whose directory was deleted by hand is still registered: forget it first
    await run("git", ["worktree", "prune"], ROOT);
    await run("git", ["worktree", "add", "--detach", dir, commit], ROOT);
    await run("npm", ["ci", "--no-audit", "--no-fund"], dir);
    await run(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], dir);
    writeFileSync(done, `${new Date().toISOString()}\n`);
    return { commit, available: true, cli };
  } catch (error) {
    return { commit, available: false, reason: (error as Error).message };
  }
}

/** Runs a command to completion; rejects with its exit code and the end of its output. */
function run(command: string, args: readonly string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", (error) => reject(new Error(`${command}: ${error.message}`)));
    child.once("close", (code) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(`${command} ${args.join(" ")} exited ${String(code)}: ${output.trim().slice(-400)}`),
        );
    });
  });
}
