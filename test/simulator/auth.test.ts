import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { POOL_V4, TestSimulator, basic, xml } from "./helpers.ts";

let t: TestSimulator;
beforeEach(async () => {
  t = await TestSimulator.start({ state: { pools: [POOL_V4] } });
});
afterEach(() => t.close());

const POOLS = "/api/2.0/services/ipam/pools/scope/globalroot-0";
const TOKEN = "/api/2.0/services/auth/token";

async function token(auth?: string, query = ""): Promise<{ value: string; validTo: number }> {
  const reply = await t.api("POST", `${TOKEN}${query}`, auth ? { auth } : {});
  expect(reply.status).toBe(200);
  const doc = xml(reply.text).authToken as { value: string; validTo: string };
  return { value: doc.value, validTo: Number(doc.validTo) };
}

describe("basic authentication", () => {
  it.each([
    { name: "Good", auth: basic("admin", "default"), status: 200, reason: "the configured credentials" },
    { name: "Missing", auth: null, status: 401, reason: "every API call needs credentials" },
    { name: "WrongPassword", auth: basic("admin", "nope"), status: 401, reason: "a bad password" },
    { name: "WrongUser", auth: basic("root", "default"), status: 401, reason: "an unknown user" },
    {
      name: "NoColon",
      auth: `Basic ${Buffer.from("admindefault").toString("base64")}`,
      status: 401,
      reason: "malformed",
    },
    { name: "OtherScheme", auth: "Bearer abc", status: 401, reason: "only Basic and AUTHTOKEN exist" },
    {
      name: "LowercaseScheme",
      auth: basic("admin", "default").replace("Basic", "basic"),
      status: 200,
      reason: "schemes are case-insensitive",
    },
  ])("$name: answers $status ($reason)", async ({ auth, status }) => {
    const reply = await t.api("GET", POOLS, { auth });
    expect(reply.status).toBe(status);
    if (status === 401) {
      expect(reply.headers["www-authenticate"]).toBe('Basic realm="NSX Manager"');
      expect(xml(reply.text).error).toMatchObject({ errorCode: "220", moduleName: "core-services" });
    }
  });

  it("takes the credentials given in the options over the state file's", async () => {
    const other = await TestSimulator.start({
      state: { credentials: { username: "file", password: "file-pw" } },
      credentials: { username: "opt", password: "opt-pw" },
    });
    try {
      expect((await other.api("GET", POOLS, { auth: basic("opt", "opt-pw") })).status).toBe(200);
      expect((await other.api("GET", POOLS, { auth: basic("file", "file-pw") })).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe("token authentication", () => {
  it("issues a JWT-shaped token valid for 90 minutes, accepted as AUTHTOKEN", async () => {
    const before = Date.now();
    const issued = await token();
    expect(issued.value.split(".")).toHaveLength(3);
    expect(issued.validTo).toBeGreaterThanOrEqual(before + 90 * 60_000);
    expect(issued.validTo).toBeLessThan(Date.now() + 90 * 60_000 + 1000);
    expect((await t.api("GET", POOLS, { auth: `AUTHTOKEN ${issued.value}` })).status).toBe(200);
  });

  it("refuses a token after it expires, by the simulator's clock", async () => {
    const issued = await token(undefined, "?expiresInMinutes=1");
    await t.control("POST", "clock", { advanceMs: 59_000 });
    expect((await t.api("GET", POOLS, { auth: `AUTHTOKEN ${issued.value}` })).status).toBe(200);
    await t.control("POST", "clock", { advanceMs: 1_000 });
    const reply = await t.api("GET", POOLS, { auth: `AUTHTOKEN ${issued.value}` });
    expect(reply.status).toBe(401);
    expect(reply.text).toContain("token expired");
  });

  it("follows the tokenTtlMs setting", async () => {
    await t.control("PUT", "settings", { tokenTtlMs: 1000 });
    const issued = await token();
    await t.control("POST", "clock", { advanceMs: 1000 });
    expect((await t.api("GET", POOLS, { auth: `AUTHTOKEN ${issued.value}` })).status).toBe(401);
  });

  it.each([
    { name: "UnknownToken", auth: "AUTHTOKEN a.b.c", reason: "never issued" },
    { name: "EmptyToken", auth: "AUTHTOKEN", reason: "no value" },
  ])("$name: answers 401 ($reason)", async ({ auth }) => {
    expect((await t.api("GET", POOLS, { auth })).status).toBe(401);
  });

  it("issues tokens only for Basic credentials", async () => {
    const issued = await token();
    expect((await t.api("POST", TOKEN, { auth: `AUTHTOKEN ${issued.value}` })).status).toBe(401);
    expect((await t.api("POST", TOKEN, { auth: basic("admin", "bad") })).status).toBe(401);
  });

  it("refuses Basic on API calls when basic authentication is disabled, but still issues tokens", async () => {
    await t.control("PUT", "settings", { basicAuthEnabled: false });
    const reply = await t.api("GET", POOLS);
    expect(reply.status).toBe(401);
    expect(reply.text).toContain("basic authentication is disabled");
    const issued = await token();
    expect((await t.api("GET", POOLS, { auth: `AUTHTOKEN ${issued.value}` })).status).toBe(200);
  });
});

describe("credential rotation", () => {
  it("makes the old credentials and the tokens issued with them fail", async () => {
    const issued = await token();
    const rotated = await t.control("PUT", "credentials", { username: "admin", password: "new-secret" });
    expect(rotated).toEqual({ status: 200, json: { username: "admin", keepTokens: false } });
    expect((await t.api("GET", POOLS)).status).toBe(401);
    expect((await t.api("GET", POOLS, { auth: basic("admin", "new-secret") })).status).toBe(200);
    expect((await t.api("GET", POOLS, { auth: `AUTHTOKEN ${issued.value}` })).status).toBe(401);
  });

  it("keeps issued tokens when asked to", async () => {
    const issued = await token();
    await t.control("PUT", "credentials", { username: "ops", password: "pw", keepTokens: true });
    expect((await t.api("GET", POOLS, { auth: `AUTHTOKEN ${issued.value}` })).status).toBe(200);
  });

  it("refuses incomplete credentials, naming the field", async () => {
    const reply = await t.control("PUT", "credentials", { username: "ops" });
    expect(reply).toEqual({ status: 400, json: { error: "password: is required", path: "password" } });
    expect((await t.api("GET", POOLS)).status).toBe(200);
  });
});

function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("HTTPS", () => {
  // the certificate is made with the openssl command; without it there is nothing to serve
  it.skipIf(!hasOpenssl())("serves HTTPS with the key and certificate given", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-tls-"));
    try {
      execFileSync(
        "openssl",
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"]
          .concat(["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
          .concat(["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")]),
        { stdio: "ignore" },
      );
      const cert = readFileSync(join(dir, "cert.pem"), "utf8");
      const secure = await TestSimulator.start({
        tls: { key: readFileSync(join(dir, "key.pem"), "utf8"), cert },
        state: { pools: [POOL_V4] },
      });
      const agent = new Agent({ connect: { ca: cert } });
      try {
        expect(secure.sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
        const res = await request(`${secure.sim.url}${POOLS}`, {
          headers: { Authorization: basic("admin", "default") },
          dispatcher: agent,
        });
        expect(res.statusCode).toBe(200);
        expect(await res.body.text()).toContain("<objectId>ipaddresspool-1</objectId>");
      } finally {
        await agent.close();
        await secure.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
