/**
 * The RBAC of the single-namespace variant (deploy/variants/namespaced), installed into a team's
 * namespace through the overlay deploy/README.md shows, after the CRDs: enough, because
 * `nsxv-operator run` as that install's ServiceAccount (a TokenRequest token) takes drift and a
 * stray in its namespace through a full reconcile; and confined, because with the same token
 * every read or write in another namespace, or across all namespaces, is refused with 403 while
 * the same call in its own namespace succeeds.
 */
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GROUP, VERSION } from "../../src/api/types.ts";
import { createTestNamespace, describeWithControlPlane } from "../controlplane/testing.ts";
import { reconcileAsServiceAccount } from "./deploy-scenario.ts";
import {
  CRDS_DIR,
  INSTALL,
  accessAllowed,
  apisOf,
  applyInstall,
  makeTempDir,
  serviceAccountAccess,
  statusOf,
  writeNamespaceOverlay,
  type Access,
  type Apis,
  type ServiceAccountAccess,
  type TempDir,
} from "./deploy-support.ts";

/** The team's namespace, where the variant runs, and another team's. */
interface Teams {
  own: string;
  other: string;
}

interface CallCase {
  name: string;
  reason: string;
  call: (api: Apis, teams: Teams) => Promise<unknown>;
  status: 200 | 403;
}

const OTHER_SECRET = "other-team-credentials";
const edgeTenants = (namespace: string) => ({
  group: GROUP,
  version: VERSION,
  namespace,
  plural: "edgetenants",
});
const secret = (namespace: string) => ({ name: OTHER_SECRET, namespace });

