/**
 * An IPPoolAllocations' spec, checked and defaulted into what its planner and its handler use
 * (the shared fields of a dependent by spec.ts). What a check finds is a terminal InvalidSpec
 * error naming the field.
 */
import { AddressSet, AddressSetError } from "../../api/address-set.ts";
import { SPEC_DEFAULTS, type IPPoolAllocations } from "../../api/types.ts";
import { isPoolId } from "../../nsx/ids.ts";
import { ReconcileError } from "../errors.ts";
import { resolveDependent, specDuration, type DependentConfig } from "../spec.ts";

export interface PoolSelection {
  id?: string;
  name?: string;
  scope: string;
}

export interface PoolConfig extends DependentConfig {
  pool: PoolSelection;
  allowed: AddressSet;
  minStrayAgeMs: number;
  /** 0 = never release */
  maxPerSync: number;
}

export function resolvePool(object: IPPoolAllocations): PoolConfig {
  const { spec } = object;
  const pool = poolOf(spec.pool);
  const allowed = allowedOf(spec.allowed);
  const maxPerSync = spec.release?.maxPerSync ?? SPEC_DEFAULTS.maxPerSync;
  if (!Number.isSafeInteger(maxPerSync) || maxPerSync < 0) {
    throw ReconcileError.invalidSpec(`spec.release.maxPerSync: ${String(maxPerSync)} is not an integer >= 0`);
  }
  return {
    ...resolveDependent(object),
    pool,
    allowed,
    minStrayAgeMs: specDuration(
      "spec.release.minStrayAge",
      spec.release?.minStrayAge ?? SPEC_DEFAULTS.minStrayAge,
    ),
    maxPerSync,
  };
}

/** spec.pool: an id (ipaddresspool-<n>) or a non-empty name, not both, and its scope. */
function poolOf(spec: IPPoolAllocations["spec"]["pool"] | undefined): PoolConfig["pool"] {
  const { id, name, scope = SPEC_DEFAULTS.poolScope } = spec ?? {};
  if ((id === undefined) === (name === undefined)) {
    throw ReconcileError.invalidSpec("spec.pool: set exactly one of id and name");
  }
  if (id !== undefined && !isPoolId(id)) {
    throw ReconcileError.invalidSpec(`spec.pool.id: ${JSON.stringify(id)} is not ipaddresspool-<n>`);
  }
  if (name === "") throw ReconcileError.invalidSpec("spec.pool.name: must not be empty");
  return { ...(id !== undefined ? { id } : { name }), scope };
}

/** spec.allowed: a list of addresses and ranges. */
function allowedOf(allowed: unknown): AddressSet {
  if (!Array.isArray(allowed)) throw ReconcileError.invalidSpec("spec.allowed: must be a list");
  try {
    return AddressSet.parse(allowed);
  } catch (error) {
    if (error instanceof AddressSetError) throw ReconcileError.invalidSpec(error.message, error);
    throw error;
  }
}
