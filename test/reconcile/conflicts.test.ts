import { describe, expect, it } from "vitest";
import type { DependentObject, EdgeTenant, IPPoolAllocations, NsxvObject } from "../../src/api/types.ts";
import { ConflictIndex } from "../../src/reconcile/conflicts.ts";
import { edgeTenant } from "./edge-tenant/fixtures.ts";
import { poolAllocations } from "./ip-pool/fixtures.ts";
import { manager } from "./nsx-manager/fixtures.ts";
import { MANAGER_CHECK_PARTS } from "../../src/reconcile/kinds.ts";

/** The index as the reconciler builds it: each object's claim is its kind's (the registry's roles). */
const build = (
  objects: readonly NsxvObject[],
  managers: readonly NsxvObject[] = [],
  authority?: (object: DependentObject) => boolean,
) =>
  ConflictIndex.build(objects, managers, authority, (object) =>
    MANAGER_CHECK_PARTS.find((part) => part.kind === object.kind)?.claim(object),
  );

const older = "2024-01-01T00:00:00Z";
const newer = "2024-02-01T00:00:00Z";

interface Case {
  name: string;
  reason: string;
  objects: NsxvObject[];
  /** index of the object asked about */
  subject: number;
  /** name of the winner over it, or undefined when it owns its target */
  winner: string | undefined;
  /** the NSXManager objects the source lists */
  managers?: NsxvObject[];
}

/** An NSXManager `nsx` in `namespace` at `url`, whose manager reported `vsmUuid` (when given). */
const managerIn = (namespace: string, url: string, vsmUuid?: string): NsxvObject => ({
  ...manager({ url }, { namespace }),
  ...(vsmUuid === undefined ? {} : { status: { vsmUuid } }),
});

