import { describe, expect, it } from "vitest";
import type { Kind, NsxvObject } from "../../src/api/types.ts";
import { memoryStore } from "../../src/reconcile/store.ts";
import { refOf } from "../../src/api/refs.ts";
import { edgeTenant } from "./edge-tenant/fixtures.ts";
import { poolAllocations } from "./ip-pool/fixtures.ts";
import { manager } from "./nsx-manager/fixtures.ts";

const edge = edgeTenant({}, { name: "e" });
const pool = poolAllocations({}, { name: "p" });

describe("memoryStore", () => {
  it("lists only the objects of the kind asked for, and gets by kind, namespace and name", async () => {
    const store = memoryStore({ objects: [manager(), edge, pool, edgeTenant({}, { name: "f" })] });
    expect((await store.list("EdgeTenant")).map((o) => o.metadata.name)).toEqual(["e", "f"]);
    expect(await store.list("IPPoolAllocations")).toEqual([pool]);
    expect(store.get(refOf(pool))).toBe(pool);
    expect(
      store.get({ ...refOf(pool), kind: "EdgeTenant" }),
      "another kind of the same name",
    ).toBeUndefined();
  });

  it.each([
    {
      name: "StatusWrite",
      reason:
        "a put that keeps metadata and spec (a status write) changes nothing a list-derived index reads",
      put: { ...edge, status: { observedGeneration: 1 } } as NsxvObject,
      moved: [],
    },
    {
      name: "SpecChange",
      reason: "a new spec moves the revision of its kind only",
      put: { ...edge, spec: { ...edge.spec, edgeId: "edge-2" } },
      moved: ["EdgeTenant"],
    },
    {
      name: "MetadataChange",
      reason: "new metadata (a deletion mark) moves the revision of its kind",
      put: { ...pool, metadata: { ...pool.metadata, deletionTimestamp: "2024-06-01T00:00:00Z" } },
      moved: ["IPPoolAllocations"],
    },
    {
      name: "NewObject",
      reason: "an added object moves the revision of its kind",
      put: edgeTenant({}, { name: "new" }),
      moved: ["EdgeTenant"],
    },
  ] as { name: string; reason: string; put: NsxvObject; moved: Kind[] }[])(
    "revision after $name",
    ({ reason, put, moved }) => {
      const store = memoryStore({ objects: [manager(), edge, pool] });
      const kinds: Kind[] = ["NSXManager", "EdgeTenant", "IPPoolAllocations"];
      const before = kinds.map((k) => store.revision(k));
      store.put(put);
      const changed = kinds.filter((k, i) => store.revision(k) !== before[i]);
      expect(changed, reason).toEqual(moved);
    },
  );
});
