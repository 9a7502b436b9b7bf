/**
 * One operator per status file. Two `run --manifests` on one `--status-file` both acted and the
 * last writer won: edges written twice, and remembered original tenants lost (those edges were
 * never restored). So the file is held with a lock file beside it, `<status-file>.lock`, created
 * exclusively and naming its holder: host, pid, and on Linux the kernel's boot id, the pid
 * namespace and the process's start time. A second process refuses to start while the holder
 * lives (StatusFileLockedError: the file and the holder), and takes the lock over when it does
 * not, so a lock left by a `kill -9` never blocks a restart:
 * - on the same machine and pid namespace, the holder lives while a process with its pid and
 *   its start time does (a pid reused after a reboot or a container restart is not the holder);
 * - elsewhere (another host sharing the volume, another container), the holder lives while it
 *   refreshes the lock file, every `refreshMs`; one not refreshed for `staleMs` is gone.
 * The holder checks at each refresh that the lock is still its own, and says so (`lost`) when
 * it is not: it then stops, as a leader that lost its Lease does.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { link, open, readFile, readlink, rename, stat, unlink, utimes } from "node:fs/promises";
import { nopLogger, type Logger } from "../controller/controller.ts";
import { realClock, type Clock, type Timer } from "../util/clock.ts";
import { CodedError } from "../util/errors.ts";
import { withDefaults } from "../util/options.ts";

/** What the lock file says of its holder. */
export interface LockHolder {
  pid: number;
  host: string;
  /** Linux: `<boot id>/<pid namespace>`, where a pid means the same process; "" elsewhere */
  machine: string;
  /** Linux: the process's start time, in clock ticks since boot; 0 elsewhere */
  start: number;
  /** RFC 3339: when it took the lock */
  since: string;
  /** this holding's own mark: a lock taken over and taken again is not the same holding */
  token: string;
}

export interface StatusFileLockOptions {
  /** how often the holder refreshes the lock and checks it is still its own; default 10 s */
  refreshMs?: number;
  /** a holder on another machine or pid namespace that has not refreshed for this long is gone; default 60 s */
  staleMs?: number;
  clock?: Clock;
  logger?: Logger;
}

export const STATUS_LOCK_DEFAULTS = Object.freeze({
  refreshMs: 10_000,
  staleMs: 60_000,
  clock: realClock as Clock,
  logger: nopLogger as Logger,
});

/** a lock file this young may be one its creator has not written yet */
const BEING_WRITTEN_MS = 5_000;

/** Another process, alive, holds the status file. */
export class StatusFileLockedError extends CodedError {
  readonly file: string;
  readonly holder: LockHolder | undefined;

  constructor(file: string, lockFile: string, holder: LockHolder | undefined) {
    const who =
      holder === undefined
        ? "a process that is writing its lock now"
        : `process ${holder.pid} on ${holder.host}, since ${holder.since}`;
    super(
      "STATUS_FILE_LOCKED",
      `the status file ${file} is held by ${who} (lock ${lockFile}): one operator per status file; stop that one first, or use another --status-file`,
    );
    this.file = file;
    this.holder = holder;
  }
}

export class StatusFileLock {
  readonly file: string;
  readonly lockFile: string;
  readonly #holder: LockHolder;
  readonly #lost = new AbortController();
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #refreshMs: number;
  #timer: Timer | undefined;
  #released = false;

  private constructor(file: string, holder: LockHolder, o: Required<StatusFileLockOptions>) {
    this.file = file;
    this.lockFile = lockFileOf(file);
    this.#holder = holder;
    this.#clock = o.clock;
    this.#logger = o.logger;
    this.#refreshMs = o.refreshMs;
    this.#schedule();
  }

  /** Takes the lock of `file` (the status file), or throws StatusFileLockedError naming the live holder. */
  static async acquire(file: string, options: StatusFileLockOptions = {}): Promise<StatusFileLock> {
    const o = withDefaults(STATUS_LOCK_DEFAULTS, options);
    const lockFile = lockFileOf(file);
    const self = await ownIdentity();
    // each round either takes the lock or moves a dead holder's aside; a few rounds settle a race
    for (let round = 0; round < 5; round++) {
      const holder: LockHolder = { ...self, since: new Date().toISOString(), token: token() };
      if (await create(lockFile, holder)) return new StatusFileLock(file, holder, o);
      const found = await readLock(lockFile);
      if (found === undefined) continue; // gone meanwhile
      if (await holds(found, self, o.staleMs)) throw new StatusFileLockedError(file, lockFile, found.holder);
      if (await moveAsideIfStill(lockFile, found.text)) {
        const who =
          found.holder === undefined
            ? "an unreadable lock"
            : `process ${found.holder.pid} on ${found.holder.host}`;
        o.logger.warn({ file, lockFile }, `took over the status file from ${who}, which is gone`);
      }
    }
    throw new StatusFileLockedError(file, lockFile, (await readLock(lockFile))?.holder);
  }