const cases: Case[] = [
  {
    name: "EdgeOlderWins",
    reason: "Two EdgeTenants on the same edge of the same manager: the older one owns it.",
    objects: [
      edgeTenant({}, { name: "b", creationTimestamp: older }),
      edgeTenant({ tenant: "red" }, { name: "a", creationTimestamp: newer }),
    ],
    subject: 1,
    winner: "b",
  },
  {
    name: "EdgeWinnerHasNoConflict",
    reason: "The owner itself sees no conflict.",
    objects: [
      edgeTenant({}, { name: "b", creationTimestamp: older }),
      edgeTenant({}, { name: "a", creationTimestamp: newer }),
    ],
    subject: 0,
    winner: undefined,
  },
  {
    name: "EdgeTieByName",
    reason: "Equal creation times are broken by namespace/name.",
    objects: [edgeTenant({}, { name: "b" }), edgeTenant({}, { name: "a" })],
    subject: 0,
    winner: "a",
  },
  {
    name: "EdgeOtherNamespaceNoConflict",
    reason:
      "managerRef is local to the namespace: the same manager name in another namespace is another manager.",
    objects: [edgeTenant({}, { name: "a", namespace: "z" }), edgeTenant({}, { name: "b", namespace: "y" })],
    subject: 0,
    winner: undefined,
  },
  {
    name: "SameManagerUrlAcrossNamespaces",
    reason:
      "Two NSXManager objects in two namespaces at one URL (case, default port and a trailing slash do not count) are one manager: its edge has one owner.",
    managers: [managerIn("y", "https://NSX.example:443/"), managerIn("z", "https://nsx.example")],
    objects: [
      edgeTenant({}, { name: "a", namespace: "z", creationTimestamp: newer }),
      edgeTenant({ tenant: "red" }, { name: "b", namespace: "y", creationTimestamp: older }),
    ],
    subject: 0,
    winner: "b",
  },
  {
    name: "SameReportedUuidOtherUrls",
    reason:
      "Two URLs (a DNS name and an address) of one namespace whose manager reports one vsmUuid are one manager.",
    managers: [
      managerIn("y", "https://nsx.example", "420D3C54-5E36-8D1A-9F41-2C6B7A3E9B10"),
      {
        ...managerIn("y", "https://192.0.2.10", "420d3c54-5e36-8d1a-9f41-2c6b7a3e9b10"),
        metadata: { ...manager().metadata, name: "nsx-ip", namespace: "y" },
      },
    ],
    objects: [
      edgeTenant({ managerRef: { name: "nsx-ip" } }, { name: "a", namespace: "y", creationTimestamp: newer }),
      edgeTenant({}, { name: "b", namespace: "y", creationTimestamp: older }),
    ],
    subject: 0,
    winner: "b",
  },
  {
    name: "ReportedUuidNeverJoinsNamespaces",
    reason:
      "A UUID is what a server says, and a server of one's own can say any: it never makes another namespace's manager the same one, so no namespace can claim another's edges by it.",
    managers: [
      managerIn("y", "https://nsx.example", "420D3C54-5E36-8D1A-9F41-2C6B7A3E9B10"),
      managerIn("z", "https://impostor.example", "420d3c54-5e36-8d1a-9f41-2c6b7a3e9b10"),
    ],
    objects: [
      edgeTenant({}, { name: "a", namespace: "y", creationTimestamp: newer }),
      edgeTenant({}, { name: "b", namespace: "z", creationTimestamp: older }),
    ],
    subject: 0,
    winner: undefined,
  },
  {
    name: "SharedManagerAcrossNamespaces",
    reason:
      "Objects of two namespaces naming one shared NSXManager (managerRef.namespace) claim on one manager.",
    managers: [managerIn("platform", "https://nsx.example")],
    objects: [
      edgeTenant(
        { managerRef: { name: "nsx", namespace: "platform" } },
        { name: "a", namespace: "y", creationTimestamp: newer },
      ),
      edgeTenant(
        { managerRef: { name: "nsx", namespace: "platform" } },
        { name: "b", namespace: "z", creationTimestamp: older },
      ),
    ],
    subject: 0,
    winner: "b",
  },
  {
    name: "OtherManagersNoConflict",
    reason: "Other URLs and other UUIDs are other managers: the same edge id on each is another edge.",
    managers: [
      managerIn("y", "https://nsx-a.example", "uuid-a"),
      managerIn("z", "https://nsx-b.example", "uuid-b"),
    ],
    objects: [
      edgeTenant({}, { name: "a", namespace: "z", creationTimestamp: newer }),
      edgeTenant({}, { name: "b", namespace: "y", creationTimestamp: older }),
    ],
    subject: 0,
    winner: undefined,
  },
  {
    name: "PoolsPerRealManager",
    reason: "Pools are decided per real manager too.",
    managers: [managerIn("y", "https://nsx.example"), managerIn("z", "https://nsx.example/")],
    objects: [
      poolAllocations({}, { name: "a", namespace: "z", creationTimestamp: newer }),
      poolAllocations({}, { name: "b", namespace: "y", creationTimestamp: older }),
    ],
    subject: 0,
    winner: "b",
  },
  {
    name: "EdgeWithoutTimestampLoses",
    reason: "An object with a creation time is older than one without (manifest files have none).",
    objects: [
      edgeTenant({}, { name: "a", creationTimestamp: undefined }),
      edgeTenant({}, { name: "z", creationTimestamp: newer }),
    ],
    subject: 0,
    winner: "z",
  },
  {
    name: "EdgeOtherManagerNoConflict",
    reason: "The same edge id on another NSXManager is another edge.",
    objects: [edgeTenant({}, { name: "a" }), edgeTenant({ managerRef: { name: "nsx2" } }, { name: "b" })],
    subject: 1,
    winner: undefined,
  },
  {
    name: "EdgeOtherEdgeNoConflict",
    reason: "Different edges of one manager do not conflict.",
    objects: [edgeTenant({}, { name: "a" }), edgeTenant({ edgeId: "edge-2" }, { name: "b" })],
    subject: 1,
    winner: undefined,
  },
  {
    name: "EdgeDeletingOwnsNothing",
    reason: "An object being deleted no longer owns its edge.",
    objects: [edgeTenant({}, { name: "a", deletionTimestamp: newer }), edgeTenant({}, { name: "b" })],
    subject: 1,
    winner: undefined,
  },
  {
    name: "PoolById",
    reason: "Two IPPoolAllocations on the same pool id conflict.",
    objects: [
      poolAllocations({}, { name: "p1", creationTimestamp: newer }),
      poolAllocations({}, { name: "p2", creationTimestamp: older }),
    ],
    subject: 0,
    winner: "p2",
  },
  {
    name: "PoolByNameSameScope",
    reason: "Two objects naming the same pool in the same scope conflict before any list is read.",
    objects: [
      poolAllocations({ pool: { name: "controllers" } }, { name: "p1" }),
      poolAllocations({ pool: { name: "controllers", scope: "globalroot-0" } }, { name: "p2" }),
    ],
    subject: 1,
    winner: "p1",
  },
  {
    name: "PoolByNameOtherScope",
    reason: "The same name in another scope is not known to be the same pool until resolved.",
    objects: [
      poolAllocations({ pool: { name: "controllers" } }, { name: "p1" }),
      poolAllocations({ pool: { name: "controllers", scope: "datacenter-2" } }, { name: "p2" }),
    ],
    subject: 1,
    winner: undefined,
  },
  {
    name: "ManagersIgnored",
    reason: "NSXManager objects own nothing and are skipped.",
    objects: [manager(), poolAllocations({}, { name: "p1" })],
    subject: 1,
    winner: undefined,
  },
];

