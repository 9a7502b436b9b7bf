/**
 * The RBAC of the default install (deploy/), proven with the deployed ServiceAccount's own token
 * (TokenRequest API): enough, because `nsxv-operator run` as that ServiceAccount takes a drifted
 * edge tenant and a stray address through a full reconcile (deploy-scenario.ts); and not more,
 * because with the same token real calls outside the grants are refused with 403 and the
 * SelfSubjectAccessReviews of the operator's calls and their neighbours answer as the README's
 * table says. The single-namespace variant has its own file, deploy-rbac-namespaced.test.ts.
 */
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GROUP, VERSION } from "../../src/api/types.ts";
import { createTestNamespace, describeWithOwnControlPlane, kubectl } from "../controlplane/testing.ts";
import { reconcileAsServiceAccount } from "./deploy-scenario.ts";
import {
  INSTALL,
  accessAllowed,
  applyInstall,
  apisOf,
  statusOf,
  type Access,
  type Apis,
  makeTempDir,
  serviceAccountAccess,
  type ServiceAccountAccess,
  type TempDir,
} from "./deploy-support.ts";

/** The namespaces a case runs in: the install's, and one holding the custom resources. */
interface Where {
  install: string;
  objects: string;
}

interface RefusedCall {
  name: string;
  reason: string;
  call: (api: Apis, where: Where) => Promise<unknown>;
}

const edgeTenants = (namespace: string) => ({
  group: GROUP,
  version: VERSION,
  namespace,
  plural: "edgetenants",
});
const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
const lease = (name: string) => ({ metadata: { name }, spec: { holderIdentity: "intruder" } });

/** Real calls the operator never makes; each must be refused with 403. */
const REFUSED_CALLS: readonly RefusedCall[] = [
  {
    name: "CreateSecret",
    reason: "Secrets are read-only to the operator",
    call: (api, w) =>
      api.core.createNamespacedSecret({ namespace: w.objects, body: { metadata: { name: "stolen" } } }),
  },
  {
    name: "ReplaceSecret",
    reason: "it never rewrites the credentials it reads",
    call: (api, w) =>
      api.core.replaceNamespacedSecret({
        name: "nsx-credentials",
        namespace: w.objects,
        body: { metadata: { name: "nsx-credentials" }, stringData: { password: "x" } },
      }),
  },
  {
    name: "DeleteSecret",
    reason: "it never deletes the credentials it reads",
    call: (api, w) => api.core.deleteNamespacedSecret({ name: "nsx-credentials", namespace: w.objects }),
  },
  {
    name: "CreateConfigMap",
    reason: "no write on any kind outside its grants",
    call: (api, w) =>
      api.core.createNamespacedConfigMap({ namespace: w.objects, body: { metadata: { name: "x" } } }),
  },
  {
    name: "ListConfigMaps",
    reason: "it reads no other kind",
    call: (api, w) => api.core.listNamespacedConfigMap({ namespace: w.objects }),
  },
  {
    name: "ListPods",
    reason: "not even its own pods",
    call: (api, w) => api.core.listNamespacedPod({ namespace: w.install }),
  },
  {
    name: "CreateDeployment",
    reason: "it cannot start workloads",
    call: (api, w) =>
      api.apps.createNamespacedDeployment({
        namespace: w.install,
        body: {
          metadata: { name: "x" },
          spec: {
            selector: { matchLabels: { a: "b" } },
            template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "x" }] } },
          },
        },
      }),
  },
  {
    name: "PatchPoolSpec",
    reason: "it writes status only, never a spec (EdgeTenants alone may be patched: their restore finalizer)",
    call: (api, w) =>
      api.custom.patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          namespace: w.objects,
          plural: "ippoolallocations",
          name: "apps",
          body: { spec: { allowed: [] } },
        },
        mergePatch,
      ),
  },
  {
    name: "CreateEdgeTenant",
    reason: "it never creates the objects it watches",
    call: (api, w) =>
      api.custom.createNamespacedCustomObject({
        ...edgeTenants(w.objects),
        body: {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: "EdgeTenant",
          metadata: { name: "x" },
          spec: { managerRef: { name: "lab" }, edgeId: "edge-2", tenant: "x" },
        },
      }),
  },
  {
    name: "DeleteEdgeTenant",
    reason: "it orphans, never deletes",
    call: (api, w) => api.custom.deleteNamespacedCustomObject({ ...edgeTenants(w.objects), name: "edge-1" }),
  },
  {
    name: "ListEvents",
    reason: "Events are created and patched, never read",
    call: (api, w) => api.core.listNamespacedEvent({ namespace: w.objects }),
  },
  {
    name: "DeleteEvent",
    reason: "Events are created and patched, never deleted",
    call: (api, w) => api.core.deleteNamespacedEvent({ name: "any", namespace: w.objects }),
  },
  {
    name: "GetOtherLease",
    reason: "get is limited to the Lease named by --leader-election-id",
    call: (api, w) => api.leases.readNamespacedLease({ name: "kube-scheduler", namespace: w.install }),
  },
  {
    name: "UpdateOtherLease",
    reason: "update is limited to its own Lease: it cannot take another controller's leadership",
    call: (api, w) =>
      api.leases.replaceNamespacedLease({ name: "other", namespace: w.install, body: lease("other") }),
  },
  {
    name: "GetLeaseInOtherNamespace",
    reason: "the Lease grant is a Role of the install's namespace",
    call: (api, w) => api.leases.readNamespacedLease({ name: INSTALL.lease, namespace: w.objects }),
  },
  {
    name: "CreateLeaseInOtherNamespace",
    reason: "the Lease grant is a Role of the install's namespace",
    call: (api, w) => api.leases.createNamespacedLease({ namespace: w.objects, body: lease(INSTALL.lease) }),
  },
  {
    name: "DeleteOwnLease",
    reason: "release is an update; delete is not granted",
    call: (api, w) => api.leases.deleteNamespacedLease({ name: INSTALL.lease, namespace: w.install }),
  },
  {
    name: "CreateRoleBinding",
    reason: "it cannot grant itself more",
    call: (api, w) =>
      api.rbac.createNamespacedRoleBinding({
        namespace: w.objects,
        body: {
          metadata: { name: "x" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "nsxv-operator" },
          subjects: [{ kind: "ServiceAccount", name: INSTALL.serviceAccount, namespace: w.install }],
        },
      }),
  },
  {
    name: "ReadNamespace",
    reason: "of namespaces it lists and watches the labels only: no get, and no other cluster-scoped reads",
    call: (api, w) => api.core.readNamespace({ name: w.objects }),
  },
  {
    name: "ListNodes",
    reason: "it needs no other cluster-scoped reads",
    call: (api) => api.core.listNode(),
  },
  {
    name: "PatchNamespace",
    reason: "it never changes a namespace's labels (who is allowed to share a manager)",
    call: (api, w) =>
      api.core.patchNamespace(
        { name: w.objects, body: { metadata: { labels: { stolen: "true" } } } },
        mergePatch,
      ),
  },
];

