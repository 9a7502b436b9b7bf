/**
 * Authority before ownership, and a manager shared on purpose (authority.ts): an object may act
 * through an NSXManager of another namespace only while that NSXManager's allowedNamespaces
 * selects its namespace, and otherwise makes no call; a claim through an NSXManager whose
 * credentials are missing, unbound or refused never blocks one that has them.
 */
import { describe, expect, it } from "vitest";
import { refOf } from "../../src/api/refs.ts";
import type { EdgeTenant, NSXManager, NsxvObject } from "../../src/api/types.ts";
import { condition, setup } from "./harness.ts";
import { edgeTenant } from "./edge-tenant/fixtures.ts";
import { credentials, manager } from "./nsx-manager/fixtures.ts";

/** The platform's manager in `ns`, shared with the namespaces labelled team=a. */
const shared = manager({ allowedNamespaces: { selector: { matchLabels: { team: "a" } } } });
const appTenant = (namespace: string, name = "app"): EdgeTenant =>
  edgeTenant({ managerRef: { name: "nsx", namespace: "ns" } }, { name, namespace });
const LABELS = { "team-a": { team: "a" }, "team-b": { team: "b" } };

describe("a manager shared on purpose", () => {
  it.each([
    {
      name: "AllowedByLabel",
      reason: "a namespace the selector matches acts through the shared manager, without a Secret of its own",
      manager: shared,
      namespace: "team-a",
      labels: LABELS as Record<string, Record<string, string>> | undefined,
      allowed: true,
    },
    {
      name: "OtherLabels",
      reason: "a namespace the selector does not match is refused and makes no call",
      manager: shared,
      namespace: "team-b",
      labels: LABELS,
      allowed: false,
    },
    {
      name: "NotShared",
      reason: "a manager without allowedNamespaces serves its own namespace only (the default)",
      manager: manager(),
      namespace: "team-a",
      labels: LABELS,
      allowed: false,
    },
    {
      name: "UnknownNamespace",
      reason: "a namespace the store does not know has no labels",
      manager: shared,
      namespace: "team-c",
      labels: LABELS,
      allowed: false,
    },
    {
      name: "EverySelector",
      reason: "selector {} selects every namespace, labels or not",
      manager: manager({ allowedNamespaces: { selector: {} } }),
      namespace: "team-c",
      labels: LABELS,
      allowed: true,
    },
    {
      name: "DirectoryNoLabels",
      reason: "manifest files have no namespace labels: a selector that wants one matches nothing",
      manager: shared,
      namespace: "team-a",
      labels: undefined,
      allowed: false,
    },
    {
      name: "DirectoryDoesNotExist",
      reason: "while one that wants a label absent matches every namespace there",
      manager: manager({
        allowedNamespaces: {
          selector: { matchExpressions: [{ key: "restricted", operator: "DoesNotExist" }] },
        },
      }),
      namespace: "team-a",
      labels: undefined,
      allowed: true,
    },
  ])("$name: $reason", async ({ manager: nsx, namespace, labels, allowed }) => {
    const object = appTenant(namespace);
    const { fake, pass } = setup({
      objects: [nsx, object],
      ...(labels === undefined ? {} : { namespaceLabels: labels }),
    });
    await pass(nsx);
    fake.calls.length = 0;
    const first = await pass(object);
    if (!allowed) {
      expect(fake.calls, "no call for a namespace the manager does not allow").toEqual([]);
      expect(condition(first, "Stalled")).toMatchObject({ status: "True", reason: "NamespaceNotAllowed" });
      expect(condition(first, "Ready")).toMatchObject({ status: "False", reason: "NamespaceNotAllowed" });
      expect(condition(first, "Synced")?.message).toContain(
        `NSXManager ns/nsx does not allow objects of namespace ${namespace}`,
      );
      expect(first.outcome.type).toBe("failed");
      return;
    }
    expect(condition(first, "Synced")?.reason, "no refusal").not.toBe("NamespaceNotAllowed");
    expect(first.status, "the original is recorded against the manager of the other namespace").toMatchObject(
      {
        originalTenant: "red",
        originalTenantOf: { edgeId: "edge-1", manager: "ns/nsx", managerURL: "https://nsx.example" },
      },
    );
    const second = await pass(object);
    expect(second.changes.tenantCorrections).toEqual([{ edgeId: "edge-1", from: "red", to: "blue" }]);
  });

  it("an object the manager refuses is told so, not that another owns its edge: it claims nothing there", async () => {
    const owner = {
      ...appTenant("team-a", "owner"),
      metadata: { ...appTenant("team-a", "owner").metadata, creationTimestamp: "2023-01-01T00:00:00Z" },
    };
    const refused = appTenant("team-b", "refused");
    const { pass } = setup({ objects: [shared, owner, refused], namespaceLabels: LABELS });
    await pass(shared);
    expect(condition(await pass(refused), "Stalled")?.reason).toBe("NamespaceNotAllowed");
  });

  it("a manager holds its in-use finalizer for the objects it allows, not for those it refuses", async () => {
    const refused = appTenant("team-b", "refused");
    const { pass, store } = setup({ objects: [shared, refused], namespaceLabels: LABELS });
    expect(
      (await pass(shared)).finalizer,
      "a namespace it refuses cannot keep it from being deleted",
    ).toBeUndefined();
    store.put(appTenant("team-a", "allowed"));
    expect((await pass(shared)).finalizer).toEqual({ name: "nsxv.io/in-use", present: true });
  });

  it("restores the original on the manager of the other namespace it was read on", async () => {
    const base = appTenant("team-a");
    const object: EdgeTenant = {
      ...base,
      metadata: { ...base.metadata, finalizers: ["nsxv.io/restore-tenant"] },
      spec: { ...base.spec, deletionPolicy: "Restore" },
    };
    const { fake, pass, store } = setup({ objects: [shared, object], namespaceLabels: LABELS });
    await pass(shared);
    await pass(object);
    const corrected = await pass(store.get(refOf(object)) as NsxvObject);
    expect(corrected.changes.tenantCorrections).toHaveLength(1);
    const current = store.get(refOf(object)) as EdgeTenant;
    store.put({
      ...current,
      metadata: {
        ...current.metadata,
        deletionTimestamp: "2024-05-01T12:00:00Z",
        finalizers: ["nsxv.io/restore-tenant"],
      },
    });
    fake.calls.length = 0;
    const report = await pass(store.get(refOf(object)) as NsxvObject);
    expect(report.events.map((e) => e.reason)).toContain("RestoredEdgeTenant");
    expect(report.finalizer).toEqual({ name: "nsxv.io/restore-tenant", present: false });
  });
});