describe("ConflictIndex.winnerOver", () => {
  it.each(cases)("$name", (c) => {
    const index = build(c.objects, c.managers);
    const subject = c.objects[c.subject] as Parameters<ConflictIndex["winnerOver"]>[0];
    expect(index.winnerOver(subject)?.name, c.reason).toBe(c.winner);
  });
});

describe("authority before ownership", () => {
  const squatter = edgeTenant({}, { name: "squatter", namespace: "z", creationTimestamp: older });
  const owner = edgeTenant({}, { name: "owner", namespace: "y", creationTimestamp: newer });
  const third = edgeTenant({}, { name: "third", namespace: "x", creationTimestamp: "2023-06-01T00:00:00Z" });
  const managers = ["x", "y", "z"].map((ns) => managerIn(ns, "https://nsx.example"));
  const cases: {
    name: string;
    reason: string;
    authorized: string[];
    subject: EdgeTenant;
    winner: string | undefined;
  }[] = [
    {
      name: "SquatterNeverBlocks",
      reason:
        "an older claim through an NSXManager without accepted credentials never blocks one that has them",
      authorized: ["owner"],
      subject: owner,
      winner: undefined,
    },
    {
      name: "SquatterIsTold",
      reason: "the claim without authority loses to the one with it, whatever their ages",
      authorized: ["owner"],
      subject: squatter,
      winner: "owner",
    },
    {
      name: "BothAuthorizedOldestWins",
      reason: "two claims that both have authority: the oldest wins, as ever",
      authorized: ["owner", "squatter"],
      subject: owner,
      winner: "squatter",
    },
    {
      name: "NoneAuthorizedOldestWins",
      reason: "no claim has authority (nothing checked yet, or a one-shot pass): age alone decides",
      authorized: [],
      subject: owner,
      winner: "third",
    },
    {
      name: "OldestOfTheAuthorized",
      reason: "among several, the oldest of those with authority",
      authorized: ["owner", "third"],
      subject: owner,
      winner: "third",
    },
  ];
  it.each(cases)("$name: $reason", ({ authorized, subject, winner }) => {
    const index = build([squatter, owner, third], managers, (o) => authorized.includes(o.metadata.name));
    expect(index.winnerOver(subject)?.name).toBe(winner);
  });

  it("a pool claimed by name or id goes to the claim with authority first", () => {
    const byName = poolAllocations(
      { pool: { name: "vteps" } },
      { name: "squatter", namespace: "z", creationTimestamp: older },
    );
    const byId = poolAllocations({}, { name: "owner", namespace: "y", creationTimestamp: newer });
    const index = build([byName, byId], managers, (o) => o.metadata.name === "owner");
    expect(index.poolWinner(byId, "ipaddresspool-1", () => "ipaddresspool-1")).toEqual({});
    expect(index.poolWinner(byName, "ipaddresspool-1", () => "ipaddresspool-1").owner?.name).toBe("owner");
  });
});

