import { describe, expect, it } from "vitest";
import type { IPPoolAllocations, IPPoolAllocationsStatus } from "../../../src/api/types.ts";
import type { ReconcileReport } from "../../../src/reconcile/report.ts";
import { selectPool } from "../../../src/reconcile/ip-pool/handler.ts";
import { apiError, at, count, fakeManager, MINUTE, T0 } from "../fixtures.ts";
import { allocations, pool, poolAllocations, recordedStray } from "./fixtures.ts";
import { manager } from "../nsx-manager/fixtures.ts";
import { condition, iso, setup } from "../harness.ts";

const STRAYS = ["10.0.0.7", "10.0.0.8", "10.0.0.9"];

/** A pool with 10.0.0.1 allowed and three strays first seen at T0, reconciled 10 minutes later. */
function strayPool(deps: Parameters<typeof setup>[0]["deps"] = {}) {
  const object: IPPoolAllocations = {
    ...poolAllocations({ allowed: ["10.0.0.1-10.0.0.3"] }),
    status: { stray: STRAYS.map((ip) => recordedStray(ip, iso(T0))) },
  };
  const fake = fakeManager({
    pools: { "globalroot-0": [pool()] },
    allocations: { "ipaddresspool-1": allocations("10.0.0.1", ...STRAYS) },
  });
  const harness = setup({ objects: [manager(), object], fake, deps });
  harness.clock.ms = at(10 * MINUTE).getTime();
  return { object, ...harness };
}

const strays = (report: ReconcileReport) => (report.status as IPPoolAllocationsStatus | undefined)?.stray;
const releases = (calls: readonly string[]) => calls.filter((c) => c.startsWith("releaseAddress"));

