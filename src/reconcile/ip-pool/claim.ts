/**
 * What an IPPoolAllocations claims on its manager (reconcile/conflicts.ts): its pool as selected,
 * by id, or by scope and name (a by-name and a by-id selection of one pool meet once the pool list
 * is read: ConflictIndex.poolWinner).
 */
import { SPEC_DEFAULTS, type DependentObject } from "../../api/types.ts";

export function poolClaim(object: DependentObject): string | undefined {
  if (object.kind !== "IPPoolAllocations") return undefined;
  const { id, name, scope = SPEC_DEFAULTS.poolScope } = object.spec.pool ?? {};
  if ((id === undefined) === (name === undefined)) return undefined;
  return id !== undefined ? `pool-id ${id}` : `pool-name ${scope} ${name}`;
}
