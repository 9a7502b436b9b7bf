/**
 * What each command loads: `plan`, `apply`, `import`, `simulate`, `demo` and `run --manifests`
 * never load @kubernetes/client-node (heavy: it is most of a CLI pass's memory and start-up time);
 * `run` against a cluster does. `plan` and `apply` of block-style manifests load neither the yaml
 * library nor ajv's compiler (the block reader and the generated validators do the work); a flow
 * mapping does load the library. Checked in child processes with a module-resolution hook that
 * records every specifier naming the packages.
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { DEMO_MANIFESTS, startDemoSimulator } from "./helpers.ts";

let dir = "";
let sim: RunningSimulator;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "nsxv-footprint-"));
  sim = await startDemoSimulator();
});
afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

const CLIENT_NODE = /@kubernetes\/client-node/;
/** the yaml library, and ajv but for the one runtime helper the generated validators use */
const YAML_OR_AJV = /^(yaml|ajv)(\/(?!dist\/runtime\/ucs2length)|$)/;

/** A hook, loaded with --import, that appends to `log` each resolution of a specifier `pattern` matches. */
async function hook(log: string, pattern: RegExp): Promise<string> {
  const file = join(dir, `hook-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(
    file,
    `import { registerHooks } from "node:module";
import { appendFileSync } from "node:fs";
registerHooks({
  resolve(specifier, context, next) {
    if (${pattern.toString()}.test(specifier)) appendFileSync(${JSON.stringify(log)}, specifier + "\\n");
    return next(specifier, context);
  },
});
`,
  );
  return file;
}

/**
 * Runs the CLI with the hook. A long-running command gets SIGTERM once it prints a line matching
 * `stopAt` on stdout: by then it has its signal handlers (a signal sent earlier would kill it).
 */
async function loaded(
  args: string[],
  options: { stopAt?: RegExp; env?: Record<string, string>; pattern?: RegExp } = {},
): Promise<{ code: number | null; specifiers: string[] }> {
  const { stopAt, env, pattern = CLIENT_NODE } = options;
  const log = join(dir, `log-${Math.random().toString(36).slice(2)}`);
  await writeFile(log, "");
  const child = spawn(process.execPath, ["--import", await hook(log, pattern), "src/cli/main.ts", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      NO_COLOR: "1",
      NSX_USERNAME: "",
      NSX_PASSWORD: "",
      KUBECONFIG: join(dir, "none"),
      ...env,
    },
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let stdout = "";
  let signalled = false;
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    if (!signalled && stopAt?.test(stdout) === true) signalled = child.kill("SIGTERM");
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(timer);
  const specifiers = (await readFile(log, "utf8")).split("\n").filter((line) => line !== "");
  if (code === null) throw new Error(`killed: ${stderr}`);
  return { code, specifiers };
}

describe("commands that talk to no cluster never load @kubernetes/client-node", () => {
  it.each([
    { name: "plan", args: () => ["plan", "-f", DEMO_MANIFESTS, "--manager-url", `lab=${sim.url}`] },
    { name: "apply", args: () => ["apply", "-f", DEMO_MANIFESTS, "--manager-url", `lab=${sim.url}`] },
    { name: "demo", args: () => ["demo"] },
    {
      name: "import",
      args: () => ["import", "--url", sim.url, "--name", "lab", "--output", join(dir, "imported")],
      env: { NSX_USERNAME: "admin", NSX_PASSWORD: "default" },
    },
  ])("$name", async ({ args, env }) => {
    const { code, specifiers } = await loaded(args(), env === undefined ? {} : { env });
    expect(code, "the command ran").not.toBe(1);
    expect(specifiers).toEqual([]);
  });

  it.each([
    { name: "simulate", args: () => ["simulate", "--port", "0"], stopAt: /listening on/ },
    {
      name: "run --manifests",
      // the first status written: a whole pass has run
      stopAt: /"msg":"status changed"/,
      args: () => [
        "run",
        `--manifests=${DEMO_MANIFESTS}`,
        "--metrics-bind-address=0",
        "--health-probe-bind-address=0",
      ],
    },
  ])("$name (stopped after a while)", async ({ args, stopAt }) => {
    const { code, specifiers } = await loaded(args(), { stopAt });
    expect(code, "stopped by SIGTERM, gracefully").toBe(0);
    expect(specifiers).toEqual([]);
  });

  it("run against a cluster does load it (the check can fail)", async () => {
    // no kubeconfig: it fails right after loading the cluster's parts
    const { code, specifiers } = await loaded([
      "run",
      "--metrics-bind-address=0",
      "--health-probe-bind-address=0",
    ]);
    expect(code, "no kubeconfig").toBe(1);
    expect(specifiers.length).toBeGreaterThan(0);
  });
});

describe("plan and apply of block-style manifests load neither the yaml library nor ajv's compiler", () => {
  /** the demo's manager and an EdgeTenant written as kubectl writes them (no flow mapping) */
  async function blockManifests(): Promise<string> {
    const block = join(dir, "block");
    await mkdir(block, { recursive: true });
    await copyFile(join(DEMO_MANIFESTS, "manager.yaml"), join(block, "manager.yaml"));
    await writeFile(
      join(block, "edges.yaml"),
      "apiVersion: nsxv.io/v1alpha1\nkind: EdgeTenant\nmetadata:\n  name: esg-web\nspec:\n  managerRef:\n    name: lab\n  edgeId: edge-1\n  tenant: tenant-blue\n",
    );
    return block;
  }

  it.each(["plan", "apply"])("%s", async (command) => {
    const args = [command, "-f", await blockManifests(), "--manager-url", `lab=${sim.url}`];
    const { code, specifiers } = await loaded(args, { pattern: YAML_OR_AJV });
    expect(code, "the command ran").not.toBe(1);
    expect(specifiers).toEqual([]);
  });

  it("a flow mapping (the demo's edges) does load the library (the check can fail)", async () => {
    const args = ["plan", "-f", DEMO_MANIFESTS, "--manager-url", `lab=${sim.url}`];
    const { code, specifiers } = await loaded(args, { pattern: YAML_OR_AJV });
    expect(code, "the command ran").not.toBe(1);
    expect(specifiers).toContain("yaml");
    expect(
      specifiers.filter((s) => s.startsWith("ajv")),
      "ajv's compiler is never needed",
    ).toEqual([]);
  });
});
