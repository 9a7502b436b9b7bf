/**
 * The IPPoolAllocations planner, pure: from the resolved spec, the pool and its allocations as
 * read, the previous status and `now`, decide which stray addresses (allocated, not in
 * spec.allowed) to release and what status follows. Releasing is the one destructive thing this
 * project does, so the rules are narrow: a stray is released only after it has been stray for
 * minStrayAge (the clock lives in status, so a restart does not reset it), at most maxPerSync per
 * pass, oldest first, never while writes are blocked (the desired state is uncertain), never an address the
 * spec allows (checked here and again by `assertReleasable` at the moment of the call), never an
 * address whose text cannot be parsed (that one address is left alone; the others are decided as
 * usual).
 */
import type { AddressSet } from "../../api/address-set.ts";
import { formatDuration } from "../../api/duration.ts";
import { SPEC_DEFAULTS, type IPPoolAllocationsStatus, type StrayAddress } from "../../api/types.ts";
import { formatIp, tryParseIp, type IpAddress } from "../../util/ip.ts";
import type { Allocation, IpPool } from "../../nsx/types.ts";
import {
  failureUpdates,
  findCondition,
  managerValue,
  setConditions,
  syncedUpdates,
  type ConditionUpdate,
  type Failure,
  type ReconcileEvent,
} from "../conditions.ts";
import { formatTime } from "../../util/clock.ts";
import { ReconcileError } from "../errors.ts";
import type { ActionResults, KindPlan, Settled } from "../kind.ts";
import { omitUndefined } from "../../util/options.ts";
import type { DroppedAction, Withheld } from "../plan.ts";
import { IP_POOL_REASONS, releaseTarget, type ReleaseAction } from "./actions.ts";

export { releaseTarget };
import { allows } from "../policy.ts";
import type { PoolConfig } from "./spec.ts";

export interface PoolObservation {
  pool: IpPool;
  allocations: readonly Allocation[];
}

export interface IpPoolPlanInput {
  config: PoolConfig;
  observed: PoolObservation;
  previous: IPPoolAllocationsStatus | undefined;
  now: Date;
  /** metadata.generation of the object */
  generation: number | undefined;
  /**
   * Why every write is blocked, when it is: the desired state is uncertain (a manifest that does
   * not load, a pool owner not decided). Nothing is released, and Synced says why.
   */
  writesBlockedBy?: Failure | undefined;
  /**
   * A one-shot run (the CLI's `apply`) cannot wait out minStrayAge: it releases only when
   * `releaseStrays` is true, then without grace period, still capped by maxPerSync.
   */
  oneShot?: { releaseStrays: boolean } | undefined;
}

/** Strays due but held back by maxPerSync are looked at again after this long (the syncInterval floor). */
export const CAPPED_REQUEUE_MS = SPEC_DEFAULTS.minSyncIntervalSeconds * 1000;

interface Stray {
  /** canonical text, or the manager's text when it is not an address */
  key: string;
  managerIp: string;
  parsed: IpAddress | undefined;
  /** the allocation's id; undefined when the manager lists none */
  allocationId?: string | undefined;
  note?: string | undefined;
  firstSeen: string;
  firstSeenMs: number;
}

interface Decisions {
  config: PoolConfig;
  /** unique allocated addresses */
  allocated: Map<string, { parsed: IpAddress | undefined }>;
  /** oldest first, then by address */
  strays: Stray[];
  actions: ReleaseAction[];
  withheld: Withheld<ReleaseAction>[];
  /** strays this operator will release in a later pass on its own */
  pending: Set<string>;
  requeueAfterMs: number | undefined;
}

export function planIpPool(input: IpPoolPlanInput): KindPlan<ReleaseAction> {
  const decisions = decide(input);
  const { actions, withheld, requeueAfterMs } = decisions;
  return {
    actions,
    withheld,
    requeueAfterMs,
    settle: (results, failure) => settle(input, decisions, results, failure),
  };
}

