/**
 * Manifest texts that cost a YAML reader dearly, each about 2 MB (or, for the 400 000
 * keys, over the size cap), shared by the benchmark that measures what they cost
 * (bench/manifest-input.ts) and the test that checks each is refused
 * (test/bad-input/manifest-cost.test.ts). `refusal` is a part of the error it must get.
 */

export interface HostileText {
  name: string;
  reason: string;
  text: () => string;
  refusal: string;
  /** refused by its size, before a byte is parsed: the error names no line */
  unread?: boolean;
}

/** An unrelated ConfigMap whose `data` has `keys` entries. */
export function largeMapping(keys: number): string {
  const lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: big}", "data:"];
  for (let i = 0; i < keys; i++) lines.push(`  k${i}: v${i}`);
  return `${lines.join("\n")}\n`;
}

const MILLION = 1_000_000;
const NESTED = "nested deeper than";
const TOKENS = "YAML tokens";

export const HOSTILE_TEXTS: readonly HostileText[] = [
  {
    name: "NestedFlowSequences",
    reason: "[[[[...]]]]: 1.24 GB and 14 s in the parser",
    text: () => "[".repeat(MILLION) + "]".repeat(MILLION),
    refusal: NESTED,
  },
  {
    name: "NestedFlowMappings",
    reason: "{a: {a: ...}}: the same through mappings",
    text: () => "{a: ".repeat(MILLION / 2) + "}".repeat(MILLION / 2),
    refusal: NESTED,
  },
  {
    name: "UnclosedFlow",
    reason: "[[[[ never closed: the parser still builds every level",
    text: () => "[".repeat(2 * MILLION),
    refusal: NESTED,
  },
  {
    name: "CompactSequences",
    reason: "- - - - x: a level per two bytes, on one line",
    text: () => `${"- ".repeat(MILLION)}x\n`,
    refusal: NESTED,
  },
  {
    name: "ExplicitKeys",
    reason: "? ? ? ? x: the same through explicit keys",
    text: () => `${"? ".repeat(MILLION)}x\n`,
    refusal: NESTED,
  },
  {
    name: "FlatFlowSequence",
    reason: "[1,1,1,...]: a million nodes in 2 MB, 1.15 GB in the parser",
    text: () => `[${"1,".repeat(MILLION)}1]`,
    refusal: TOKENS,
  },
  {
    name: "EmptyDocuments",
    reason: "---\\n half a million times: a document each",
    text: () => "---\n".repeat(MILLION / 2),
    refusal: TOKENS,
  },
  {
    name: "Aliases",
    reason: "*a half a million times: within the alias count of toJS, not of the parser",
    text: () => `a: &a x\nb: [${"*a,".repeat(MILLION / 2)}*a]\n`,
    refusal: TOKENS,
  },
  {
    name: "Keys120k",
    reason: "a plain mapping of 120 000 keys, 2 MB: more than any manifest holds",
    text: () => largeMapping(120_000),
    refusal: TOKENS,
  },
  {
    name: "Keys400k",
    reason: "the issue's 400 000 keys (7 MB): minutes and 1.2 GB before",
    text: () => largeMapping(400_000),
    refusal: "larger than",
    unread: true,
  },
];
