/**
 * When the safety net reads each edge in full: once per its manager's cycle, at the edge's own
 * phase of it, within a budget of reads a minute per NSXManager.
 *
 * The cycle is fullReadIntervalMs, or longer when the manager's EdgeTenants would take more than
 * fullReadsPerMinute reads a minute at that interval (fullReadCycleMs): the calls a manager gets
 * in steady state stay bounded however many edges it has. So the cycle moves with the number of
 * EdgeTenants, and a schedule counted from a fixed epoch would reshuffle every phase at each
 * move (one object added to 2000 would make about half of them due at once). Instead each
 * manager's schedule counts cycles from this replica's first look, at the speed of its current
 * cycle: a new cycle changes how fast the count goes on from now, never where it stands. An edge
 * falls due when the count passes its phase (φ + n for a whole n), the first such point after its
 * last full read or this replica's first look at it, whichever is later; that point is worked
 * out once per read and kept, so that it stays where it was when the cycle moves. A full read
 * made shortly before the edge's point (a correction's, within STAND_IN_CYCLES of it) stands in
 * for that point's read: the next is the point after.
 */
import { createHash } from "node:crypto";
import type { EdgeTenant } from "../../api/types.ts";
import { objectKey, refOf, type ObjectRef } from "../../api/refs.ts";

/**
 * The safety net's cycle for `edgeTenants` edges of one manager: every edge read in full once per
 * `intervalMs`, unless that takes more than `perMinute` reads a minute: then once per the minutes
 * `perMinute` reads a minute take to go round them all (rounded up). A manager then gets its
 * list's pages (one per 1024 edges per sync interval) and at most `perMinute` full reads a minute
 * in steady state, and one with few edges is still read in full once per interval.
 */
export function fullReadCycleMs(intervalMs: number, perMinute: number, edgeTenants: number): number {
  return Math.max(intervalMs, Math.ceil(edgeTenants / perMinute) * 60_000);
}

/**
 * How close before an edge's point, in cycles, a full read stands in for the point's own: a
 * correction reads its edge in full, and the safety net reading it again minutes later learns
 * nothing (a fleet corrected at once would otherwise get one read more for each edge whose point
 * comes right after). Skipping that point leaves at most 1.05 cycles between two full reads.
 */
export const STAND_IN_CYCLES = 0.05;

/** A manager's count of cycles: `cycles` at `atMs`, going on at one per `cycleMs`. */
interface CycleCount {
  atMs: number;
  cycles: number;
  cycleMs: number;
}

/** When an object's next full read is due, in cycles of its manager, and the read it counts from. */
interface Due {
  manager: string;
  since: { ms: number; fullRead: boolean };
  cycles: number;
}

export class FullReadSchedule {
  /** NSXManager key → its count of cycles */
  readonly #counts = new Map<string, CycleCount>();
  /** EdgeTenant key → its next full read */
  readonly #due = new Map<string, Due>();

  /**
   * When the object's next full read falls due (epoch ms, to the next whole ms): the first point of
   * its `phase` in its manager's cycles after `since.ms` (after STAND_IN_CYCLES more when that was
   * a full read rather than a first look), with the manager's cycle `cycleMs` from `nowMs` on.
   */
  dueAtMs(
    object: ObjectRef,
    at: { manager: ObjectRef; cycleMs: number; phase: number },
    since: { ms: number; fullRead: boolean },
    nowMs: number,
  ): number {
    const manager = objectKey(at.manager);
    const count = this.#countAt(manager, at.cycleMs, nowMs);
    const key = objectKey(object);
    let due = this.#due.get(key);
    if (
      due === undefined ||
      due.since.ms !== since.ms ||
      due.since.fullRead !== since.fullRead ||
      due.manager !== manager
    ) {
      const sinceCycles =
        count.cycles + (since.ms - count.atMs) / count.cycleMs + (since.fullRead ? STAND_IN_CYCLES : 0);
      due = { manager, since, cycles: at.phase + Math.floor(sinceCycles - at.phase) + 1 };
      this.#due.set(key, due);
    }
    return Math.ceil(count.atMs + (due.cycles - count.cycles) * count.cycleMs);
  }

  /** The object is gone: its next read with it. */
  forget(object: ObjectRef): void {
    this.#due.delete(objectKey(object));
  }

  /** The manager's count, going on at `cycleMs` from `nowMs` when its cycle moved. */
  #countAt(manager: string, cycleMs: number, nowMs: number): CycleCount {
    let count = this.#counts.get(manager);
    if (count === undefined) {
      count = { atMs: nowMs, cycles: 0, cycleMs };
      this.#counts.set(manager, count);
    } else if (count.cycleMs !== cycleMs) {
      count = { atMs: nowMs, cycles: count.cycles + (nowMs - count.atMs) / count.cycleMs, cycleMs };
      this.#counts.set(manager, count);
    }
    return count;
  }
}

/** 1/φ: its multiples, taken modulo 1, fall evenly however many are taken (a Weyl sequence) */
const GOLDEN_FRACTION = (Math.sqrt(5) - 1) / 2;

/**
 * A fixed fraction of the cycle per object: when in each cycle its full read is due. From
 * its edge's number (edge-<n>): the fractional part of n/φ, so that a manager's edges, numbered
 * as it creates them, are read evenly spaced over the interval (2000 edges every 4 h: 4 or 5 in any
 * 30 s, where a hash of each name clumps up to 10). An edge number past 2^31 (none a manager
 * gives), by a hash of the object's namespace and name.
 */
export function phaseOf(object: EdgeTenant): number {
  const n = Number(/^edge-(\d{1,10})$/.exec(object.spec?.edgeId ?? "")?.[1] ?? NaN);
  if (n <= 2 ** 31) return (n * GOLDEN_FRACTION) % 1;
  const { namespace, name } = refOf(object);
  const digest = createHash("sha256").update(`${namespace}/${name}`).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}