/** The last guard before a DELETE: throws unless the address is parsable, consistent and not allowed. */
export function assertReleasable(allowed: AddressSet, action: ReleaseAction): void {
  const parsed = tryParseIp(action.managerIp);
  const refuse = (why: string): never => {
    throw new ReconcileError({
      reason: "ReconcileError",
      message: `refusing to release ${action.managerIp}: ${why}`,
    });
  };
  if (parsed === undefined) refuse("not an IP address");
  else if (formatIp(parsed) !== action.ip) refuse(`it is not the planned address ${action.ip}`);
  if (allowed.has(action.ip) || allowed.has(action.managerIp)) refuse("spec.allowed allows it");
}

/**
 * Unique allocated addresses, and the strays among them (oldest first) with their firstSeen. A
 * stray keeps the firstSeen of the previous pass only while it is the same allocation (same id,
 * same note): NSX-v hands out the lowest free address, so an address released by someone else is
 * soon allocated again, and that new allocation's grace period starts when it is first seen.
 */
function findStrays(input: IpPoolPlanInput, config: PoolConfig): Pick<Decisions, "allocated" | "strays"> {
  const allocated = new Map<string, { parsed: IpAddress | undefined }>();
  const seen = previousStrays(input.previous);
  const strays: Stray[] = [];
  for (const allocation of input.observed.allocations) {
    const parsed = tryParseIp(allocation.ipAddress);
    // an address that does not parse is shown (and recorded) as the manager wrote it, cut
    const key = parsed === undefined ? managerValue(allocation.ipAddress) : formatIp(parsed);
    if (allocated.has(key)) continue;
    allocated.set(key, { parsed });
    if (parsed !== undefined && config.allowed.has(key)) continue;
    const identity = allocationIdentity(allocation);
    const previous = seen.get(key);
    const same = previous !== undefined && sameAllocation(previous, identity);
    const firstSeen = same ? previous.firstSeen : formatTime(input.now);
    const firstSeenMs = Date.parse(firstSeen);
    strays.push({ key, managerIp: allocation.ipAddress, parsed, ...identity, firstSeen, firstSeenMs });
  }
  return { allocated, strays: strays.sort(oldestFirst) };
}

/** What tells one allocation of an address from the next: its id, and its note as a second witness. */
export interface AllocationIdentity {
  allocationId?: string | undefined;
  note?: string | undefined;
}

/**
 * The identity of a listed allocation; an empty id or note counts as none. Each is cut as status
 * keeps it (managerValue): what a pass compares is what the previous one recorded.
 */
export function allocationIdentity(allocation: Allocation): AllocationIdentity {
  const id = allocation.id.trim();
  const note = allocation.allocationNote;
  return {
    allocationId: id === "" ? undefined : managerValue(id),
    note: note === undefined || note === "" ? undefined : managerValue(note),
  };
}

/**
 * True when both name the same allocation. An entry recorded without an id (a status written
 * before ids were recorded) matches nothing: its grace period starts anew rather than being
 * lent to whatever allocation holds the address now.
 */
export function sameAllocation(recorded: AllocationIdentity, listed: AllocationIdentity): boolean {
  if (recorded.allocationId === undefined && listed.allocationId !== undefined) return false;
  return recorded.allocationId === listed.allocationId && recorded.note === listed.note;
}

function decide(input: IpPoolPlanInput): Decisions {
  const { config } = input;
  const { allocated, strays } = findStrays(input, config);

  const releasing = allows(config.policy, "releaseAddress");
  const decisions: Decisions = {
    config,
    allocated,
    strays,
    actions: [],
    withheld: [],
    pending: new Set(),
    requeueAfterMs: undefined,
  };
  let counted = 0;
  for (const stray of strays) {
    const action = toAction(input.observed.pool.objectId, stray);
    const hold = heldBack(input, stray, counted);
    if (hold === undefined) counted++;
    const why = hold?.why ?? releaseWithheld(input, releasing);
    if (why === undefined) {
      assertReleasable(config.allowed, action);
      decisions.actions.push(action);
      continue;
    }
    decisions.withheld.push({ action, why });
    if (!releasing || hold === undefined) continue;
    if (hold.pending) decisions.pending.add(stray.key);
    if (hold.retryInMs !== undefined)
      decisions.requeueAfterMs = Math.min(decisions.requeueAfterMs ?? Infinity, hold.retryInMs);
  }
  return decisions;
}