  /** aborts when the lock is no longer this process's (taken over, replaced): stop, as after a lost Lease */
  get lost(): AbortSignal {
    return this.#lost.signal;
  }

  /** Stops refreshing and removes the lock file, if it is still this process's. */
  async release(): Promise<void> {
    this.#released = true;
    this.#timer?.cancel();
    const found = await readLock(this.lockFile);
    if (found?.holder?.token === this.#holder.token) await unlink(this.lockFile).catch(() => undefined);
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimer(this.#refreshMs, () => {
      this.#refresh().then(
        (kept) => {
          if (this.#released) return;
          if (kept) this.#schedule();
          else {
            this.#logger.error(
              { file: this.file, lockFile: this.lockFile },
              "the status file's lock is no longer this process's: stopping",
            );
            this.#lost.abort();
          }
        },
        (err: unknown) => {
          // a passing failure (a full disk, a network volume away): the holder tries again
          this.#logger.warn({ err, lockFile: this.lockFile }, "cannot refresh the status file's lock");
          if (!this.#released) this.#schedule();
        },
      );
    });
  }

  /** Whether the lock is still this process's; refreshes its time if so (re-creates it if it was removed). */
  async #refresh(): Promise<boolean> {
    const found = await readLock(this.lockFile);
    if (found === undefined) return create(this.lockFile, this.#holder);
    if (found.holder?.token !== this.#holder.token) return false;
    const now = new Date();
    await utimes(this.lockFile, now, now);
    return true;
  }
}

function lockFileOf(file: string): string {
  return `${file}.lock`;
}

function token(): string {
  return randomBytes(8).toString("hex");
}

/** Creates the lock file with `holder` in it; false if there is one already. */
async function create(lockFile: string, holder: LockHolder): Promise<boolean> {
  let handle;
  try {
    handle = await open(lockFile, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    await handle.writeFile(`${JSON.stringify(holder)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return true;
}

interface FoundLock {
  text: string;
  /** undefined: empty or not a lock (a creator that has not written it yet, or a torn write) */
  holder: LockHolder | undefined;
  mtimeMs: number;
}

async function readLock(lockFile: string): Promise<FoundLock | undefined> {
  try {
    const [text, s] = await Promise.all([readFile(lockFile, "utf8"), stat(lockFile)]);
    return { text, holder: parseHolder(text), mtimeMs: s.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const h = JSON.parse(text) as Partial<LockHolder> | null;
    const ok =
      typeof h?.pid === "number" &&
      typeof h.host === "string" &&
      typeof h.machine === "string" &&
      typeof h.start === "number" &&
      typeof h.since === "string" &&
      typeof h.token === "string";
    return ok ? (h as LockHolder) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the lock found is held by a live process. */
async function holds(
  found: FoundLock,
  self: Omit<LockHolder, "since" | "token">,
  staleMs: number,
): Promise<boolean> {
  const age = Date.now() - found.mtimeMs;
  const { holder } = found;
  if (holder === undefined) return age < BEING_WRITTEN_MS;
  if (holder.host !== self.host || holder.machine !== self.machine) return age < staleMs;
  // same machine and pid namespace: the pid says; our own pid was a process before us (a restart)
  if (holder.pid === self.pid) return false;
  if (holder.machine === "") return pidAlive(holder.pid);
  return (await startOf(holder.pid)) === holder.start;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Moves the lock file aside if it still says `text` (the dead holder judged): moved under a name
 * of its own first, so that of two processes taking over, only one moves it, and a lock created
 * meanwhile by the other is put back. Whether the dead holder's lock was removed.
 */
async function moveAsideIfStill(lockFile: string, text: string): Promise<boolean> {
  const aside = `${lockFile}.${token()}.stale`;
  try {
    await rename(lockFile, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  const moved = await readFile(aside, "utf8").catch(() => undefined);
  if (moved !== text) await link(aside, lockFile).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
  return moved === text;
}

/** This process as a lock names it. */
async function ownIdentity(): Promise<Omit<LockHolder, "since" | "token">> {
  const [bootId, pidNamespace, start] = await Promise.all([
    readFile("/proc/sys/kernel/random/boot_id", "utf8").then(
      (t) => t.trim(),
      () => undefined,
    ),
    readlink("/proc/self/ns/pid").catch(() => undefined),
    startOf(process.pid),
  ]);
  const linux = bootId !== undefined && pidNamespace !== undefined && start !== undefined;
  return {
    pid: process.pid,
    host: hostname(),
    machine: linux ? `${bootId}/${pidNamespace}` : "",
    start: linux ? start : 0,
  };
}

/** Linux: a process's start time (clock ticks since boot, field 22 of /proc/PID/stat); undefined if there is none. */
async function startOf(pid: number): Promise<number | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, "utf8");
    // the command name (field 2) is in parentheses and may hold spaces and parentheses itself
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const start = Number(fields[19]);
    return Number.isFinite(start) ? start : undefined;
  } catch {
    return undefined;
  }
}
