/**
 * The block reader (src/api/block-yaml.ts) never reads a text otherwise than the yaml library:
 * whatever it accepts, the library reads without a problem into the same values (key order, -0,
 * NaN and own `__proto__` included), the same documents and the same lines; what it does not
 * accept goes to the library. Checked on tables with a reason per case, on every YAML file of
 * the repository, on generated manifests in many layouts and on those texts mutated at random;
 * and the reader counts at least the tokens the library's scan counts, so that a text the scan
 * refuses is never read here.
 */
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CST, Lexer, stringify } from "yaml";
import { readBlockYaml } from "../../src/api/block-yaml.ts";
import { countDocuments } from "../../src/api/manifest-files.ts";
import { MANIFEST_LIMITS } from "../../src/api/manifest-limits.ts";
import { readYamlDocuments, refusedBeforeParsing } from "../../src/api/yaml-guard.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** tokens as the library's scan counts them (yaml-guard.ts' scanYamlText) */
function lexerTokens(text: string): number {
  const uncounted = new Set(["space", "newline", "comment", "byte-order-mark", "flow-error-end"]);
  let tokens = 0;
  let scalarText = false;
  for (const token of new Lexer().lex(text)) {
    if (scalarText) {
      scalarText = false;
      continue;
    }
    const type = CST.tokenType(token);
    if (type === "scalar") scalarText = true;
    if (type !== null && !uncounted.has(type)) tokens++;
  }
  return tokens;
}

/** the key order at every level, and the values with Object.is for numbers */
function sameValue(a: unknown, b: unknown): boolean {
  if (!isDeepStrictEqual(a, b)) return false;
  if (typeof a !== "object" || a === null) return true;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b as object);
  return (
    keysA.join("\u0000") === keysB.join("\u0000") &&
    keysA.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/** paths to every key and item whose steps are plain words (the library looks keys up by their scalar value) */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== "object" || value === null) return [];
  const steps: (string | number)[] = Array.isArray(value)
    ? value.map((_, i) => i)
    : Object.keys(value).filter((k) => /^[a-z][a-zA-Z]*$/.test(k) && !/^(?:null|true|false)$/i.test(k));
  return steps.flatMap((step) => [
    [...prefix, step],
    ...paths((value as Record<string | number, unknown>)[step], [...prefix, step]),
  ]);
}

/**
 * What the block reader makes of the text, checked against the library: undefined when it left
 * the text to the library; throws when it read it otherwise.
 */
function checked(text: string): "read" | "left" {
  const block = readBlockYaml(text, MANIFEST_LIMITS);
  if (block === undefined) return "left";
  const refused = refusedBeforeParsing(text, MANIFEST_LIMITS);
  if (refused !== undefined)
    throw new Error(
      `block read what the library's scan refuses (${refused.detail}): ${JSON.stringify(text)}`,
    );
  const library = readYamlDocuments(text);
  const where = JSON.stringify(text);
  if ("problem" in library)
    throw new Error(`block read what the library refuses (${library.problem.detail}): ${where}`);
  expect(block.documents.length, `documents of ${where}`).toBe(library.documents.length);
  expect(countDocuments(text), `documents the ledger counts in ${where}`).toBe(block.documents.length);
  block.documents.forEach((doc, i) => {
    const lib = library.documents[i]!;
    expect(lib.problem, `the library's problem with document ${i} of ${where}`).toBeUndefined();
    expect(doc.value === null, `document ${i} of ${where} empty`).toBe(lib.value === undefined);
    if (doc.value === null) return;
    if (!sameValue(doc.value, lib.value)) {
      throw new Error(
        `${where}: block read ${JSON.stringify(doc.value)}, the library ${JSON.stringify(lib.value)}`,
      );
    }
    expect(doc.line, `line of document ${i} of ${where}`).toBe(lib.line);
    for (const path of paths(doc.value))
      expect(doc.lineOf(path), `line of ${path.join(".")} in ${where}`).toBe(lib.lineOf(path));
  });
  expect(block.tokens, `tokens of ${where}`).toBeGreaterThanOrEqual(lexerTokens(text));
  return "read";
}