/** Why a stray waits: said in the withheld list; pending (a release on its way) and when to come back, for a policy that releases. */
interface Hold {
  why: string;
  pending?: boolean;
  retryInMs?: number;
}

/**
 * Why a stray is not released this pass, whatever the policy, asked in order; undefined when it
 * is released (and counts against maxPerSync) unless the policy or a block on writes withholds it.
 */
function heldBack(input: IpPoolPlanInput, stray: Stray, counted: number): Hold | undefined {
  const { config, oneShot } = input;
  if (stray.parsed === undefined) return { why: "never released: the manager's text is not an IP address" };
  if (config.maxPerSync === 0) return { why: "never released: spec.release.maxPerSync is 0" };
  if (oneShot !== undefined && !oneShot.releaseStrays)
    return { why: "held back: rerun with --release-strays (one pass cannot wait out minStrayAge)" };
  const nowMs = input.now.getTime();
  const dueAtMs = stray.firstSeenMs + config.minStrayAgeMs;
  if (oneShot === undefined && nowMs < dueAtMs) {
    const why = `held back: stray since ${stray.firstSeen}, due at ${formatTime(dueAtMs)} (minStrayAge ${formatDuration(config.minStrayAgeMs)})`;
    return { why, pending: true, retryInMs: dueAtMs - nowMs };
  }
  if (counted >= config.maxPerSync) {
    const why = `held back: spec.release.maxPerSync ${config.maxPerSync} reached this pass`;
    // due now: the next pass comes soon rather than after the whole sync interval
    return { why, pending: true, ...(oneShot === undefined ? { retryInMs: CAPPED_REQUEUE_MS } : {}) };
  }
  return undefined;
}

/** Why a stray due for release is not released: the policy releases nothing, or writes are blocked. */
function releaseWithheld(input: IpPoolPlanInput, releasing: boolean): string | undefined {
  if (!releasing) return `would release: managementPolicy ${input.config.policy} changes nothing`;
  if (input.writesBlockedBy !== undefined) return `held: ${input.writesBlockedBy.message}`;
  return undefined;
}

/**
 * The status once `results` came of the actions. Addresses are counted from this plan's
 * observation: after a fresh list (a 409 mid-pass), those released earlier in the pass are no
 * longer in it, and a planned address that became another allocation is a new stray here.
 */
