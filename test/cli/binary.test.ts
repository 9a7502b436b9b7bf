/** The real binary: `node src/cli/main.ts plan ...` as a child process against an in-process simulator. */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { DEMO_MANIFESTS, startDemoSimulator } from "./helpers.ts";

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startDemoSimulator();
});
afterAll(async () => {
  await sim.close();
});

/** Runs the binary; bounded by timeoutMs (the child is killed then). */
function run(
  args: string[],
  timeoutMs = 20_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, NO_COLOR: "1", NSX_USERNAME: "", NSX_PASSWORD: "" };
    const child = spawn(process.execPath, ["src/cli/main.ts", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("nsxv-operator plan (child process)", () => {
  it("prints the plan and exits 2 when changes are pending", async () => {
    const result = await run(["plan", "-f", DEMO_MANIFESTS, "--manager-url", `lab=${sim.url}`]);
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain(
      "Plan: 2 tenant corrections, 3 releases. 1 object observed only, 1 paused.",
    );
    expect(result.code).toBe(2);
    expect(sim.state.counters.snapshot()["putEdge"], "plan made no write").toBeUndefined();
  });
});

describe("nsxv-operator --version", () => {
  it("prints package.json's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    const result = await run(["--version"]);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: "" });
  });
});

describe("nsxv-operator simulate on a busy port", () => {
  it("says so in one line, with what to do, and exits 1", async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const { port } = busy.address() as AddressInfo;
    try {
      const result = await run(["simulate", "--port", String(port)]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `error: port ${port} on 127.0.0.1 is in use: stop what listens there, or pick another with --port (0 picks a free one)\n`,
      );
    } finally {
      busy.close();
    }
  });
});

describe("nsxv-operator simulate with a bad state file", () => {
  it("names the field and the shape it wants, and exits 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nsxv-state-"));
    const file = join(dir, "state.yaml");
    writeFileSync(file, "pools:\n  - id: ipaddresspool-1\n    name: p\n    ranges: [10.0.0.1-10.0.0.9]\n");
    try {
      const result = await run(["simulate", "--state", file]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        'error: pools[0].ranges[0]: must be an object {start, end}, not the text "10.0.0.1-10.0.0.9"\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