/** Real calls with the variant's token: its own namespace answers, every other one refuses. */
const CALLS: readonly CallCase[] = [
  {
    name: "ReadSecretInOwnNamespace",
    reason: "the control: the grant works where it is meant to",
    call: (api, t) => api.core.readNamespacedSecret(secret(t.own)),
    status: 200,
  },
  {
    name: "ReadSecretInOtherNamespace",
    reason: "another team's credentials stay out of reach",
    call: (api, t) => api.core.readNamespacedSecret(secret(t.other)),
    status: 403,
  },
  {
    name: "ListSecretsInOtherNamespace",
    reason: "no list there either",
    call: (api, t) => api.core.listNamespacedSecret({ namespace: t.other }),
    status: 403,
  },
  {
    name: "ListSecretsEverywhere",
    reason: "a Role grants nothing across namespaces",
    call: (api) => api.core.listSecretForAllNamespaces(),
    status: 403,
  },
  {
    name: "ListEdgeTenantsInOwnNamespace",
    reason: "the control for the custom resources",
    call: (api, t) => api.custom.listNamespacedCustomObject(edgeTenants(t.own)),
    status: 200,
  },
  {
    name: "ListEdgeTenantsInOtherNamespace",
    reason: "it sees no object of another namespace",
    call: (api, t) => api.custom.listNamespacedCustomObject(edgeTenants(t.other)),
    status: 403,
  },
  {
    name: "ListEdgeTenantsEverywhere",
    reason: "nor across namespaces",
    call: (api) =>
      api.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: "edgetenants" }),
    status: 403,
  },
  {
    name: "PatchStatusInOtherNamespace",
    reason: "it writes status in its own namespace only",
    call: (api, t) =>
      api.custom.patchNamespacedCustomObjectStatus(
        { ...edgeTenants(t.other), name: "edge-1", body: { status: { observedTenant: "x" } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      ),
    status: 403,
  },
  {
    name: "CreateEventInOtherNamespace",
    reason: "Events only about its own objects",
    call: (api, t) =>
      api.core.createNamespacedEvent({
        namespace: t.other,
        body: { metadata: { generateName: "x-" }, involvedObject: { kind: "EdgeTenant", name: "edge-1" } },
      }),
    status: 403,
  },
  {
    name: "GetClusterWideLease",
    reason: "it cannot read or take the cluster-wide install's leadership",
    call: (api) => api.leases.readNamespacedLease({ name: INSTALL.lease, namespace: INSTALL.namespace }),
    status: 403,
  },
  {
    name: "CreateSecretInOwnNamespace",
    reason: "Secrets stay read-only in its own namespace too",
    call: (api, t) =>
      api.core.createNamespacedSecret({ namespace: t.own, body: { metadata: { name: "x" } } }),
    status: 403,
  },
];

interface AccessCase {
  name: string;
  access: (teams: Teams) => Access;
  allowed: boolean;
}

const ACCESS_CASES: readonly AccessCase[] = [
  {
    name: "get secrets in its namespace",
    access: (t) => ({ verb: "get", resource: "secrets", namespace: t.own }),
    allowed: true,
  },
  {
    name: "patch secrets in its namespace (their in-use finalizer)",
    access: (t) => ({ verb: "patch", resource: "secrets", namespace: t.own }),
    allowed: true,
  },
  {
    name: "patch secrets elsewhere",
    access: (t) => ({ verb: "patch", resource: "secrets", namespace: t.other }),
    allowed: false,
  },
  {
    name: "watch secrets in its namespace",
    access: (t) => ({ verb: "watch", resource: "secrets", namespace: t.own }),
    allowed: false,
  },
  {
    name: "get secrets everywhere",
    access: () => ({ verb: "get", resource: "secrets", namespace: "" }),
    allowed: false,
  },
  {
    name: "watch edgetenants in its namespace",
    access: (t) => ({ verb: "watch", resource: "edgetenants", group: GROUP, namespace: t.own }),
    allowed: true,
  },
  {
    name: "watch edgetenants everywhere",
    access: () => ({ verb: "watch", resource: "edgetenants", group: GROUP, namespace: "" }),
    allowed: false,
  },
  {
    name: "patch ippoolallocations/status in the other namespace",
    access: (t) => ({
      verb: "patch",
      resource: "ippoolallocations",
      subresource: "status",
      group: GROUP,
      namespace: t.other,
    }),
    allowed: false,
  },
  {
    name: "update its own lease",
    access: (t) => ({
      verb: "update",
      resource: "leases",
      group: "coordination.k8s.io",
      namespace: t.own,
      name: INSTALL.lease,
    }),
    allowed: true,
  },
  {
    name: "create leases in the other namespace",
    access: (t) => ({ verb: "create", resource: "leases", group: "coordination.k8s.io", namespace: t.other }),
    allowed: false,
  },
];

describeWithControlPlane("RBAC of deploy/variants/namespaced: one team's operator", (cp) => {
  const admin = cp.makeKubeConfig();
  let temp: TempDir;
  let sa: ServiceAccountAccess;
  const teams: Teams = { own: "", other: "" };

  beforeAll(async () => {
    temp = await makeTempDir("nsxv-deploy-rbac-ns");
    // deploy/README.md: the CRDs once, by a cluster admin; then the team's overlay
    await applyInstall(cp, CRDS_DIR);
    teams.own = await createTestNamespace(admin, "nsxv-team-a");
    teams.other = await createTestNamespace(admin, "nsxv-team-b");
    const overlay = await writeNamespaceOverlay({ parent: temp.path, name: teams.own, namespace: teams.own });
    await applyInstall(cp, overlay);
    const core = apisOf(admin).core;
    for (const namespace of [teams.own, teams.other]) {
      await core.createNamespacedSecret({
        namespace,
        body: { metadata: { name: OTHER_SECRET }, stringData: { username: "u", password: "p" } },
      });
    }
    sa = await serviceAccountAccess(cp, {
      namespace: teams.own,
      name: INSTALL.serviceAccount,
      dir: temp.path,
    });
  });
  afterAll(async () => {
    await temp?.dispose();
  });

  it("is enough: `nsxv-operator run --namespace` as the team's ServiceAccount reconciles to convergence", async () => {
    await reconcileAsServiceAccount({
      admin,
      installNamespace: teams.own,
      objectsNamespace: teams.own,
      kubeconfigPath: sa.kubeconfigPath,
    });
  }, 90_000);

  it.each(CALLS)("$name answers $status ($reason)", async ({ call, status }) => {
    expect(await statusOf(call(apisOf(sa.kubeConfig), teams))).toBe(status);
  });

  it("answers the access reviews of its own and the other namespace", async () => {
    const answers = await Promise.all(
      ACCESS_CASES.map(async (c) => ({
        name: c.name,
        allowed: await accessAllowed(sa.kubeConfig, c.access(teams)),
      })),
    );
    expect(answers).toEqual(ACCESS_CASES.map((c) => ({ name: c.name, allowed: c.allowed })));
  });
});