function settle(
  input: IpPoolPlanInput,
  decisions: Decisions,
  results: ActionResults<ReleaseAction>,
  failure: Failure | undefined,
): Settled {
  const { observed, previous, now, generation } = input;
  const { pool } = observed;
  const done = new Set(results.done.map((a) => a.ip));
  const remaining = decisions.strays.filter((s) => !done.has(s.key));
  // an action not carried out (a failed release) is left for the next pass
  const pending = remaining.some(
    (s) => decisions.pending.has(s.key) || decisions.actions.some((a) => a.ip === s.key),
  );
  const used = [...decisions.allocated.keys()].filter((key) => !done.has(key)).length;
  const exhausted = pool.totalAddressCount > 0 && used >= pool.totalAddressCount;
  const synced = failure !== undefined ? failureUpdates(failure) : syncedUpdates(input.writesBlockedBy);
  // synced first: it drops Reconciling, which the strays may set again
  const updates: ConditionUpdate[] = [
    ...synced,
    ...strayUpdates(remaining, used, pending && failure === undefined, pending),
    exhaustionUpdate(pool, used, exhausted),
  ];
  const dropped = droppedWhy(results.dropped, decisions.strays);
  const events: ReconcileEvent[] = dropped
    .filter((d) => d.heldBack)
    .map((d) => ({ type: "Normal", reason: IP_POOL_REASONS.AllocationReplaced, message: d.why }));
  if (exhausted && findCondition(previous?.conditions, "PoolExhausted")?.status !== "True") {
    const message = `pool ${pool.objectId} (${pool.name}): all ${pool.totalAddressCount} addresses are allocated`;
    events.push({ type: "Warning", reason: "PoolExhausted", message });
  }
  const status: IPPoolAllocationsStatus = omitUndefined({
    observedGeneration: generation,
    poolId: pool.objectId,
    poolName: managerValue(pool.name),
    totalAddressCount: pool.totalAddressCount,
    usedAddressCount: used,
    strayCount: remaining.length,
    stray: remaining.map((s): StrayAddress =>
      omitUndefined({ ip: s.key, allocationId: s.allocationId, note: s.note, firstSeen: s.firstSeen }),
    ),
    missing: missing(decisions, pool),
    released: [
      ...(previous?.released ?? []),
      ...results.done.map((a) => omitUndefined({ ip: a.ip, note: a.note, time: formatTime(now) })),
    ].slice(-SPEC_DEFAULTS.releasedHistory),
    conditions: setConditions(previous?.conditions, updates, { now, generation }),
  });
  const usage = { poolId: pool.objectId, usedAddressCount: used, totalAddressCount: pool.totalAddressCount };
  return { status, events, pool: { ...usage, strays: remaining.length }, dropped };
}

/**
 * Why each planned release a fresh list dropped was not made: the address is gone from the list
 * (released by someone else: done, in effect), or another allocation holds it now (held back: a
 * new stray, with a grace period of its own, that the next pass decides about).
 */
function droppedWhy(
  dropped: readonly ReleaseAction[],
  strays: readonly Stray[],
): DroppedAction<ReleaseAction>[] {
  return dropped.map((action) => {
    const now = strays.find((s) => s.key === action.ip);
    if (now === undefined || sameAllocation(action, now))
      return {
        action,
        why: "not needed: a fresh list no longer shows it (released by someone else)",
        heldBack: false,
      };
    const why = `${action.ip} of pool ${action.poolId} was not released: the manager now lists another allocation there (${describeAllocation(now)}) than the one planned (${describeAllocation(action)}); it is a new stray, whose grace period starts anew`;
    return { action, why, heldBack: true };
  });
}

function describeAllocation({ allocationId, note }: AllocationIdentity): string {
  const id = allocationId === undefined ? "no id" : `id ${allocationId}`;
  return note === undefined ? id : `${id}, note ${JSON.stringify(note)}`;
}

/**
 * Ready and Reconciling from the strays left: in sync without any; ReleasesPending while this
 * operator will release them later (Reconciling=True unless the pass failed); Drifted otherwise.
 */
function strayUpdates(
  remaining: readonly Stray[],
  used: number,
  reconciling: boolean,
  pending: boolean,
): ConditionUpdate[] {
  const text = describeStrays(remaining);
  const ready: ConditionUpdate =
    remaining.length === 0
      ? {
          type: "Ready",
          status: "True",
          reason: "InSync",
          message: `${used} allocated, all allowed by spec.allowed`,
        }
      : pending
        ? { type: "Ready", status: "False", reason: "ReleasesPending", message: `${text}: to be released` }
        : { type: "Ready", status: "False", reason: "Drifted", message: `${text}: not released` };
  const progress: ConditionUpdate = reconciling
    ? { type: "Reconciling", status: "True", reason: "ReleasesPending", message: `${text}: to be released` }
    : { type: "Reconciling", remove: true };
  return [ready, progress];
}

