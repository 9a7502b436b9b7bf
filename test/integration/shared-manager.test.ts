/**
 * One operator serving every team, on a real kube-apiserver with RBAC: each team may create
 * objects in its own namespace only (a ServiceAccount with a Role there). A squatter, who has no
 * access to the manager, points an NSXManager at the production URL with a Secret that does not
 * exist and claims an edge and a pool first; the platform team shares its NSXManager with the
 * namespaces it labels (spec.allowedNamespaces), and an application team declares the same edge
 * and pool through it (spec.managerRef.namespace) without a copy of the Secret. Authority before
 * ownership: the squatter blocks nothing; a namespace the platform does not allow is refused
 * with no call, until the namespace is labelled.
 */
import { CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EdgeTenant, IPPoolAllocations, NSXManager } from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import {
  apiStatus,
  createTestNamespace,
  describeWithControlPlane,
  installCrds,
} from "../controlplane/testing.ts";
import { serviceAccountAccess } from "./deploy-support.ts";
import {
  CRDS_DIR,
  Resources,
  condition,
  startTestOperator,
  tenantOn,
  type TestOperator,
} from "./operator-harness.ts";

const TEST_LABELS = { "nsxv.io/test": "shared-manager" };
/** the label the platform's NSXManager selects namespaces by */
const SHARE_LABEL = "nsxv.io/test-shared-with";

