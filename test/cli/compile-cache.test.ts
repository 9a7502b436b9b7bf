/**
 * The command keeps Node's compile cache only where this user alone can write it (compile-cache.ts):
 * a run leaves V8's code for the modules it loaded under $XDG_CACHE_HOME or ~/.cache, never under
 * the shared os.tmpdir(); a cache directory another user could write (or a link to one) is not
 * used; NODE_DISABLE_COMPILE_CACHE turns it off; a directory that cannot be made costs nothing
 * but the cache.
 */
import { execFile } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ownCompileCacheDirectory } from "../../src/cli/compile-cache.ts";

const root = mkdtempSync(join(tmpdir(), "nsxv-compile-cache-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const uid = process.getuid?.() ?? 0;

/** `nsxv-operator --version` with only the cache settings given in `env` */
function version(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const {
    NODE_COMPILE_CACHE: _dir,
    NODE_DISABLE_COMPILE_CACHE: _off,
    XDG_CACHE_HOME: _xdg,
    HOME: _home,
    ...inherited
  } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["src/cli/main.ts", "--version"],
      { env: { ...inherited, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

/** the files under `dir`, at any depth */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
}

/** a fresh home and tmp dir for one case */
function sandbox(name: string): { home: string; tmp: string; cache: string } {
  const at = mkdtempSync(join(root, `${name}-`));
  const home = join(at, "home");
  const tmp = join(at, "tmp");
  mkdirSync(home);
  mkdirSync(tmp);
  return { home, tmp, cache: join(home, ".cache", "nsxv-operator", "compile-cache") };
}

describe("the compile cache", () => {
  it("is written under ~/.cache by a run, and nothing under the shared os.tmpdir()", async () => {
    const { home, tmp, cache } = sandbox("home");
    const run = await version({ HOME: home, TMPDIR: tmp });
    expect(run.code, run.stderr).toBe(0);
    expect(files(cache).length, "modules cached").toBeGreaterThan(1);
    expect(files(tmp)).toEqual([]);
  });

  it("is written under $XDG_CACHE_HOME when it is set", async () => {
    const { home, tmp } = sandbox("xdg");
    const xdg = join(tmp, "..", "xdg");
    const run = await version({ HOME: home, TMPDIR: tmp, XDG_CACHE_HOME: xdg });
    expect(run.code, run.stderr).toBe(0);
    expect(files(join(xdg, "nsxv-operator", "compile-cache")).length).toBeGreaterThan(1);
    expect(files(home)).toEqual([]);
  });

  it("is not written with NODE_DISABLE_COMPILE_CACHE=1", async () => {
    const { home, tmp } = sandbox("off");
    const run = await version({ HOME: home, TMPDIR: tmp, NODE_DISABLE_COMPILE_CACHE: "1" });
    expect(run.code, run.stderr).toBe(0);
    expect([...files(home), ...files(tmp)]).toEqual([]);
  });

  it("costs the command nothing where its directory cannot be made (HOME is a file)", async () => {
    const { tmp } = sandbox("file");
    const home = join(tmp, "a-file");
    writeFileSync(home, "");
    const run = await version({ HOME: home, TMPDIR: tmp });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(run.stderr).toBe("");
  });
});

describe("ownCompileCacheDirectory", () => {
  const cases: { reason: string; arrange: (cacheHome: string) => void; used: boolean }[] = [
    { reason: "a fresh cache directory is made for this user alone", arrange: () => {}, used: true },
    {
      reason: "a directory others may write is code anyone can plant",
      arrange: (cacheHome) => {
        mkdirSync(join(cacheHome, "nsxv-operator", "compile-cache"), { recursive: true });
        chmodSync(join(cacheHome, "nsxv-operator", "compile-cache"), 0o777);
      },
      used: false,
    },
    {
      reason: "the directory above it writable by its group lets the group swap the cache",
      arrange: (cacheHome) => {
        mkdirSync(join(cacheHome, "nsxv-operator"), { recursive: true });
        chmodSync(join(cacheHome, "nsxv-operator"), 0o770);
      },
      used: false,
    },
    {
      reason: "a link may lead to a directory somebody else controls",
      arrange: (cacheHome) => {
        const elsewhere = mkdtempSync(join(root, "elsewhere-"));
        mkdirSync(cacheHome, { recursive: true });
        symlinkSync(elsewhere, join(cacheHome, "nsxv-operator"));
      },
      used: false,
    },
  ];
  it.each(cases)("$reason", ({ arrange, used }) => {
    const cacheHome = join(mkdtempSync(join(root, "unit-")), "cache");
    arrange(cacheHome);
    const directory = ownCompileCacheDirectory({ XDG_CACHE_HOME: cacheHome }, uid);
    expect(directory).toBe(used ? join(cacheHome, "nsxv-operator", "compile-cache") : undefined);
  });

  it("refuses a directory that belongs to another user", () => {
    if (uid !== 0) {
      // only root can give a directory away; as another user the case cannot be arranged
      expect(ownCompileCacheDirectory({ XDG_CACHE_HOME: join(root, "any") }, uid + 1)).toBeUndefined();
      return;
    }
    const cacheHome = join(mkdtempSync(join(root, "owner-")), "cache");
    mkdirSync(join(cacheHome, "nsxv-operator", "compile-cache"), { recursive: true, mode: 0o700 });
    chownSync(join(cacheHome, "nsxv-operator", "compile-cache"), 4242, 4242);
    expect(ownCompileCacheDirectory({ XDG_CACHE_HOME: cacheHome }, uid)).toBeUndefined();
  });

  it("has no directory without an absolute HOME or XDG_CACHE_HOME", () => {
    expect(ownCompileCacheDirectory({}, uid)).toBeUndefined();
    expect(ownCompileCacheDirectory({ HOME: "relative/home" }, uid)).toBeUndefined();
  });
});
