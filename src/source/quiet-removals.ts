/**
 * When an entry that a read of the manifests did not find is removed: only once its absence has
 * lasted. Generators write by truncating first (kustomize build or helm template redirected
 * into the file, `git stash pop`, a CI step that removes and re-creates), so a file seen empty,
 * shorter or gone is "not known yet", never a delete: removing an EdgeTenant runs its
 * deletionPolicy Restore. An entry missing from a read is kept as last read until the file it
 * was last read from has stayed unchanged for the quiet period, counted from the read that first
 * missed it and started again by every change to the file, and a read after that still misses it.
 * A file counts as changed when its fingerprint (device, inode, size, modification and change
 * times, "absent" when gone; through symlinks) differs: a rename over it, a truncation, a write,
 * a move out or back. Only removals wait: what a read finds is taken at once.
 */
import { stat } from "node:fs/promises";

/** What the entries carry: the file each was last read from. */
export interface Located {
  file: string;
}

interface Missing<E> {
  /** the entry as last read; none for an object known only from the status file (a restart) */
  entry: E | undefined;
  file: string;
  fingerprint: string;
  /** when the file's absence of the entry started to count (clock ms) */
  since: number;
}

export class QuietRemovals<E extends Located> {
  readonly #quietMs: number;
  readonly #missing = new Map<string, Missing<E>>();

  constructor(quietMs: number) {
    this.#quietMs = quietMs;
  }

  /**
   * Counts `key`, which no read has found yet, as missing from `file`: an object the status file
   * remembers, at the first read after a restart. It is let go as any other missing entry.
   */
  expect(key: string, file: string): void {
    if (!this.#missing.has(key))
      this.#missing.set(key, { entry: undefined, file, fingerprint: "", since: NaN });
  }

  /** whether `key` is missing and not let go yet */
  isMissing(key: string): boolean {
    return this.#missing.has(key);
  }

  /** the keys missing and not let go yet */
  missing(): string[] {
    return [...this.#missing.keys()];
  }

  /**
   * After a read that covered the files `covered` says: `found` holds what it found, with the
   * entries of the files it did not read. Each entry of `before` that `found` lacks, and each key
   * expected whose file the read covered, is put back into `found`, unless its absence has
   * lasted the quiet period: those keys are returned, let go.
   */
  async settle(
    before: ReadonlyMap<string, E>,
    found: Map<string, E>,
    read: {
      covered: (file: string) => boolean;
      fingerprint: (file: string) => Promise<string>;
      now: () => number;
    },
  ): Promise<string[]> {
    const absent = this.#absent(before, found, read.covered);
    const prints = new Map<string, string>();
    for (const key of absent) {
      const file = this.#fileOf(key, before);
      if (!prints.has(file)) prints.set(file, await read.fingerprint(file));
    }
    const at = read.now();
    const gone: string[] = [];
    for (const key of absent) {
      const missing = this.#missing.get(key);
      const entry = before.get(key) ?? missing?.entry;
      const file = this.#fileOf(key, before);
      const print = prints.get(file)!;
      if (missing === undefined || missing.fingerprint !== print) {
        // newly missing, or its file changed since: the quiet period starts (again) now
        this.#missing.set(key, { entry, file, fingerprint: print, since: at });
      } else if (at - missing.since >= this.#quietMs) {
        this.#missing.delete(key);
        gone.push(key);
        continue;
      }
      if (entry !== undefined) found.set(key, entry);
    }
    return gone;
  }

  /** The keys the read did not find; forgets those it found again. */
  #absent(
    before: ReadonlyMap<string, E>,
    found: Map<string, E>,
    covered: (file: string) => boolean,
  ): string[] {
    const absent = [...before.keys()].filter((key) => !found.has(key));
    for (const [key, missing] of this.#missing) {
      const entry = found.get(key);
      // found again, in a file this read covered (an entry kept from a file not read proves nothing)
      if (entry !== undefined && covered(entry.file)) this.#missing.delete(key);
      else if (entry === undefined && !before.has(key) && covered(missing.file)) absent.push(key);
    }
    return absent;
  }

  #fileOf(key: string, before: ReadonlyMap<string, E>): string {
    return this.#missing.get(key)?.file ?? before.get(key)!.file;
  }

  /** when the next missing entry may be let go (clock ms), if any is missing */
  nextDue(): number | undefined {
    let due: number | undefined;
    for (const { since } of this.#missing.values()) {
      const at = since + this.#quietMs;
      if (!Number.isNaN(at) && (due === undefined || at < due)) due = at;
    }
    return due;
  }

  /** the files the missing entries were last read from: what the read that lets them go reads */
  files(): string[] {
    return [...new Set([...this.#missing.values()].map((m) => m.file))];
  }
}

/** What identifies a file's content without reading it; "absent" when there is none. */
export async function fileFingerprint(path: string): Promise<string> {
  try {
    const s = await stat(path, { bigint: true });
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return "absent";
  }
}
