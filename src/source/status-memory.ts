/**
 * The directory source's memory of each object: the generation it gave the object (raised when
 * the spec changes), the spec it last saw, the status the operator last wrote, and its
 * finalizers (with which an object removed from the files stays, being deleted, until the
 * operator has acted on it: as Kubernetes keeps an object with finalizers). With a file,
 * it survives restarts, so that a stray's firstSeen (and so its grace period) does too. The file
 * is written whole, atomically and durably (util/replace-file.ts: a crash or a power loss leaves
 * the old file or the new, and a symlink planted beside it redirects nothing), one write at a
 * time, and changes made while one waits ride with it: thousands of status changes in a pass
 * are a few writes. One process at a time owns the file (status-lock.ts). A file that cannot be read is set aside and the memory starts empty: every stray's
 * grace period then starts anew, which holds releases back rather than guess.
 */
import { mkdir, readFile, rename } from "node:fs/promises";
import { dirname } from "node:path";
import type { Logger } from "../controller/controller.ts";
import { removeLeftovers, replaceFile } from "../util/replace-file.ts";
import type { Status } from "./source.ts";

/** What is remembered of one object (by its queue key). */
export interface Remembered {
  generation: number;
  /** JSON of the spec the generation was given for */
  spec: string;
  status?: Status;
  /** finalizers the operator set: an object removed from the files while it has any is deleted, not gone */
  finalizers?: string[];
  /** RFC 3339: when the object left the files while holding finalizers (its deletionTimestamp) */
  deletedAt?: string;
  /** the object's annotations as last read (a pause, a skip-restore): what a deleting object still says */
  annotations?: Record<string, string>;
  /**
   * the file the object was last read from: after a restart, an object the files no longer hold
   * is removed once this file has stayed unchanged for the quiet period (absent in status files
   * written before it was kept: the directory is watched instead)
   */
  file?: string;
  /** why the status this object had may have been lost: it was in the files when the status file was set aside */
  statusLost?: string;
}

interface StatusFile {
  version: 1;
  objects: Record<string, Remembered>;
}

export class StatusMemory {
  readonly objects = new Map<string, Remembered>();
  readonly #file: string | undefined;
  readonly #logger: Logger;
  /** set when the file could not be read and was set aside: what every object's status lost, and when */
  lost: string | undefined;
  /** a write is queued and has not started: it will carry later changes too */
  #queued = false;
  #writes: Promise<void> = Promise.resolve();
  /** #writes, failures swallowed: what the next write waits for */
  #settled: Promise<void> = Promise.resolve();

  /** `file`: an absolute path, or undefined for memory only */
  constructor(file: string | undefined, logger: Logger) {
    this.#file = file;
    this.#logger = logger;
  }

  /** Reads the file, if any; an unreadable one is moved aside (`<file>.unreadable`) and logged. */
  async read(): Promise<void> {
    const file = this.#file;
    if (file === undefined) return;
    // the temporary files of writes a crash cut short
    await removeLeftovers(file);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    let objects: Record<string, Remembered>;
    try {
      const parsed = JSON.parse(text) as Partial<StatusFile> | null;
      if (typeof parsed?.objects !== "object" || parsed.objects === null) throw new Error("no `objects` map");
      objects = parsed.objects;
    } catch (error) {
      const aside = `${file}.unreadable`;
      this.#logger.error(
        { file, movedTo: aside, error: (error as Error).message },
        "the status file cannot be read; starting without it: strays' grace periods start anew, and the original tenants remembered for deletionPolicy Restore are lost (each EdgeTenant says so)",
      );
      await rename(file, aside).catch(() => undefined);
      this.lost = `the status file ${file} could not be read at ${new Date().toISOString()} and was set aside as ${aside}`;
      return;
    }
    for (const [key, remembered] of Object.entries(objects)) this.objects.set(key, remembered);
  }

  /**
   * Writes the file soon; resolves once a write that includes every change made so far is done,
   * and rejects when that write failed (the change is then not durable: a caller that must not
   * act on an unrecorded change, like a first correction, does not act).
   */
  persist(): Promise<void> {
    const file = this.#file;
    if (file === undefined) return Promise.resolve();
    if (this.#queued) return this.#writes;
    this.#queued = true;
    const write = this.#settled.then(async () => {
      this.#queued = false;
      const content: StatusFile = { version: 1, objects: Object.fromEntries(this.objects) };
      try {
        await mkdir(dirname(file), { recursive: true });
        await replaceFile(file, `${JSON.stringify(content)}\n`);
      } catch (err) {
        this.#logger.error({ err, file }, "cannot write the status file");
        throw new Error(`cannot write the status file ${file}: ${(err as Error).message}`, { cause: err });
      }
    });
    this.#writes = write;
    // the next write starts after this one, whether it failed or not
    this.#settled = write.catch(() => undefined);
    return write;
  }

  /** Resolves when the writes started so far are done, failed or not. */
  flushed(): Promise<void> {
    return this.#settled;
  }
}
