import { describe, expect, it } from "vitest";
import { PoolListCache } from "../../../src/reconcile/ip-pool/pool-lists.ts";
import { apiError, count, fakeManager } from "../fixtures.ts";
import { pool } from "./fixtures.ts";

function setup(ttlMs: number) {
  const clock = { ms: 0, now: () => clock.ms };
  const fake = fakeManager({ pools: { "globalroot-0": [pool()], "datacenter-2": [] } });
  return { clock, fake, cache: new PoolListCache({ ttlMs, clock }) };
}

describe("PoolListCache", () => {
  it("shares one fetch between concurrent callers", async () => {
    const { fake, cache } = setup(30_000);
    const lists = await Promise.all([1, 2, 3].map(() => cache.get("m", fake.api, "globalroot-0")));
    expect(count(fake.calls, "listPools"), "coalesced").toBe(1);
    expect(lists[2]?.[0]?.objectId).toBe("ipaddresspool-1");
  });

  it("serves a list for ttlMs, then fetches again", async () => {
    const { clock, fake, cache } = setup(30_000);
    await cache.get("m", fake.api, "globalroot-0");
    clock.ms = 29_999;
    await cache.get("m", fake.api, "globalroot-0");
    expect(count(fake.calls, "listPools"), "still fresh").toBe(1);
    clock.ms = 30_000;
    await cache.get("m", fake.api, "globalroot-0");
    expect(count(fake.calls, "listPools"), "expired").toBe(2);
  });

  it("keeps a list for its whole life with ttlMs Infinity (one CLI pass)", async () => {
    const { clock, fake, cache } = setup(Infinity);
    await cache.get("m", fake.api, "globalroot-0");
    clock.ms = 1e12;
    await cache.get("m", fake.api, "globalroot-0");
    expect(count(fake.calls, "listPools")).toBe(1);
  });

  it("keeps lists apart by manager key and scope", async () => {
    const { fake, cache } = setup(30_000);
    await cache.get("m", fake.api, "globalroot-0");
    await cache.get("m", fake.api, "datacenter-2");
    await cache.get("other", fake.api, "globalroot-0");
    expect(fake.calls).toEqual([
      "listPools globalroot-0",
      "listPools datacenter-2",
      "listPools globalroot-0",
    ]);
  });

  it("does not keep a failed fetch", async () => {
    const { fake, cache } = setup(30_000);
    fake.faults.listPools = [apiError(503, "GET")];
    await expect(cache.get("m", fake.api, "globalroot-0")).rejects.toMatchObject({ status: 503 });
    await expect(cache.get("m", fake.api, "globalroot-0")).resolves.toHaveLength(1);
    expect(count(fake.calls, "listPools")).toBe(2);
  });

  it("forgets lists on invalidate", async () => {
    const { fake, cache } = setup(30_000);
    await cache.get("m", fake.api, "globalroot-0");
    await cache.get("m", fake.api, "datacenter-2");
    cache.invalidate("m", "datacenter-2");
    await cache.get("m", fake.api, "globalroot-0");
    await cache.get("m", fake.api, "datacenter-2");
    expect(count(fake.calls, "listPools"), "only the invalidated scope again").toBe(3);
    cache.invalidate("m");
    await cache.get("m", fake.api, "globalroot-0");
    expect(count(fake.calls, "listPools"), "every scope of the manager").toBe(4);
  });
});
