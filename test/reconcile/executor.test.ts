import { describe, expect, it } from "vitest";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import type { IPPoolAllocationsStatus } from "../../src/api/types.ts";
import {
  executeEdgeTenant,
  executeIpPool,
  selectPool,
  type ExecuteOptions,
} from "../../src/reconcile/executor.ts";
import {
  allocations,
  apiError,
  at,
  count,
  edgeTenant,
  edgeXml,
  fakeManager,
  MINUTE,
  pool,
  poolAllocations,
  T0,
} from "./fixtures.ts";

const apply: ExecuteOptions = { mode: "apply", maxAttempts: 3 };
const plan: ExecuteOptions = { mode: "plan", maxAttempts: 3 };
const iso = (d: Date) => d.toISOString().replace(".000Z", "Z");

describe("executeEdgeTenant", () => {
  const input = { object: edgeTenant(), previous: undefined, now: T0 };

  it("reads the edge again right before the PUT and sends that document with only the tenant changed", async () => {
    const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant: "red", version: 7 }) } });
    // between the observing read and the read before the write, someone else changes the edge
    fake.before = (call) => {
      if (call === "getEdge edge-1" && count(fake.calls, "getEdge") === 2) {
        fake.state.edges.set("edge-1", edgeXml({ tenant: "red", version: 8, name: "renamed" }));
      }
    };
    const result = await executeEdgeTenant(fake.api, input, apply);
    expect(fake.calls, "observe, re-read, write").toEqual([
      "getEdge edge-1",
      "getEdge edge-1",
      "putEdge edge-1",
    ]);
    const sent = fake.puts[0] as EdgeDocument;
    const fresh = EdgeDocument.parse(edgeXml({ tenant: "red", version: 8, name: "renamed" }));
    expect(sent.version, "the PUT is based on the fresh read").toBe(8);
    expect(EdgeDocument.equalExcept(sent, fresh, ["tenant"]), "nothing but the tenant differs").toBe(true);
    expect(sent.tenant).toBe("blue");
    expect(result.corrections).toEqual([{ type: "setTenant", edgeId: "edge-1", from: "red", to: "blue" }]);
    expect(result.status).toMatchObject({
      observedTenant: "blue",
      lastCorrectionTime: iso(T0),
      edgeName: "renamed",
    });
  });

  it("does not PUT when the fresh read shows the tenant already corrected", async () => {
    const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant: "red" }) } });
    fake.before = (call) => {
      if (call === "getEdge edge-1" && count(fake.calls, "getEdge") === 2) {
        fake.state.edges.set("edge-1", edgeXml({ tenant: "blue", version: 8 }));
      }
    };
    const result = await executeEdgeTenant(fake.api, input, apply);
    expect(count(fake.calls, "putEdge"), "nothing left to write").toBe(0);
    expect(result.corrections).toEqual([]);
    expect(result.status.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
  });

  it("retries a 409 after a fresh read, then succeeds", async () => {
    const fake = fakeManager({
      edges: { "edge-1": edgeXml({ tenant: "red" }) },
      faults: { putEdge: [apiError(409)] },
    });
    const result = await executeEdgeTenant(fake.api, input, apply);
    expect(fake.calls).toEqual([
      "getEdge edge-1",
      "getEdge edge-1",
      "putEdge edge-1",
      "getEdge edge-1",
      "putEdge edge-1",
    ]);
    expect(result.corrections).toHaveLength(1);
  });

  it("gives up after maxAttempts answers of 409 with a clear error", async () => {
    const fake = fakeManager({
      edges: { "edge-1": edgeXml({ tenant: "red" }) },
      faults: { putEdge: [apiError(409), apiError(409), apiError(409), apiError(409)] },
    });
    await expect(executeEdgeTenant(fake.api, input, apply)).rejects.toMatchObject({
      reason: "ConcurrentModification",
      message: expect.stringMatching(/PUT edge edge-1: the manager answered 409 .* 3 times/),
    });
    expect(count(fake.calls, "putEdge"), "bounded: exactly maxAttempts PUTs").toBe(3);
    expect(count(fake.calls, "getEdge"), "one observe and one fresh read per attempt").toBe(4);
  });

  it("does not retry other errors", async () => {
    const fake = fakeManager({
      edges: { "edge-1": edgeXml({ tenant: "red" }) },
      faults: { putEdge: [apiError(500)] },
    });
    await expect(executeEdgeTenant(fake.api, input, apply)).rejects.toMatchObject({ status: 500 });
    expect(count(fake.calls, "putEdge")).toBe(1);
  });

  it("writes nothing in plan mode and reports the drift", async () => {
    const fake = fakeManager({ edges: { "edge-1": edgeXml({ tenant: "red" }) } });
    const result = await executeEdgeTenant(fake.api, input, plan);
    expect(fake.calls).toEqual(["getEdge edge-1"]);
    expect(result.planned).toEqual([
      { action: { type: "setTenant", edgeId: "edge-1", from: "red", to: "blue" } },
    ]);
    expect(result.status.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "Drifted",
    });
    expect(result.status.observedTenant).toBe("red");
  });

  it("turns the manager's not-found into EdgeNotFound with its details", async () => {
    const fake = fakeManager();
    await expect(executeEdgeTenant(fake.api, input, apply)).rejects.toMatchObject({
      reason: "EdgeNotFound",
      message: expect.stringMatching(
        /edge edge-1: GET \/api\/4.0\/edges\/edge-1: HTTP 404: status 404 from the fake, errorCode 202/,
      ),
    });
  });
});

