/**
 * The desired state from a directory of manifests (`run --manifests DIR`): the same controller
 * without a cluster. Files are read with loadManifests (validated and defaulted as the API server
 * would) and read again when they change: a watch of each directory (tree-watch.ts), plus a
 * periodic rescan for file systems where watches miss changes. What a read finds is taken at
 * once; what it does not find is removed only once its absence has lasted (quiet-removals.ts):
 * a file being regenerated is not a delete. A file that does not load is reported and the last
 * good version of its objects is kept, but their writes are blocked (`store.writesBlockedBy`:
 * SourceInvalid, naming file and line): the reconcile observes and reports them and writes
 * nothing for them (no tenant, no release) until the file loads again. What the directory holds
 * is bounded as a whole (a ReadLedger kept across reads): over a bound, nothing more is taken
 * from it until it is back under. Each object gets a generation that rises when its spec
 * changes. Status lives in memory, is logged when it changes and, with `statusFile`, persists
 * across restarts (with the generations), so that a stray's firstSeen survives a restart.
 */
import { stat } from "node:fs/promises";
import { resolve, sep } from "node:path";
import { READ_BOUNDS, ReadLedger, type ReadBounds } from "../api/manifest-files.ts";
import { isManifestFile, loadManifests, type ManifestError, type SkippedFile } from "../api/manifests.ts";
import { namespacedName, objectKey, parseObjectKey, refOf, type ObjectRef } from "../api/refs.ts";
import type { ResourceValidator } from "../api/schema.ts";
import { API_VERSION, perKind, type Kind, type NsxvObject, type Secret } from "../api/types.ts";
import { nopLogger, type Logger } from "../controller/controller.ts";
import type { EventRecorder } from "../controller/events.ts";
import { SyncedLatch } from "../controller/synced-latch.ts";
import { omitUndefined } from "../util/options.ts";
import type { DesiredStateStore } from "../reconcile/store.ts";
import { formatTime, realClock, type Clock, type Timer } from "../util/clock.ts";
import {
  ChangeListeners,
  type ChangeListener,
  type DesiredStateSource,
  type Status,
  type StatusWriteOutcome,
} from "./source.ts";
import { StatusMemory } from "./status-memory.ts";
import { fileFingerprint, QuietRemovals } from "./quiet-removals.ts";
import { TreeWatcher } from "./tree-watch.ts";
import { withDefaults } from "../util/options.ts";
import { sameJson } from "../util/same-json.ts";

export interface DirectorySourceOptions {
  /** the directory (or a single file) of manifests */
  dir: string;
  /** keep status here across restarts (JSON, rewritten on each change); default: memory only */
  statusFile?: string;
  /** read everything again this often, in case a watch missed a change; default 30000 */
  rescanIntervalMs?: number;
  /** a change is read once no other came for this long; default 200 */
  debounceMs?: number;
  /**
   * an object missing from the files is removed once the file it was read from has stayed
   * unchanged this long (quiet-removals.ts); default 5000
   */
  removalQuietMs?: number;
  /** what the directory may hold in all its files; default READ_BOUNDS */
  readBounds?: ReadBounds;
  /** default: each event is a log line */
  events?: EventRecorder;
  /** default: the CRDs shipped in crds/ */
  validator?: ResourceValidator;
  clock?: Clock;
  logger?: Logger;
}

/** the longest a read waits for changes to stop coming */
const MAX_READ_WAIT_MS = 2_000;

export const DIRECTORY_DEFAULTS = {
  rescanIntervalMs: 30_000,
  debounceMs: 200,
  removalQuietMs: 5_000,
} as const;

/** Events as log lines, naming the object: what a run without a cluster has instead of Events. */
export function loggingEventRecorder(logger: Logger): EventRecorder {
  const log = (type: "Normal" | "Warning") => (obj: NsxvObjectLike, reason: string, message: string) => {
    const { name, namespace } = obj.metadata;
    const fields = { kind: obj.kind, namespace, name, event: type, reason };
    if (type === "Normal") logger.info(fields, message);
    else logger.warn(fields, message);
  };
  return { normal: log("Normal"), warning: log("Warning") };
}