interface AccessCase {
  name: string;
  reason: string;
  access: (where: Where) => Access;
  allowed: boolean;
}

const nsxv = (resource: string, verb: string, namespace: string, subresource?: string): Access => ({
  verb,
  resource,
  group: GROUP,
  namespace,
  ...(subresource !== undefined ? { subresource } : {}),
});

/** What the SelfSubjectAccessReviews of the cluster-wide install's ServiceAccount must answer. */
const ACCESS_CASES: readonly AccessCase[] = [
  ...["nsxmanagers", "edgetenants", "ippoolallocations"].flatMap((resource) => [
    ...["list", "watch"].map((verb) => ({
      name: `${verb} ${resource} everywhere`,
      reason: "the watches of the desired state span every namespace",
      access: () => nsxv(resource, verb, ""),
      allowed: true,
    })),
    {
      name: `patch ${resource}/status`,
      reason: "status is a merge patch on the subresource",
      access: (w: Where) => nsxv(resource, "patch", w.objects, "status"),
      allowed: true,
    },
    {
      name: `update ${resource}/status`,
      reason: "a full replace of status is never used",
      access: (w: Where) => nsxv(resource, "update", w.objects, "status"),
      allowed: false,
    },
    ...["create", "update", "patch", "delete", "deletecollection"].map((verb) => ({
      name: `${verb} ${resource}`,
      reason:
        (resource === "edgetenants" || resource === "nsxmanagers") && verb === "patch"
          ? "the restore and in-use finalizers are merge patches of metadata.finalizers"
          : "the spec belongs to the people who declare it",
      access: (w: Where) => nsxv(resource, verb, w.objects),
      allowed: (resource === "edgetenants" || resource === "nsxmanagers") && verb === "patch",
    })),
  ]),
  {
    name: "get secrets everywhere",
    reason: "manager credentials live beside the NSXManager, in any namespace: read by name",
    access: () => ({ verb: "get", resource: "secrets", namespace: "" }),
    allowed: true,
  },
  ...["list", "watch"].map((verb) => ({
    name: `${verb} secrets`,
    reason: "the operator reads the Secrets it is pointed at by name: it never sees the others",
    access: (w: Where) => ({ verb, resource: "secrets", namespace: w.objects }),
    allowed: false,
  })),
  ...["create", "update", "delete"].map((verb) => ({
    name: `${verb} secrets`,
    reason: "Secrets are never written: created, replaced or deleted",
    access: (w: Where) => ({ verb, resource: "secrets", namespace: w.objects }),
    allowed: false,
  })),
  {
    name: "patch secrets",
    reason:
      "the in-use finalizer of the Secrets a pending restore needs, by a merge patch of metadata.finalizers",
    access: (w: Where) => ({ verb: "patch", resource: "secrets", namespace: w.objects }),
    allowed: true,
  },
  ...["list", "watch"].map((verb) => ({
    name: `${verb} namespaces`,
    reason: "namespaces' labels decide whom an NSXManager shares itself with (spec.allowedNamespaces)",
    access: () => ({ verb, resource: "namespaces", namespace: "" }),
    allowed: true,
  })),
  ...["create", "update", "patch", "delete"].map((verb) => ({
    name: `${verb} namespaces`,
    reason: "it only reads their labels",
    access: () => ({ verb, resource: "namespaces", namespace: "" }),
    allowed: false,
  })),
  ...["create", "patch"].map((verb) => ({
    name: `${verb} events`,
    reason: "an Event for every change; patch counts repeats",
    access: (w: Where) => ({ verb, resource: "events", namespace: w.objects }),
    allowed: true,
  })),
  {
    name: "create events.k8s.io events",
    reason: "the operator writes core/v1 Events only",
    access: (w) => ({ verb: "create", resource: "events", group: "events.k8s.io", namespace: w.objects }),
    allowed: false,
  },
  ...["get", "update"].map((verb) => ({
    name: `${verb} its own lease`,
    reason: "leader election",
    access: (w: Where) => ({
      verb,
      resource: "leases",
      group: "coordination.k8s.io",
      namespace: w.install,
      name: INSTALL.lease,
    }),
    allowed: true,
  })),
  {
    name: "create leases in its namespace, any name",
    reason:
      "the one grant wider than the calls: create cannot be limited by resourceNames (the README says so)",
    access: (w) => ({
      verb: "create",
      resource: "leases",
      group: "coordination.k8s.io",
      namespace: w.install,
    }),
    allowed: true,
  },
  {
    name: "list leases",
    reason: "it reads its own Lease by name only",
    access: (w) => ({ verb: "list", resource: "leases", group: "coordination.k8s.io", namespace: w.install }),
    allowed: false,
  },
  {
    name: "create serviceaccounts/token",
    reason: "it cannot mint tokens, for itself or others",
    access: (w) => ({
      verb: "create",
      resource: "serviceaccounts",
      subresource: "token",
      namespace: w.install,
      name: INSTALL.serviceAccount,
    }),
    allowed: false,
  },
  {
    name: "impersonate serviceaccounts",
    reason: "it cannot act as anyone else",
    access: (w) => ({ verb: "impersonate", resource: "serviceaccounts", namespace: w.install }),
    allowed: false,
  },
];

