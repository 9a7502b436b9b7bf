import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BASIC, firstLine, spawnSimulate } from "./helpers.ts";

let dir: string;
let child: ChildProcess | undefined;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sim-cli-"));
});
afterEach(() => {
  child?.kill("SIGKILL");
  child = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): ChildProcess {
  child = spawnSimulate(args);
  return child;
}

describe("nsxv-operator simulate", () => {
  it("prints its URL, answers an authenticated pool list, and exits on SIGTERM", async () => {
    const state = join(dir, "state.yaml");
    writeFileSync(
      state,
      "pools:\n  - { id: ipaddresspool-1, name: p, ranges: [{ start: 10.0.0.1, end: 10.0.0.2 }] }\n",
    );
    const proc = run(["--port", "0", "--state", state, "--latency-ms", "1"]);
    const { line, stderr } = await firstLine(proc);
    expect(stderr).toBe("");
    const url = /^nsx manager simulator listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line ?? "")?.[1];
    expect(url).toBeDefined();
    const res = await request(`${url}/api/2.0/services/ipam/pools/scope/globalroot-0`, {
      headers: { Authorization: BASIC },
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain(
      "<ipamAddressPools><ipamAddressPool><objectId>ipaddresspool-1</objectId>",
    );
    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    proc.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it.each([
    {
      name: "BadStateFile",
      args: (state: string) => ["--state", state],
      file: "pools: [{ id: ipaddresspool-1, name: p, ranges: [{ start: nope, end: 10.0.0.1 }] }]",
      error: "pools[0].ranges[0].start: not an IP address",
      reason: "the field at fault is named",
    },
    {
      name: "HalfCredentials",
      args: () => ["--username", "u"],
      error: "give --username and a password",
      reason: "one without the other is a mistake",
    },
    {
      name: "BadPort",
      args: () => ["--port", "http"],
      error: "not a non-negative integer",
      reason: "a number",
    },
  ])("$name: exits 1 with a clear message ($reason)", async ({ args, file, error }) => {
    const state = join(dir, "bad.yaml");
    if (file) writeFileSync(state, file);
    const result = await firstLine(run(args(state)));
    expect(result.line).toBeUndefined();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(error);
  });
});
