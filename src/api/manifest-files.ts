/**
 * Which files a set of paths names (files as given, and `*.yaml`, `*.yml`, `*.json` under
 * directories, recursively, in sorted order, each once) and reading one of them under a size
 * cap. A file found in a directory that is not a regular file (a FIFO, a device, a socket) is
 * skipped with a note: opening a FIFO for reading waits for a writer, forever. It is opened
 * without blocking and checked again on the open handle, so a regular file replaced by a FIFO
 * in between is skipped too. A file named on the command line is read whatever it is (`-f
 * /dev/stdin`, `-f <(kustomize build)`), under the same cap.
 *
 * A file's cost is capped by its size (and yaml-guard.ts); a read's total by a ReadLedger: the
 * bytes and documents of every file one read takes in (a CLI pass, the directory source's view of
 * its directory). 30 files of 680 KB cost `plan` 39 s and 435 MB before it, each under every
 * per-file cap. The bytes are checked from the listing's sizes before a file is opened, and each
 * file's bytes and documents again once it is read and passed its own caps (a file refused on
 * its own is not taken in), before it is parsed. A read over a bound stops there, with one error
 * naming what was read, the bound and the flag that raises it.
 */
import { constants } from "node:fs";
import { open, readdir, realpath, stat } from "node:fs/promises";
import { extname, join, sep } from "node:path";

export interface ManifestFile {
  path: string;
  /** named on the command line (read whatever it is), not found in a directory */
  named: boolean;
  /** bytes, as listed (0 for what is not a regular file: a pipe's size is known once read) */
  size: number;
}

/** A file left unread, and why (for a note, not an error). */
export interface SkippedFile {
  file: string;
  reason: string;
}

export type ReadOutcome = { text: string } | { skipped: string } | { problem: string };

/** What one read of manifests may hold in all its files together. */
export interface ReadBounds {
  maxBytes: number;
  /** YAML documents (a `kind: List` is one: its items are bounded by its bytes) */
  maxDocuments: number;
}

export const READ_BOUNDS: ReadBounds = Object.freeze({
  /** four files at the per-file cap; 16 000 EdgeTenants as `import` writes them take 5 MB */
  maxBytes: 16 * 1024 * 1024,
  /** eight managers of 2000 edges each, with their pools, and room to spare */
  maxDocuments: 25_000,
});

/** the flags of `plan`, `apply` and `run` that raise the bounds, named in the errors */
export const READ_BOUND_FLAGS = {
  maxBytes: "--max-manifest-bytes",
  maxDocuments: "--max-manifest-documents",
};

interface FileCost {
  bytes: number;
  documents: number;
}

/**
 * The bytes and documents of the files of one read, held against its bounds. A CLI pass makes a
 * fresh one; the directory source keeps one for its directory across reads, so that a change that
 * makes it read one file again is bounded by the directory's total, not by that file alone.
 */
export class ReadLedger {
  /** what the errors name: the directory, or the paths of the read */
  readonly root: string;
  readonly bounds: ReadBounds;
  readonly #files = new Map<string, FileCost>();
  #bytes = 0;
  #documents = 0;

  constructor(root: string, bounds: ReadBounds = READ_BOUNDS) {
    this.root = root;
    this.bounds = bounds;
  }

