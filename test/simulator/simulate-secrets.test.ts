/**
 * The simulator's secrets and exposure: the control API answers only with its token when it has
 * one; `simulate` takes the manager password and the token from a file or the environment (ps
 * shows the command line to every user), and warns when it listens beyond loopback.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { simulateOptions } from "../../src/cli/simulate.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { basic } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "sim-secrets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

async function status(url: string, authorization?: string): Promise<number> {
  const res = await request(url, authorization === undefined ? {} : { headers: { authorization } });
  await res.body.dump();
  return res.statusCode;
}

describe("the control API with a token", () => {
  it.each([
    { name: "NoHeader", reason: "anyone who reaches the port", authorization: undefined, want: 401 },
    { name: "WrongToken", reason: "a guess", authorization: "Bearer not-it", want: 401 },
    {
      name: "Basic",
      reason: "the manager's credentials are not the control API's",
      authorization: basic("admin", "default"),
      want: 401,
    },
    {
      name: "RightToken",
      reason: "the token given to the simulator",
      authorization: "Bearer ctl-7d3e",
      want: 200,
    },
  ])("$name: $want ($reason)", async ({ authorization, want }) => {
    sim = await startSimulator({ controlToken: "ctl-7d3e" });
    expect(await status(`${sim.url}/_simulator/state`, authorization)).toBe(want);
  });

  it("leaves the manager's API to the manager's credentials", async () => {
    sim = await startSimulator({ controlToken: "ctl-7d3e" });
    const url = `${sim.url}/api/2.0/services/ipam/pools/scope/globalroot-0`;
    expect(await status(url, basic("admin", "default"))).toBe(200);
  });
});

describe("simulate's flags and environment", () => {
  const base = { port: 0, host: "127.0.0.1" };
  it.each([
    {
      name: "PasswordFile",
      reason: "the file's first line, kept off the command line",
      flags: { username: "ops", passwordFile: file("pw", "from-file-1\n") },
      env: {},
      credentials: { username: "ops", password: "from-file-1" },
    },
    {
      name: "PasswordEnv",
      reason: "the environment, kept off the command line",
      flags: { username: "ops" },
      env: { NSXV_SIMULATOR_PASSWORD: "from-env-2" },
      credentials: { username: "ops", password: "from-env-2" },
    },
    {
      name: "FlagOverEnv",
      reason: "a flag given on purpose wins over an environment set for everything",
      flags: { username: "ops", passwordFile: file("pw3", "from-file-3") },
      env: { NSXV_SIMULATOR_PASSWORD: "from-env-3" },
      credentials: { username: "ops", password: "from-file-3" },
    },
    {
      name: "None",
      reason: "the state file's, else admin/default",
      flags: {},
      env: {},
      credentials: undefined,
    },
  ])("password: $name ($reason)", async ({ flags, env, credentials }) => {
    const { options } = await simulateOptions({ ...base, ...flags }, env);
    expect(options.credentials).toEqual(credentials);
  });

  it.each([
    {
      name: "FlagAndFile",
      reason: "two sources given on purpose: which is meant is a guess",
      flags: { username: "ops", password: "a", passwordFile: file("pw4", "b") },
      error: "give --password or --password-file, not both",
    },
    {
      name: "UsernameOnly",
      reason: "a user name without a password is a mistake",
      flags: { username: "ops" },
      error: "give --username and a password",
    },
    {
      name: "EmptyFile",
      reason: "an empty password is never meant",
      flags: { username: "ops", passwordFile: file("pw5", "\n") },
      error: "the first line is empty",
    },
  ])("refuses $name ($reason)", async ({ flags, error }) => {
    await expect(simulateOptions({ ...base, ...flags }, {})).rejects.toThrow(error);
  });

  it.each([
    { name: "Loopback", reason: "this machine only", host: "127.0.0.1", token: false, tls: false, want: [] },
    { name: "LoopbackV6", reason: "::1 is this machine", host: "::1", token: false, tls: false, want: [] },
    {
      name: "AllInterfaces",
      reason: "no token and no TLS: both said",
      host: "0.0.0.0",
      token: false,
      tls: false,
      want: ["the control API (/_simulator/: state, credentials, faults) is open", "without TLS"],
    },
    {
      name: "WithToken",
      reason: "the API is closed, but the token itself crosses in clear text",
      host: "0.0.0.0",
      token: true,
      tls: false,
      want: ["without TLS: the manager credentials and the control token cross the network in clear text"],
    },
  ])("warns: $name ($reason)", async ({ host, token, want }) => {
    const env = token ? { NSXV_SIMULATOR_CONTROL_TOKEN: "t-1" } : {};
    const { options, warnings } = await simulateOptions({ ...base, host }, env);
    expect(options.controlToken).toBe(token ? "t-1" : undefined);
    expect(warnings).toHaveLength(want.length);
    want.forEach((part, i) => expect(warnings[i]).toContain(part));
  });

  it("the binary: --host 0.0.0.0 warns on stderr, and the token from a file closes the control API", async () => {
    const token = file("token", "ctl-from-file\n");
    const child = spawn(
      process.execPath,
      ["src/cli/main.ts", "simulate", "--host", "0.0.0.0", "--control-token-file", token],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const line = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes("\n")) resolve(out.split("\n")[0] ?? "");
        });
        child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
      });
      const port = /:(\d+)$/.exec(line)?.[1];
      expect(stderr).toContain("warning: listening on 0.0.0.0 without TLS");
      expect(stderr, "the token closes the control API").not.toContain("is open to anyone");
      expect(await status(`http://127.0.0.1:${port}/_simulator/state`)).toBe(401);
      expect(await status(`http://127.0.0.1:${port}/_simulator/state`, "Bearer ctl-from-file")).toBe(200);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
