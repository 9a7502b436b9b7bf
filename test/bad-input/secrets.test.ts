/**
 * No secret in any output. A manager (or a proxy in front of it) that echoes the request's
 * Authorization header into every field of its error documents, with Basic and with token
 * authentication: the credentials appear in no line of `plan` and `apply` (text and JSON), and
 * in no log line, status (the status file) or Event of `run --manifests`. A manager URL that
 * carries `user:password@` is refused without printing the password, wherever it is given.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { runImport } from "../../src/cli/import.ts";
import { runOneShotCommand } from "../../src/cli/plan-apply.ts";
import type { NSXManager } from "../../src/api/types.ts";
import { resolveManager } from "../../src/reconcile/spec.ts";
import type { ExecutionMode } from "../../src/reconcile/index.ts";
import { DirectorySource } from "../../src/source/directory.ts";
import {
  captureIo,
  edgeTenant,
  importFlags,
  manager,
  ManifestDirs,
  poolAllocations,
  secret,
} from "../cli/helpers.ts";
import { waitFor } from "../support/wait.ts";
import { spawnOperator, type OperatorProcess } from "../faults/operator-process.ts";
import { reply, startServer, type TestServer } from "../nsx/test-server.ts";

const USERNAME = "svc-nsx";
const PASSWORD = "Hx9-echo-PASSWORD-31";
const BASIC_B64 = Buffer.from(`${USERNAME}:${PASSWORD}`).toString("base64");
/** a token of no known shape: only the client's memory of what it sent can find it */
const TOKEN = "tok-5c1d7e9a0b3f";
/** a JWT: found by its shape as well */
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzdmMtbnN4In0.c2lnbmF0dXJlLW9mLWp3dA";

/** every secret, and the part of the Basic credentials that encodes the password */
function assertNoSecret(text: string, where: string): void {
  for (const secretText of [PASSWORD, BASIC_B64.slice(8), TOKEN, JWT.slice(0, 20), JWT.slice(-20)]) {
    expect(text, `${where} holds ${secretText}`).not.toContain(secretText);
  }
}

/**
 * A manager that hands out `token` and answers every other call 400 with an error document whose
 * every field holds the Authorization header it was sent: errorCode, moduleName, details and
 * errorData keys and values, over two `<error>`s.
 */
async function echoingManager(token: string): Promise<TestServer> {
  return startServer((r, res) => {
    if (r.method === "POST" && r.url.endsWith("/api/2.0/services/auth/token")) {
      return reply(res, 200, `<authToken><value>${token}</value></authToken>`);
    }
    const a = r.headers.authorization ?? "";
    reply(
      res,
      400,
      `<errors><error><errorCode>${a}</errorCode><moduleName>${a}</moduleName><details>refused: ${a}</details></error>` +
        `<error><errorCode>${a}</errorCode><errorData><data><key>${a}</key><value>${a}</value></data></errorData></error></errors>`,
    );
  });
}

const dirs = new ManifestDirs();
afterAll(() => dirs.cleanup());
let server: TestServer | undefined;
let operator: OperatorProcess | undefined;
afterEach(async () => {
  await operator?.kill();
  operator = undefined;
  await server?.close();
  server = undefined;
});

const AUTH_CASES = [
  { name: "Basic", reason: "the base64 credentials on every call", auth: undefined, token: TOKEN },
  { name: "TokenOpaque", reason: "a token of no known shape", auth: "Token", token: TOKEN },
  { name: "TokenJwt", reason: "a JWT as 6.4 hands out", auth: "Token", token: JWT },
] as const;

function echoManifests(url: string, auth: string | undefined): string {
  return dirs.write({
    "all.yaml": [
      manager(url, auth === undefined ? {} : { auth }),
      secret(USERNAME, PASSWORD),
      edgeTenant("web", "edge-1", "tenant-blue"),
      poolAllocations("pool", { id: "ipaddresspool-1" }, ["10.0.0.1"]),
    ],
  });
}

