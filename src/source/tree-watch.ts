/**
 * Follows a tree of manifest files with one non-recursive fs.watch per directory. Not fs.watch's
 * recursive mode: on Linux it watches each file it found by inode, so a file replaced by a rename
 * (an editor's save, `sed -i`, `git checkout`) is watched no more, and removing it went unseen
 * until the next rescan (28 s measured). A directory's own watch names every entry it gains,
 * loses or has written, whichever way. The root's parent is watched too, for the root's name:
 * a directory swapped in (`mv new nsx`, a symlink moved over) or a single file replaced. Names
 * that start with a dot are not read, but a symlink or a directory among them may be what the
 * files point through (a ConfigMap volume's `..data`, swapped to a new timestamped directory on
 * each update): a change to one asks for everything to be read.
 */
import { lstatSync, readdirSync, realpathSync, statSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname, join, sep } from "node:path";
import type { Logger } from "../controller/controller.ts";

/** `path` changed (a file or directory: written, created, removed, moved); undefined: anything may have */
export type TreeChange = (path: string | undefined) => void;

export interface TreeWatcherOptions {
  /** a directory, or a single file */
  root: string;
  /** whether a file is read (its changes are reported; those of other files are not) */
  reads: (file: string) => boolean;
  onChange: TreeChange;
  logger: Logger;
}

export class TreeWatcher {
  readonly #root: string;
  readonly #reads: (file: string) => boolean;
  readonly #onChange: TreeChange;
  readonly #logger: Logger;
  /** by directory path: the watch of that directory */
  readonly #watches = new Map<string, FSWatcher>();
  #parent: FSWatcher | undefined;
  #closed = false;

  constructor(options: TreeWatcherOptions) {
    this.#root = options.root;
    this.#reads = options.reads;
    this.#onChange = options.onChange;
    this.#logger = options.logger;
  }

  start(): void {
    const parent = dirname(this.#root);
    if (parent !== this.#root)
      this.#parent = this.#open(parent, (name) => {
        if (name !== basename(this.#root)) return;
        // the root itself was replaced: its watches follow the old one
        this.#unwatch(this.#root);
        this.#watchTree(this.#root);
        this.#onChange(undefined);
      });
    this.#watchTree(this.#root);
  }

  close(): void {
    this.#closed = true;
    this.#parent?.close();
    this.#unwatch(this.#root);
  }

  /** how many directories are watched (for tests) */
  get watched(): number {
    return this.#watches.size;
  }

  /**
   * Watches `dir` and the directories under it, as listManifestFiles walks them: no dot names,
   * through symlinks, each real directory once (a link back up is no loop).
   */
  #watchTree(dir: string, seen = new Set<string>()): void {
    if (this.#closed || this.#watches.has(dir) || !isDirectory(dir)) return;
    let names: string[];
    try {
      const real = realpathSync(dir);
      if (seen.has(real)) return;
      seen.add(real);
      names = readdirSync(dir);
    } catch {
      return; // gone meanwhile: its parent's watch says so
    }
    const watcher = this.#open(dir, (name) => this.#changed(dir, name));
    if (watcher === undefined) return;
    this.#watches.set(dir, watcher);
    for (const name of names) if (!name.startsWith(".")) this.#watchTree(join(dir, name), seen);
  }

  #changed(dir: string, name: string | undefined): void {
    if (name === undefined) return this.#onChange(undefined);
    const path = join(dir, name);
    if (name.startsWith(".")) {
      // an editor's swap file changes nothing read; a swapped symlink or directory may
      if (isLinkOrDirectory(path)) this.#onChange(undefined);
      return;
    }
    if (isDirectory(path)) {
      this.#watchTree(path);
      this.#onChange(path);
    } else if (this.#unwatch(path) || this.#reads(path)) {
      // a file read, or a watched directory gone
      this.#onChange(path);
    }
  }

  /** Closes the watches of `path` and of every directory under it; whether there were any. */
  #unwatch(path: string): boolean {
    let closed = false;
    for (const [dir, watcher] of this.#watches) {
      if (dir !== path && !dir.startsWith(path + sep)) continue;
      watcher.close();
      this.#watches.delete(dir);
      closed = true;
    }
    return closed;
  }

  #open(dir: string, onName: (name: string | undefined) => void): FSWatcher | undefined {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, name) => onName(name ?? undefined));
      watcher.on("error", (err) => {
        // a directory removed ends its watch; its parent's watch names it
        this.#logger.debug({ err, dir }, "a directory watch ended");
        watcher.close();
        if (this.#watches.get(dir) === watcher) this.#watches.delete(dir);
      });
      return watcher;
    } catch (err) {
      this.#logger.warn({ err, dir }, "cannot watch a directory of manifests; the periodic rescan reads it");
      return undefined;
    }
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isLinkOrDirectory(path: string): boolean {
  try {
    const s = lstatSync(path);
    return s.isSymbolicLink() || s.isDirectory();
  } catch {
    return false;
  }
}