describe("block reader: what it reads, it reads as the library does", () => {
  it.each([
    { name: "Empty", reason: "no document at all", text: "" },
    { name: "CommentOnly", reason: "a comment is no document", text: "# nothing here\n" },
    { name: "LoneSeparator", reason: "`---` begins an empty document", text: "---\n" },
    { name: "TrailingSeparator", reason: "a trailing `---` adds an empty document", text: "a: 1\n---\n" },
    { name: "LeadingSeparator", reason: "a first `---` begins the first document", text: "# c\n---\na: 1" },
    {
      name: "EmptyBetween",
      reason: "two separators in a row: an empty document between",
      text: "a: 1\n---\n---\nb: 1\n",
    },
    { name: "SeparatorComment", reason: "`--- # c` is a separator", text: "a: 1\n--- # next\nb: 2\n" },
    {
      name: "Manifest",
      reason: "what kubectl and yaml.stringify write",
      text: "apiVersion: nsxv.io/v1alpha1\nkind: EdgeTenant\nmetadata:\n  name: web\n  labels:\n    app.kubernetes.io/name: web\nspec:\n  managerRef:\n    name: lab\n  edgeId: edge-1\n  tenant: blue\n",
    },
    {
      name: "SequenceAtKeyIndent",
      reason: "a sequence may sit at its key's indent",
      text: "k:\n- a\n- b\nc: 1\n",
    },
    {
      name: "CompactItems",
      reason: "`- key: v` and `- - x` open a node where their text starts",
      text: "a:\n  - x: 1\n    y: 2\n  - - p\n    - q\n  -\n    z: 3\n  -\n",
    },
    { name: "ScalarBelow", reason: "a value alone on the next line", text: "a:\n  b\nc: d\n" },
    {
      name: "CoreSchema",
      reason: "plain scalars resolve as YAML 1.2's core schema does",
      text: "n: ~\nN: NULL\nb: True\nB: FALSE\ny: yes\no: 0o17\nl: 017\nh: 0x1F\ni: -0\np: +12\nf: 1.50\ne: 1e3\nE: -.5E-2\ninf: -.Inf\nnan: .NaN\nd: 2024-01-01\nt: 1:30\nv: 1.2.3\nip: 10.0.0.1\nbig: 123456789012345678901234567890\n",
    },
    {
      name: "Quoted",
      reason: "quotes, escapes and what looks like syntax inside them",
      text: 's: \'it\'\'s # not a comment\'\nd: "tab\\tnl\\n\\"q\\" \\u00e9 \\x41 \\/ \\\\"\nk: "true"\n\'quoted key\': 1\n"k: v": 2\n',
    },
    {
      name: "Comments",
      reason: "comments after values and between lines, blank lines, spaces before the colon",
      text: "a: b # c\n\n  # indented comment\nc   : d#not a comment\ne: [] # empty\nf: {}\ng: # nothing\nh: x  \n",
    },
    {
      name: "PrototypeKeys",
      reason: "keys Object.prototype has become own properties, as the library makes them",
      text: "__proto__: 1\nconstructor: 2\ntoString: 3\n<<: 4\n",
    },
    {
      name: "NumberKeys",
      reason: "a key is the string of its value",
      text: "1: a\n0x10: b\n1.50: c\n~: d\ntrue: e\n",
    },
    {
      name: "Unicode",
      reason: "printable characters beyond ASCII, U+00A0 is not a space",
      text: "a: é\u00a0\nb: \u00a0x\n",
    },
    {
      name: "DocumentMarkersAsValues",
      reason: "`---` is a separator only at the start of a line",
      text: "a: ---\nb: ...x\n",
    },
  ])("$name: $reason", ({ text }) => {
    expect(checked(text)).toBe("read");
  });

  it.each([
    { name: "Anchors", reason: "anchors and aliases", text: "a: &x 1\nb: *x\n" },
    { name: "Tag", reason: "a tag", text: "a: !!str 1\n" },
    { name: "Flow", reason: "a flow collection with content", text: "a: [1, 2]\n" },
    {
      name: "FlowMetadata",
      reason: "the flow style of the bad-input tests",
      text: "metadata: {name: twice}\n",
    },
    { name: "BlockScalar", reason: "a block scalar", text: "a: |\n  x\n" },
    { name: "MultiLinePlain", reason: "a plain scalar that goes on", text: "a: b\n  c\n" },
    { name: "MultiLineQuoted", reason: "a quoted scalar that goes on", text: 'a: "b\n  c"\n' },
    { name: "DuplicateKey", reason: "a key twice: the library says where", text: "a: 1\na: 2\n" },
    { name: "DuplicateByString", reason: "two keys with one property name", text: "1: a\n'1': b\n" },
    { name: "Tab", reason: "tabs", text: "a:\tb\n" },
    { name: "CarriageReturn", reason: "CRLF line ends", text: "a: b\r\n" },
    { name: "ByteOrderMark", reason: "a BOM", text: "\ufeffa: b\n" },
    { name: "Astral", reason: "characters beyond the BMP", text: "a: \u{1f600}\n" },
    { name: "Control", reason: "a control character", text: "a: \u0001\n" },
    { name: "TopSequence", reason: "a document that is not a mapping", text: "- a\n" },
    { name: "TopScalar", reason: "a document that is a scalar", text: "hello\n" },
    { name: "DocumentEnd", reason: "`...`", text: "a: 1\n...\n" },
    { name: "Directive", reason: "a directive", text: "%YAML 1.2\n---\na: 1\n" },
    { name: "ContentAfterSeparator", reason: "`--- a: 1`", text: "--- a: 1\n" },
    { name: "BadIndent", reason: "a line between two indents", text: "a:\n    b: 1\n  c: 2\n" },
    { name: "NestedMapping", reason: "`a: b: c`", text: "a: b: c\n" },
    { name: "TrailingColon", reason: "a value that ends with a colon", text: "a: b:\n" },
    { name: "ComplexKey", reason: "an explicit key", text: "? a\n: b\n" },
    { name: "UnknownEscape", reason: "an escape it does not read", text: 'a: "\\e"\n' },
    { name: "Surrogate", reason: "a surrogate half escaped", text: 'a: "\\ud800"\n' },
    { name: "IndicatorStart", reason: "a plain scalar that starts with an indicator", text: "a: @x\n" },
    {
      name: "Deep",
      reason: "nesting deeper than a manifest may",
      text: Array.from({ length: 70 }, (_, i) => `${" ".repeat(i)}a:`).join("\n"),
    },
    { name: "ManyIndicators", reason: "`- - - ...` on one line", text: `a:\n${"- ".repeat(12)}x\n` },
    {
      name: "NearTheTokenCap",
      reason: "a text within half of maxTokens: the library's scan decides",
      text: Array.from({ length: MANIFEST_LIMITS.maxTokens / 6 + 10 }, (_, i) => `k${i}: v`).join("\n"),
    },
  ])("$name ($reason) is left to the library", ({ text }) => {
    expect(checked(text)).toBe("left");
  });
});

