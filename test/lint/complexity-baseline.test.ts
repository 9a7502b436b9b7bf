/**
 * The per-function complexity baseline (scripts/complexity-baseline.ts): what fails, and what each
 * message tells you to do. Fixtures at a limit of 2, where `if (a) {} if (b) {}` is 3.
 */
import { Linter } from "eslint";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  BASELINE_FILE,
  type BaselineEntry,
  complexityBaselineRule,
  loadBaseline,
} from "../../scripts/complexity-baseline.ts";

const ROOT = "/repo";
const MAX = 2;

function lint(code: string, baseline: BaselineEntry[], file = "src/a.ts"): string[] {
  const linter = new Linter({ configType: "flat", cwd: ROOT });
  const messages = linter.verify(
    code,
    [
      {
        files: ["**/*.ts"],
        plugins: { house: { rules: { "complexity-baseline": complexityBaselineRule } } },
        rules: { "house/complexity-baseline": ["error", { max: MAX, root: ROOT, baseline }] },
      },
    ],
    { filename: join(ROOT, file) },
  );
  return messages.map((m) => `${m.line}: ${m.message}`);
}

const entry = (fn: string, complexity: number, file = "src/a.ts"): BaselineEntry => ({
  file,
  function: fn,
  complexity,
});

const THREE = "function f(a, b) {\n  if (a) {}\n  if (b) {}\n}\n";
const FOUR = "function f(a, b, c) {\n  if (a) {}\n  if (b) {}\n  if (c) {}\n}\n";

describe("the complexity baseline", () => {
  const cases: {
    reason: string;
    code: string;
    baseline: BaselineEntry[];
    file?: string;
    expected: RegExp[];
  }[] = [
    {
      reason: "a function at the limit passes unlisted",
      code: "function f(a) { if (a) {} }",
      baseline: [],
      expected: [],
    },
    { reason: "a listed function at its entry passes", code: THREE, baseline: [entry("f", 3)], expected: [] },
    {
      reason: "a new function over the limit fails, saying how to carry an entry over after a move",
      code: THREE,
      baseline: [],
      expected: [
        /^1: f has a complexity of 3 \(limit 2\): split it\. If it moved here from another file or was renamed, change its entry in complexity-baseline\.json to file "src\/a\.ts", function "f"\.$/,
      ],
    },
    {
      reason: "a listed function that grew fails",
      code: FOUR,
      baseline: [entry("f", 3)],
      expected: [
        /^1: f has a complexity of 4, over its baseline of 3 in complexity-baseline\.json: split it/,
      ],
    },
    {
      reason: "a listed function that came down, still over the limit, asks for its entry to be lowered",
      code: THREE,
      baseline: [entry("f", 4)],
      expected: [
        /^1: f came down to a complexity of 3 from 4: lower its entry in complexity-baseline\.json to 3\.$/,
      ],
    },
    {
      reason: "a listed function at the limit or below asks for its entry to be removed",
      code: "function f(a) { if (a) {} }",
      baseline: [entry("f", 3)],
      expected: [
        /^1: complexity-baseline\.json lists f in src\/a\.ts at 3, but no function of that name here is over 2: remove the entry/,
      ],
    },
    {
      reason: "an entry of another file does not cover a function moved here (its own file reports it gone)",
      code: THREE,
      baseline: [entry("f", 3, "src/old.ts")],
      expected: [/^1: f has a complexity of 3 \(limit 2\): split it\. If it moved here/],
    },
    {
      reason: "the entry names the file relative to the root, so a moved file's entry follows its new path",
      code: THREE,
      file: "src/kind/a.ts",
      baseline: [entry("f", 3, "src/kind/a.ts")],
      expected: [],
    },
    {
      reason: "a method is named by its class, a private one with its #",
      code: "class C {\n  #m(a, b) { if (a) {} if (b) {} }\n  n(a, b) { if (a) {} if (b) {} }\n}\n",
      baseline: [entry("C.#m", 3)],
      expected: [/^3: C\.n has a complexity of 3/],
    },
    {
      reason:
        "a function assigned to a variable or a property is named by it, an anonymous one by the function it is in",
      code:
        "const g = (a, b) => { if (a) {} if (b) {} };\n" +
        "const o = { h(a, b) { if (a) {} if (b) {} } };\n" +
        "function outer() { return [1].map((a) => { if (a) {} if (a) {} }); }\n",
      baseline: [entry("g", 3), entry("h", 3), entry("outer>anonymous", 3)],
      expected: [],
    },
    {
      reason: "two functions of one name are held to their entry by the worse of them",
      code: "const o = { f(a, b) { if (a) {} if (b) {} } };\nconst p = { f(a, b, c) { if (a) {} if (b) {} if (c) {} } };\n",
      baseline: [entry("f", 3)],
      expected: [/^2: f has a complexity of 4, over its baseline of 3/],
    },
  ];
  it.each(cases)("$reason", ({ code, baseline, file, expected }) => {
    const messages = lint(code, baseline, file);
    expect(messages).toHaveLength(expected.length);
    expected.forEach((pattern, i) => expect(messages[i]).toMatch(pattern));
  });
});

describe("loading the baseline", () => {
  function root(entries: unknown): string {
    const dir = mkdtempSync(join(tmpdir(), "complexity-baseline-"));
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src/a.ts"), "");
    writeFileSync(join(dir, BASELINE_FILE), JSON.stringify(entries));
    return dir;
  }

  it("reads entries whose files exist", () => {
    expect(loadBaseline(root([entry("f", 3)]), MAX)).toEqual([entry("f", 3)]);
  });

  it.each([
    {
      reason: "a file that is gone (moved)",
      entries: [entry("f", 3, "src/b.ts")],
      error: /src\/b\.ts f: the file does not exist; if it moved \(git mv\), change the entry's file/,
    },
    {
      reason: "an entry at the limit",
      entries: [entry("f", 2)],
      error: /src\/a\.ts f: complexity must be an integer over 2, not 2/,
    },
    {
      reason: "an entry listed twice",
      entries: [entry("f", 3), entry("f", 4)],
      error: /src\/a\.ts f: listed twice/,
    },
  ])("fails on $reason", ({ entries, error }) => {
    expect(() => loadBaseline(root(entries), MAX)).toThrow(error);
  });

  it("the repository's own baseline loads: every entry's file exists", () => {
    const repo = join(import.meta.dirname, "../..");
    expect(() => loadBaseline(repo, 15)).not.toThrow();
  });
});