describe("authority before ownership", () => {
  /** a team's NSXManager at the production URL, in its namespace */
  const teamManager = (namespace: string, secret: string): NSXManager =>
    manager({ credentialsSecretRef: { name: secret } }, { namespace });
  const squatter = edgeTenant(
    { tenant: "squat" },
    { name: "edge-1", namespace: "squat", creationTimestamp: "2024-01-01T00:00:00Z" },
  );
  const owner = edgeTenant(
    { tenant: "blue" },
    { name: "edge-1", namespace: "ns", creationTimestamp: "2024-03-01T00:00:00Z" },
  );

  it("an older claim through an NSXManager whose Secret does not exist never blocks the owner", async () => {
    const squatManager = teamManager("squat", "no-such-secret");
    const ownManager = teamManager("ns", "nsx-creds");
    const { fake, pass } = setup({
      objects: [squatManager, ownManager, squatter, owner],
      secrets: [credentials()],
    });
    const squatCheck = await pass(squatManager);
    expect(condition(squatCheck, "Ready")?.reason).toBe("ManagerNotReady");
    expect((squatCheck.status as NSXManager["status"])?.authenticated).toBeUndefined();
    await pass(ownManager);

    const first = await pass(owner);
    expect(condition(first, "Stalled"), "the owner is not held by the squatter").toBeUndefined();
    expect((await pass(owner)).changes.tenantCorrections).toEqual([
      { edgeId: "edge-1", from: "red", to: "blue" },
    ]);

    fake.calls.length = 0;
    const told = await pass(squatter);
    expect(fake.calls).toEqual([]);
    expect(condition(told, "Stalled")).toMatchObject({ reason: "Conflict" });
    expect(condition(told, "Stalled")?.message).toContain(
      "owned by EdgeTenant ns/edge-1, whose NSXManager accepted its credentials",
    );
  });

  it("a claim whose credentials the manager refused loses its authority, and the younger owner acts", async () => {
    const refusedManager = {
      ...teamManager("squat", "nsx-creds"),
      status: { authenticated: false, reachable: true },
    } satisfies NSXManager;
    const ownManager = {
      ...teamManager("ns", "nsx-creds"),
      status: { authenticated: true, reachable: true },
    };
    const { pass } = setup({ objects: [refusedManager, ownManager, squatter, owner] });
    expect(condition(await pass(owner), "Stalled")).toBeUndefined();
  });

  it("two claims that both have authority: the older owns, as before", async () => {
    const both = ["squat", "ns"].map((ns) => ({
      ...teamManager(ns, "nsx-creds"),
      status: { authenticated: true, reachable: true },
    }));
    const { pass } = setup({ objects: [...both, squatter, owner] });
    const report = await pass(owner);
    expect(condition(report, "Stalled")).toMatchObject({ reason: "Conflict" });
    expect(condition(report, "Stalled")?.message).toContain(
      "owned by EdgeTenant squat/edge-1, which is older",
    );
  });

  it("a manager whose Secret went takes back authenticated: its accepted credentials are not what it holds now", async () => {
    const nsx = { ...manager(), status: { authenticated: true, reachable: true } };
    const { pass, store } = setup({ objects: [nsx] });
    store.removeSecret("ns", "nsx-creds");
    const report = await pass(nsx);
    expect(condition(report, "Ready")?.reason).toBe("ManagerNotReady");
    expect((report.status as NSXManager["status"])?.authenticated).toBeUndefined();
    expect(report.status).toMatchObject({ reachable: true });
  });
});
