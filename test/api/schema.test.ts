import { describe, expect, it } from "vitest";
import { fieldOf, ResourceValidator } from "../../src/api/schema.ts";
import { objectFor, VALIDATION_CASES } from "./validation-cases.ts";

const validator = ResourceValidator.load();

describe("ResourceValidator", () => {
  it.each(VALIDATION_CASES.filter((c) => c.field === undefined))("accepts $name", (c) => {
    expect(validator.validate(c.kind, objectFor(c)).issues, c.reason).toEqual([]);
  });

  it.each(VALIDATION_CASES.filter((c) => c.field !== undefined))("rejects $name", (c) => {
    const { issues } = validator.validate(c.kind, objectFor(c));
    expect(issues.length, c.reason).toBeGreaterThan(0);
    expect(issues[0]?.field, c.reason).toBe(c.field);
    if (c.message !== undefined) expect(issues[0]?.message, c.reason).toContain(c.message);
    if (c.notShown !== undefined)
      for (const issue of issues) expect(issue.message, c.reason).not.toContain(c.notShown);
  });

  it("applies the defaults the API server applies, and leaves the input alone", () => {
    const input = objectFor({ name: "", reason: "", kind: "IPPoolAllocations" });
    const before = structuredClone(input);
    const { value, issues } = validator.validate("IPPoolAllocations", input);
    expect(issues).toEqual([]);
    expect(input).toEqual(before);
    // what kube-apiserver v1.36.3 returned for the same object (dryRun)
    expect((value as { spec: unknown }).spec).toEqual({
      allowed: ["10.0.0.1"],
      managementPolicy: "Enforce",
      managerRef: { name: "nsx" },
      pool: { id: "ipaddresspool-1", scope: "globalroot-0" },
      release: { maxPerSync: 10, minStrayAge: "5m" },
    });
  });

  it("prunes null fields before defaulting, keeps a list's null items, and leaves the input alone", () => {
    const input = objectFor({ name: "", reason: "", kind: "IPPoolAllocations" }) as Record<string, unknown>;
    input["metadata"] = { ...(input["metadata"] as object), labels: null };
    const spec = input["spec"] as Record<string, unknown>;
    spec["release"] = null;
    spec["allowed"] = ["10.0.0.1", null];
    const before = structuredClone(input);
    const { value, issues } = validator.validate("IPPoolAllocations", input);
    expect(input, "the input as it was").toEqual(before);
    const metadata = (value as { metadata: object }).metadata;
    expect(Object.hasOwn(metadata, "labels"), "a null field is absent").toBe(false);
    // a null release is pruned, then defaulted like an absent one
    expect((value as { spec: { release: unknown } }).spec.release).toEqual({
      maxPerSync: 10,
      minStrayAge: "5m",
    });
    // a null item is a value of the list, refused by its schema (the API server: must be of type string)
    expect(issues.map((i) => i.field)).toEqual(["spec.allowed[1]"]);
  });

  it("copies a __proto__ key as a key: never the copy's prototype", () => {
    const input = JSON.parse(
      '{"apiVersion":"nsxv.io/v1alpha1","kind":"EdgeTenant","metadata":{"name":"x","__proto__":{"polluted":true}},"spec":{"managerRef":{"name":"nsx"},"edgeId":"edge-1","tenant":"t"}}',
    ) as Record<string, unknown>;
    const { value, issues } = validator.validate("EdgeTenant", input);
    const metadata = (value as { metadata: object }).metadata;
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
    expect(Object.hasOwn(metadata, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(issues).toEqual([]);
  });

  it("fills defaults inside an object it defaulted itself", () => {
    const { value } = validator.validate(
      "NSXManager",
      objectFor({ name: "", reason: "", kind: "NSXManager" }),
    );
    expect((value as { spec: unknown }).spec).toEqual({
      url: "https://nsx.example.com",
      credentialsSecretRef: { name: "nsx-credentials" },
      auth: "Basic",
      tls: { insecureSkipVerify: false },
      maxConcurrentRequests: 8,
      requestsPerSecond: 20,
      requestTimeoutSeconds: 30,
    });
  });

  it("reports every problem of an object, not only the first", () => {
    const { issues } = validator.validate("EdgeTenant", {
      apiVersion: "nsxv.io/v1alpha1",
      kind: "EdgeTenant",
      metadata: { name: "x" },
      spec: { managerRef: {}, edgeId: "edge-x", tenant: "t", syncInterval: "1s", extra: 1 },
    });
    expect(issues.map((i) => i.field).sort()).toEqual([
      "spec.edgeId",
      "spec.extra",
      "spec.managerRef.name",
      "spec.syncInterval",
    ]);
  });

  it("names array items by index and object fields by name", () => {
    expect(fieldOf(["spec", "allowed", 3])).toBe("spec.allowed[3]");
    expect(fieldOf(["status", "conditions", 0, "type"])).toBe("status.conditions[0].type");
  });
});