// a control plane of its own: the install is cluster-wide, and its operator would reconcile every
// other file's objects (and they its), as one in a cluster does
await describeWithOwnControlPlane("RBAC of deploy/: the operator's ServiceAccount", (cp) => {
  const admin = cp.makeKubeConfig();
  let temp: TempDir;
  let sa: ServiceAccountAccess;
  const where: Where = { install: INSTALL.namespace, objects: "" };

  beforeAll(async () => {
    temp = await makeTempDir("nsxv-deploy-rbac");
    await applyInstall(cp);
    where.objects = await createTestNamespace(admin, "nsxv-rbac");
    sa = await serviceAccountAccess(cp, {
      namespace: INSTALL.namespace,
      name: INSTALL.serviceAccount,
      dir: temp.path,
    });
  });
  afterAll(async () => {
    await temp?.dispose();
  });

  it("is who the token says: system:serviceaccount:nsxv-system:nsxv-operator", async () => {
    const { stdout } = await kubectl(
      cp,
      ["auth", "whoami", "--output=jsonpath={.status.userInfo.username}"],
      {
        kubeconfigPath: sa.kubeconfigPath,
      },
    );
    expect(stdout).toBe(`system:serviceaccount:${INSTALL.namespace}:${INSTALL.serviceAccount}`);
  });

  it("is enough: `nsxv-operator run` as the ServiceAccount reconciles drift and a stray to convergence", async () => {
    await reconcileAsServiceAccount({
      admin,
      installNamespace: INSTALL.namespace,
      objectsNamespace: where.objects,
      kubeconfigPath: sa.kubeconfigPath,
    });
  }, 90_000);

  it.each(REFUSED_CALLS)("is refused: $name ($reason)", async ({ call }) => {
    expect(await statusOf(call(apisOf(sa.kubeConfig), where))).toBe(403);
  });

  it("answers every access review as the README's table says", async () => {
    const answers = await Promise.all(
      ACCESS_CASES.map(async (c) => ({
        name: c.name,
        allowed: await accessAllowed(sa.kubeConfig, c.access(where)),
      })),
    );
    expect(answers).toEqual(ACCESS_CASES.map((c) => ({ name: c.name, allowed: c.allowed })));
  });
});
