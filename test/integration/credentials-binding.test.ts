/**
 * Credentials go only where their owner sent them, on a real kube-apiserver with RBAC: a user
 * allowed to create NSXManagers but not to read Secrets points an NSXManager at a server of their
 * own and names a Secret of the namespace. The operator, which may read that Secret, must not send
 * its credentials there: it sends a Secret's credentials only to the manager URLs the Secret's
 * annotation (set by whoever may write Secrets) names, and only over TLS verified as the Secret's
 * owner decided: an NSXManager naming the Secret's own URL with insecureSkipVerify, or with a CA
 * of another Secret, does not get them either. The NSXManager says why, and who decides.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { NSXManager } from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import {
  apiStatus,
  createTestNamespace,
  describeWithControlPlane,
  installCrds,
} from "../controlplane/testing.ts";
import { condition, CRDS_DIR, Resources, startTestOperator, type TestOperator } from "./operator-harness.ts";

const USER = "nsxv-test-user";

const TLS_DIR = new URL("../fixtures/tls/", import.meta.url);
const tls = (file: string): string => readFileSync(new URL(file, TLS_DIR), "utf8");

/**
 * A server of the user's own that records the headers of every request it gets; `https`: with a
 * certificate of its own CA (an impostor at the manager's address).
 */
async function captureServer(
  https = false,
): Promise<{ server: Server; url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const handler = (
    request: { headers: IncomingHttpHeaders },
    response: { writeHead(s: number): { end(): void } },
  ) => {
    seen.push(request.headers);
    response.writeHead(401).end();
  };
  const server = https
    ? createHttpsServer({ cert: tls("server.pem"), key: tls("server.key") }, handler)
    : createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, url: `${https ? "https" : "http"}://127.0.0.1:${port}`, seen };
}

