/**
 * The yaml library's path for manifests, with what it costs bounded: for a text the block reader
 * (block-yaml.ts) leaves to it, and for every text with a problem, whose error the library words.
 * The parser (yaml 2.x) keeps a syntax tree and a document node for everything it reads, about a
 * kilobyte per token, and follows nesting as deep as the text goes: 2 MB of `[[[[...]]]]` took
 * 1.24 GB and 14 s. So the text is scanned first with the library's own lexer (linear time,
 * constant memory: it tracks quoting, block scalars and comments as the parser will) and refused
 * when it nests deeper or holds more tokens than any manifest needs (manifest-limits.ts).
 * Duplicate keys are found after parsing, in linear time: the library's own check compares each
 * key with every earlier one of its mapping (40 000 keys took 20 s), so it is switched off
 * (`uniqueKeys: false`) and `duplicateKey` does the work. Loaded only when a text needs it.
 */
import {
  CST,
  isMap,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  parseAllDocuments,
  type Document,
  type Node,
} from "yaml";
import { MANIFEST_LIMITS, MAX_MANIFEST_DEPTH, problemOf, type ManifestLimits } from "./manifest-limits.ts";
import { fieldOf } from "./schema.ts";

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
  const depth: Depth = { flow: 0, line: 0 };
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
    nest(depth, type);
    const detail = overLimit(limits, depth, tokens);
    if (detail !== undefined) return { offset, detail };
    if (type === null || !MARKERS.has(type)) offset += token.length;
  }
  return undefined;
}

/** How deep the lexer is: in flow brackets, and in a line's `-` and `?` indicators. */
interface Depth {
  flow: number;
  line: number;
}

/** A token's move of the depth: a flow bracket opens or closes a level, a line's indicator opens one until its newline. */
function nest(depth: Depth, type: string | null): void {
  switch (type) {
    case "flow-seq-start":
    case "flow-map-start":
      depth.flow++;
      break;
    case "flow-seq-end":
    case "flow-map-end":
      depth.flow = Math.max(0, depth.flow - 1);
      break;
    case "seq-item-ind":
    case "explicit-key-ind":
      depth.line++;
      break;
    case "newline":
      depth.line = 0;
      break;
  }
}

