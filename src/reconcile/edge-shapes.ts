/**
 * The top-level sections of the last read of each edge, for the operator's lifetime: a read that
 * lost sections the previous one had is suspect (a proxy that cut the answer, a manager serving a
 * partial document) and is not trusted to decide a write until a second read agrees.
 */
import { detached } from "../util/detached.ts";

export class EdgeShapes {
  readonly #fields = new Map<string, readonly string[]>();

  /** The sections the previous read of `key` had and `fields` lacks; none when there was no previous read. */
  lost(key: string, fields: readonly string[]): string[] {
    const before = this.#fields.get(key);
    if (before === undefined) return [];
    const now = new Set(fields);
    return before.filter((name) => !now.has(name));
  }

  /** Keeps copies of the names: the ones cut from the document would keep the whole document alive. */
  remember(key: string, fields: readonly string[]): void {
    this.#fields.set(key, fields.map(detached));
  }
}
