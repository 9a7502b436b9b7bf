import { describe, expect, it } from "vitest";
import type { ManagerClientOptions } from "../../src/nsx/client.ts";
import { ManagerConnections } from "../../src/reconcile/connections.ts";
import { fakeManager, type FakeManager } from "./fixtures.ts";
import { credentials, manager } from "./nsx-manager/fixtures.ts";

function setup() {
  const created: { options: ManagerClientOptions; fake: FakeManager }[] = [];
  const connections = new ManagerConnections({
    createClient: (options) => {
      const fake = fakeManager();
      created.push({ options, fake });
      return fake.api;
    },
    clientOptions: { maxRetries: 1 },
  });
  return { created, connections };
}

const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    return `${(error as { reason?: string }).reason}: ${(error as Error).message}`;
  }
  return "no error";
};

describe("ManagerConnections", () => {
  it("builds one client per manager from the object and its Secret, and reuses it", () => {
    const { created, connections } = setup();
    const a = connections.resolve(manager({ requestTimeoutSeconds: 7, auth: "Token" }), {
      credentials: credentials(),
    });
    const b = connections.resolve(manager({ requestTimeoutSeconds: 7, auth: "Token" }), {
      credentials: credentials(),
    });
    expect(created).toHaveLength(1);
    expect(a.api).toBe(b.api);
    expect(a.key).toBe(b.key);
    expect(created[0]?.options).toMatchObject({
      url: "https://nsx.example",
      username: "admin",
      password: "s3cret",
      requestTimeoutMs: 7000,
      maxConcurrentRequests: 8,
      requestsPerSecond: 20,
      insecureSkipVerify: false,
      maxRetries: 1,
      auth: "token",
    });
  });

  it("builds Basic clients by default, and a new client when spec.auth changes", () => {
    const { created, connections } = setup();
    const basic = connections.resolve(manager(), { credentials: credentials() });
    expect(created[0]?.options.auth).toBe("basic");
    const token = connections.resolve(manager({ auth: "Token" }), { credentials: credentials() });
    expect(created[1]?.options.auth).toBe("token");
    expect(token.key).not.toBe(basic.key);
  });

  it("replaces the client and closes the old one when the Secret changes", async () => {
    const { created, connections } = setup();
    const a = connections.resolve(manager(), { credentials: credentials() });
    const b = connections.resolve(manager(), {
      credentials: credentials("nsx-creds", { username: "admin", password: "rotated" }),
    });
    expect(created).toHaveLength(2);
    expect(a.key, "a new client, a new cache key").not.toBe(b.key);
    await Promise.resolve();
    expect(created[0]?.fake.closed, "the old client is closed").toBe(true);
    expect(created[1]?.fake.closed).toBe(false);
    expect(b.key, "the key never shows the password").not.toContain("rotated");
  });

  it("answers from its cache while the spec and the Secrets are the same objects, and looks again when one is replaced", () => {
    const { created, connections } = setup();
    const object = manager();
    const secret = credentials();
    const first = connections.resolve(object, { credentials: secret });
    const afterStatusWrite = connections.resolve(
      { ...object, status: { reachable: true } },
      { credentials: secret },
    );
    expect(afterStatusWrite, "a status write keeps the spec: nothing computed again").toBe(first);
    const copy = connections.resolve(manager(), { credentials: credentials() });
    expect(copy, "equal copies are other objects: computed again").not.toBe(first);
    expect(copy.key, "... to the same settings, the same client").toBe(first.key);
    expect(
      message(() => connections.resolve(object, { credentials: undefined })),
      "a deleted Secret is seen at once",
    ).toBe("ManagerNotReady: Secret ns/nsx-creds not found");
    const rotated = connections.resolve(object, {
      credentials: credentials("nsx-creds", { username: "admin", password: "rotated" }),
    });
    expect(rotated.key, "a rotated Secret is seen at once").not.toBe(first.key);
    expect(created).toHaveLength(2);
  });

  it("decodes data (base64) and prefers stringData", () => {
    const { created, connections } = setup();
    const secret = credentials("nsx-creds", { username: "fromStringData" });
    secret.data = {
      username: Buffer.from("fromData").toString("base64"),
      password: Buffer.from("pw").toString("base64"),
    };
    connections.resolve(manager(), { credentials: secret });
    expect(created[0]?.options).toMatchObject({ username: "fromStringData", password: "pw" });
  });

  it("reads the CA bundle from its Secret key", () => {
    const { created, connections } = setup();
    const tls = { caSecretRef: { name: "nsx-ca", key: "ca.crt" } };
    const ca = credentials("nsx-ca", { "ca.crt": "-----BEGIN CERTIFICATE-----" });
    connections.resolve(manager({ tls }), { credentials: credentials(), ca });
    expect(created[0]?.options.ca).toBe("-----BEGIN CERTIFICATE-----");
  });

  it.each([
    {
      name: "MissingSecret",
      reason: "names the Secret that is missing",
      run: (c: ManagerConnections) => c.resolve(manager(), { credentials: undefined }),
      want: "ManagerNotReady: Secret ns/nsx-creds not found",
    },
    {
      name: "MissingKey",
      reason: "names the Secret and the key",
      run: (c: ManagerConnections) =>
        c.resolve(manager(), { credentials: credentials("nsx-creds", { username: "admin" }) }),
      want: 'ManagerNotReady: Secret ns/nsx-creds has no key "password" (or it is empty)',
    },
    {
      name: "MissingCaKey",
      reason: "names the CA Secret and its key",
      run: (c: ManagerConnections) =>
        c.resolve(manager({ tls: { caSecretRef: { name: "nsx-ca", key: "ca.crt" } } }), {
          credentials: credentials(),
          ca: credentials("nsx-ca", { other: "x" }),
        }),
      want: 'ManagerNotReady: Secret ns/nsx-ca has no key "ca.crt" (or it is empty)',
    },
    {
      name: "CredentialsInUrl",
      reason: "a URL with userinfo is refused without echoing it",
      run: (c: ManagerConnections) =>
        c.resolve(manager({ url: "https://u:topsecret@nsx" }), { credentials: credentials() }),
      want: "InvalidSpec: spec.url: must not carry credentials; use spec.credentialsSecretRef",
    },
  ])("refuses $name", ({ reason, run, want }) => {
    const { created, connections } = setup();
    const text = message(() => run(connections));
    expect(text, reason).toBe(want);
    expect(text, "never a secret value").not.toMatch(/s3cret|topsecret/);
    expect(created, "no client for a manager that is not ready").toHaveLength(0);
  });

  it("closes a forgotten manager's client, and every client on close", async () => {
    const { created, connections } = setup();
    connections.resolve(manager(), { credentials: credentials() });
    connections.resolve(manager({}, { name: "other" }), { credentials: credentials() });
    await connections.forget("ns", "nsx");
    expect(created.map((c) => c.fake.closed)).toEqual([true, false]);
    await connections.close();
    expect(created.map((c) => c.fake.closed)).toEqual([true, true]);
  });
});
