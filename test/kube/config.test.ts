/**
 * SharedConnectionsKubeConfig over real HTTPS (test/fixtures/tls): client-node's generated API
 * clients share one Agent, so calls reuse TLS connections, where a plain KubeConfig opens one per
 * call; a change of TLS identity gets new connections. (undici may open a second connection when a
 * call follows the previous answer at once, before the first socket is back in the pool: the
 * bounds allow it.)
 */
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { SharedConnectionsKubeConfig } from "../../src/kube/config.ts";
import { startServer, TEST_CA, type TestServer } from "../nsx/test-server.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function namespaceServer(): Promise<TestServer> {
  server = await startServer(
    (req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: req.url.split("/").pop() } }),
      );
    },
    { tls: true },
  );
  return server;
}

function configure(kc: KubeConfig, url: string, cluster: { skipTLSVerify?: boolean } = {}): KubeConfig {
  kc.loadFromOptions({
    clusters: [
      cluster.skipTLSVerify
        ? { name: "test", server: url, skipTLSVerify: true }
        : { name: "test", server: url, caData: Buffer.from(TEST_CA).toString("base64") },
    ],
    users: [{ name: "operator", token: "secret-token" }],
    contexts: [{ name: "test", cluster: "test", user: "operator" }],
    currentContext: "test",
  });
  return kc;
}

async function readNamespaces(kc: KubeConfig, count: number): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < count; i++) {
    const ns = await core.readNamespace({ name: `ns-${i}` });
    expect(ns.metadata?.name).toBe(`ns-${i}`);
  }
}

describe("SharedConnectionsKubeConfig", () => {
  it("20 sequential calls share at most two TLS connections and still carry the credentials", async () => {
    const s = await namespaceServer();
    await readNamespaces(configure(new SharedConnectionsKubeConfig(), s.url), 20);
    expect(s.connections()).toBeLessThanOrEqual(2);
    expect(s.requests).toHaveLength(20);
    expect(s.requests.every((r) => r.headers.authorization === "Bearer secret-token")).toBe(true);
  });

  it("client-node's own KubeConfig opens a connection per call (what the class exists for)", async () => {
    const s = await namespaceServer();
    await readNamespaces(configure(new KubeConfig(), s.url), 5);
    expect(s.connections()).toBe(5);
  });

  it("concurrent calls open at most one connection each, reused afterwards", async () => {
    const s = await namespaceServer();
    const kc = configure(new SharedConnectionsKubeConfig(), s.url);
    const core = kc.makeApiClient(CoreV1Api);
    await Promise.all(Array.from({ length: 4 }, (_, i) => core.readNamespace({ name: `a-${i}` })));
    const afterBurst = s.connections();
    expect(afterBurst).toBeLessThanOrEqual(4);
    await Promise.all(Array.from({ length: 4 }, (_, i) => core.readNamespace({ name: `b-${i}` })));
    expect(s.connections()).toBeLessThanOrEqual(afterBurst + 1);
  });

  it("a changed TLS identity (another CA setting) gets new connections, then shares them", async () => {
    const s = await namespaceServer();
    const kc = configure(new SharedConnectionsKubeConfig(), s.url);
    await readNamespaces(kc, 10);
    const before = s.connections();
    configure(kc, s.url, { skipTLSVerify: true });
    await readNamespaces(kc, 10);
    expect(s.connections()).toBeGreaterThan(before);
    expect(s.connections()).toBeLessThanOrEqual(before + 2);
  });

  it("a TLS failure still fails the call (the shared Agent verifies as client-node's does)", async () => {
    const s = await namespaceServer();
    const kc = new SharedConnectionsKubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "test", server: s.url, caData: Buffer.from("not a CA").toString("base64") }],
      users: [{ name: "operator", token: "secret-token" }],
      contexts: [{ name: "test", cluster: "test", user: "operator" }],
      currentContext: "test",
    });
    await expect(kc.makeApiClient(CoreV1Api).readNamespace({ name: "x" })).rejects.toThrow();
    expect(s.requests).toHaveLength(0);
  });
});