describeWithControlPlane("credentials go only where their owner sent them", (cp) => {
  const kc = cp.makeKubeConfig();
  let k8s: Resources;
  let user: Resources;
  let sim: RunningSimulator;
  let operator: TestOperator;
  let capture: Awaited<ReturnType<typeof captureServer>>;

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    const namespace = await createTestNamespace(kc, "nsxv-deputy");
    k8s = new Resources(kc, namespace);
    sim = await startSimulator({ state: { edges: [{ generate: { count: 1, idStart: 1 } }] } });
    capture = await captureServer();
    // the team's manager: its Secret is bound to it by whoever wrote the Secret
    await k8s.manager("real", sim.url);
    await k8s.secret("unbound-credentials", { username: "admin", password: "default" });
    // the user may write NSXManagers, and nothing about Secrets
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: "nsxmanager-author" },
        rules: [{ apiGroups: ["nsxv.io"], resources: ["nsxmanagers"], verbs: ["create", "get", "list"] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: "nsxmanager-author" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "nsxmanager-author" },
        subjects: [{ kind: "User", name: USER, apiGroup: "rbac.authorization.k8s.io" }],
      },
    });
    user = new Resources(cp.makeKubeConfig(cp.tokenFor(USER)), namespace);
    operator = await startTestOperator(kc, namespace);
  });

  afterAll(async () => {
    await operator?.stop();
    await sim?.close();
    await new Promise((resolve) => capture?.server.close(resolve));
  });

  it("nor over TLS the Secret's owner did not choose: no skipped verification, no CA of another Secret, without the owner's word", async () => {
    const impostor = await captureServer(true);
    try {
      // the owner bound the Secret to the manager's https URL, where an impostor now answers
      await k8s.secret("tls-credentials", { username: "admin", password: "default" }, impostor.url);
      // any Secret of the namespace with a CA that signed the impostor's certificate
      await k8s.secret("other-ca", { "ca.crt": tls("ca.pem") });
      const steal = (name: string, tlsSpec: NSXManager["spec"]["tls"]) =>
        user.create<NSXManager>({
          kind: "NSXManager",
          metadata: { name },
          spec: { url: impostor.url, credentialsSecretRef: { name: "tls-credentials" }, tls: tlsSpec },
        });
      await steal("steal-insecure", { insecureSkipVerify: true });
      await steal("steal-ca", { caSecretRef: { name: "other-ca", key: "ca.crt" } });
      await steal("steal-verified", {});
      for (const [name, says] of [
        ["steal-insecure", "insecureSkipVerify"],
        ["steal-ca", "Secret other-ca"],
      ] as const) {
        const manager = await k8s.waitFor(
          "NSXManager",
          name,
          "CredentialsNotBound",
          (o) => condition(o, "Ready")?.reason === "CredentialsNotBound",
        );
        const message = condition(manager, "Ready")?.message ?? "";
        expect(message, name).toContain(says);
        expect(message, `${name}: says who decides`).toContain("Whoever owns the Secret decides");
        expect(message, `${name}: offers no command binding the Secret`).not.toMatch(
          /kubectl|annotate secret/,
        );
      }
      // verified against the system's authorities, the impostor's certificate fails the handshake
      await k8s.waitFor(
        "NSXManager",
        "steal-verified",
        "Unreachable",
        (o) => condition(o, "Ready")?.reason === "Unreachable",
      );
      expect(impostor.seen, "no request, so no credentials, reached the impostor").toEqual([]);

      // the owner's word, in the Secret itself: its CA may be trusted
      await kc.makeApiClient(CoreV1Api).patchNamespacedSecret(
        {
          name: "tls-credentials",
          namespace: k8s.namespace,
          body: { metadata: { annotations: { "nsxv.io/allowed-ca-secrets": "other-ca" } } },
        },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
      await k8s.waitFor(
        "NSXManager",
        "steal-ca",
        "allowed by the owner: the credentials go there",
        (o) => condition(o, "Ready")?.reason === "Unauthorized",
        { timeoutMs: 90_000 },
      );
      expect(impostor.seen.some((h) => h.authorization !== undefined)).toBe(true);
    } finally {
      await new Promise((resolve) => impostor.server.close(resolve));
    }
  });

  it("a user who may create NSXManagers but not read Secrets cannot have the operator send one anywhere", async () => {
    const readSecret = user.core.readNamespacedSecret({
      name: "real-credentials",
      namespace: user.namespace,
    });
    expect(apiStatus(await readSecret.catch((error: unknown) => error)), "the user cannot read it").toBe(403);

    for (const [name, secret] of [
      ["steal-bound", "real-credentials"],
      ["steal-unbound", "unbound-credentials"],
    ] as const) {
      await user.create<NSXManager>({
        kind: "NSXManager",
        metadata: { name },
        spec: { url: capture.url, credentialsSecretRef: { name: secret } },
      });
    }
    for (const name of ["steal-bound", "steal-unbound"]) {
      const manager = await k8s.waitFor(
        "NSXManager",
        name,
        "CredentialsNotBound",
        (o) => condition(o, "Ready")?.reason === "CredentialsNotBound",
      );
      expect(condition(manager, "Stalled")?.status, name).toBe("True");
      expect(condition(manager, "Ready")?.message, `${name}: says where the binding is`).toContain(
        "nsxv.io/allowed-manager-urls",
      );
      expect(
        condition(manager, "Ready")?.message,
        `${name}: offers no command binding it here`,
      ).not.toContain("kubectl");
      expect(JSON.stringify(manager.status), `${name}: no credential in status`).not.toContain("default");
    }
    // the operator is working: the team's own manager, with its bound Secret, is Ready
    await k8s.waitFor("NSXManager", "real", "Ready", (o) => condition(o, "Ready")?.status === "True");
    expect(capture.seen, "no request reached the user's server").toEqual([]);

    // binding is the Secret owner's decision: once the owner names the URL, the credentials go there
    await kc.makeApiClient(CoreV1Api).patchNamespacedSecret(
      {
        name: "unbound-credentials",
        namespace: k8s.namespace,
        body: { metadata: { annotations: { "nsxv.io/allowed-manager-urls": capture.url } } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    await k8s.waitFor(
      "NSXManager",
      "steal-unbound",
      "bound now: reachable, credentials refused by the capture server",
      (o) => condition(o, "Ready")?.reason === "Unauthorized",
      { timeoutMs: 90_000 },
    );
    expect(capture.seen.some((h) => h.authorization !== undefined)).toBe(true);
  });
});
