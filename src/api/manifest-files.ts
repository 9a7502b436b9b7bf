/**
 * Which files a set of paths names (files as given, and `*.yaml`, `*.yml`, `*.json` under
 * directories, recursively, in sorted order, each once) and reading one of them under a size
 * cap. A file found in a directory that is not a regular file (a FIFO, a device, a socket) is
 * skipped with a note: opening a FIFO for reading waits for a writer, forever. It is opened
 * without blocking and checked again on the open handle, so a regular file replaced by a FIFO
 * in between is skipped too. A file named on the command line is read whatever it is (`-f
 * /dev/stdin`, `-f <(kustomize build)`), under the same cap.
 */
import { constants } from "node:fs";
import { open, readdir, realpath, stat } from "node:fs/promises";
import { extname, join } from "node:path";

export interface ManifestFile {
  path: string;
  /** named on the command line (read whatever it is), not found in a directory */
  named: boolean;
}

/** A file left unread, and why (for a note, not an error). */
export interface SkippedFile {
  file: string;
  reason: string;
}

export type ReadOutcome = { text: string } | { skipped: string } | { problem: string };

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
      files.push({ path, named });
    } else if (isManifestFile(path)) {
      if (s.isFile()) files.push({ path, named });
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
