/**
 * The IPPoolAllocations kind's part of its NSXManager's check (reconcile/manager-check.ts): a
 * fresh list of the pools of the global scope, which its objects then share; also the check
 * itself when no other part's read answered it.
 */
import { SPEC_DEFAULTS } from "../../api/types.ts";
import { managerValue } from "../conditions.ts";
import type { ManagerCheckPart } from "../manager-check.ts";
import { poolClaim } from "./claim.ts";
import { POOL_STATE } from "./state.ts";

export const poolCheck: ManagerCheckPart = {
  kind: "IPPoolAllocations",
  claim: poolClaim,
  answersCheck: true,
  async observe(dependents, { connection }, ctx, asCheck) {
    if (dependents.length === 0 && !asCheck) return { answered: false, verdict: () => ({}) };
    const pools = await ctx.state.of(POOL_STATE).refreshPoolList(connection, SPEC_DEFAULTS.poolScope);
    const vsmUuid = pools.find((p) => p.vsmUuid !== undefined)?.vsmUuid;
    const count = `${pools.length} pool${pools.length === 1 ? "" : "s"} in ${SPEC_DEFAULTS.poolScope}`;
    return {
      answered: true,
      vsmUuid: vsmUuid === undefined ? undefined : managerValue(vsmUuid),
      verdict: () => ({ seen: [count] }),
    };
  },
};
