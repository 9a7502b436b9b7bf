/**
 * The rules both sources use to decide which other objects a change concerns (alsoConcerned,
 * concernedBySecret): one table, so that the Kubernetes and the directory source queue the same
 * keys for the same change.
 */
import { describe, expect, it } from "vitest";
import { objectKey } from "../../src/api/refs.ts";
import type { Condition, NsxvObject } from "../../src/api/types.ts";
import { alsoConcerned, concernedBy, concernedBySecret } from "../../src/reconcile/routing.ts";
import { edgeTenant } from "./edge-tenant/fixtures.ts";
import { poolAllocations } from "./ip-pool/fixtures.ts";
import { credentials, manager } from "./nsx-manager/fixtures.ts";

const condition = (type: string, status: Condition["status"], reason: string): Condition => ({
  type,
  status,
  reason,
  message: "",
  lastTransitionTime: "2024-05-01T00:00:00Z",
});
const withConditions = <T extends NsxvObject>(object: T, ...conditions: Condition[]): T =>
  ({ ...object, status: { ...object.status, conditions } }) as T;

const nsx = manager();
const ready = withConditions(nsx, condition("Ready", "True", "Available"));
const notReady = withConditions(nsx, condition("Ready", "False", "Unreachable"));
const inSync = withConditions(
  edgeTenant({}, { name: "in-sync" }),
  condition("Synced", "True", "ReconcileSuccess"),
);
const failed = withConditions(
  edgeTenant({}, { name: "failed" }),
  condition("Synced", "False", "Unreachable"),
);
const waiting = withConditions(
  poolAllocations({}, { name: "waiting" }),
  condition("Synced", "False", "ManagerNotReady"),
);
const owner = edgeTenant({ edgeId: "edge-1" }, { name: "owner" });
const loser = withConditions(
  edgeTenant({ edgeId: "edge-1" }, { name: "loser" }),
  condition("Stalled", "True", "Conflict"),
);
const undecided = withConditions(
  poolAllocations({}, { name: "undecided" }),
  condition("Synced", "False", "ConflictUndecided"),
);
const elsewhere = withConditions(
  edgeTenant({ managerRef: { name: "other" } }, { name: "elsewhere" }),
  condition("Stalled", "True", "Conflict"),
);
const all: NsxvObject[] = [ready, inSync, failed, waiting, owner, loser, undecided, elsewhere];

describe("alsoConcerned", () => {
  it.each([
    {
      name: "ManagerSpecChanged",
      reason:
        "a manager's new spec (URL, limits, whom it allows) concerns every dependent, and every object a conflict holds (ownership follows the manager)",
      before: ready,
      after: { ...ready, metadata: { ...ready.metadata, generation: 2 } },
      want: ["elsewhere", "failed", "in-sync", "loser", "owner", "undecided", "waiting"],
    },
    {
      name: "ManagerAuthenticated",
      reason:
        "a manager whose credentials were accepted gives its objects authority: it concerns every object a conflict holds, on any manager (and, as any readiness change, its dependents whose last pass failed)",
      before: ready,
      after: { ...ready, status: { ...ready.status, authenticated: true } },
      want: ["elsewhere", "failed", "loser", "undecided", "waiting"],
    },
    {
      name: "ManagerCredentialsGone",
      reason: "and one whose credentials no longer are takes it away: the same",
      before: { ...ready, status: { ...ready.status, authenticated: true } },
      after: ready,
      want: ["elsewhere", "failed", "loser", "undecided", "waiting"],
    },
    {
      name: "ManagerReadyAgain",
      reason: "a manager ready again concerns the dependents whose last pass failed, whatever the failure",
      before: notReady,
      after: ready,
      want: ["failed", "undecided", "waiting"],
    },
    {
      name: "ManagerStatusOtherwise",
      reason: "a status change dependents do not read concerns none",
      before: ready,
      after: withConditions(ready, { ...condition("Ready", "True", "Available"), message: "3 pools" }),
      want: [],
    },
    {
      name: "ManagerDeleted",
      reason: "a manager gone concerns every dependent, and every object a conflict holds",
      before: ready,
      after: undefined,
      want: ["elsewhere", "failed", "in-sync", "loser", "owner", "undecided", "waiting"],
    },
    {
      name: "OwnerDeleted",
      reason:
        "the owner of a target gone: the objects a conflict holds, of its kind, on any manager object (two may name one real manager)",
      before: owner,
      after: undefined,
      want: ["elsewhere", "loser"],
    },
    {
      name: "OwnerRetargeted",
      reason: "the owner names another edge now: same",
      before: owner,
      after: {
        ...owner,
        spec: { ...owner.spec, edgeId: "edge-2" },
        metadata: { ...owner.metadata, generation: 2 },
      },
      want: ["elsewhere", "loser"],
    },
    {
      name: "PoolObjectDeleted",
      reason: "for pools, an undecided owner counts as held too",
      before: waiting,
      after: undefined,
      want: ["undecided"],
    },
    {
      name: "DependentStatusOnly",
      reason: "a dependent's own status write concerns no one",
      before: owner,
      after: withConditions(owner, condition("Ready", "True", "InSync")),
      want: [],
    },
  ])("$name: $reason", ({ before, after, want }) => {
    const names = alsoConcerned(before, after, () => all)
      .map((r) => r.name)
      .sort();
    expect(names.sort()).toEqual(want);
  });

  it("lists the objects only when it needs them", () => {
    let listed = 0;
    alsoConcerned(owner, withConditions(owner, condition("Ready", "True", "InSync")), () => {
      listed++;
      return all;
    });
    expect(listed).toBe(0);
  });
});

