/**
 * The `staleList` fault's memory: the paged edge list and `/summary` answer from summaries that
 * lag behind the edges, while a GET of an edge answers what is stored. Frozen (no `lagMs`): every
 * summary as it was when the fault was added, edges added since absent. Lagging (`lagMs`): each
 * edge's newest summary that is at least `lagMs` old by the simulator's clock, never older than
 * when the fault was added; an edge added since appears `lagMs` after it was, and a deleted one
 * disappears `lagMs` after it was deleted (frozen: never).
 */
import type { EdgeListing } from "./edge-summary.ts";

interface Entry {
  atMs: number;
  /** undefined: the edge was deleted */
  listing: EdgeListing | undefined;
}

export class StaleListing {
  readonly #lagMs: number | undefined;
  /** per edge, the newest summary old enough to be shown */
  readonly #shown: Map<string, EdgeListing>;
  /** per edge, newer summaries in the order stored, not yet old enough */
  readonly #pending = new Map<string, Entry[]>();

  constructor(current: readonly EdgeListing[], options: { lagMs?: number }) {
    this.#lagMs = options.lagMs;
    this.#shown = new Map(current.map((l) => [l.id, l]));
  }

  /**
   * hears a version stored (or, with `listing` undefined, the edge deleted) at nowMs; what became
   * old enough moves into view, so pending stays bounded by lagMs of writes
   */
  record(id: string, listing: EdgeListing | undefined, nowMs: number): void {
    if (this.#lagMs === undefined) return;
    const entries = this.#pending.get(id) ?? [];
    entries.push({ atMs: nowMs, listing });
    this.#pending.set(id, entries);
    this.#catchUpOne(id, entries, nowMs - this.#lagMs);
  }

  /** the summaries the list shows at nowMs */
  view(nowMs: number): EdgeListing[] {
    this.#catchUp(nowMs);
    return [...this.#shown.values()];
  }

  get(id: string, nowMs: number): EdgeListing | undefined {
    this.#catchUp(nowMs);
    return this.#shown.get(id);
  }

  #catchUp(nowMs: number): void {
    if (this.#lagMs === undefined) return;
    for (const [id, entries] of this.#pending) this.#catchUpOne(id, entries, nowMs - this.#lagMs);
  }

  /** moves an edge's summaries stored at or before cutoff into view: the newest of them is shown */
  #catchUpOne(id: string, entries: Entry[], cutoff: number): void {
    let due = 0;
    while (due < entries.length && entries[due]!.atMs <= cutoff) due++;
    if (due === 0) return;
    const newest = entries[due - 1]!.listing;
    if (newest === undefined) this.#shown.delete(id);
    else this.#shown.set(id, newest);
    if (due === entries.length) this.#pending.delete(id);
    else entries.splice(0, due);
  }
}
