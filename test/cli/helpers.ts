/**
 * Test helpers for the CLI: captured stdout/stderr, manifests written to temporary directories
 * from object literals, and the demo's simulator started in-process on a free port.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach } from "vitest";
import { stringify } from "yaml";
import type { ImportFlags } from "../../src/cli/import.ts";
import type { CliIo } from "../../src/cli/output.ts";
import { loadStateFile, startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";

export const DEMO_STATE = "examples/demo/simulator-state.yaml";
export const DEMO_MANIFESTS = "examples/demo/manifests";

export interface CapturedIo extends CliIo {
  out(): string;
  err(): string;
}

/** stdout and stderr kept in memory; not a TTY unless asked; env empty unless given */
export function captureIo(
  options: { env?: Record<string, string | undefined>; isTTY?: boolean } = {},
): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  return {
    stdout: { write: (text: string) => out.push(text), isTTY: options.isTTY ?? false },
    stderr: { write: (text: string) => err.push(text), isTTY: options.isTTY ?? false },
    env: options.env ?? {},
    out: () => out.join(""),
    err: () => err.join(""),
  };
}

/** Temporary directories of manifests, removed by cleanup(). */
export class ManifestDirs {
  readonly #root = mkdtempSync(join(tmpdir(), "nsxv-cli-"));
  #count = 0;

  /** Writes each file (name → documents, or raw text) into a fresh directory; returns its path. */
  write(files: Record<string, readonly object[] | string>): string {
    const dir = join(this.#root, String(this.#count++));
    mkdirSync(dir);
    for (const [name, docs] of Object.entries(files)) {
      const text = typeof docs === "string" ? docs : docs.map((d) => stringify(d)).join("---\n");
      writeFileSync(join(dir, name), text);
    }
    return dir;
  }

  cleanup(): void {
    rmSync(this.#root, { recursive: true, force: true });
  }
}

/** `import`'s flags as commander hands them over with their defaults, for `url` into `output`. */
export function importFlags(url: string, output: string, overrides: Partial<ImportFlags> = {}): ImportFlags {
  return {
    url,
    name: "lab",
    namespace: "nsx",
    output,
    managementPolicy: "Observe",
    scope: "globalroot-0",
    layout: "kind",
    force: false,
    insecureSkipVerify: false,
    auth: "basic",
    ...overrides,
  };
}

export const manager = (url: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "nsxv.io/v1alpha1",
  kind: "NSXManager",
  metadata: { name: "lab" },
  spec: { url, credentialsSecretRef: { name: "lab-credentials" }, ...extra },
});

export const secret = (username = "admin", password = "default") => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "lab-credentials" },
  stringData: { username, password },
});

export const edgeTenant = (
  name: string,
  edgeId: string,
  tenant: string,
  extra: { spec?: Record<string, unknown>; annotations?: Record<string, string> } = {},
) => ({
  apiVersion: "nsxv.io/v1alpha1",
  kind: "EdgeTenant",
  metadata: { name, ...(extra.annotations !== undefined ? { annotations: extra.annotations } : {}) },
  spec: { managerRef: { name: "lab" }, edgeId, tenant, ...extra.spec },
});

export const poolAllocations = (
  name: string,
  pool: { id?: string; name?: string },
  allowed: string[],
  extra: { spec?: Record<string, unknown>; annotations?: Record<string, string> } = {},
) => ({
  apiVersion: "nsxv.io/v1alpha1",
  kind: "IPPoolAllocations",
  metadata: { name, ...(extra.annotations !== undefined ? { annotations: extra.annotations } : {}) },
  spec: { managerRef: { name: "lab" }, pool, allowed, ...extra.spec },
});

/** The demo's manager, in-process on a free port. */
export async function startDemoSimulator(credentials?: {
  username: string;
  password: string;
}): Promise<RunningSimulator> {
  const state = await loadStateFile(DEMO_STATE);
  return startSimulator(credentials === undefined ? { state } : { state, credentials });
}

/** `pool ip` of every allocation the simulator holds */
export function allocations(sim: RunningSimulator): string[] {
  return sim.state
    .dump()
    .pools.flatMap((p) => p.allocations.map((a) => `${p.id} ${a.ipAddress}`))
    .sort();
}

/**
 * The setup every CLI test file shares: a fresh demo simulator for each test (closed after it),
 * and temporary manifest directories removed after the file. `demo.sim` is the current test's.
 */
export function demoPerTest(): {
  readonly sim: RunningSimulator;
  dirs: ManifestDirs;
  /** this test's simulator started again with other options (credentials, ...) */
  restart(options: Parameters<typeof startDemoSimulator>[0]): Promise<RunningSimulator>;
} {
  const dirs = new ManifestDirs();
  let current: RunningSimulator | undefined;
  afterAll(() => dirs.cleanup());
  beforeEach(async () => {
    current = await startDemoSimulator();
  });
  afterEach(async () => {
    await current?.close();
  });
  return {
    dirs,
    async restart(options) {
      await current?.close();
      current = await startDemoSimulator(options);
      return current;
    },
    get sim(): RunningSimulator {
      if (current === undefined) throw new Error("demo.sim is only there inside a test");
      return current;
    },
  };
}