/** The limit the text went past at this token, said, or undefined. */
function overLimit(limits: ManifestLimits, depth: Depth, tokens: number): string | undefined {
  if (depth.flow + depth.line > limits.maxNesting)
    return `nested deeper than ${limits.maxNesting} levels: refused before parsing (a manifest is read to 64 levels)`;
  if (tokens > limits.maxTokens)
    return `more than ${limits.maxTokens} YAML tokens (scalars, indicators, brackets): refused before parsing; split the file`;
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

/** What is wrong with a file or a document, located as far as the text allows (ManifestError's fields but the file). */
export interface ManifestProblem {
  /** 1-based; the document's line when undefined */
  line?: number;
  kind?: string;
  namespace?: string;
  name?: string;
  field?: string;
  detail: string;
}

/** One document of a text as the library read it. */
export interface YamlDocument {
  /** 1-based line where the document's content starts */
  line: number;
  /** the document as a plain object; undefined when it is empty or has a problem */
  value: Record<string, unknown> | undefined;
  problem?: ManifestProblem;
  /** the line of the deepest part of a path that exists in the document (a key's own line for a key) */
  lineOf(path: readonly (string | number)[]): number;
}

/** Why the text is refused before it is parsed (scanYamlText), with the line it was refused at. */
export function refusedBeforeParsing(
  text: string,
  limits: ManifestLimits = MANIFEST_LIMITS,
): ManifestProblem | undefined {
  const refused = scanYamlText(text, limits);
  if (refused === undefined) return undefined;
  return { line: text.slice(0, refused.offset).split("\n").length, detail: refused.detail };
}

/**
 * A text's documents read by the library, each checked (errors, a key given twice, aliases
 * without bound, cycles, nesting, not an object); or the text's problem when the parser itself
 * fails. Parse only a text refusedBeforeParsing lets through.
 */
export function readYamlDocuments(
  text: string,
): { documents: YamlDocument[] } | { problem: ManifestProblem } {
  const lineCounter = new LineCounter();
  let docs: Document.Parsed[];
  try {
    // duplicate keys are found by readDocument, in linear time
    docs = parseAllDocuments(text, { lineCounter, uniqueKeys: false }) as Document.Parsed[];
  } catch (error) {
    // the parser's own failure (a stack overflow, say) is the file's, not the tool's
    return { problem: { line: 1, detail: `invalid YAML: ${problemOf(error)}` } };
  }
  return {
    documents: docs.map((doc) => {
      const start = doc.contents?.range?.[0] ?? doc.range[0];
      const lineOf = (path: readonly (string | number)[]): number => lineIn(doc, lineCounter, path);
      return { line: lineCounter.linePos(start).line, lineOf, ...readDocument(doc, lineCounter, lineOf) };
    }),
  };
}

/** The document as a plain object, undefined for an empty one, or its problem. */
function readDocument(
  doc: Document.Parsed,
  lineCounter: LineCounter,
  lineOf: (path: readonly (string | number)[]) => number,
): { value: Record<string, unknown> | undefined; problem?: ManifestProblem } {
  const [error] = doc.errors;
  if (error !== undefined) {
    // the first error is the mistake; the parser's next ones are mostly its consequences
    const detail = `invalid YAML: ${yamlProblem(error.message)}`;
    return { value: undefined, problem: { line: error.linePos?.[0].line, ...objectOf(doc), detail } };
  }
  const duplicate = duplicateKey(doc);
  if (duplicate !== undefined) {
    const { line } = lineCounter.linePos(duplicate.offset);
    const first = lineCounter.linePos(duplicate.firstOffset).line;
    const detail = `duplicate key ${JSON.stringify(duplicate.key)} (first at line ${first}): which one is meant is a guess`;
    const field = fieldOf(duplicate.path);
    return { value: undefined, problem: { line, ...objectOf(doc), field, detail } };
  }
  let value: unknown;
  try {
    value = doc.toJS(); // throws on too many aliases (a "billion laughs" document)
  } catch (error) {
    return { value: undefined, problem: { ...objectOf(doc), detail: `invalid YAML: ${problemOf(error)}` } };
  }
  const shape = shapeProblem(value);
  if (shape !== undefined) {
    const problem = {
      line: lineOf(shape.path),
      ...objectOf(doc),
      field: fieldOf(shape.path),
      detail: shape.detail,
    };
    return { value: undefined, problem };
  }
  if (value === null || value === undefined) return { value: undefined }; // an empty document, as after a trailing `---`
  if (typeof value !== "object" || Array.isArray(value)) {
    return { value: undefined, problem: { detail: "not an object with apiVersion and kind" } };
  }
  return { value: value as Record<string, unknown> };
}

/** The line of the deepest part of the path that exists in the document (a key's own line for a key). */
function lineIn(doc: Document.Parsed, lineCounter: LineCounter, path: readonly (string | number)[]): number {
  let node: unknown = doc.contents;
  // where the document's content starts (not its `---`), for a field it does not have
  let offset = doc.contents?.range?.[0] ?? doc.range[0];
  for (const step of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === step);
      if (pair === undefined) break;
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof step === "number" && step < node.items.length) {
      node = node.items[step];
      offset = (node as Node).range?.[0] ?? offset;
    } else {
      break;
    }
  }
  return lineCounter.linePos(offset).line;
}

/**
 * The yaml library's message as one line: its first line, without the position it appends (the
 * line is said separately) and the trailing colon before the excerpt; a stack overflow said as
 * what it means.
 */
function yamlProblem(message: string): string {
  if (/call stack/i.test(message)) return problemOf(new RangeError(message));
  const first = message.split("\n")[0] ?? message;
  return first.replace(/ at line \d+, column \d+:?\s*$/, "").replace(/:\s*$/, "");
}

/** A cycle (an alias to its own ancestor) or nesting deeper than MAX_MANIFEST_DEPTH: where, and what. */
function shapeProblem(value: unknown): { path: (string | number)[]; detail: string } | undefined {
  const ancestors = new Set<object>();
  const visit = (
    node: unknown,
    path: (string | number)[],
  ): { path: (string | number)[]; detail: string } | undefined => {
    if (node === null || typeof node !== "object") return undefined;
    if (ancestors.has(node))
      return { path, detail: "a YAML alias refers to an object that contains it (a cycle)" };
    if (path.length > MAX_MANIFEST_DEPTH)
      return { path, detail: `nested deeper than ${MAX_MANIFEST_DEPTH} levels` };
    ancestors.add(node);
    const entries: [string | number, unknown][] = Array.isArray(node)
      ? node.map((v, i) => [i, v])
      : Object.entries(node);
    for (const [step, child] of entries) {
      const problem = visit(child, [...path, step]);
      if (problem !== undefined) return problem;
    }
    ancestors.delete(node);
    return undefined;
  };
  return visit(value, []);
}

/** The kind, namespace and name a document declares, as far as they can be read without converting it. */
function objectOf(doc: Document.Parsed): { kind?: string; namespace?: string; name?: string } {
  const text = (path: string[]): string | undefined => {
    let value: unknown;
    try {
      value = doc.getIn(path);
    } catch {
      return undefined; // a document broken enough that even this fails names no object
    }
    return typeof value === "string" ? value : undefined;
  };
  const kind = text(["kind"]);
  const name = text(["metadata", "name"]);
  const namespace = text(["metadata", "namespace"]);
  return {
    ...(kind !== undefined ? { kind } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
  };
}
