/**
 * A manager's strings are bounded where they land: a tenant, an edge's name, an allocation's
 * note or a pool's name of any size from the manager leaves a status the API server stores (the
 * harness checks every status against the CRDs: a condition message over 32768 characters is
 * refused there as the API server refuses it, HTTP 422), cut with a marker; what only status
 * remembers and a restore needs (the original tenant) is kept whole; and what passes compare
 * (the observed tenant against the edge list, a stray's identity) stays the same from pass to pass.
 */
import { describe, expect, it } from "vitest";
import { refOf } from "../../src/api/refs.ts";
import type { IPPoolAllocations, NsxvObject } from "../../src/api/types.ts";
import { edgeTenantsToWake } from "../../src/reconcile/edge-tenant/edge-list-plan.ts";
import { condition, setup } from "./harness.ts";
import { edgeTenant, edgeXml } from "./edge-tenant/fixtures.ts";
import { fakeManager, MINUTE } from "./fixtures.ts";
import { allocations, pool, poolAllocations } from "./ip-pool/fixtures.ts";
import { manager } from "./nsx-manager/fixtures.ts";

const HUGE = 40_000;
const MARKER = /\.\.\.\[cut: \d+ more characters, sha256 [0-9a-f]{8}\]/;

describe("a manager's strings in status", () => {
  it("a tenant and an edge name over 32 KB: the status is stored, the record is whole, the edge is corrected", async () => {
    const tenant = "t".repeat(HUGE);
    const object = edgeTenant({ tenant: "blue" });
    const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant, name: "n".repeat(HUGE) }) } });
    const { pass, store } = setup({ objects: [manager(), object], fake });
    await pass(manager());
    const record = await pass(object);
    expect(record.status, "a pass over the drifted edge").toMatchObject({ originalTenant: tenant });
    expect((record.status as { observedTenant: string }).observedTenant).toMatch(MARKER);
    expect((record.status as { edgeName: string }).edgeName).toMatch(MARKER);
    expect(condition(record, "Ready")?.message).toMatch(MARKER);
    expect(condition(record, "Ready")?.message.length).toBeLessThan(4 * 1024);
    const corrected = await pass(store.get(refOf(object)) as NsxvObject);
    expect(corrected.changes.tenantCorrections).toEqual([{ edgeId: "edge-1", from: tenant, to: "blue" }]);
    expect(corrected.events.find((e) => e.reason === "UpdatedEdgeTenant")?.message).toMatch(MARKER);
  });

  it("an Observe object whose edge keeps a huge tenant is not woken by every edge list: status keeps it cut, the summary is compared cut", async () => {
    const tenant = "t".repeat(HUGE);
    const object = edgeTenant({ tenant: "blue", managementPolicy: "Observe" });
    const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant }) } });
    const { pass, store } = setup({ objects: [manager(), object], fake });
    await pass(manager());
    await pass(object);
    const observed = store.get(refOf(object)) as typeof object;
    const list = { list: { fetchedAtMs: 0, byId: new Map([["edge-1", { id: "edge-1", tenant }]]) } };
    expect(edgeTenantsToWake([observed], list)).toEqual({ wake: [], shown: [refOf(observed)] });
  });

  it("notes and a pool name over 32 KB: strays keep their grace period from pass to pass and are released", async () => {
    const note = "v".repeat(HUGE);
    const object: IPPoolAllocations = poolAllocations({
      allowed: ["10.0.0.1"],
      release: { minStrayAge: "5m" },
    });
    const fake = fakeManager({
      pools: { "globalroot-0": [pool({ name: "p".repeat(HUGE) })] },
      allocations: { "ipaddresspool-1": allocations("10.0.0.1", ["10.0.0.9", note]) },
    });
    const { pass, store, clock } = setup({ objects: [manager(), object], fake });
    await pass(manager());
    const first = await pass(object);
    const stray = (first.status as IPPoolAllocations["status"])?.stray?.[0];
    expect(stray?.note).toMatch(MARKER);
    expect((first.status as IPPoolAllocations["status"])?.poolName).toMatch(MARKER);
    clock.ms += 6 * MINUTE;
    const due = await pass(store.get(refOf(object)) as NsxvObject);
    expect(due.changes.releases, "the same allocation, seen again: its grace period held").toHaveLength(1);
    const released = (due.status as IPPoolAllocations["status"])?.released?.[0];
    expect(released?.note).toMatch(MARKER);
    expect(due.events.find((e) => e.reason === "ReleasedAddress")?.message.length).toBeLessThan(2 * 1024);
  });
});
