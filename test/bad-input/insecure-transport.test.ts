/**
 * A connection that anyone on the network path can read or change is loud wherever it is used:
 * `insecureSkipVerify: true`, or plain `http://` to a host other than this machine. plan and apply
 * print a warning line under the NSXManager (and `warnings` in JSON), import says so on stderr,
 * and `run` logs it when it builds the manager's client (after a start, whatever the status
 * already says) besides the Warning event and the `Insecure` condition.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { runImport, type ImportFlags } from "../../src/cli/import.ts";
import { runOneShotCommand } from "../../src/cli/plan-apply.ts";
import type { Logger } from "../../src/controller/controller.ts";
import type { ManagerClientOptions } from "../../src/nsx/client-options.ts";
import { Operator } from "../../src/operator/operator.ts";
import { DirectorySource } from "../../src/source/directory.ts";
import { loadStateFile, startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import {
  captureIo,
  DEMO_STATE,
  edgeTenant,
  importFlags,
  manager,
  ManifestDirs,
  secret,
} from "../cli/helpers.ts";
import { waitFor } from "../support/wait.ts";
import { FAULT_OPERATOR_OPTIONS } from "../faults/rig.ts";

const TLS_DIR = new URL("../fixtures/tls/", import.meta.url);
const TLS = {
  key: readFileSync(new URL("server.key", TLS_DIR), "utf8"),
  cert: readFileSync(new URL("server.pem", TLS_DIR), "utf8"),
};

const dirs = new ManifestDirs();
afterAll(() => dirs.cleanup());
let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** the demo's manager over HTTPS with the test certificate, which no CA of the client vouches for */
async function tlsSimulator(): Promise<RunningSimulator> {
  sim = await startSimulator({ state: await loadStateFile(DEMO_STATE), tls: TLS });
  return sim;
}

interface JsonObjectView {
  kind: string;
  warnings?: { reason: string; message: string }[];
}

describe("plan and apply", () => {
  it.each([
    {
      name: "SkipVerify",
      reason: "https without certificate verification, and the pass succeeds",
      url: async () => (await tlsSimulator()).url,
      extra: { tls: { insecureSkipVerify: true } },
      warning:
        /\n {2}! InsecureSkipVerify: TLS certificate verification is off \(insecureSkipVerify\) for 127\.0\.0\.1:\d+/,
      reasonInJson: "InsecureSkipVerify",
      exit: 2,
    },
    {
      name: "PlainHttpRemote",
      reason: "http:// to another machine: said even when it cannot be reached",
      url: async () => "http://nsx.example.invalid:8080",
      extra: { requestTimeoutSeconds: 5 },
      warning: /\n {2}! PlainHTTP: plain http:\/\/ to nsx\.example\.invalid:8080: the credentials/,
      reasonInJson: "PlainHTTP",
      exit: 1,
    },
  ])("$name: $reason", async ({ url, extra, warning, reasonInJson, exit }) => {
    const dir = dirs.write({
      "all.yaml": [manager(await url(), extra), secret(), edgeTenant("web", "edge-1", "tenant-blue")],
    });
    for (const mode of ["plan", "apply"] as const) {
      const text = captureIo();
      expect(await runOneShotCommand(mode, { filename: [dir] }, text), text.out()).toBe(
        mode === "apply" && exit === 2 ? 0 : exit,
      );
      expect(text.out()).toMatch(warning);
    }
    const json = captureIo();
    await runOneShotCommand("plan", { filename: [dir], output: "json" }, json);
    const objects = (JSON.parse(json.out()) as { objects: JsonObjectView[] }).objects;
    expect(objects.find((o) => o.kind === "NSXManager")?.warnings).toEqual([
      { reason: reasonInJson, message: expect.any(String) },
    ]);
    expect(objects.find((o) => o.kind === "EdgeTenant")?.warnings).toBeUndefined();
  });

  it("says nothing of a simulator on loopback over http", async () => {
    sim = await startSimulator({ state: await loadStateFile(DEMO_STATE) });
    const dir = dirs.write({ "all.yaml": [manager(sim.url), secret()] });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir] }, io)).toBe(0);
    expect(io.out()).not.toContain("!");
  });
});

describe("import", () => {
  const flags = (overrides: Partial<ImportFlags>): ImportFlags =>
    importFlags("https://nsx.example.org", join(dirs.write({}), "out"), overrides);
  /** a manager with nothing on it: import's reads all succeed */
  const createClient = (_o: ManagerClientOptions) => ({
    listEdges: () => Promise.resolve([]),
    getEdge: () => Promise.reject(new Error("no edges")),
    listPools: () => Promise.resolve([]),
    listAllocations: () => Promise.resolve([]),
    close: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  });
  const env = { NSX_USERNAME: "admin", NSX_PASSWORD: "default" };

  it.each([
    {
      name: "SkipVerify",
      reason: "--insecure-skip-verify",
      overrides: { insecureSkipVerify: true },
      warning: "warning: TLS certificate verification is off (insecureSkipVerify) for nsx.example.org",
    },
    {
      name: "PlainHttpRemote",
      reason: "--url http:// to another machine",
      overrides: { url: "http://nsx.example.org" },
      warning: "warning: plain http:// to nsx.example.org",
    },
    {
      name: "Verified",
      reason: "https with verification: nothing to say",
      overrides: {},
      warning: undefined,
    },
  ])("$name: $reason", async ({ overrides, warning }) => {
    const io = captureIo({ env });
    expect(await runImport(flags(overrides), io, { createClient })).toBe(0);
    if (warning === undefined) expect(io.err()).not.toContain("warning:");
    else expect(io.err()).toContain(warning);
  });
});

describe("run", () => {
  it("logs the insecure connection when it builds the manager's client, and records the Warning", async () => {
    const url = (await tlsSimulator()).url;
    const dir = mkdtempSync(join(tmpdir(), "nsxv-insecure-"));
    const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
    const log =
      (level: string) =>
      (fields: Record<string, unknown>, message: string): void =>
        void lines.push({ level, fields, message });
    const logger: Logger = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
    const documents = [manager(url, { tls: { insecureSkipVerify: true } }), secret()];
    writeFileSync(join(dir, "all.yaml"), documents.map((d) => stringify(d)).join("---\n"));
    const source = new DirectorySource({ dir, logger });
    const operator = new Operator({ source, logger, ...FAULT_OPERATOR_OPTIONS });
    const stop = new AbortController();
    const exit = operator.start(stop.signal);
    try {
      await waitFor("the manager's check", async () =>
        lines.some((l) => l.fields["event"] === "Warning") ? true : undefined,
      );
      const warnings = lines
        .filter((l) => l.level === "warn")
        .map((l) => `${String(l.fields["reason"] ?? "log")}: ${l.message}`);
      const said = "TLS certificate verification is off (insecureSkipVerify)";
      expect(
        warnings.filter((w) => w.startsWith("log:") && w.includes(said)),
        "the log line at the client's start",
      ).toHaveLength(1);
      expect(
        warnings.filter((w) => w.startsWith("InsecureSkipVerify:") && w.includes(said)),
        "the Warning event",
      ).toHaveLength(1);
    } finally {
      stop.abort();
      await exit;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
