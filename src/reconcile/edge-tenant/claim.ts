/** What an EdgeTenant claims on its manager (reconcile/conflicts.ts): its edge; two that claim one conflict. */
import type { DependentObject } from "../../api/types.ts";

export function edgeClaim(object: DependentObject): string | undefined {
  if (object.kind !== "EdgeTenant") return undefined;
  return typeof object.spec.edgeId === "string" ? `edge ${object.spec.edgeId}` : undefined;
}