describe("executeIpPool", () => {
  const object = poolAllocations({ allowed: ["10.0.0.1-10.0.0.3"] });
  const previous: IPPoolAllocationsStatus = {
    stray: ["10.0.0.7", "10.0.0.8", "10.0.0.9"].map((ip) => ({ ip, firstSeen: iso(T0) })),
  };
  const input = { object, previous, now: at(10 * MINUTE) };
  const start = () =>
    fakeManager({
      pools: { "globalroot-0": [pool()] },
      allocations: { "ipaddresspool-1": allocations("10.0.0.1", "10.0.0.7", "10.0.0.8", "10.0.0.9") },
    });

  it("lists the allocations again right before releasing and releases only what is still allocated and stray", async () => {
    const fake = start();
    fake.before = (call) => {
      if (call.startsWith("listAllocations") && count(fake.calls, "listAllocations") === 2) {
        // meanwhile .8 was released by someone else and .5 appeared (new, not due)
        fake.state.allocations.set(
          "ipaddresspool-1",
          allocations("10.0.0.1", "10.0.0.7", "10.0.0.9", "10.0.0.5"),
        );
      }
    };
    const result = await executeIpPool(fake.api, pool(), input, apply);
    expect(fake.calls.filter((c) => c.startsWith("release"))).toEqual([
      "releaseAddress ipaddresspool-1 10.0.0.7",
      "releaseAddress ipaddresspool-1 10.0.0.9",
    ]);
    expect(
      fake.calls.indexOf("releaseAddress ipaddresspool-1 10.0.0.7"),
      "the second list comes first",
    ).toBeGreaterThan(fake.calls.lastIndexOf("listAllocations ipaddresspool-1"));
    expect(result.releases.map((r) => r.ip)).toEqual(["10.0.0.7", "10.0.0.9"]);
    expect(result.status.stray, "the new stray waits").toEqual([
      { ip: "10.0.0.5", firstSeen: iso(at(10 * MINUTE)) },
    ]);
    expect(result.status.released?.map((r) => r.ip)).toEqual(["10.0.0.7", "10.0.0.9"]);
  });

  it("never releases an address the spec allows, even when the fresh list shows it in a new form", async () => {
    const fake = start();
    const result = await executeIpPool(fake.api, pool(), input, apply);
    expect(
      fake.calls.some((c) => c.endsWith(" 10.0.0.1")),
      "10.0.0.1 is allowed",
    ).toBe(false);
    expect(result.releases).toHaveLength(3);
  });

  it("reports a release answered false as a failure for that address and goes on", async () => {
    const fake = start();
    fake.faults.releaseAddress = [false];
    const result = await executeIpPool(fake.api, pool(), input, apply);
    expect(count(fake.calls, "releaseAddress"), "false is not retried blindly").toBe(3);
    expect(result.failures.map((f) => f.action.ip)).toEqual(["10.0.0.7"]);
    expect(result.failures[0]?.message).toMatch(/answered false/);
    expect(result.releases.map((r) => r.ip)).toEqual(["10.0.0.8", "10.0.0.9"]);
    expect(
      result.status.stray?.map((s) => s.ip),
      "the failed one stays stray",
    ).toEqual(["10.0.0.7"]);
  });

  it("stops releasing after an error that is not a 409", async () => {
    const fake = start();
    fake.faults.releaseAddress = [apiError(503, "DELETE")];
    const result = await executeIpPool(fake.api, pool(), input, apply);
    expect(count(fake.calls, "releaseAddress")).toBe(1);
    expect(result.failures).toHaveLength(1);
    expect(result.failures[0]?.error).toMatchObject({ status: 503 });
    expect(result.status.stray).toHaveLength(3);
  });

  it("on a 409 lists again and retries while the address is still allocated, bounded", async () => {
    const fake = start();
    fake.faults.releaseAddress = [apiError(409, "DELETE"), apiError(409, "DELETE"), apiError(409, "DELETE")];
    const result = await executeIpPool(fake.api, pool(), input, apply);
    const first = fake.calls.filter((c) => c === "releaseAddress ipaddresspool-1 10.0.0.7");
    expect(first, "three tries of the first address").toHaveLength(3);
    expect(count(fake.calls, "listAllocations"), "observe, re-read, and one per retry").toBe(4);
    expect(result.failures[0]).toMatchObject({ action: { ip: "10.0.0.7" } });
    expect(result.failures[0]?.message).toMatch(/409 .* 3 times/);
    expect(count(fake.calls, "releaseAddress"), "a 409 storm stops the pass").toBe(3);
  });

  it("on a 409 for an address someone else released meanwhile, moves on", async () => {
    const fake = start();
    fake.faults.releaseAddress = [apiError(409, "DELETE")];
    fake.before = (call) => {
      if (call === "releaseAddress ipaddresspool-1 10.0.0.7" && count(fake.calls, "releaseAddress") === 1) {
        fake.state.allocations.set("ipaddresspool-1", allocations("10.0.0.1", "10.0.0.8", "10.0.0.9"));
      }
    };
    const result = await executeIpPool(fake.api, pool(), input, apply);
    expect(result.failures).toEqual([]);
    expect(
      result.releases.map((r) => r.ip),
      "not ours to report as released",
    ).toEqual(["10.0.0.8", "10.0.0.9"]);
  });

  it("releases nothing in plan mode and reports what it would do", async () => {
    const fake = start();
    const result = await executeIpPool(fake.api, pool(), input, plan);
    expect(fake.calls).toEqual(["listAllocations ipaddresspool-1"]);
    expect(result.planned.map((p) => p.action.type === "releaseAddress" && p.action.ip)).toEqual([
      "10.0.0.7",
      "10.0.0.8",
      "10.0.0.9",
    ]);
    expect(result.status.stray).toHaveLength(3);
    expect(result.status.conditions?.find((c) => c.type === "Ready")?.reason).toBe("ReleasesPending");
  });

  it("turns the manager's unknown pool into PoolNotFound", async () => {
    const fake = fakeManager();
    await expect(executeIpPool(fake.api, pool(), input, apply)).rejects.toMatchObject({
      reason: "PoolNotFound",
      message: expect.stringContaining("errorCode 120054"),
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
