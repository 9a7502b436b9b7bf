import { describe, expect, it } from "vitest";
import { resolveEdgeTenant } from "../../../src/reconcile/edge-tenant/spec.ts";
import { edgeTenant } from "./fixtures.ts";

describe("resolveEdgeTenant", () => {
  it("refuses an edge id of the wrong shape", () => {
    expect(() => resolveEdgeTenant(edgeTenant({ edgeId: "edge1" }))).toThrow(/spec.edgeId/);
  });
});
