/**
 * Prose that names a file keeps naming one that exists: the module header of every file in src/
 * (its first comment block) and the paths README.md and docs/ give under src/, test/ and docs/.
 * docs/architecture.md's section on the folders lists the folders of src/ as they are.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(`${dir}/${entry.name}`) : [`${dir}/${entry.name}`],
  );
}

/** The first comment block of a module: a block comment, or a run of line comments. */
function moduleHeader(text: string): string {
  return /^\s*(\/\*[\s\S]*?\*\/|(?:[ \t]*\/\/[^\n]*\n)+)/.exec(text)?.[1] ?? "";
}

/**
 * The file names a text gives: `name.ts`, `dir/name.ts`, `src/dir/` (a folder). A name followed
 * by `*`, `<` or `{` is a pattern, not a file.
 */
function namedFiles(text: string): string[] {
  const file = /(?<![\w./@-])((?:[\w-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|mjs|md|yaml|json|sh))(?![\w*<{-])/g;
  return [...text.matchAll(file)].map((m) => m[1] as string);
}

/** The paths a text gives under src/, test/ or docs/, files or folders. */
function namedRepoPaths(text: string): string[] {
  const path = /(?<![\w./@-])((?:src|test|docs)\/(?:[\w-]+(?:\.[\w-]+)*\/?)*)(?![\w*<{/-])/g;
  return [...text.matchAll(path)].map((m) => m[1] as string);
}

describe("the pattern of a named file", () => {
  it.each([
    { text: "see kube-watch.ts.", found: ["kube-watch.ts"], why: "a sentence's full stop is not part of it" },
    { text: "(src/kube/list-watch.ts)", found: ["src/kube/list-watch.ts"], why: "in brackets" },
    { text: "source/kubernetes*.ts and test/<area>.ts", found: [], why: "patterns name no one file" },
    { text: "@kubernetes/client-node's index.d.ts", found: ["index.d.ts"], why: "a package is not a path" },
  ])("$why", ({ text, found }) => {
    expect(namedFiles(text)).toEqual(found);
  });

  it.each([
    {
      text: "src/api/ and src/kube/.",
      found: ["src/api/", "src/kube/"],
      why: "folders, without the full stop",
    },
    { text: "test/integration/<file>", found: [], why: "a placeholder names no path" },
    { text: "`docs/testing.md`", found: ["docs/testing.md"], why: "in backticks" },
  ])("$why (repository paths)", ({ text, found }) => {
    expect(namedRepoPaths(text)).toEqual(found);
  });
});

describe("module headers in src/", () => {
  const modules = filesUnder("src").filter((f) => f.endsWith(".ts"));
  const named = modules.flatMap((module) =>
    namedFiles(moduleHeader(read(module))).map((name) => ({ module, name })),
  );

  it("name files (the check has something to check)", () => {
    expect(named.length).toBeGreaterThan(50);
  });

  it.each(named)("$module names $name", ({ module, name }) => {
    // beside the module, from the repository's root, or from src/ ("reconcile/routing.ts")
    const candidates = [join(dirname(module), name), name, join("src", name)];
    expect(
      candidates.some((c) => existsSync(join(ROOT, c))),
      `${module} names ${name}: no such file beside it, from the root or under src/`,
    ).toBe(true);
  });
});

describe("paths in README.md and docs/", () => {
  const docs = ["README.md", ...filesUnder("docs").filter((f) => f.endsWith(".md"))];
  const named = docs.flatMap((doc) => namedRepoPaths(read(doc)).map((path) => ({ doc, path })));

  it("are found (the check has something to check)", () => {
    expect(named.filter((n) => n.doc === "README.md").length).toBeGreaterThan(30);
  });

  it.each(named)("$doc names $path", ({ path }) => {
    expect(existsSync(join(ROOT, path))).toBe(true);
  });
});

describe("docs/architecture.md's folders", () => {
  const section = /^## The folders\n([\s\S]*?)^## /m.exec(read("docs/architecture.md"))?.[1] ?? "";
  const tree = /```text\n([\s\S]*?)```/.exec(section)?.[1] ?? "";

  it("lists every folder of src/, and no other", () => {
    const listed = [...tree.matchAll(/^src\/([\w-]+)\//gm)].map((m) => m[1]);
    const folders = readdirSync(join(ROOT, "src"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(listed.sort()).toEqual(folders.sort());
  });
});
