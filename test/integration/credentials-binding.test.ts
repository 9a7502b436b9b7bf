/**
 * Credentials go only where their owner sent them, on a real kube-apiserver with RBAC: a user
 * allowed to create NSXManagers but not to read Secrets points an NSXManager at a server of their
 * own and names a Secret of the namespace. The operator, which may read that Secret, must not send
 * its credentials there: it sends a Secret's credentials only to the manager URLs the Secret's
 * annotation (set by whoever may write Secrets) names. The NSXManager says why, and how to bind.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
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

/** A server of the user's own that records the headers of every request it gets. */
async function captureServer(): Promise<{ server: Server; url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    response.writeHead(401).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
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
      expect(condition(manager, "Ready")?.message, `${name}: says how to bind`).toContain(
        "nsxv.io/allowed-manager-urls",
      );
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