type NsxvObjectLike = { kind: string; metadata: { name: string; namespace?: string } };

/** An object as the reconciler saw it before a read (undefined: not at all), and whether its file's certainty moved. */
interface Seen {
  view: NsxvObject | undefined;
  certaintyChanged: boolean;
}

interface Entry<T> {
  value: T;
  file: string;
}

export class DirectorySource implements DesiredStateSource {
  readonly store: DesiredStateStore;
  readonly events: EventRecorder;
  readonly #dir: string;
  readonly #rescanIntervalMs: number;
  readonly #debounceMs: number;
  readonly #removalQuietMs: number;
  readonly #validator: ResourceValidator | undefined;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #listeners = new ChangeListeners();
  #objects = new Map<string, Entry<NsxvObject>>();
  #secrets = new Map<string, Entry<Secret>>();
  /** files (or directories) that did not load at their last read, with the first error of each */
  #invalid = new Map<string, ManifestError>();
  /** generation and status by object key; what the status file holds */
  readonly #memory: StatusMemory;
  readonly #loaded = new SyncedLatch();
  #lastErrors = "";
  /** the store's revision: every read of the manifests may change any kind (a status write does not) */
  #revision = 0;
  /** the keys of each kind's objects (those being deleted included) at a revision */
  #keysByKind: { revision: number; byKind: Record<Kind, string[]> } | undefined;
  /** until the first read of the manifests is applied: objects then new to the memory had their status lost, if it was */
  #firstLoad = true;
  /** the read in progress, if any: reads apply one after another, so an older read never lands over a newer one */
  #reading: Promise<void> = Promise.resolve();
  /** objects and Secrets a read did not find, kept until their absence has lasted */
  readonly #objectRemovals: QuietRemovals<Entry<NsxvObject>>;
  readonly #secretRemovals: QuietRemovals<Entry<Secret>>;
  /** what the directory's files hold, against the bounds */
  readonly #ledger: ReadLedger;
  /** a read was refused (over a bound, the directory unreadable): the next one reads everything */
  #readAllNext = false;
  /** while started: asks for a read of these files (all: every file) after `delayMs` */
  #requestRead: ((files: readonly string[] | "all", delayMs: number) => void) | undefined;
  /** while started: the read that may let missing entries go, when it is due */
  #removalsDue: Timer | undefined;