describe("block reader: what a text of empty documents costs", () => {
  it("an empty document is no object of its own: half a million `---` lines are refused after little garbage", () => {
    const read = readBlockYaml("---\n".repeat(50_000), MANIFEST_LIMITS);
    expect(read?.documents).toHaveLength(50_000);
    expect(new Set(read?.documents).size, "one shared empty document").toBe(1);
    expect(read?.documents[0]?.value).toBeNull();
  });
});

describe("block reader: the repository's YAML", () => {
  const files = execFileSync("git", ["ls-files", "*.yaml", "*.yml"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter((f) => f !== "" && !f.includes("/templates/")); // helm templates are not YAML until rendered

  it("reads the block-style manifests among them, as the library does", () => {
    const block = [
      "examples/demo/manifests/manager.yaml",
      "gitops/flux/nsx-objects.yaml",
      "deploy/core/service.yaml",
    ];
    for (const file of block) expect(checked(readFileSync(`${ROOT}${file}`, "utf8")), file).toBe("read");
  });

  it("reads any other file either as the library does or not at all", () => {
    for (const file of files) checked(readFileSync(`${ROOT}${file}`, "utf8"));
  });
});

/** scalars that look like something else to some reader */
const TRICKY = [
  "",
  " ",
  "~",
  "null",
  "Null",
  "NULL",
  "nULL",
  "true",
  "True",
  "TRUE",
  "tRUE",
  "yes",
  "no",
  "on",
  "off",
  "y",
  "n",
  "0",
  "-0",
  "+0",
  "00",
  "017",
  "0o17",
  "0O17",
  "0x1F",
  "0X1F",
  "0b101",
  "1_000",
  "+1",
  "-1",
  "1.",
  ".5",
  "-.5",
  "1.50",
  "1e3",
  "1E-3",
  "1e",
  ".inf",
  "-.Inf",
  "+.INF",
  ".NaN",
  "NaN",
  "Infinity",
  "12345678901234567890",
  "2024-01-01",
  "2024-01-01T00:00:00Z",
  "1:30",
  "10.0.0.1",
  "10.0.0.1-10.0.0.9",
  "::1",
  "fe80::1%eth0",
  "https://nsx.example.org:443/api",
  "a: b",
  "a:b",
  "a #b",
  "a#b",
  "#x",
  "- x",
  "-x",
  "-",
  "--",
  "---",
  "...",
  "[]",
  "{}",
  "[a]",
  "{a: b}",
  "'q'",
  '"dq"',
  "it's",
  "a\\b",
  "é",
  "\u00a0",
  "x\u00a0",
  "\u00a0x",
  "<<",
  "__proto__",
  "constructor",
  "@x",
  "`x",
  "%x",
  "!x",
  "&a",
  "*a",
  "|",
  ">",
  "?x",
  "? x",
  ":x",
  ",x",
  "x,y",
  "x]",
  "x}",
  " lead",
  "trail ",
  "a  b",
  "tenant-a",
  "edge-12",
  "nsxv.io/v1alpha1",
];
const WORDS = ["a", "b", "name", "spec", "kind", "items", "x-y", "k8s.io/name", "edgeId", "1", "true"];

type Tree = { scalar: string } | { map: [string, Tree][] } | { seq: Tree[] } | { empty: "{}" | "[]" };

const tree = fc.letrec<{ node: Tree }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.constantFrom(...TRICKY), fc.string({ maxLength: 12 })).map((scalar) => ({ scalar })),
    fc.constantFrom<"{}" | "[]">("{}", "[]").map((empty) => ({ empty })),
    fc
      .array(
        fc.tuple(fc.oneof(fc.constantFrom(...WORDS, ...TRICKY), fc.string({ maxLength: 6 })), tie("node")),
        {
          minLength: 1,
          maxLength: 4,
        },
      )
      .map((map) => ({ map })),
    fc.array(tie("node"), { minLength: 1, maxLength: 3 }).map((seq) => ({ seq })),
  ),
})).node;