  /** Forgets the files at these paths, and under them: they are gone, or about to be read again. */
  forget(paths: readonly string[]): void {
    for (const file of [...this.#files.keys()])
      if (paths.some((p) => file === p || file.startsWith(p + sep))) this.#set(file, undefined);
  }

  /**
   * Why these files, not read yet, cannot be read: their listed sizes take the total over
   * maxBytes. A file over `maxFileBytes` is refused on its own, unread: it does not count.
   */
  refusesListed(files: readonly ManifestFile[], maxFileBytes: number): string | undefined {
    let bytes = this.#bytes;
    for (const { path, size } of files)
      if (size <= maxFileBytes) bytes += size - (this.#files.get(path)?.bytes ?? 0);
    return this.#over(bytes, this.#documents);
  }

  /**
   * Records what a file's text holds (its documents counted here unless the caller read them
   * already); why the read must stop, when that takes the total over a bound.
   */
  charge(file: string, text: string, documents = countDocuments(text)): string | undefined {
    this.#set(file, { bytes: Buffer.byteLength(text), documents });
    return this.#over(this.#bytes, this.#documents);
  }

  #set(file: string, cost: FileCost | undefined): void {
    const old = this.#files.get(file);
    this.#bytes += (cost?.bytes ?? 0) - (old?.bytes ?? 0);
    this.#documents += (cost?.documents ?? 0) - (old?.documents ?? 0);
    if (cost === undefined) this.#files.delete(file);
    else this.#files.set(file, cost);
  }

  #over(bytes: number, documents: number): string | undefined {
    const { maxBytes, maxDocuments } = this.bounds;
    const what =
      bytes > maxBytes
        ? `${bytes} bytes of manifests, over the bound of ${maxBytes} per read (${READ_BOUND_FLAGS.maxBytes} raises it)`
        : documents > maxDocuments
          ? `more than ${maxDocuments} YAML documents, the bound per read (${READ_BOUND_FLAGS.maxDocuments} raises it)`
          : undefined;
    return what === undefined ? undefined : `holds ${what}: not read`;
  }
}

/**
 * The YAML documents of a text, as the parser will make them, without parsing it: a `---` line
 * starts one, as does content at the start or after a `...` line; a `...` line ends one, or is
 * an empty one of its own. A marker cannot occur inside a scalar (YAML forbids a line that
 * starts with one there). One pass that looks at the start of each line; only a line outside
 * any document is read further.
 */
export function countDocuments(text: string): number {
  const lineEnd = lineEnds(text);
  let documents = 0;
  let open = false;
  for (let start = 0; start <= text.length;) {
    const end = lineEnd(start);
    const marker = markerAt(text, start, end);
    if (marker === "---" || (marker === "..." && !open)) documents++;
    if (marker !== undefined) open = marker === "---";
    else if (!open && DOCUMENT_CONTENT.test(text.slice(start, end))) {
      documents++;
      open = true;
    }
    start = end + 1;
  }
  return documents;
}

/** a line that holds content: neither blank, nor a comment, nor a directive */
const DOCUMENT_CONTENT = /^\s*[^#\s%]|^\s+%/;
/** what ends a line for the parser */
const LINE_BREAK = /[\n\r\u2028\u2029]/g;

/** Where the line starting at an offset ends (the text's length for the last line). */
function lineEnds(text: string): (start: number) => number {
  const end = (at: number): number => (at === -1 ? text.length : at);
  // LF alone, as tools write manifests: the native search
  if (!/[\r\u2028\u2029]/.test(text)) return (start) => end(text.indexOf("\n", start));
  return (start) => {
    LINE_BREAK.lastIndex = start;
    return end(LINE_BREAK.exec(text)?.index ?? -1);
  };
}

/** The document marker (`---` or `...`, then white space or the line's end) the line starts with. */
function markerAt(text: string, start: number, end: number): "---" | "..." | undefined {
  const marker = text.startsWith("---", start) ? "---" : text.startsWith("...", start) ? "..." : undefined;
  if (marker === undefined) return undefined;
  return start + 3 === end || /\s/.test(text[start + 3] as string) ? marker : undefined;
}

const EXTENSIONS = new Set([".yaml", ".yml", ".json"]);
const CHUNK_BYTES = 64 * 1024;

/** whether a directory walk reads this file (`*.yaml`, `*.yml`, `*.json`) */
export function isManifestFile(path: string): boolean {
  return EXTENSIONS.has(extname(path).toLowerCase());
}

/** What a file is, when it is not a regular file or a directory. */
function specialKind(s: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean }): string {
  if (s.isFIFO()) return "a FIFO";
  if (s.isSocket()) return "a socket";
  if (s.isCharacterDevice()) return "a character device";
  return "a block device";
}

const notRegular = (kind: string): string => `not a regular file (${kind}): skipped`;

/** The files named, and the manifest files under the directories named, each once. */
export async function listManifestFiles(paths: readonly string[]): Promise<{
  files: ManifestFile[];
  skipped: SkippedFile[];
  problems: { file: string; detail: string }[];
}> {
  const files: ManifestFile[] = [];
  const skipped: SkippedFile[] = [];
  const problems: { file: string; detail: string }[] = [];
  const visited = new Set<string>();
  const walk = async (path: string, named: boolean): Promise<void> => {
    const real = await realpath(path);
    if (visited.has(real)) return;
    visited.add(real);
    const s = await stat(real);
    if (s.isDirectory()) {
      const names = (await readdir(path)).filter((n) => !n.startsWith(".")).sort();
      for (const name of names) await walk(join(path, name), false);
    } else if (named) {
      files.push({ path, named, size: s.isFile() ? s.size : 0 });
    } else if (isManifestFile(path)) {
      if (s.isFile()) files.push({ path, named, size: s.size });
      else skipped.push({ file: path, reason: notRegular(specialKind(s)) });
    }
  };
  for (const path of paths) {
    try {
      await walk(path, true);
    } catch (error) {
      problems.push({ file: path, detail: `cannot read: ${(error as Error).message}` });
    }
  }
  return { files, skipped, problems };
}

/**
 * The file's text, read to at most `maxBytes` (a larger one is refused without being read
 * whole), or why not. `regularOnly`: a file named on the command line is treated as one found
 * in a directory (the directory source names the files fs.watch reported).
 */
export async function readManifestFile(
  file: ManifestFile,
  options: { maxBytes: number; regularOnly: boolean },
): Promise<ReadOutcome> {
  const anything = file.named && !options.regularOnly;
  const tooLarge = {
    problem: `larger than ${options.maxBytes} bytes, the cap on a manifest file: refused unread; split it`,
  };
  let handle;
  try {
    // without O_NONBLOCK, opening a FIFO waits for a writer
    handle = await open(file.path, anything ? constants.O_RDONLY : constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { problem: `cannot read: ${(error as Error).message}` };
  }
  try {
    const s = await handle.stat();
    if (!anything && !s.isFile()) return { skipped: notRegular(specialKind(s)) };
    if (s.isFile() && s.size > options.maxBytes) return tooLarge;
    const chunks: Buffer[] = [];
    let bytes = 0;
    for (;;) {
      const { bytesRead, buffer } = await handle.read(Buffer.alloc(CHUNK_BYTES), 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      bytes += bytesRead;
      // a file that grew since its size was read, or a pipe
      if (bytes > options.maxBytes) return tooLarge;
      chunks.push(buffer.subarray(0, bytesRead));
    }
    return { text: Buffer.concat(chunks).toString("utf8") };
  } catch (error) {
    return { problem: `cannot read: ${(error as Error).message}` };
  } finally {
    await handle.close();
  }
}
