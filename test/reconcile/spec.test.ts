import { describe, expect, it } from "vitest";
import { resolveManager } from "../../src/reconcile/spec.ts";
import { manager } from "./nsx-manager/fixtures.ts";

describe("resolveManager", () => {
  it("refuses credentials in the manager URL without echoing them", () => {
    let message = "";
    try {
      resolveManager(manager({ url: "https://admin:hunter2@nsx.example" }));
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/must not carry credentials/);
    expect(message).not.toContain("hunter2");
  });
  it("converts the limits and defaults", () => {
    expect(resolveManager(manager({ requestTimeoutSeconds: 5 }))).toMatchObject({
      requestTimeoutMs: 5000,
      maxConcurrentRequests: 8,
      requestsPerSecond: 20,
      insecureSkipVerify: false,
    });
  });
});
