/**
 * An EdgeTenant's spec, checked and defaulted into what its planner and its handler use (the
 * shared fields of a dependent by spec.ts). What a check finds is a terminal InvalidSpec error
 * naming the field.
 */
import { SPEC_DEFAULTS, type DeletionPolicy, type EdgeTenant } from "../../api/types.ts";
import { isEdgeId } from "../../nsx/ids.ts";
import { ReconcileError } from "../errors.ts";
import { resolveDependent, type DependentConfig } from "../spec.ts";

export interface EdgeTenantConfig extends DependentConfig {
  edgeId: string;
  tenant: string;
  deletionPolicy: DeletionPolicy;
}

export function resolveEdgeTenant(object: EdgeTenant): EdgeTenantConfig {
  const { spec } = object;
  if (!isEdgeId(spec.edgeId)) {
    throw ReconcileError.invalidSpec(`spec.edgeId: ${JSON.stringify(spec.edgeId)} is not edge-<n>`);
  }
  if (typeof spec.tenant !== "string") throw ReconcileError.invalidSpec("spec.tenant: must be a string");
  const deletionPolicy = spec.deletionPolicy ?? SPEC_DEFAULTS.deletionPolicy;
  if (deletionPolicy !== "Orphan" && deletionPolicy !== "Restore") {
    throw ReconcileError.invalidSpec(
      `spec.deletionPolicy: ${JSON.stringify(deletionPolicy)} is not Orphan or Restore`,
    );
  }
  return { ...resolveDependent(object), edgeId: spec.edgeId, tenant: spec.tenant, deletionPolicy };
}
