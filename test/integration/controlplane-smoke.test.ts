/**
 * The shared control plane does what the other integration tests rely on: it answers, installs
 * the project's CRDs, creates namespaces, enforces RBAC, and survives a kube-apiserver restart.
 */
import { fileURLToPath } from "node:url";
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  VersionApi,
  Watch,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import { beforeAll, expect, it } from "vitest";
import {
  apiStatus,
  createTestNamespace,
  describeWithOwnControlPlane,
  installCrds,
  kubectl,
} from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";
import { readCrds } from "../../src/api/crds.ts";

const CRDS_DIR = fileURLToPath(new URL("../../crds", import.meta.url));

await describeWithOwnControlPlane("control plane smoke", (cp) => {
  const kc = cp.makeKubeConfig();
  let namespace = "";

  beforeAll(async () => {
    namespace = await createTestNamespace(kc);
  });

  it("answers with the version it was built as, through the written kubeconfig file", async () => {
    const fromFile = new KubeConfig();
    fromFile.loadFromFile(cp.kubeconfigPath);
    const version = await fromFile.makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toMatch(/^v1\.\d+\.\d+/);
    const namespaces = await fromFile.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((ns) => ns.metadata?.name)).toContain("default");
  });

  it("serves the built kubectl through the written kubeconfig file", async () => {
    const { stdout } = await kubectl(cp, ["get", "namespace", "default", "--output=name"]);
    expect(stdout.trim()).toBe("namespace/default");
  });

  it("creates a namespace per test file", async () => {
    const ns = await kc.makeApiClient(CoreV1Api).readNamespace({ name: namespace });
    expect(namespace).toMatch(/^nsxv-test-/);
    expect(ns.status?.phase).toBe("Active");
  });

  it("installs the CRDs of crds/ and serves their kinds", async () => {
    const crds = readCrds(CRDS_DIR).map((crd) => crd.definition as unknown as V1CustomResourceDefinition);
    expect(crds.length).toBe(3);
    const names = await installCrds(kc, CRDS_DIR);
    expect(names).toEqual(crds.map((crd) => crd.metadata?.name));
    const custom = kc.makeApiClient(CustomObjectsApi);
    for (const { spec } of crds) {
      const version = spec.versions.find((v) => v.storage)!.name;
      const list =
        spec.scope === "Namespaced"
          ? await custom.listNamespacedCustomObject({
              group: spec.group,
              version,
              namespace,
              plural: spec.names.plural,
            })
          : await custom.listClusterCustomObject({ group: spec.group, version, plural: spec.names.plural });
      expect((list as { items: unknown[] }).items).toEqual([]);
    }
  });

  const rbacCases = [
    {
      name: "AdminMayListSecrets",
      token: () => cp.adminToken,
      status: 200,
      reason: "the admin token's user is in system:masters",
    },
    {
      name: "PlainUserIsForbidden",
      token: () => cp.tokenFor("nsxv-test-user"),
      status: 403,
      reason: "RBAC is on and nothing grants the plain user access to secrets",
    },
    {
      name: "UnknownTokenIsUnauthorized",
      token: () => "not-a-token",
      status: 401,
      reason: "only the static token file authenticates bearer tokens",
    },
  ];
  it.each(rbacCases)("RBAC: $name", async ({ token, status, reason }) => {
    const core = cp.makeKubeConfig(token()).makeApiClient(CoreV1Api);
    const got = await core.listNamespacedSecret({ namespace }).then(
      () => 200,
      (error: unknown) => apiStatus(error),
    );
    expect(got, reason).toBe(status);
  });

  it("restarts kube-apiserver, and a new watch sees changes made after the restart", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const ended = new Promise<void>((resolve) => {
      void new Watch(kc).watch(
        path,
        {},
        () => {},
        () => resolve(),
      );
    });
    await cp.restartApiServer();
    await ended; // the old watch ends with the old server

    const seen: string[] = [];
    const from = (await core.listNamespacedConfigMap({ namespace })).metadata?.resourceVersion;
    const abort = await new Watch(kc).watch(
      path,
      { resourceVersion: from },
      (phase, obj: { metadata?: { name?: string } }) => seen.push(`${phase} ${obj.metadata?.name}`),
      () => {},
    );
    try {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "after-restart" } } });
      await waitFor("the watch to report the new ConfigMap", async () =>
        seen.includes("ADDED after-restart") ? true : undefined,
      );
    } finally {
      abort.abort();
    }
  });
});
