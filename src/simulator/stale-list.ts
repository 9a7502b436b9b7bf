/**
 * The `staleList` fault's memory: the paged edge list and `/summary` answer from summaries that
 * lag behind the edges, while a GET of an edge answers what is stored. Frozen (no `lagMs`): every
 * summary as it was when the fault was added, edges added since absent. Lagging (`lagMs`): each
 * edge's newest summary that is at least `lagMs` old by the simulator's clock, never older than
 * when the fault was added; an edge added since appears `lagMs` after it was.
 */
import type { EdgeListing } from "./edge-summary.ts";

interface Entry {
  atMs: number;
  listing: EdgeListing;
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

  /** hears a version stored at nowMs */
  record(listing: EdgeListing, nowMs: number): void {
    if (this.#lagMs === undefined) return;
    const entries = this.#pending.get(listing.id);
    if (entries === undefined) this.#pending.set(listing.id, [{ atMs: nowMs, listing }]);
    else entries.push({ atMs: nowMs, listing });
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

  /** moves summaries that became old enough into view; what is shown holds the newest of them */
  #catchUp(nowMs: number): void {
    if (this.#lagMs === undefined) return;
    const cutoff = nowMs - this.#lagMs;
    for (const [id, entries] of this.#pending) {
      let due = 0;
      while (due < entries.length && entries[due]!.atMs <= cutoff) due++;
      if (due === 0) continue;
      this.#shown.set(id, entries[due - 1]!.listing);
      if (due === entries.length) this.#pending.delete(id);
      else entries.splice(0, due);
    }
  }
}