interface Layout {
  indent: number;
  /** a sequence under a key at the key's own indent */
  sequenceAtKeyIndent: boolean;
  /** `- key: v` rather than `-` and the mapping below */
  compact: boolean;
  /** how a scalar is written: plain as it is, or quoted */
  quoting: "plain" | "single" | "double" | "mixed";
  comments: boolean;
}

const layout: fc.Arbitrary<Layout> = fc.record({
  indent: fc.integer({ min: 1, max: 4 }),
  sequenceAtKeyIndent: fc.boolean(),
  compact: fc.boolean(),
  quoting: fc.constantFrom("plain", "single", "double", "mixed"),
  comments: fc.boolean(),
});

function quoted(text: string, style: Layout["quoting"], salt: number): string {
  const chosen = style === "mixed" ? (["plain", "single", "double"] as const)[salt % 3]! : style;
  if (chosen === "single") return `'${text.replaceAll("'", "''")}'`;
  if (chosen === "double") return JSON.stringify(text);
  return text;
}

/** the tree as block YAML, as `key:` lines under `indent` spaces */
function render(node: Tree, l: Layout, indent = 0, salt = 0): string[] {
  const pad = " ".repeat(indent);
  const comment = (i: number): string => (l.comments && i % 2 === 0 ? " # note" : "");
  if ("map" in node) {
    return node.map.flatMap(([key, value], i) => {
      const head = `${pad}${quoted(key, l.quoting, salt + i)}:`;
      if ("scalar" in value) return [`${head} ${quoted(value.scalar, l.quoting, salt + i + 1)}${comment(i)}`];
      if ("empty" in value) return [`${head} ${value.empty}${comment(i)}`];
      const deeper = "seq" in value && l.sequenceAtKeyIndent ? indent : indent + l.indent;
      return [
        `${head}${comment(i)}`,
        ...(l.comments ? [`${pad}# between`] : []),
        ...render(value, l, deeper, salt + i),
      ];
    });
  }
  if ("seq" in node) {
    return node.seq.flatMap((item, i) => {
      if ("scalar" in item) return [`${pad}- ${quoted(item.scalar, l.quoting, salt + i)}${comment(i)}`];
      if ("empty" in item) return [`${pad}- ${item.empty}`];
      if (l.compact) {
        const lines = render(item, l, indent + 2, salt + i);
        return [`${pad}- ${lines[0]!.slice(indent + 2)}`, ...lines.slice(1)];
      }
      return [`${pad}-`, ...render(item, l, indent + l.indent, salt + i)];
    });
  }
  return [];
}

