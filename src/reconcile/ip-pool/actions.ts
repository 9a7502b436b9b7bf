/**
 * The IPPoolAllocations kind's action, and what it does as the rest of the operator sees it
 * (reconcile/effects.ts): one DELETE releases one stray allocation of a pool. Pure data,
 * registered in reconcile/actions.ts.
 */
import type { IPPoolAllocations } from "../../api/types.ts";
import { managerValue } from "../conditions.ts";
import { changeReasons, type ActionEffects, type KindEffects } from "../effects.ts";
import { omitUndefined } from "../../util/options.ts";

/** Release one allocated address of a pool. */
export interface ReleaseAction {
  type: "releaseAddress";
  poolId: string;
  /** canonical text (RFC 5952 for IPv6): what status and events show, and what is compared */
  ip: string;
  /** the text as the manager listed it: what the DELETE path carries */
  managerIp: string;
  /**
   * the allocation's id as the manager listed it: the release is of this allocation, and only
   * while the address still carries it (a re-allocated address is another allocation)
   */
  allocationId?: string;
  note?: string;
  /** RFC 3339; when this allocation was first seen stray */
  firstSeen: string;
}

/**
 * What a release acts on, as a key: one allocation (pool, address, id and note), never the
 * address alone. A planned release is found again in a fresh plan by it, so that after a 409 or
 * a "not allocated" answer the DELETE is sent only while the fresh read lists the same
 * allocation: an address allocated again meanwhile, to a new machine, is another target.
 */
export function releaseTarget(
  release: Pick<ReleaseAction, "poolId" | "ip" | "allocationId" | "note">,
): string {
  return JSON.stringify([release.poolId, release.ip, release.allocationId ?? null, release.note ?? null]);
}

/**
 * The reasons of its Normal events (AllocationReplaced: a planned release's address became another
 * allocation before the DELETE, which was not sent).
 */
export const IP_POOL_REASONS = changeReasons("ReleasedAddress", "AllocationReplaced");

const EFFECTS: ActionEffects<ReleaseAction> = {
  releaseAddress: {
    change: "releases",
    record: ({ poolId, ip, allocationId, note }) => omitUndefined({ poolId, ip, allocationId, note }),
    event: (action) => {
      const note = action.note === undefined ? "" : ` (note ${JSON.stringify(managerValue(action.note))})`;
      return {
        type: "Normal",
        reason: IP_POOL_REASONS.ReleasedAddress,
        message: `released ${action.ip} from pool ${action.poolId}${note}`,
      };
    },
    target: releaseTarget,
    cli: ({ ip, note, firstSeen }) => ({
      sign: "-",
      subject: [ip, "  ", note === undefined ? { dim: "(no note)" } : "note ", ...noteText(note)],
      plannedVerb: "release",
      age: { what: "stray", since: firstSeen },
      done: "released",
      observed: "(observe only: would release)",
      notDone: "not released",
    }),
    edgeFields: [],
  },
};

function noteText(note: string | undefined): { quoted: string }[] {
  return note === undefined ? [] : [{ quoted: note }];
}

export const IP_POOL_EFFECTS: KindEffects<ReleaseAction, "releases", IPPoolAllocations> = {
  kind: "IPPoolAllocations",
  actions: EFFECTS,
  changeLists: {
    releases: {
      metric: { name: "nsxv_ip_releases_total", help: "Stray IP allocations the operator released" },
      noun: "release",
      hint: "Strays are released only by apply --release-strays: one pass cannot observe minStrayAge.",
    },
  },
  changeReasons: Object.values(IP_POOL_REASONS),
  view: {
    target: (object, status) => {
      if (status?.poolId !== undefined) return `${status.poolId} (${status.poolName ?? "?"})`;
      const { id, name } = object.spec.pool;
      return id ?? `pool named ${JSON.stringify(name)}`;
    },
    claimed: (object) => {
      const { id, name } = object.spec.pool;
      return id === undefined ? `the pool named ${JSON.stringify(name)}` : `pool ${id}`;
    },
  },
};
