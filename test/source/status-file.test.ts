/**
 * The status file cannot be redirected or half-written (issue 28): its temporary file is created
 * exclusively under a name nobody can guess, so a symlink planted beside it redirects nothing;
 * what a crash left is cleaned up at the next start. The temporary's random part is made
 * predictable here (node:crypto's randomBytes, mocked) to plant a symlink at the very name.
 */
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { nopLogger } from "../../src/controller/controller.ts";
import { StatusMemory } from "../../src/source/status-memory.ts";

const random = vi.hoisted(() => ({ fixed: false }));
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  const randomBytes = (size: number) => (random.fixed ? Buffer.alloc(size, 0xab) : actual.randomBytes(size));
  return { ...actual, default: { ...actual, randomBytes }, randomBytes };
});

const PRECIOUS = "precious\n";

describe("writing the status file", () => {
  let dir = "";
  let file = "";
  let victim = "";

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "nsxv-status-file-"));
    file = join(dir, "status.json");
    victim = join(dir, "victim");
    writeFileSync(victim, PRECIOUS);
    random.fixed = false;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function remember(memory: StatusMemory, generation: number): Promise<void> {
    memory.objects.set("EdgeTenant/default/web", { generation, spec: "{}" });
    await memory.persist();
  }

  it("follows no symlink planted at the old fixed temporary name", async () => {
    symlinkSync(victim, `${file}.tmp`);
    const memory = new StatusMemory(file, nopLogger);
    await memory.read();
    await remember(memory, 1);
    await remember(memory, 2);
    expect(readFileSync(victim, "utf8"), "the link's target is untouched").toBe(PRECIOUS);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({
      objects: { "EdgeTenant/default/web": { generation: 2 } },
    });
    expect(lstatSync(file).isFile(), "a file of its own, not through a link").toBe(true);
  });

  it("creates its temporary exclusively: a symlink at the very name fails the write and changes nothing", async () => {
    const memory = new StatusMemory(file, nopLogger);
    await memory.read();
    await remember(memory, 1);
    random.fixed = true;
    const planted = join(dir, `.status.json.${"ab".repeat(8)}.tmp`);
    symlinkSync(victim, planted);
    await expect(remember(memory, 2)).rejects.toThrow(/cannot write the status file.*EEXIST/);
    expect(readFileSync(victim, "utf8"), "the link's target is untouched").toBe(PRECIOUS);
    expect(JSON.parse(readFileSync(file, "utf8")), "the old status file, whole").toMatchObject({
      objects: { "EdgeTenant/default/web": { generation: 1 } },
    });
    expect(lstatSync(planted).isSymbolicLink(), "the planted link is not removed through").toBe(true);
  });

  it("leaves only the status file, and removes what a crash left at the next start", async () => {
    const leftover = join(dir, `.status.json.${"0123456789abcdef"}.tmp`);
    writeFileSync(leftover, "{half");
    const memory = new StatusMemory(file, nopLogger);
    await memory.read();
    expect(existsSync(leftover), "a crash's temporary removed").toBe(false);
    await remember(memory, 1);
    await remember(memory, 2);
    expect(readdirSync(dir).sort()).toEqual(["status.json", "victim"]);
  });
});
