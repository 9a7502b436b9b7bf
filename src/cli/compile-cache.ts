/**
 * Where the command keeps Node's compile cache (V8's code for the modules a run loaded, so that
 * the next run of the same build compiles none of them). V8's code cache is code: whoever can
 * write the directory can make the next run execute what they wrote. Node's default directory,
 * under os.tmpdir(), is shared by every user of most machines, so it is never used here: the
 * cache lives in the user's own cache directory ($XDG_CACHE_HOME, else ~/.cache), and only when
 * that directory and the one holding it are real directories of this user that nobody else may
 * write. Anywhere else the command runs without a cache: it is an optimisation, never a need.
 * NODE_COMPILE_CACHE names a directory of the user's choosing and is Node's to honour;
 * NODE_DISABLE_COMPILE_CACHE=1 turns the cache off.
 */
import { lstatSync, mkdirSync } from "node:fs";
import { enableCompileCache } from "node:module";
import { isAbsolute, join } from "node:path";

/** The directory for the cache under the user's cache directory; undefined where none is safe. */
export function ownCompileCacheDirectory(
  env: Readonly<Record<string, string | undefined>>,
  uid: number | undefined,
): string | undefined {
  const base = userCacheHome(env);
  if (base === undefined || uid === undefined) return undefined;
  const program = join(base, "nsxv-operator");
  const directory = join(program, "compile-cache");
  try {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
  } catch {
    return undefined;
  }
  return [program, directory].every((d) => onlyWritableBy(d, uid)) ? directory : undefined;
}

/** $XDG_CACHE_HOME, else $HOME/.cache: absolute paths only, as the XDG spec asks */
function userCacheHome(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const xdg = env["XDG_CACHE_HOME"];
  if (xdg !== undefined && isAbsolute(xdg)) return xdg;
  const home = env["HOME"];
  return home !== undefined && isAbsolute(home) ? join(home, ".cache") : undefined;
}

/** a directory itself (not a link to one), owned by `uid`, that its group and others cannot write */
function onlyWritableBy(path: string, uid: number): boolean {
  try {
    const stat = lstatSync(path);
    return stat.isDirectory() && stat.uid === uid && (stat.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** What main.ts does once the Node version is checked: Node's cache in a directory only this user can write, if any. */
export function enableOwnCompileCache(env: Readonly<Record<string, string | undefined>>): void {
  if (env["NODE_DISABLE_COMPILE_CACHE"] !== undefined) return;
  if (env["NODE_COMPILE_CACHE"] !== undefined) {
    enableCompileCache();
    return;
  }
  const directory = ownCompileCacheDirectory(env, process.getuid?.());
  if (directory !== undefined) enableCompileCache(directory);
}