describe("the IPPoolAllocations handler", () => {
  it("is one allocation list plus the DELETEs, and never releases an allowed address", async () => {
    const { object, fake, pass } = strayPool();
    const report = await pass(object);
    expect(fake.calls).toEqual([
      "listPools globalroot-0",
      "listAllocations ipaddresspool-1",
      ...STRAYS.map((ip) => `releaseAddress ipaddresspool-1 ${ip}`),
    ]);
    expect(report.changes.releases.map((r) => r.ip)).toEqual(STRAYS);
    expect(strays(report)).toEqual([]);
    expect(report.pool, "the gauges' figures come with the report").toEqual({
      poolId: "ipaddresspool-1",
      usedAddressCount: 1,
      totalAddressCount: 10,
      strays: 0,
    });
  });

  it("reports a release answered false for that address and goes on with the others", async () => {
    const { object, fake, pass } = strayPool();
    fake.faults.releaseAddress = [false];
    const report = await pass(object);
    expect(releases(fake.calls), "false is not retried blindly").toHaveLength(3);
    expect(report.changes.releases.map((r) => r.ip)).toEqual(["10.0.0.8", "10.0.0.9"]);
    expect(
      strays(report)?.map((s) => s.ip),
      "the refused one stays stray",
    ).toEqual(["10.0.0.7"]);
    expect(report.outcome).toMatchObject({
      type: "failed",
      error: {
        reason: "ReleaseFailed",
        message: expect.stringMatching(/10\.0\.0\.7.*answered false, not true/),
      },
    });
  });

  it("says what an empty answer to a release was, rather than calling it false", async () => {
    const { object, fake, pass } = strayPool();
    fake.faults.releaseAddress = [{ released: false, answer: "nothing (an empty 204)" }];
    const report = await pass(object);
    expect(report.outcome).toMatchObject({
      type: "failed",
      error: {
        reason: "ReleaseFailed",
        message: expect.stringMatching(/10\.0\.0\.7.*answered nothing \(an empty 204\), not true/),
      },
    });
    expect(
      strays(report)?.map((s) => s.ip),
      "not counted as released",
    ).toEqual(["10.0.0.7"]);
  });

  it("stops releasing after an error that would repeat for every address", async () => {
    const { object, fake, pass } = strayPool();
    fake.faults.releaseAddress = [apiError(503, "DELETE")];
    const report = await pass(object);
    expect(releases(fake.calls)).toHaveLength(1);
    expect(report.outcome).toMatchObject({ type: "failed", error: { reason: "Unreachable" } });
    expect(strays(report)).toHaveLength(3);
    expect(condition(report, "Ready"), "the strays observed are still there").toMatchObject({
      status: "False",
    });
  });

  it("on a 409 lists again and retries while the address is still allocated, bounded", async () => {
    const { object, fake, pass } = strayPool();
    fake.faults.releaseAddress = [apiError(409, "DELETE"), apiError(409, "DELETE"), apiError(409, "DELETE")];
    const report = await pass(object);
    expect(releases(fake.calls), "three tries of the first address, then the pass stops").toEqual(
      Array(3).fill("releaseAddress ipaddresspool-1 10.0.0.7"),
    );
    expect(count(fake.calls, "listAllocations"), "the deciding list and one per retry").toBe(3);
    expect(report.outcome).toMatchObject({
      type: "failed",
      error: { reason: "ConcurrentModification", message: expect.stringMatching(/409 .* 3 times/) },
    });
  });

  it("on a 409 for an address someone else released meanwhile, moves on without calling it ours", async () => {
    const { object, fake, pass } = strayPool();
    fake.faults.releaseAddress = [apiError(409, "DELETE")];
    fake.before = (call) => {
      if (call === "releaseAddress ipaddresspool-1 10.0.0.7" && count(fake.calls, "releaseAddress") === 1) {
        fake.state.allocations.set("ipaddresspool-1", allocations("10.0.0.1", "10.0.0.8", "10.0.0.9"));
      }
    };
    const report = await pass(object);
    expect(report.outcome.type).toBe("done");
    expect(
      report.changes.releases.map((r) => r.ip),
      "not ours to report as released",
    ).toEqual(["10.0.0.8", "10.0.0.9"]);
    expect(strays(report), "gone from the pool: no longer stray").toEqual([]);
  });

  it("on a 409, releases nothing when the fresh list shows another allocation on the address", async () => {
    const { object, fake, pass } = strayPool();
    fake.faults.releaseAddress = [apiError(409, "DELETE")];
    // someone released 10.0.0.7 and a new machine was given it at once: a new id and a new note
    fake.before = (call) => {
      if (call === "releaseAddress ipaddresspool-1 10.0.0.7" && count(fake.calls, "releaseAddress") === 1) {
        const list = allocations(
          "10.0.0.1",
          ["10.0.0.7", "vm-new", "allocatedipaddress-99"],
          "10.0.0.8",
          "10.0.0.9",
        );
        fake.state.allocations.set("ipaddresspool-1", list);
      }
    };
    const report = await pass(object);
    expect(releases(fake.calls), "one DELETE of 10.0.0.7 (answered 409), none after the fresh list").toEqual([
      "releaseAddress ipaddresspool-1 10.0.0.7",
      "releaseAddress ipaddresspool-1 10.0.0.8",
      "releaseAddress ipaddresspool-1 10.0.0.9",
    ]);
    expect(
      report.changes.releases.map((r) => r.ip),
      "the others were the planned allocations",
    ).toEqual(["10.0.0.8", "10.0.0.9"]);
    expect(
      fake.state.allocations.get("ipaddresspool-1")?.map((a) => a.ipAddress),
      "the new allocation is still there",
    ).toContain("10.0.0.7");
    expect(report.outcome.type, "not a failure").toBe("done");
    expect(
      strays(report)?.find((s) => s.ip === "10.0.0.7"),
      "status times the new allocation from now",
    ).toMatchObject({
      allocationId: "allocatedipaddress-99",
      note: "vm-new",
      firstSeen: iso(at(10 * MINUTE)),
    });
    const event = report.events.find((e) => e.reason === "AllocationReplaced");
    expect(event?.message, "names both allocations, not the old note as released").toMatch(
      /allocatedipaddress-99.*vm-new.*allocatedipaddress-10\.0\.0\.7/,
    );
  });

  it("a 'not allocated' answer (120056) for an address a fresh list no longer shows is converged", async () => {
    const { object, fake, pass } = strayPool();
    const notAllocated = apiError(
      400,
      "DELETE",
      "/api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses/10.0.0.7",
      "120056",
    );
    fake.faults.releaseAddress = [notAllocated];
    // a racing apply released it first
    fake.before = (call) => {
      if (call === "releaseAddress ipaddresspool-1 10.0.0.7")
        fake.state.allocations.set("ipaddresspool-1", allocations("10.0.0.1", "10.0.0.8", "10.0.0.9"));
    };
    const report = await pass(object);
    expect(report.outcome, "not a failure").toMatchObject({ type: "done" });
    expect(count(fake.calls, "listAllocations"), "one re-list after the answer").toBe(2);
    expect(report.changes.releases.map((r) => r.ip)).toEqual(["10.0.0.8", "10.0.0.9"]);
    expect(condition(report, "Synced")).toMatchObject({ status: "True" });
  });

  it("a 'not allocated' answer for an address the manager still lists is a failure for that address", async () => {
    const { object, fake, pass } = strayPool();
    fake.faults.releaseAddress = [
      apiError(400, "DELETE", "/api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses/10.0.0.7", "120056"),
    ];
    const report = await pass(object);
    expect(
      report.changes.releases.map((r) => r.ip),
      "the others still go",
    ).toEqual(["10.0.0.8", "10.0.0.9"]);
    expect(report.outcome).toMatchObject({
      type: "failed",
      error: {
        reason: "ReleaseFailed",
        message: expect.stringContaining("not allocated, yet a fresh read still shows it to do"),
      },
    });
  });

  it("releases nothing in plan mode and reports what it would do", async () => {
    const { object, fake, pass } = strayPool({ mode: "plan" });
    const report = await pass(object);
    expect(fake.calls).toEqual(["listPools globalroot-0", "listAllocations ipaddresspool-1"]);
    expect(report.planned.map((p) => p.action.type === "releaseAddress" && p.action.ip)).toEqual(STRAYS);
    expect(strays(report)).toHaveLength(3);
    expect(condition(report, "Ready")?.reason).toBe("ReleasesPending");
  });

  it("turns the manager's unknown pool into PoolNotFound", async () => {
    const object = poolAllocations();
    const fake = fakeManager({ pools: { "globalroot-0": [pool()] } });
    const { pass } = setup({ objects: [manager(), object], fake });
    const report = await pass(object);
    expect(report.outcome).toMatchObject({
      type: "failed",
      error: { reason: "PoolNotFound", message: expect.stringContaining("errorCode 120054") },
    });
  });
});

