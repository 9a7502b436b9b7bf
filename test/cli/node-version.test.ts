/**
 * On a Node.js older than the dependencies need, the command says so in one line and exits 1,
 * before it loads anything that would fail with a TypeError instead. Checked with the version
 * faked in a child of this Node (always), and with a real older Node found on PATH running the
 * entry as the build emits it (where the machine has one, as Debian's Node 20).
 */
import { execFile, execFileSync } from "node:child_process";
import {
  accessSync,
  constants,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { MINIMUM_NODE, nodeTooOld } from "../../src/cli/node-version.ts";

function run(
  node: string,
  args: string[],
  cwd = process.cwd(),
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(node, args, { cwd, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({
        code: error === null ? 0 : typeof error.code === "number" ? error.code : -1,
        stdout,
        stderr,
      });
    });
  });
}

describe("nodeTooOld", () => {
  const cases = [
    { version: "20.20.2", tooOld: true, reason: "Debian's Node 20: undici 8 and commander 15 fail on it" },
    { version: "22.18.0", tooOld: true, reason: "one minor below undici's minimum" },
    { version: "22.19.0", tooOld: false, reason: "the minimum itself" },
    { version: "22.22.1", tooOld: false, reason: "a later 22" },
    { version: "23.0.0", tooOld: false, reason: "a later major with a lower minor" },
    { version: "24.21.0", tooOld: false, reason: "the Node of the image" },
    { version: "100.0.0", tooOld: false, reason: "three digits compare as numbers, not text" },
  ];
  it.each(cases)("$version", ({ version, tooOld, reason }) => {
    const line = nodeTooOld(version);
    expect(line, reason).toBe(
      tooOld ? `nsxv-operator needs Node >= ${MINIMUM_NODE} (this is Node v${version})` : undefined,
    );
  });

  it("the minimum is package.json's engines.node, and no production dependency asks for more", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as {
      engines: { node: string };
      dependencies: Record<string, string>;
    };
    expect(pkg.engines.node).toBe(`>=${MINIMUM_NODE}`);
    for (const name of Object.keys(pkg.dependencies)) {
      const engines = (
        JSON.parse(readFileSync(join("node_modules", name, "package.json"), "utf8")) as {
          engines?: { node?: string };
        }
      ).engines?.node;
      // ">=X.Y.Z" is the form that says a minimum; "^16 || >=20" and the like ask for less
      const minimum = /^>=\s*(\d+\.\d+)(\.\d+)?$/.exec(engines ?? "")?.[1];
      if (minimum !== undefined) {
        expect(nodeTooOld(`${MINIMUM_NODE}.0`, minimum), `${name} needs ${engines}`).toBeUndefined();
      }
    }
  });
});

describe("the entry on an old Node", () => {
  it("with the version faked: one line, exit 1, and nothing loaded besides the check", async () => {
    // a preload that makes this Node say it is 20, and prints every module the entry resolves
    const preload = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from "node:module";
Object.defineProperty(process.versions, "node", { value: "20.20.2" });
registerHooks({ resolve(specifier, context, next) { console.log(specifier); return next(specifier, context); } });
`)}`;
    const result = await run(process.execPath, ["--import", preload, "src/cli/main.ts", "run"]);
    expect(result.stderr).toBe(`nsxv-operator needs Node >= ${MINIMUM_NODE} (this is Node v20.20.2)\n`);
    expect(result.code).toBe(1);
    expect(result.stdout.split("\n").filter((line) => line !== "")).toEqual([
      expect.stringMatching(/src\/cli\/main\.ts$/),
      "./node-version.ts",
    ]);
  });

  const older = olderNodeOnPath();
  const temp = mkdtempSync(join(tmpdir(), "nsxv-old-node-"));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  // an opportunistic check: CI's images carry one Node, and the faked version above covers the logic
  it.skipIf(older === undefined)(
    `with ${older?.version ?? "an older Node (none on PATH: skipped)"}: dist/cli/main.js says it needs a newer one`,
    async () => {
      const app = emitLikeTheBuild(temp);
      const entry = await run(older!.path, ["dist/cli/main.js", "run"], app);
      expect(entry).toEqual({
        code: 1,
        stdout: "",
        stderr: `nsxv-operator needs Node >= ${MINIMUM_NODE} (this is Node v${older!.version})\n`,
      });
      // what the entry spares the user: undici, loaded by every command, fails there without naming Node
      const undici = await run(older!.path, ["--input-type=module", "-e", 'await import("undici")'], app);
      expect(undici.code).toBe(1);
      expect(undici.stderr).toContain("TypeError");
    },
  );
});

/** The first `node` on PATH older than MINIMUM_NODE (this process's own is newer). */
function olderNodeOnPath(): { path: string; version: string } | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const path = join(dir, "node");
    try {
      accessSync(path, constants.X_OK);
    } catch {
      continue;
    }
    const version = execFileSync(path, ["-p", "process.versions.node"], { encoding: "utf8" }).trim();
    if (nodeTooOld(version) !== undefined) return { path, version };
  }
  return undefined;
}

/**
 * src/ as JavaScript under `dir`/dist, as `npm run build` lays it out (transpiled file by file:
 * no type check, which the build does and this test does not need), beside package.json and the
 * project's node_modules.
 */
function emitLikeTheBuild(dir: string): string {
  const sources = readdirSync("src", { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  for (const file of sources) {
    const { outputText } = ts.transpileModule(readFileSync(join("src", file), "utf8"), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2024,
        rewriteRelativeImportExtensions: true,
        verbatimModuleSyntax: true,
      },
    });
    const out = join(dir, "dist", file.replace(/\.ts$/, ".js"));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, outputText);
  }
  cpSync("package.json", join(dir, "package.json"));
  symlinkSync(join(process.cwd(), "node_modules"), join(dir, "node_modules"));
  return dir;
}