describeWithControlPlane(
  "a shared operator: authority before ownership, a manager shared on purpose",
  (cp) => {
    const admin = cp.makeKubeConfig();
    let sim: RunningSimulator;
    let operator: TestOperator;
    let platform: Resources;
    /** each a user who may create objects in their own namespace only */
    let squatter: Resources;
    let teamA: Resources;
    let teamB: Resources;

    /** A ServiceAccount of `namespace` that may create and read `resources` there, and nothing else. */
    async function userOf(namespace: string, resources: string[]): Promise<Resources> {
      const core = admin.makeApiClient(CoreV1Api);
      const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
      await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: "author" } } });
      const rules = [
        {
          apiGroups: ["nsxv.io"],
          resources: resources.filter((r) => r !== "secrets"),
          verbs: ["create", "get", "list"],
        },
        ...(resources.includes("secrets")
          ? [{ apiGroups: [""], resources: ["secrets"], verbs: ["create"] }]
          : []),
      ];
      await rbac.createNamespacedRole({ namespace, body: { metadata: { name: "author" }, rules } });
      await rbac.createNamespacedRoleBinding({
        namespace,
        body: {
          metadata: { name: "author" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "author" },
          subjects: [{ kind: "ServiceAccount", name: "author", namespace }],
        },
      });
      const { kubeConfig } = await serviceAccountAccess(cp, { namespace, name: "author", dir: cp.dir });
      return new Resources(kubeConfig, namespace);
    }

    beforeAll(async () => {
      await installCrds(admin, CRDS_DIR);
      const names = await Promise.all(
        ["nsxv-platform", "nsxv-squat", "nsxv-team-a", "nsxv-team-b"].map((p) =>
          createTestNamespace(admin, p),
        ),
      );
      const [platformNs, squatNs, teamANs, teamBNs] = names as [string, string, string, string];
      const core = admin.makeApiClient(CoreV1Api);
      await core.patchNamespace(
        { name: teamANs, body: { metadata: { labels: { [SHARE_LABEL]: platformNs } } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
      sim = await startSimulator({
        state: {
          edges: [{ generate: { count: 8, idStart: 1, tenant: "old" } }],
          pools: [
            {
              id: "ipaddresspool-1",
              name: "apps",
              ranges: [{ start: "10.0.0.1", end: "10.0.0.50" }],
              allocations: [{ ip: "10.0.0.1" }, { ip: "10.0.0.9", note: "stray" }],
            },
          ],
        },
      });
      platform = new Resources(admin, platformNs);
      await platform.secret("nsx-credentials", { username: "admin", password: "default" }, sim.url);
      await platform.create<NSXManager>({
        kind: "NSXManager",
        metadata: { name: "nsx", labels: TEST_LABELS },
        spec: {
          url: sim.url,
          credentialsSecretRef: { name: "nsx-credentials" },
          allowedNamespaces: { selector: { matchLabels: { [SHARE_LABEL]: platformNs } } },
        },
      });
      squatter = await userOf(squatNs, ["nsxmanagers", "edgetenants", "ippoolallocations", "secrets"]);
      teamA = await userOf(teamANs, ["edgetenants", "ippoolallocations"]);
      teamB = await userOf(teamBNs, ["edgetenants", "ippoolallocations"]);
      operator = await startTestOperator(admin, undefined, { labelSelector: "nsxv.io/test=shared-manager" });
      await platform.waitFor("NSXManager", "nsx", "Ready", (o) => condition(o, "Ready")?.status === "True");
    });

    afterAll(async () => {
      await operator?.stop();
      await sim?.close();
    });

    it("a squatter without access to the manager claims first, and blocks no one: the team sharing the platform's manager owns the edge and the pool", async () => {
      // the squatter: the production URL, a Secret that does not exist, the edge and the pool claimed first
      await squatter.create<NSXManager>({
        kind: "NSXManager",
        metadata: { name: "prod", labels: TEST_LABELS },
        spec: { url: sim.url, credentialsSecretRef: { name: "no-such-secret" } },
      });
      await squatter.create<EdgeTenant>({
        kind: "EdgeTenant",
        metadata: { name: "grab", labels: TEST_LABELS },
        spec: { managerRef: { name: "prod" }, edgeId: "edge-6", tenant: "squatter" },
      });
      await squatter.create<IPPoolAllocations>({
        kind: "IPPoolAllocations",
        metadata: { name: "grab", labels: TEST_LABELS },
        spec: {
          managerRef: { name: "prod" },
          pool: { id: "ipaddresspool-1" },
          allowed: [],
          managementPolicy: "Observe",
        },
      });
      await squatter.waitFor(
        "NSXManager",
        "prod",
        "its check fails",
        (o) => condition(o, "Ready")?.reason === "ManagerNotReady",
      );

      // the team, who may not read the platform's Secret, declares the same edge and pool through the shared manager
      const readSecret = teamA.core.readNamespacedSecret({
        name: "nsx-credentials",
        namespace: platform.namespace,
      });
      expect(
        apiStatus(await readSecret.catch((error: unknown) => error)),
        "the team cannot read the Secret",
      ).toBe(403);
      const shared = { name: "nsx", namespace: platform.namespace };
      await teamA.create<EdgeTenant>({
        kind: "EdgeTenant",
        metadata: { name: "edge-6", labels: TEST_LABELS },
        spec: { managerRef: shared, edgeId: "edge-6", tenant: "team-a" },
      });
      await teamA.create<IPPoolAllocations>({
        kind: "IPPoolAllocations",
        metadata: { name: "apps", labels: TEST_LABELS },
        spec: {
          managerRef: shared,
          pool: { id: "ipaddresspool-1" },
          allowed: ["10.0.0.1"],
          managementPolicy: "Observe",
        },
      });
      const owned = await teamA.waitFor<EdgeTenant>(
        "EdgeTenant",
        "edge-6",
        "corrected through the shared manager",
        (o) => condition(o, "Ready")?.status === "True",
      );
      expect(tenantOn(sim, "edge-6")).toBe("team-a");
      expect(owned.status?.originalTenantOf?.manager).toBe(`${platform.namespace}/nsx`);
      const pool = await teamA.waitFor<IPPoolAllocations>(
        "IPPoolAllocations",
        "apps",
        "observed, not held by the squatter",
        (o) => o.status?.strayCount === 1,
      );
      expect(condition(pool, "Stalled"), "the pool's owner").toBeUndefined();

      for (const kind of ["EdgeTenant", "IPPoolAllocations"] as const) {
        const grab = await squatter.waitFor(
          kind,
          "grab",
          "told it owns nothing",
          (o) => condition(o, "Stalled")?.reason === "Conflict",
        );
        expect(condition(grab, "Stalled")?.message).toContain(`${teamA.namespace}/`);
        expect(condition(grab, "Stalled")?.message).toContain("accepted its credentials");
      }
    });

    it("a namespace the manager does not allow is refused with no call, until the namespace is labelled", async () => {
      const puts = () => sim.state.counters.snapshot().putEdge?.["204"] ?? 0;
      const before = puts();
      await teamB.create<EdgeTenant>({
        kind: "EdgeTenant",
        metadata: { name: "edge-7", labels: TEST_LABELS },
        spec: {
          managerRef: { name: "nsx", namespace: platform.namespace },
          edgeId: "edge-7",
          tenant: "team-b",
        },
      });
      const refused = await teamB.waitFor(
        "EdgeTenant",
        "edge-7",
        "NamespaceNotAllowed",
        (o) => condition(o, "Stalled")?.reason === "NamespaceNotAllowed",
      );
      expect(condition(refused, "Ready")?.status).toBe("False");
      expect(condition(refused, "Stalled")?.message).toContain(
        `does not allow objects of namespace ${teamB.namespace}`,
      );
      expect(tenantOn(sim, "edge-7")).toBe("old");
      expect(puts()).toBe(before);

      // the platform shares its manager with team B: the namespace's labels re-decide at once
      await admin
        .makeApiClient(CoreV1Api)
        .patchNamespace(
          { name: teamB.namespace, body: { metadata: { labels: { [SHARE_LABEL]: platform.namespace } } } },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        );
      await teamB.waitFor(
        "EdgeTenant",
        "edge-7",
        "corrected once allowed",
        (o) => condition(o, "Ready")?.status === "True",
      );
      expect(tenantOn(sim, "edge-7")).toBe("team-b");
    });
  },
);
