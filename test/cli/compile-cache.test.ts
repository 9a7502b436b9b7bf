/**
 * The command keeps Node's compile cache (main.ts): a run leaves V8's code for the modules it
 * loaded under os.tmpdir(), for the next run of the same build to skip compiling them; it honours
 * NODE_DISABLE_COMPILE_CACHE, and a directory it cannot write costs nothing but the cache.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = mkdtempSync(join(tmpdir(), "nsxv-compile-cache-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `nsxv-operator --version` with TMPDIR `tmp`, without the environment's own cache settings */
function version(
  tmp: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { NODE_COMPILE_CACHE: _dir, NODE_DISABLE_COMPILE_CACHE: _off, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["src/cli/main.ts", "--version"],
      { env: { ...inherited, TMPDIR: tmp, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

/** the files of the cache a run left under `tmp` */
function cached(tmp: string): string[] {
  const cache = join(tmp, "node-compile-cache");
  if (!existsSync(cache)) return [];
  return readdirSync(cache, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
}

describe("the compile cache", () => {
  it("is written under os.tmpdir() by a run", async () => {
    const tmp = mkdtempSync(join(root, "on-"));
    const run = await version(tmp);
    expect(run.code, run.stderr).toBe(0);
    expect(cached(tmp).length, "modules cached").toBeGreaterThan(1);
  });

  it("is not written with NODE_DISABLE_COMPILE_CACHE=1", async () => {
    const tmp = mkdtempSync(join(root, "off-"));
    const run = await version(tmp, { NODE_DISABLE_COMPILE_CACHE: "1" });
    expect(run.code, run.stderr).toBe(0);
    expect(cached(tmp)).toEqual([]);
  });

  it("costs the command nothing where its directory cannot be made (os.tmpdir() is a file)", async () => {
    const tmp = join(root, "a-file");
    writeFileSync(tmp, "");
    const run = await version(tmp);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(run.stderr).toBe("");
  });
});
