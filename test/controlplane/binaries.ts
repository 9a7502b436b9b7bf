/**
 * Where the control plane binaries are: CONTROLPLANE_BIN_DIR when set, else the versioned cache
 * directory that test/controlplane/build.sh builds into (it prints it, and which binaries are
 * missing or, for programs of ours, built from another source: one source of truth for the
 * versions). A cold build takes minutes, so nothing here builds unless asked to.
 */
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const BUILD_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "build.sh");
const REPO_ROOT = join(dirname(BUILD_SCRIPT), "..", "..");
export const BINARY_NAMES = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kubectl",
  "kstatus",
  "helm",
  "govnsx",
] as const;
/** programs of ours (test/<name>/main.go) that build.sh builds; the control plane needs none of them */
export type ProgramName = "kstatus" | "govnsx" | "gonsx";
/** The command to tell people to run, relative to the repository root. */
export const BUILD_COMMAND = `bash ${relative(REPO_ROOT, BUILD_SCRIPT)}`;

export type BinariesLookup =
  { found: true; binDir: string } | { found: false; binDir: string; reason: string };

/** The directory the binaries live in (or would be built into). */
export function controlPlaneBinDir(): string {
  return execFileSync("bash", [BUILD_SCRIPT, "--print-dir"], { encoding: "utf8" }).trim();
}

/** The binaries not (yet) in `binDir`. */
export function missingBinaries(binDir: string): string[] {
  return BINARY_NAMES.filter((name) => {
    try {
      accessSync(join(binDir, name), constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
}

/** what build.sh would build: binaries missing, and programs of ours built from another main.go or module version */
export function notCurrent(): string[] {
  const out = execFileSync("bash", [BUILD_SCRIPT, "--missing"], { encoding: "utf8" });
  return out.split("\n").filter((name) => name !== "");
}

/** Why the tests that need `missing` cannot run, and how to get them. */
export function missingReason(binDir: string, missing: readonly string[]): string {
  return (
    `${missing.join(", ")} not found in ${binDir}. Build them once (10-20 minutes on 2 cores and 1 GB of Go modules when cold; needs Go) with ` +
    `\`${BUILD_COMMAND}\`, or set CONTROLPLANE_BIN_DIR to a directory holding ${BINARY_NAMES.join(", ")}.`
  );
}

/**
 * One program of ours (test/<name>/main.go, built by build.sh): its path when it is built from
 * the current source, else why not, saying how to build it.
 */
export function findProgram(name: ProgramName): { path: string } | { reason: string } {
  const path = join(controlPlaneBinDir(), name);
  if (!notCurrent().includes(name)) return { path };
  let built = false;
  try {
    accessSync(path, constants.X_OK);
    built = true;
  } catch {
    // not built at all
  }
  const state = built ? `built from another test/${name}/main.go or module version` : "not built";
  return { reason: `${name} is ${state} (${path}); build it with \`${BUILD_COMMAND}\` (needs Go)` };
}

/**
 * Finds the binaries (present is enough: the control plane does not need our programs current);
 * with `build`, runs build.sh first when any is missing or not current (its progress goes to this
 * process's stderr).
 */
export function findControlPlaneBinaries(options: { build: boolean }): BinariesLookup {
  const binDir = controlPlaneBinDir();
  const stale = options.build ? notCurrent() : [];
  if (stale.length > 0) {
    console.warn(`[controlplane] building ${stale.join(", ")} into ${binDir} (once; minutes when cold)`);
    execFileSync("bash", [BUILD_SCRIPT], { stdio: ["ignore", "ignore", "inherit"] });
  }
  const missing = missingBinaries(binDir);
  if (missing.length === 0) return { found: true, binDir };
  return { found: false, binDir, reason: missingReason(binDir, missing) };
}