describe("ConflictIndex.poolWinner", () => {
  const byName = poolAllocations(
    { pool: { name: "controllers" } },
    { name: "by-name", creationTimestamp: older },
  );
  const byId = poolAllocations(
    { pool: { id: "ipaddresspool-1" } },
    { name: "by-id", creationTimestamp: newer },
  );
  const otherScope = poolAllocations(
    { pool: { name: "vteps", scope: "datacenter-2" } },
    { name: "dc", creationTimestamp: "2023-01-01T00:00:00Z" },
  );
  /** names → pool id; a name missing resolves to no pool; `unknown` names cannot be resolved now */
  const resolve =
    (names: Record<string, string>, unknown: string[] = []) =>
    (o: IPPoolAllocations) => {
      if (o.spec.pool.id !== undefined) return o.spec.pool.id;
      const name = o.spec.pool.name ?? "";
      return unknown.includes(name) ? undefined : (names[name] ?? null);
    };

  it.each([
    {
      name: "ByIdLosesToOlderByName",
      reason:
        "A by-id object and an older by-name object resolving to the same pool conflict; the older wins.",
      subject: byId,
      names: { controllers: "ipaddresspool-1" },
      winner: "by-name",
    },
    {
      name: "ByNameWinsOverNewerById",
      reason: "The older by-name object keeps the pool.",
      subject: byName,
      names: { controllers: "ipaddresspool-1" },
      winner: undefined,
    },
    {
      name: "ResolvedToDifferentPools",
      reason: "Objects whose selections resolve to different pools do not conflict.",
      subject: byId,
      names: { controllers: "ipaddresspool-2" },
      winner: undefined,
    },
    {
      name: "OtherScopeResolvesSame",
      reason: "A by-name object of another scope that resolves to the same pool conflicts too.",
      subject: byId,
      names: { controllers: "ipaddresspool-9", vteps: "ipaddresspool-1" },
      winner: "dc",
    },
    {
      name: "UnresolvedIsNoRival",
      reason: "An object whose name resolves to no pool owns nothing.",
      subject: byId,
      names: {},
      winner: undefined,
    },
    {
      name: "UnknownOlderIsUndecided",
      reason: "An older object whose scope cannot be listed now may own the pool: undecided, not free.",
      subject: byId,
      names: { controllers: "ipaddresspool-2" },
      unknown: ["vteps"],
      undecided: "dc",
    },
    {
      name: "KnownOwnerWinsOverUnknown",
      reason:
        "An older object that does resolve to the pool makes this one a loser, whatever else is unknown.",
      subject: byId,
      names: { controllers: "ipaddresspool-1" },
      unknown: ["vteps"],
      winner: "by-name",
    },
    {
      name: "UnknownNewerDoesNotMatter",
      reason: "A newer object never owns the pool over this one, resolved or not.",
      subject: otherScope,
      names: {},
      unknown: ["controllers"],
    },
  ] as {
    name: string;
    reason: string;
    subject: IPPoolAllocations;
    names: Record<string, string>;
    unknown?: string[];
    winner?: string;
    undecided?: string;
  }[])("$name", ({ reason, subject, names, unknown, winner, undecided }) => {
    const index = build([byName, byId, otherScope]);
    const result = index.poolWinner(subject, "ipaddresspool-1", resolve(names, unknown));
    expect(result.owner?.name, reason).toBe(winner);
    expect(result.undecided?.name, reason).toBe(undecided);
  });

  it("names the scopes of the by-name selections on the same manager only", () => {
    const elsewhere = poolAllocations(
      { managerRef: { name: "nsx2" }, pool: { name: "x", scope: "datacenter-9" } },
      { name: "elsewhere" },
    );
    const index = build([byName, byId, otherScope, elsewhere]);
    expect([...index.nameScopes(byId)].sort()).toEqual(["datacenter-2", "globalroot-0"]);
  });

  it("asks only the objects that can name the pool: by-id objects of other pools are never resolved", () => {
    const objects = Array.from({ length: 200 }, (_, i) =>
      poolAllocations(
        { pool: { id: `ipaddresspool-${i}` } },
        { name: `p${i}`, creationTimestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString() },
      ),
    );
    const index = build(objects);
    let asked = 0;
    const last = objects[199] as IPPoolAllocations;
    const result = index.poolWinner(last, "ipaddresspool-199", (o) => {
      asked++;
      return o.spec.pool.id;
    });
    expect(result).toEqual({});
    expect(asked).toBe(0);
  });
});