describe("a manager that echoes the Authorization header in every field of its errors", () => {
  it.each(AUTH_CASES.flatMap((c) => (["plan", "apply"] as ExecutionMode[]).map((mode) => ({ ...c, mode }))))(
    "$mode, $name ($reason): no secret in the text or the JSON",
    async ({ mode, auth, token }) => {
      server = await echoingManager(token);
      const dir = echoManifests(server.url, auth);
      const text = captureIo();
      expect(await runOneShotCommand(mode, { filename: [dir] }, text)).toBe(1);
      const json = captureIo();
      expect(await runOneShotCommand(mode, { filename: [dir], output: "json" }, json)).toBe(1);
      // the echo reached the output, redacted: the test would pass vacuously otherwise
      expect(text.out()).toContain("[REDACTED]");
      expect(json.out()).toContain("[REDACTED]");
      assertNoSecret(text.out() + text.err(), "text output");
      assertNoSecret(json.out() + json.err(), "JSON output");
      const sent = server.requests.map((r) => r.headers.authorization ?? "").join("\n");
      expect(sent, "the secrets were sent, so they could have been echoed").toContain(
        auth === undefined ? BASIC_B64 : token,
      );
    },
  );

  it("run --manifests: no secret in the logs, the status file or the Events (logged)", async () => {
    server = await echoingManager(JWT);
    const dir = echoManifests(server.url, "Token");
    const statusFile = join(dirs.write({}), "status.json");
    operator = spawnOperator({ manifests: dir, statusFile });
    const running = operator;
    await waitFor(
      "the three objects to report the echoed errors",
      async () => {
        const text = existsSync(statusFile) ? readFileSync(statusFile, "utf8") : "";
        return (text.match(/\[REDACTED\]/g) ?? []).length >= 3 &&
          running.logs.some((l) => l["event"] === "Warning")
          ? true
          : undefined;
      },
      { timeoutMs: 20_000 },
    );
    const status = readFileSync(statusFile, "utf8");
    const manager = (JSON.parse(status) as { objects: Record<string, { status?: unknown }> }).objects[
      "NSXManager/default/lab"
    ];
    expect(JSON.stringify(manager?.status)).toContain("[REDACTED]");
    assertNoSecret(status, "the status file");
    assertNoSecret(JSON.stringify(running.logs) + running.stderr(), "the logs");
  });
});

/** the password and the Basic credentials as a manager or proxy may echo them transformed */
const TRANSFORMED: Record<string, string> = {
  splitBase64: `${BASIC_B64.slice(0, 14)} ${BASIC_B64.slice(14)}`,
  hex: Buffer.from(PASSWORD).toString("hex"),
  base64OfPassword: Buffer.from(PASSWORD).toString("base64"),
  upperCased: PASSWORD.toUpperCase(),
  spaced: [...PASSWORD].join(" "),
  numericEntities: [...PASSWORD].map((c) => `&#${c.charCodeAt(0)};`).join(""),
};

describe("a manager that echoes the credentials transformed", () => {
  it.each(["plan", "apply"] as ExecutionMode[])(
    "%s: no form of them in the text or the JSON",
    async (mode) => {
      server = await startServer((_r, res) =>
        reply(
          res,
          400,
          `<error><details>${Object.entries(TRANSFORMED)
            .map(([name, form]) => `${name}=${form};`)
            .join(" ")}</details><errorCode>${TRANSFORMED["hex"]}</errorCode></error>`,
        ),
      );
      const dir = echoManifests(server.url, undefined);
      for (const output of ["text", "json"] as const) {
        const io = captureIo();
        expect(await runOneShotCommand(mode, { filename: [dir], output }, io)).toBe(1);
        const printed = io.out() + io.err();
        expect(printed, "the echo reached the output").toContain("splitBase64=[REDACTED]");
        for (const [name, form] of Object.entries(TRANSFORMED)) {
          for (const part of form.split(" ").filter((p) => p.length >= 8))
            expect(printed, `${output} output holds ${name}`).not.toContain(part);
          expect(printed, `${output} output holds ${name}`).toContain(`${name}=[REDACTED]`);
        }
      }
    },
  );
});