describe("selectPool", () => {
  const pools = [
    pool(),
    pool({ objectId: "ipaddresspool-2", name: "vteps" }),
    pool({ objectId: "ipaddresspool-3", name: "vteps" }),
  ];
  it.each([
    {
      name: "ById",
      reason: "an id names one pool",
      selection: { id: "ipaddresspool-2", scope: "globalroot-0" },
      want: "ipaddresspool-2",
    },
    {
      name: "ByName",
      reason: "a unique name names one pool",
      selection: { name: "controllers", scope: "globalroot-0" },
      want: "ipaddresspool-1",
    },
  ])("$name", ({ reason, selection, want }) => {
    expect(selectPool(pools, selection).objectId, reason).toBe(want);
  });
  it.each([
    {
      name: "IdNotFound",
      reason: "an unknown id",
      selection: { id: "ipaddresspool-9", scope: "globalroot-0" },
      want: { reason: "PoolNotFound" },
    },
    {
      name: "NameNotFound",
      reason: "an unknown name",
      selection: { name: "edges", scope: "globalroot-0" },
      want: { reason: "PoolNotFound" },
    },
    {
      name: "NameTwice",
      reason: "two pools with the name cannot be told apart: the message lists their ids",
      selection: { name: "vteps", scope: "globalroot-0" },
      want: { reason: "AmbiguousPool", message: expect.stringContaining("ipaddresspool-2, ipaddresspool-3") },
    },
  ])("refuses $name", ({ reason, selection, want }) => {
    expect(() => selectPool(pools, selection), reason).toThrow(expect.objectContaining(want));
  });
});