function exhaustionUpdate(pool: IpPool, used: number, exhausted: boolean): ConditionUpdate {
  const total = pool.totalAddressCount;
  return exhausted
    ? {
        type: "PoolExhausted",
        status: "True",
        reason: "PoolExhausted",
        message: `all ${total} addresses are allocated`,
      }
    : {
        type: "PoolExhausted",
        status: "False",
        reason: "AddressesAvailable",
        message: `${total - used} of ${total} addresses free`,
      };
}

/** The previous pass's strays (identity and firstSeen) by canonical address; unreadable entries start anew */
function previousStrays(
  previous: IPPoolAllocationsStatus | undefined,
): Map<string, AllocationIdentity & { firstSeen: string }> {
  const seen = new Map<string, AllocationIdentity & { firstSeen: string }>();
  for (const stray of previous?.stray ?? []) {
    if (typeof stray.firstSeen !== "string" || !Number.isFinite(Date.parse(stray.firstSeen))) continue;
    const parsed = tryParseIp(stray.ip);
    seen.set(parsed === undefined ? stray.ip : formatIp(parsed), {
      allocationId: typeof stray.allocationId === "string" ? stray.allocationId : undefined,
      note: typeof stray.note === "string" ? stray.note : undefined,
      firstSeen: stray.firstSeen,
    });
  }
  return seen;
}

/** allowed addresses inside the pool's ranges that are not allocated */
function missing(decisions: Decisions, pool: IpPool): number {
  const ranges = pool.ranges.flatMap((r) => {
    const start = tryParseIp(r.startAddress);
    const end = tryParseIp(r.endAddress);
    return start !== undefined && end !== undefined && start.family === end.family ? [{ start, end }] : [];
  });
  let allocatedAllowed = 0n;
  for (const [key, { parsed }] of decisions.allocated) {
    if (parsed === undefined || !decisions.config.allowed.has(key)) continue;
    const inside = ranges.some(
      (r) => r.start.family === parsed.family && r.start.value <= parsed.value && parsed.value <= r.end.value,
    );
    if (inside) allocatedAllowed++;
  }
  const count = decisions.config.allowed.countIn(pool.ranges) - allocatedAllowed;
  if (count <= 0n) return 0;
  return count > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(count);
}

function toAction(poolId: string, stray: Stray): ReleaseAction {
  return omitUndefined({
    type: "releaseAddress",
    poolId,
    ip: stray.key,
    managerIp: stray.managerIp,
    allocationId: stray.allocationId,
    note: stray.note,
    firstSeen: stray.firstSeen,
  });
}

function oldestFirst(a: Stray, b: Stray): number {
  if (a.firstSeenMs !== b.firstSeenMs) return a.firstSeenMs - b.firstSeenMs;
  if (a.parsed === undefined || b.parsed === undefined) {
    if (a.parsed !== b.parsed) return a.parsed === undefined ? 1 : -1;
    return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
  }
  if (a.parsed.family !== b.parsed.family) return a.parsed.family - b.parsed.family;
  return a.parsed.value < b.parsed.value ? -1 : a.parsed.value > b.parsed.value ? 1 : 0;
}

const LISTED = 5;

function describeStrays(strays: readonly Stray[]): string {
  const shown = strays.slice(0, LISTED).map((s) => (s.note === undefined ? s.key : `${s.key} (${s.note})`));
  const more = strays.length > LISTED ? ` and ${strays.length - LISTED} more` : "";
  const unreadable = strays.filter((s) => s.parsed === undefined).map((s) => JSON.stringify(s.key));
  const never =
    unreadable.length === 0
      ? ""
      : ` (${unreadable.slice(0, LISTED).join(", ")} ${unreadable.length === 1 ? "is" : "are"} not an IP address: never released; the other strays are released as usual)`;
  return `${strays.length} stray address${strays.length === 1 ? "" : "es"}: ${shown.join(", ")}${more}${never}`;
}