describe("a manager URL with a query string or fragment is refused without quoting it", () => {
  const URLS = [
    { name: "Query", url: "https://nsx.example.org/api?token=Qs-token-7", secret: "Qs-token-7" },
    { name: "Fragment", url: "https://nsx.example.org/#frag-token-8", secret: "frag-token-8" },
    { name: "NoScheme", url: "nsx.example.org/?token=no-scheme-token-9", secret: "no-scheme-token-9" },
  ];

  it.each(URLS)(
    "manifest spec.url, $name: plan names the field, text and JSON",
    async ({ url, secret: s }) => {
      const dir = dirs.write({ "m.yaml": [manager(url), secret()] });
      for (const output of ["text", "json"] as const) {
        const io = captureIo();
        expect(await runOneShotCommand("plan", { filename: [dir], output }, io)).toBe(1);
        expect(io.out() + io.err()).toContain("spec.url");
        expect(io.out() + io.err()).not.toContain(s);
      }
    },
  );

  it.each(URLS)("--manager-url with and without NAME=, $name", async ({ url, secret: s }) => {
    const dir = dirs.write({ "m.yaml": [manager("https://nsx.example.org"), secret()] });
    for (const flag of [`lab=${url}`, url]) {
      const io = captureIo();
      expect(await runOneShotCommand("plan", { filename: [dir], managerUrl: [flag] }, io)).toBe(1);
      expect(io.err()).toContain("--manager-url");
      expect(io.out() + io.err(), flag).not.toContain(s);
    }
  });

  it("a spec.url that reaches the reconciler unvalidated is refused there without quoting it", () => {
    const object = { ...manager(URLS[0]!.url), metadata: { name: "lab", namespace: "default" } };
    const refusal = (() => {
      try {
        resolveManager(object as NSXManager);
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    })();
    expect(refusal).toContain("spec.url: must not carry a query string or fragment");
    expect(refusal).not.toContain(URLS[0]!.secret);
  });
});

describe("a manager URL with user:password@ is refused without printing the password", () => {
  /** passwords as they may be written: with `=`, `/`, `@`, spaces; and a URL without its scheme */
  const URLS = [
    { name: "Plain", url: "https://admin:Pw-user-info-1@nsx.example.org", password: "Pw-user-info-1" },
    { name: "AtAndSlash", url: "https://admin:p@ss/w0rd-2@nsx.example.org", password: "ss/w0rd-2" },
    { name: "Equals", url: "https://admin:pw=secret-3@nsx.example.org", password: "secret-3" },
    { name: "NoScheme", url: "admin:no-scheme-pw-4@nsx.example.org", password: "no-scheme-pw-4" },
  ];

  it.each(URLS)(
    "manifest spec.url, $name: plan names the field, text and JSON",
    async ({ url, password }) => {
      const dir = dirs.write({ "m.yaml": [manager(url), secret()] });
      for (const output of ["text", "json"] as const) {
        const io = captureIo();
        expect(await runOneShotCommand("plan", { filename: [dir], output }, io)).toBe(1);
        expect(io.out() + io.err()).toContain("spec.url");
        expect(io.out() + io.err()).not.toContain(password);
      }
    },
  );

  it.each(URLS)("--manager-url with and without NAME=, $name", async ({ url, password }) => {
    const dir = dirs.write({ "m.yaml": [manager("https://nsx.example.org"), secret()] });
    for (const flag of [`lab=${url}`, url, `default/lab=${url}`]) {
      const io = captureIo();
      expect(await runOneShotCommand("plan", { filename: [dir], managerUrl: [flag] }, io)).toBe(1);
      expect(io.err()).toContain("--manager-url");
      expect(io.out() + io.err(), flag).not.toContain(password);
    }
  });

  it.each(URLS)("import --url, $name", async ({ url, password }) => {
    const io = captureIo({ env: { NSX_USERNAME: "admin", NSX_PASSWORD: "default" } });
    expect(await runImport(importFlags(url, join(dirs.write({}), "out")), io)).toBe(1);
    expect(io.err()).toContain("without credentials");
    expect(io.out() + io.err()).not.toContain(password);
  });

  it("run --manifests: the log line of the invalid file does not print it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nsxv-userinfo-"));
    try {
      writeFileSync(
        join(dir, "m.yaml"),
        [manager(URLS[1]!.url), secret()].map((d) => stringify(d)).join("---\n"),
      );
      const lines: string[] = [];
      const log = (fields: object, message?: string) => void lines.push(JSON.stringify({ fields, message }));
      const source = new DirectorySource({
        dir,
        logger: { debug: log, info: log, warn: log, error: log },
      });
      await source.reload();
      expect(lines.join("\n")).toContain("spec.url");
      expect(lines.join("\n")).not.toContain(URLS[1]!.password);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