describe("the NSXManager's in-use finalizer", () => {
  const held = { ...nsx, metadata: { ...nsx.metadata, finalizers: ["nsxv.io/in-use"] } };
  const deleting = { ...held, metadata: { ...held.metadata, deletionTimestamp: "2024-05-01T00:00:00Z" } };
  const newcomer = edgeTenant({}, { name: "newcomer" });
  it.each([
    {
      name: "CameToUnheldManager",
      reason: "a dependent that came names a manager without the finalizer: the manager adds it now",
      manager: nsx,
      before: undefined,
      after: newcomer,
      want: ["nsx"],
    },
    {
      name: "CameToHeldManager",
      reason: "the manager holds it already: nothing to do",
      manager: held,
      before: undefined,
      after: newcomer,
      want: [],
    },
    {
      name: "WentFromDeletingManager",
      reason: "the last dependents going let a manager being deleted go",
      manager: deleting,
      before: newcomer,
      after: undefined,
      want: ["nsx"],
    },
    {
      name: "WentFromLiveManager",
      reason: "a live manager keeps its finalizer until its own next pass",
      manager: held,
      before: newcomer,
      after: undefined,
      want: [],
    },
  ])("$name: $reason", ({ manager: m, before, after, want }) => {
    const concerned = alsoConcerned(before, after, () => [m as NsxvObject, newcomer]);
    expect(concerned.filter((r) => r.kind === "NSXManager").map((r) => r.name)).toEqual(want);
  });
});

describe("a manager in another namespace", () => {
  const shared = manager({}, { name: "shared", namespace: "platform" });
  const app = edgeTenant(
    { managerRef: { name: "shared", namespace: "platform" } },
    { name: "app", namespace: "team-a" },
  );
  const local = edgeTenant({}, { name: "local", namespace: "team-a" });
  const objects = [shared, app, local, loser];
  it.each([
    {
      name: "ForeignDependentOfManager",
      reason: "an object naming a manager of another namespace is its dependent: its spec change concerns it",
      change: {
        type: "object" as const,
        before: shared,
        after: { ...shared, metadata: { ...shared.metadata, generation: 2 } },
      },
      want: ["EdgeTenant/ns/loser", "EdgeTenant/team-a/app", "NSXManager/platform/shared"],
    },
    {
      name: "NamespaceLabels",
      reason:
        "a namespace whose labels changed: its objects naming a manager elsewhere (allowed or refused now), and every object a conflict holds",
      change: { type: "namespace" as const, name: "team-a" },
      want: ["EdgeTenant/ns/loser", "EdgeTenant/team-a/app"],
    },
    {
      name: "OtherNamespace",
      reason: "another namespace's labels concern only the objects a conflict holds",
      change: { type: "namespace" as const, name: "team-b" },
      want: ["EdgeTenant/ns/loser"],
    },
  ])("$name: $reason", ({ change, want }) => {
    expect(
      concernedBy(change, () => objects)
        .map(objectKey)
        .sort(),
    ).toEqual(want);
  });
});

describe("concernedBySecret", () => {
  it("names the managers that read the Secret and their dependents, nothing else", () => {
    const other = manager({ credentialsSecretRef: { name: "else" } }, { name: "other" });
    const keys = concernedBySecret([...all, other], "ns", credentials().metadata.name).map(objectKey);
    expect(keys).toContain("NSXManager/ns/nsx");
    expect(keys).not.toContain("NSXManager/ns/other");
    expect(keys).toContain("EdgeTenant/ns/owner");
    expect(keys).not.toContain("EdgeTenant/ns/elsewhere");
  });
});
