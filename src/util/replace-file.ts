/**
 * Replaces a file's content all at once and durably: a reader, a crash or a power loss finds the
 * old content or the new, never a mix or an empty file. The new content goes to a temporary file
 * beside it, created exclusively under a name nobody can guess (a symlink planted at a fixed
 * name would be followed and its target overwritten), flushed to disk, renamed over the file
 * (rename replaces a symlink there, never its target), and the directory is flushed so that the
 * rename itself survives a power loss.
 */
import { randomBytes } from "node:crypto";
import { open, readdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** `.<name>.<16 hex digits>.tmp`: the temporary files of `file`, dot-named so that no manifest walk reads them */
function temporaryPattern(file: string): RegExp {
  const name = basename(file).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^\\.${name}\\.[0-9a-f]{16}\\.tmp$`);
}

export async function replaceFile(file: string, content: string): Promise<void> {
  const dir = dirname(file);
  const temporary = join(dir, `.${basename(file)}.${randomBytes(8).toString("hex")}.tmp`);
  // "wx": O_CREAT | O_EXCL, which fails on any existing name, a symlink included
  const handle = await open(temporary, "wx");
  try {
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dir);
}

/**
 * Removes the temporary files a crash left beside `file`. Only for its one writer (the status
 * file's lock holder): another writer's temporary in flight would be removed with them.
 */
export async function removeLeftovers(file: string): Promise<void> {
  const pattern = temporaryPattern(file);
  const names = await readdir(dirname(file)).catch(() => []);
  for (const name of names)
    if (pattern.test(name)) await unlink(join(dirname(file), name)).catch(() => undefined);
}

async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch (error) {
    // some platforms cannot open or flush a directory (Windows: EISDIR, EPERM); the rename is done
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EPERM" && code !== "EINVAL") throw error;
  } finally {
    await handle?.close();
  }
}
