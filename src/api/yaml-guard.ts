/**
 * What a manifest file may cost before the YAML parser builds it. The parser (yaml 2.x) keeps a
 * syntax tree and a document node for everything it reads, about a kilobyte per token, and
 * follows nesting as deep as the text goes: 2 MB of `[[[[...]]]]` took 1.24 GB and 14 s. So the
 * text is scanned first with the library's own lexer (linear time, constant memory: it tracks
 * quoting, block scalars and comments as the parser will) and refused when it nests deeper or
 * holds more tokens than any manifest needs. Duplicate keys are found after parsing, in linear
 * time: the library's own check compares each key with every earlier one of its mapping (40 000
 * keys took 20 s), so it is switched off (`uniqueKeys: false`) and `duplicateKey` does the work.
 */
import { CST, isMap, isScalar, isSeq, Lexer, type Document, type Node } from "yaml";

export const MANIFEST_LIMITS = Object.freeze({
  /** bytes of one file: four times a Kubernetes object's largest size */
  maxFileBytes: 4 * 1024 * 1024,
  /**
   * scalars, indicators, brackets, anchors and tags of one file: every node the parser builds
   * takes one (a `key: value` line three). 200 000 holds a 60 000-key mapping or an import of
   * 4 000 edges; the parser's cost at the cap is measured in bench/RESULTS.md.
   */
  maxTokens: 200_000,
  /**
   * flow collections open at once, plus `-` and `?` indicators on one line: the nesting a text
   * can build without a line per level (deeper block nesting needs quadratic indentation, so
   * the file size bounds it). Twice the 64 levels a document may have once read.
   */
  maxNesting: 128,
});

export type ManifestLimits = typeof MANIFEST_LIMITS;

/** Lexer tokens that build nothing: layout, comments, and the lexer's own markers */
const NOT_COUNTED: ReadonlySet<string> = new Set([
  "space",
  "newline",
  "comment",
  "byte-order-mark",
  "flow-error-end",
]);

/** Marker tokens the lexer emits that are not in the text (their length is not the text's). */
const MARKERS: ReadonlySet<string> = new Set(["doc-mode", "flow-error-end", "scalar"]);

/** Why the text is refused before parsing, and where (an offset into it). */
export interface TextProblem {
  offset: number;
  detail: string;
}

/** One pass of the lexer: the first limit the text exceeds, or undefined. */
export function scanYamlText(
  text: string,
  limits: ManifestLimits = MANIFEST_LIMITS,
): TextProblem | undefined {
  let offset = 0;
  let tokens = 0;
  let flowDepth = 0;
  let lineIndicators = 0;
  /** the token after a scalar marker is the scalar's own text */
  let scalarText = false;
  for (const token of new Lexer().lex(text)) {
    if (scalarText) {
      scalarText = false;
      offset += token.length;
      continue;
    }
    const type = CST.tokenType(token);
    if (type === "scalar") scalarText = true;
    if (type !== null && !NOT_COUNTED.has(type)) tokens++;
    if (type === "flow-seq-start" || type === "flow-map-start") flowDepth++;
    else if (type === "flow-seq-end" || type === "flow-map-end") flowDepth = Math.max(0, flowDepth - 1);
    else if (type === "seq-item-ind" || type === "explicit-key-ind") lineIndicators++;
    else if (type === "newline") lineIndicators = 0;
    if (flowDepth + lineIndicators > limits.maxNesting) {
      return {
        offset,
        detail: `nested deeper than ${limits.maxNesting} levels: refused before parsing (a manifest is read to 64 levels)`,
      };
    }
    if (tokens > limits.maxTokens) {
      return {
        offset,
        detail: `more than ${limits.maxTokens} YAML tokens (scalars, indicators, brackets): refused before parsing; split the file`,
      };
    }
    if (type === null || !MARKERS.has(type)) offset += token.length;
  }
  return undefined;
}

/** A mapping key given twice: the path of the second one, where both are, and the key. */
export interface DuplicateKey {
  path: (string | number)[];
  key: string;
  /** offsets of the first and the second occurrence */
  firstOffset: number;
  offset: number;
}

/**
 * The first key that a mapping of the document gives twice, comparing scalar keys by value as
 * the library's own check does; linear in the size of the document. Aliases are not followed:
 * what they point at is checked where it is written.
 */
export function duplicateKey(doc: Document.Parsed): DuplicateKey | undefined {
  const pending: { node: unknown; path: (string | number)[] }[] = [{ node: doc.contents, path: [] }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, path } = next;
    if (isSeq(node)) node.items.forEach((item, i) => pending.push({ node: item, path: [...path, i] }));
    if (!isMap(node)) continue;
    const seen = new Map<unknown, Node>();
    for (const pair of node.items) {
      const key = pair.key;
      if (!isScalar(key)) continue;
      const first = seen.get(key.value);
      const step = typeof key.value === "number" ? key.value : String(key.value);
      if (first !== undefined) {
        return {
          path: [...path, step],
          key: String(key.value),
          firstOffset: first.range?.[0] ?? 0,
          offset: key.range?.[0] ?? 0,
        };
      }
      seen.set(key.value, key);
      pending.push({ node: pair.value, path: [...path, step] });
    }
  }
  return undefined;
}
