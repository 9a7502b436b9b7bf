import { describe, expect, it } from "vitest";
import type { IPPoolAllocationsSpec } from "../../../src/api/types.ts";
import { ReconcileError } from "../../../src/reconcile/errors.ts";
import { resolvePool } from "../../../src/reconcile/ip-pool/spec.ts";
import { poolAllocations } from "./fixtures.ts";

describe("resolvePool", () => {
  it.each([
    {
      name: "AllowedUnparsable",
      reason: "a bad allowed entry names its index",
      spec: { allowed: ["10.0.0.1", "10.0.0.300"] },
      message: /spec.allowed\[1\]/,
    },
    {
      name: "BothIdAndName",
      reason: "exactly one of id and name",
      spec: { pool: { id: "ipaddresspool-1", name: "x" } },
      message: /exactly one of id and name/,
    },
    {
      name: "NeitherIdNorName",
      reason: "exactly one of id and name",
      spec: { pool: {} },
      message: /exactly one/,
    },
    {
      name: "BadPoolId",
      reason: "ids have one shape",
      spec: { pool: { id: "pool-1" } },
      message: /ipaddresspool-<n>/,
    },
    {
      name: "BadDuration",
      reason: "Go duration syntax",
      spec: { release: { minStrayAge: "5 minutes" } },
      message: /spec.release.minStrayAge/,
    },
    {
      name: "NegativeMaxPerSync",
      reason: "a count",
      spec: { release: { maxPerSync: -1 } },
      message: /maxPerSync/,
    },
    {
      name: "BadSyncInterval",
      reason: "Go duration syntax",
      spec: { syncInterval: "often" },
      message: /spec.syncInterval/,
    },
    {
      name: "BadPolicy",
      reason: "closed list",
      spec: { managementPolicy: "Never" },
      message: /spec.managementPolicy/,
    },
  ] as { name: string; reason: string; spec: Partial<IPPoolAllocationsSpec>; message: RegExp }[])(
    "refuses $name",
    ({ reason, spec, message }) => {
      let thrown: unknown;
      try {
        resolvePool(poolAllocations(spec));
      } catch (error) {
        thrown = error;
      }
      expect(thrown, reason).toBeInstanceOf(ReconcileError);
      expect(thrown, reason).toMatchObject({
        reason: "InvalidSpec",
        terminal: true,
        code: "RECONCILE_INVALID_SPEC",
      });
      expect((thrown as Error).message, reason).toMatch(message);
    },
  );

  it("applies the defaults and the sync interval floor", () => {
    const config = resolvePool(poolAllocations({ pool: { name: "controllers" }, syncInterval: "1s" }));
    expect(config).toMatchObject({
      pool: { name: "controllers", scope: "globalroot-0" },
      minStrayAgeMs: 300_000,
      maxPerSync: 10,
      policy: "Enforce",
      syncIntervalMs: 10_000,
    });
  });
});