  constructor(options: DirectorySourceOptions) {
    this.#dir = resolve(options.dir);
    const statusFile = options.statusFile === undefined ? undefined : resolve(options.statusFile);
    const o = withDefaults(DIRECTORY_DEFAULTS, options);
    this.#rescanIntervalMs = o.rescanIntervalMs;
    this.#debounceMs = o.debounceMs;
    this.#removalQuietMs = o.removalQuietMs;
    this.#objectRemovals = new QuietRemovals(o.removalQuietMs);
    this.#secretRemovals = new QuietRemovals(o.removalQuietMs);
    this.#ledger = new ReadLedger(this.#dir, options.readBounds ?? READ_BOUNDS);
    this.#validator = options.validator;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? nopLogger;
    this.#memory = new StatusMemory(statusFile, this.#logger);
    this.events = options.events ?? loggingEventRecorder(this.#logger);
    this.store = {
      get: (ref) => {
        const entry = this.#objects.get(objectKey(ref));
        return entry === undefined ? this.#deleting(objectKey(ref)) : this.#view(entry.value);
      },
      list: (kind) => this.#list(kind),
      getSecret: (namespace, name) => this.#secrets.get(`${namespace}/${name}`)?.value,
      revision: () => this.#revision,
      writesBlockedBy: (ref) => {
        const entry = this.#objects.get(objectKey(ref));
        const error = entry === undefined ? undefined : this.#invalidFor(entry.file);
        if (error === undefined) return undefined;
        const message = `${error.message} (the last good version of this object is observed; nothing is written for it until the file loads)`;
        return { reason: "SourceInvalid", message };
      },
      statusLost: (ref) => this.#memory.objects.get(objectKey(ref))?.statusLost,
    };
  }

  /** Reads the status file and the manifests, then follows changes until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    let pending: Timer | undefined;
    /** when the first change the pending read waits for was asked for */
    let waitingSince = 0;
    /** files a watch named since the last read; "all" when it could not say which */
    let changed: Set<string> | "all" = new Set();
    this.#requestRead = (files, delayMs) => {
      if (files === "all") changed = "all";
      else if (changed !== "all") for (const file of files) changed.add(file);
      // the read waits until changes stop coming for delayMs (a file being written is read once
      // it is written), but not forever: a file that never stops changing is read every few seconds
      const now = this.#clock.now();
      if (pending === undefined) waitingSince = now;
      pending?.cancel();
      const delay = Math.min(delayMs, waitingSince + Math.max(MAX_READ_WAIT_MS, delayMs) - now);
      pending = this.#clock.setTimer(delay, () => {
        pending = undefined;
        const read = changed;
        changed = new Set();
        (read === "all" ? this.reload() : this.#reloadFiles([...read])).catch((err: unknown) =>
          this.#logger.error(
            { err, dir: this.#dir },
            "reading the manifests failed; the next change or rescan tries again",
          ),
        );
      });
    };
    const rescan = (): void => {
      this.#requestRead?.("all", this.#debounceMs);
      rescanTimer = this.#clock.setTimer(this.#rescanIntervalMs, rescan);
    };
    let rescanTimer = this.#clock.setTimer(this.#rescanIntervalMs, rescan);
    const watcher = new TreeWatcher({
      root: this.#dir,
      reads: isManifestFile,
      onChange: (path) => this.#requestRead?.(path === undefined ? "all" : [path], this.#debounceMs),
      logger: this.#logger,
    });
    // watching before the first read: a change made while it reads is read after it
    watcher.start();
    await this.#serially(async () => {
      await this.#memory.read();
      await this.#readAll();
    });
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    watcher.close();
    this.#requestRead = undefined;
    this.#removalsDue?.cancel();
    pending?.cancel();
    rescanTimer.cancel();
    await this.#reading;
    await this.#memory.flushed();
  }

  synced(signal: AbortSignal): Promise<boolean> {
    return this.#loaded.wait(signal);
  }

  notReady(): string | undefined {
    return this.#loaded.isOpen ? undefined : `manifests in ${this.#dir} not read yet`;
  }

  subscribe(listener: ChangeListener): () => void {
    return this.#listeners.subscribe(listener);
  }

  async writeStatus(ref: ObjectRef, status: Status): Promise<StatusWriteOutcome> {
    const key = objectKey(ref);
    const remembered = this.#memory.objects.get(key);
    const entry = this.#objects.get(key);
    if (entry === undefined || remembered === undefined) return "gone";
    const before = this.#view(entry.value);
    const previous = remembered.status;
    remembered.status = status;
    this.#listeners.emit({ type: "object", before, after: this.#view(entry.value) });
    // the operator logs the change in one line; the whole status is for debugging
    this.#logger.debug({ kind: ref.kind, namespace: ref.namespace, name: ref.name, status }, "status");
    try {
      await this.#memory.persist();
    } catch (error) {
      // not durable, so not written: a pass must not act on a record a restart would not find
      if (remembered.status === status) remembered.status = previous;
      throw error;
    }
    return "written";
  }

  /**
   * Adds or removes a finalizer in the object's memory (kept in the status file). Removing the
   * last one of an object being deleted forgets it: it is gone then.
   */
  async setFinalizer(ref: ObjectRef, finalizer: string, present: boolean): Promise<StatusWriteOutcome> {
    const key = objectKey(ref);
    const remembered = this.#memory.objects.get(key);
    if (remembered === undefined) return "gone";
    const before = remembered.finalizers;
    const others = (before ?? []).filter((f) => f !== finalizer);
    const finalizers = present ? [...others, finalizer] : others;
    if (finalizers.length > 0) remembered.finalizers = finalizers;
    else delete remembered.finalizers;
    const gone = remembered.deletedAt !== undefined && finalizers.length === 0;
    if (gone) this.#memory.objects.delete(key);
    try {
      await this.#memory.persist();
    } catch (error) {
      // not durable, so not set: a restart would not find it
      if (gone) this.#memory.objects.set(key, remembered);
      if (before === undefined) delete remembered.finalizers;
      else remembered.finalizers = before;
      throw error;
    }
    return "written";
  }

  /** Reads every manifest again and enqueues what changed; exposed for tests and for a manual rescan. */
  reload(): Promise<void> {
    return this.#serially(() => this.#readAll());
  }

  #reloadFiles(files: readonly string[]): Promise<void> {
    return this.#serially(() => this.#readFiles(files));
  }

  #serially(read: () => Promise<void>): Promise<void> {
    const next = this.#reading.then(read);
    this.#reading = next.catch(() => undefined);
    return next;
  }

  async #readAll(): Promise<void> {
    this.#readAllNext = false;
    this.#ledger.forget([this.#dir]);
    const set = await this.#load([this.#dir]);
    if (set === undefined) return; // the directory cannot be read, or is over a bound: keep everything
    await this.#take(
      { objects: set.merge(new Map()), secrets: set.mergeSecrets(new Map()), invalid: set.invalid },
      () => true,
    );
  }

  /**
   * Reads only these paths (named by a watch) and keeps every other file's objects as they are:
   * a change in one file of thousands is acted on without reading the thousands. A path that is
   * gone (a file, or a directory moved away) no longer holds its objects; the periodic rescan
   * still reads everything.
   */
  async #readFiles(paths: readonly string[]): Promise<void> {
    if (this.#readAllNext) return this.#readAll();
    const present: string[] = [];
    for (const path of paths) {
      const kind = await stat(path).then(
        (s) => (s.isFile() ? "file" : "other"),
        () => "gone",
      );
      if (kind === "other") return this.#readAll(); // a directory came or changed: read everything
      if (kind === "file" && isManifestFile(path)) present.push(path);
    }
    const covered = (file: string): boolean => paths.some((p) => file === p || file.startsWith(p + sep));
    this.#ledger.forget(paths);
    const set = await this.#load(present);
    if (set === undefined) return;
    const kept = <T>(entries: Map<string, Entry<T>>) =>
      new Map([...entries].filter(([, entry]) => !covered(entry.file)));
    const invalid = new Map([...this.#invalid].filter(([file]) => !covered(file)));
    for (const [file, error] of set.invalid) invalid.set(file, error);
    await this.#take(
      {
        objects: set.merge(kept(this.#objects), this.#objects),
        secrets: set.mergeSecrets(kept(this.#secrets)),
        invalid,
      },
      covered,
    );
  }

  /**
   * Takes what a read found (`covered` says which files it read): entries it did not find stay
   * until their absence has lasted; at the first read, so do the objects the status file
   * remembers and the files do not hold (they may be in a file being written as the operator
   * starts).
   */
  async #take(
    read: {
      objects: Map<string, Entry<NsxvObject>>;
      secrets: Map<string, Entry<Secret>>;
      invalid: Map<string, ManifestError>;
    },
    covered: (file: string) => boolean,
  ): Promise<void> {
    if (this.#firstLoad) {
      for (const [key, remembered] of this.#memory.objects)
        if (!read.objects.has(key) && remembered.deletedAt === undefined)
          this.#objectRemovals.expect(key, remembered.file ?? this.#dir);
    }
    const settle = { covered, fingerprint: fileFingerprint, now: () => this.#clock.now() };
    const missingBefore = new Set(this.#objectRemovals.missing());
    const gone = await this.#objectRemovals.settle(this.#objects, read.objects, settle);
    await this.#secretRemovals.settle(this.#secrets, read.secrets, settle);
    const newlyMissing = this.#objectRemovals.missing().filter((key) => !missingBefore.has(key));
    if (newlyMissing.length > 0) {
      // why a removal is not acted on at once
      this.#logger.info(
        { count: newlyMissing.length, objects: newlyMissing.slice(0, 5), quietMs: this.#removalQuietMs },
        "objects missing from the files: each is removed once the file it was in has stayed unchanged for the quiet period",
      );
    }
    this.#apply(read.objects, read.secrets, read.invalid, gone);
    this.#scheduleRemovals();
  }

  /** While started: the read that may let missing entries go, when the first is due. */
  #scheduleRemovals(): void {
    this.#removalsDue?.cancel();
    this.#removalsDue = undefined;
    const request = this.#requestRead;
    const dues = [this.#objectRemovals.nextDue(), this.#secretRemovals.nextDue()].filter(
      (due) => due !== undefined,
    );
    if (request === undefined || dues.length === 0) return;
    const files = [...new Set([...this.#objectRemovals.files(), ...this.#secretRemovals.files()])];
    this.#removalsDue = this.#clock.setTimer(Math.min(...dues) - this.#clock.now(), () => {
      this.#removalsDue = undefined;
      request(files, this.#debounceMs);
    });
  }

  /**
   * Loads these paths; `merge` puts what they hold over `base`, keeping the last good version (from
   * `previous`) of a file that did not load; `invalid` has the first error of each such file.
   * Undefined when the directory itself cannot be read.
   */
  async #load(paths: readonly string[]) {
    // only regular files: a FIFO named *.yaml would hold the reading forever
    const options = {
      regularFilesOnly: true,
      ledger: this.#ledger,
      ...(this.#validator === undefined ? {} : { validator: this.#validator }),
    };
    const set =
      paths.length === 0
        ? { objects: [], secrets: [], errors: [] as ManifestError[], skippedFiles: [] }
        : await loadManifests(paths, options);
    this.#report(set.errors, set.skippedFiles);
    const invalid = new Map<string, ManifestError>();
    for (const error of set.errors) if (!invalid.has(error.file)) invalid.set(error.file, error);
    if (invalid.has(this.#dir)) {
      this.#readAllNext = true;
      return undefined;
    }
    const isBad = (file: string): boolean => invalidFor(invalid, file) !== undefined;
    const lastGood = <T>(into: Map<string, Entry<T>>, previous: Map<string, Entry<T>>) => {
      for (const [key, entry] of previous) if (isBad(entry.file) && !into.has(key)) into.set(key, entry);
      return into;
    };
    return {
      invalid,
      merge: (base: Map<string, Entry<NsxvObject>>, previous = this.#objects) => {
        for (const { object, source } of set.objects)
          if (!isBad(source.file)) base.set(objectKey(refOf(object)), { value: object, file: source.file });
        return lastGood(base, previous);
      },
      mergeSecrets: (base: Map<string, Entry<Secret>>) => {
        for (const { secret, source } of set.secrets)
          if (!isBad(source.file))
            base.set(namespacedName(secret.metadata), { value: secret, file: source.file });
        return lastGood(base, this.#secrets);
      },
    };
  }

  #apply(
    objects: Map<string, Entry<NsxvObject>>,
    secrets: Map<string, Entry<Secret>>,
    invalid: Map<string, ManifestError>,
    gone: readonly string[],
  ): void {
    const beforeSecrets = this.#secrets;
    const seen = this.#seen(objects, invalid, gone);
    this.#invalid = invalid;
    this.#forgetGone(objects);
    this.#objects = objects;
    this.#secrets = secrets;
    this.#revision += 1;
    this.#firstLoad = false;
    this.#loaded.open();
    // a failed write is logged by the memory; the next change writes again
    this.#memory.persist().catch(() => undefined);
    this.#emitObjects(seen);
    for (const key of new Set([...secrets.keys(), ...beforeSecrets.keys()])) {
      if (JSON.stringify(secrets.get(key)?.value) === JSON.stringify(beforeSecrets.get(key)?.value)) continue;
      const [namespace = "", name = ""] = key.split("/");
      this.#listeners.emit({ type: "secret", namespace, name });
    }
  }

  /**
   * The objects of this read and of the last, and those the status file knew (`gone`), as the
   * reconciler saw them before this read, and whether their file's certainty moved; remembers
   * those read.
   */
  #seen(
    objects: Map<string, Entry<NsxvObject>>,
    invalid: Map<string, ManifestError>,
    gone: readonly string[],
  ): Map<string, Seen> {
    const before = this.#objects;
    const seen = new Map<string, Seen>();
    for (const [key, { value, file }] of objects) {
      const old = before.get(key);
      // a file that stops or starts loading changes what may be written for its objects
      const certaintyChanged =
        (invalidFor(this.#invalid, file) === undefined) !== (invalidFor(invalid, file) === undefined);
      seen.set(key, { view: old === undefined ? undefined : this.#view(old.value), certaintyChanged });
      this.#remember(key, value, file);
    }
    for (const [key, { value }] of before)
      if (!objects.has(key)) seen.set(key, { view: this.#view(value), certaintyChanged: false });
    // known only from the status file until now (a restart): its deletion is news
    for (const key of gone) if (!seen.has(key)) seen.set(key, { view: undefined, certaintyChanged: false });
    return seen;
  }

  /**
   * An object gone from the files is forgotten, unless it holds finalizers: then it is being
   * deleted; one missing for less than the quiet period is not known to be gone yet.
   */
  #forgetGone(objects: Map<string, Entry<NsxvObject>>): void {
    for (const [key, remembered] of [...this.#memory.objects]) {
      if (objects.has(key)) delete remembered.deletedAt;
      else if (this.#objectRemovals.isMissing(key)) continue;
      else if ((remembered.finalizers ?? []).length === 0) this.#memory.objects.delete(key);
      else if (remembered.deletedAt === undefined) remembered.deletedAt = formatTime(this.#clock.now());
    }
  }

  /** An event for each object whose intent, or its file's certainty, moved with this read. */
  #emitObjects(seen: Map<string, Seen>): void {
    for (const [key, { view, certaintyChanged }] of seen) {
      const entry = this.#objects.get(key);
      const after = entry === undefined ? this.#deleting(key) : this.#view(entry.value);
      if (view === undefined && after === undefined) continue; // never seen, and gone
      if (view !== undefined && after !== undefined && !certaintyChanged && sameIntent(view, after)) continue;
      this.#listeners.emit({ type: "object", before: view, after, always: certaintyChanged });
    }
  }

  /**
   * The memory of an object read from the files: a generation that rises with its spec, its
   * annotations, the file it is in.
   */
  #remember(key: string, value: NsxvObject, file: string): void {
    const spec = JSON.stringify(value.spec);
    const annotations = value.metadata.annotations;
    const remembered = this.#memory.objects.get(key);
    if (remembered === undefined) {
      // in the files when their status was lost (the first read after a set-aside status file)
      const lost = this.#firstLoad ? this.#memory.lost : undefined;
      this.#memory.objects.set(
        key,
        omitUndefined({ generation: 1, spec, annotations, file, statusLost: lost }),
      );
      return;
    }
    remembered.file = file;
    if (remembered.spec !== spec) Object.assign(remembered, { generation: remembered.generation + 1, spec });
    if (annotations === undefined) delete remembered.annotations;
    else remembered.annotations = annotations;
  }

  /**
   * Every object of the kind as the reconciler sees it, those being deleted included; which keys
   * are of which kind is worked out once per read of the manifests (an NSXManager's list, asked on
   * every pass, costs its few objects, not a look at thousands of others).
   */
  #list(kind: Kind): NsxvObject[] {
    if (this.#keysByKind?.revision !== this.#revision) {
      const byKind = perKind((): string[] => []);
      for (const [key, { value }] of this.#objects) byKind[value.kind].push(key);
      // only a read of the manifests sets deletedAt: an object gone since is skipped below
      for (const [key, remembered] of this.#memory.objects) {
        const ref = parseObjectKey(key);
        if (remembered.deletedAt !== undefined && ref !== undefined && !this.#objects.has(key))
          byKind[ref.kind].push(key);
      }
      this.#keysByKind = { revision: this.#revision, byKind };
    }
    return this.#keysByKind.byKind[kind].flatMap((key) => {
      const entry = this.#objects.get(key);
      return entry === undefined ? (this.#deleting(key) ?? []) : [this.#view(entry.value)];
    });
  }

  /** An object removed from the files while holding finalizers, rebuilt from memory with its deletionTimestamp. */
  #deleting(key: string): NsxvObject | undefined {
    const remembered = this.#memory.objects.get(key);
    const ref = parseObjectKey(key);
    if (remembered?.deletedAt === undefined || ref === undefined || this.#objects.has(key)) return undefined;
    const { generation, finalizers, deletedAt, status, annotations } = remembered;
    // its annotations as last read: a pause or a skip-restore still holds while it is deleted
    const metadata = omitUndefined({
      name: ref.name,
      namespace: ref.namespace,
      generation,
      deletionTimestamp: deletedAt,
      finalizers,
      annotations,
    });
    const spec = JSON.parse(remembered.spec) as unknown;
    return {
      apiVersion: API_VERSION,
      kind: ref.kind,
      metadata,
      spec,
      ...(status !== undefined ? { status } : {}),
    } as NsxvObject;
  }

  #invalidFor(file: string): ManifestError | undefined {
    return invalidFor(this.#invalid, file);
  }

  /** The object as the reconciler sees it: with its generation and its status. */
  #view(object: NsxvObject): NsxvObject {
    const remembered = this.#memory.objects.get(objectKey(refOf(object)));
    const finalizers = remembered?.finalizers ?? [];
    const metadata = {
      ...object.metadata,
      generation: remembered?.generation ?? 1,
      ...(finalizers.length > 0 ? { finalizers } : {}),
    };
    const status = remembered?.status;
    return { ...object, metadata, ...(status !== undefined ? { status } : {}) } as NsxvObject;
  }

  #report(errors: ManifestError[], skippedFiles: readonly SkippedFile[]): void {
    const text = [...errors.map((e) => e.message), ...skippedFiles.map((s) => s.file)].join("\n");
    if (text === this.#lastErrors) return;
    this.#lastErrors = text;
    for (const { file, reason } of skippedFiles) this.#logger.warn({ file }, `${file}: ${reason}`);
    for (const error of errors) {
      this.#logger.error(
        {
          file: error.file,
          line: error.line,
          kind: error.kind,
          namespace: error.namespace,
          name: error.objectName,
        },
        `${error.message} (the last good version of this file's objects is kept)`,
      );
    }
  }
}

/** The error of `file`, or of a directory above it, when it did not load at its last read. */
function invalidFor(invalid: ReadonlyMap<string, ManifestError>, file: string): ManifestError | undefined {
  const exact = invalid.get(file);
  if (exact !== undefined || invalid.size === 0) return exact;
  for (const [path, error] of invalid) if (file.startsWith(path + sep)) return error;
  return undefined;
}

/** Same metadata (generation, annotations, labels, finalizers, deletion) and spec: nothing a pass acts on moved. */
function sameIntent(a: NsxvObject, b: NsxvObject): boolean {
  return sameJson([a.metadata, a.spec], [b.metadata, b.spec]);
}