const documents = fc
  .tuple(
    fc.array(
      fc
        .array(fc.tuple(fc.constantFrom(...WORDS), tree), { minLength: 1, maxLength: 4 })
        .map((map) => ({ map })),
      { minLength: 1, maxLength: 3 },
    ),
    layout,
    fc.boolean(),
  )
  .map(
    ([docs, l, leading]) =>
      (leading ? "---\n" : "") + docs.map((d) => render(d, l).join("\n")).join("\n---\n") + "\n",
  );

/** one random edit: a character in or out, a line doubled or moved by a column */
const mutation = fc.tuple(
  fc.constantFrom("insert", "delete", "duplicate", "indent", "dedent"),
  fc.nat(),
  fc.constantFrom(..." -:#'\"\n{}[]&*!|>?,%@`\\~\u00a0é\t.0x"),
);

function mutate(text: string, edits: [string, number, string][]): string {
  let out = text;
  for (const [kind, at, char] of edits) {
    const i = out.length === 0 ? 0 : at % out.length;
    const lines = out.split("\n");
    const line = lines.length === 0 ? 0 : at % lines.length;
    if (kind === "insert") out = out.slice(0, i) + char + out.slice(i);
    else if (kind === "delete") out = out.slice(0, i) + out.slice(i + 1);
    else if (kind === "duplicate") out = [...lines.slice(0, line + 1), ...lines.slice(line)].join("\n");
    else if (kind === "indent") out = lines.map((l, j) => (j === line ? ` ${l}` : l)).join("\n");
    else out = lines.map((l, j) => (j === line && l.startsWith(" ") ? l.slice(1) : l)).join("\n");
  }
  return out;
}

describe("block reader: generated texts", () => {
  it("manifests in many layouts: read as the library reads them, or left to it", () => {
    fc.assert(
      fc.property(documents, (text) => void checked(text)),
      { numRuns: 1500 },
    );
  });

  it("the same texts with random edits: never read otherwise than by the library", () => {
    fc.assert(
      fc.property(
        documents,
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        (text, edits) => void checked(mutate(text, edits)),
      ),
      { numRuns: 3000 },
    );
  });

  it("what yaml.stringify writes for manifest-like objects is read here, not left to the library", () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
    const value = fc.oneof(word, fc.integer(), fc.boolean(), fc.constant(null));
    const object = fc.dictionary(
      word,
      fc.oneof(value, fc.dictionary(word, value, { maxKeys: 3 }), fc.array(value, { maxLength: 3 })),
      {
        minKeys: 1,
        maxKeys: 6,
      },
    );
    fc.assert(
      fc.property(fc.array(object, { minLength: 1, maxLength: 4 }), (objects) => {
        const text = objects.map((o) => stringify(o)).join("---\n");
        expect(checked(text), text).toBe("read");
      }),
    );
  });
});
