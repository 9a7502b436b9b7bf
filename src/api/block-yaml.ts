/**
 * A fast reader for the YAML that manifests are written in: block mappings and sequences of
 * one-line scalars (plain, single- or double-quoted), `{}` and `[]`, comments, `---` between
 * documents, as kubectl, helm, yaml libraries and people write them. It reads such a text about
 * ten times faster than the yaml library, which keeps a syntax tree and a document node for every
 * token (half of `plan`'s CPU went there). It never decides anything the library would decide
 * otherwise: the values are what the library's `toJS()` gives under the same (YAML 1.2 core)
 * schema, and whatever it does not read itself it hands back (`undefined`), for the library to
 * read with every guard of yaml-guard.ts: anchors, aliases, tags, flow collections, block
 * scalars, multi-line scalars, tabs, CR, control or non-BMP characters, directives, a key given
 * twice, a line it cannot place, nesting deeper than a manifest may have, and any text whose
 * tokens come near the cap the library's scan enforces (so that a text refused there is never
 * read here). Its cost is linear in the text: one pass over the lines, recursion bounded by the
 * depth a manifest may have.
 */
import { MAX_MANIFEST_DEPTH, type ManifestLimits } from "./manifest-limits.ts";

/** One document of a text read by readBlockYaml. */
export interface BlockDocument {
  /** as the yaml library's `toJS()` gives it (a mapping: the reader reads no other document); null for an empty document */
  value: Record<string, unknown> | null;
  /** 1-based line where the document's content starts (the library's line for the document) */
  line: number;
  /**
   * The line of the deepest part of `path` in the document: a key's own line, an item's first
   * line; the document's line for a path it does not have.
   */
  lineOf(path: readonly (string | number)[]): number;
}

/** `-` indicators on one line (`- - - x`) read here; more are left to the library */
const MAX_LINE_INDICATORS = 8;
/** the yaml library's cap on an implicit key */
const MAX_KEY_LENGTH = 1024;
/**
 * Characters read here: LF, printable ASCII, and the printable BMP (no surrogates, no BOM, no
 * U+2028 or U+2029, which JavaScript takes for line ends). A
 * text with anything else is the library's to read (and to refuse, where YAML does).
 */
const OUTSIDE = /[^\n\x20-\x7E\xA0-\u2027\u202A-\uD7FF\uE000-\uFEFE\uFF00-\uFFFD]/;
/**
 * What a plain scalar on one line cannot be: one that starts with an indicator (`-` is allowed
 * before a non-space), holds `: ` or ` #`, or ends in `:` (a mapping where a scalar was expected)
 */
const NOT_PLAIN = /^(?:[?:,[\]{}#&*!|>'"%@`]|-(?: |$))|: | #|:$/;

/** The yaml library's YAML 1.2 core schema, in its order: the first tag whose test matches resolves a plain scalar. */
const CORE_SCALARS: readonly { test: RegExp; resolve: (text: string) => unknown }[] = [
  { test: /^(?:~|[Nn]ull|NULL)?$/, resolve: () => null },
  { test: /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, resolve: (s) => s[0] === "t" || s[0] === "T" },
  { test: /^0o[0-7]+$/, resolve: (s) => parseInt(s.substring(2), 8) },
  { test: /^[-+]?[0-9]+$/, resolve: (s) => parseInt(s, 10) },
  { test: /^0x[0-9a-fA-F]+$/, resolve: (s) => parseInt(s.substring(2), 16) },
  {
    test: /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
    resolve: (s) => (s.slice(-3).toLowerCase() === "nan" ? NaN : s[0] === "-" ? -Infinity : Infinity),
  },
  { test: /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, resolve: (s) => parseFloat(s) },
  { test: /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, resolve: (s) => parseFloat(s) },
];
/** a plain scalar that starts otherwise can only be a string, or one of WORDS */
const NUMERIC_START = /^[~.+\-0-9]/;
/** the null and boolean words of the core schema */
const WORDS: ReadonlyMap<string, null | boolean> = new Map([
  ["null", null], ["Null", null], ["NULL", null],
  ["true", true], ["True", true], ["TRUE", true],
  ["false", false], ["False", false], ["FALSE", false],
]); // prettier-ignore

const ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\",
  '"': '"',
  "/": "/",
  n: "\n",
  t: "\t",
  r: "\r",
  b: "\b",
  f: "\f",
  "0": "\0",
};

/** Not read here: the library reads the text instead. */
class NotBlockYaml extends Error {}

const refuse = (): never => {
  throw new NotBlockYaml();
};

/** One line with content: its indent, its text after the indent, its 1-based number. */
interface Line {
  indent: number;
  text: string;
  number: number;
  /** `-` indicators before `text` on the same line */
  indicators: number;
}

/** Where each key and item of a collection starts, for lineOf. */
type Positions = WeakMap<object, Map<string | number, number>>;

/**
 * The documents of `text` and its tokens as this reader counts them (at least as many as the
 * library's lexer does), or undefined when the text is not of the block subset read here or its
 * tokens come within half of `limits.maxTokens`: the yaml library reads it then.
 */
export function readBlockYaml(
  text: string,
  limits: ManifestLimits,
): { documents: BlockDocument[]; tokens: number } | undefined {
  if (OUTSIDE.test(text)) return undefined;
  try {
    const reader = new Reader(text, limits);
    const documents = reader.documents();
    return { documents, tokens: reader.tokens };
  } catch (error) {
    if (error instanceof NotBlockYaml) return undefined;
    throw error;
  }
}

/** Where a document's lines are in the text: lineOf reads them again. */
interface DocumentRange {
  /** offset of its first line, and that line's number */
  from: number;
  number: number;
  /** offset where its last line ends */
  to: number;
}

/** every empty document: nothing in it, so nothing to tell apart */
const EMPTY_DOCUMENT: BlockDocument = Object.freeze({ value: null, line: 0, lineOf: () => 0 });

class Reader {
  readonly #text: string;
  readonly #tokenBudget: number;
  #tokens = 1; // the lexer's mark of the stream's first document
  /** where keys and items start, while a document is read again for lineOf (only an error asks) */
  #positions: Positions | undefined;
  /** the significant lines of the document being read, and the next one to read */
  #lines: Line[] = [];
  #at = 0;
  /** plain scalars and mapping entries' lines as written → as read: manifests repeat most of theirs */
  readonly #plain = new Map<string, unknown>();
  readonly #entries = new Map<string, { key: string; rest: string }>();

  constructor(text: string, limits: ManifestLimits) {
    this.#text = text;
    // the library's scan counts about as many tokens as this reader; half the cap leaves it the margin
    this.#tokenBudget = Math.floor(limits.maxTokens / 2);
  }

  get tokens(): number {
    return this.#tokens;
  }

  documents(): BlockDocument[] {
    const text = this.#text;
    const docs: BlockDocument[] = [];
    let lines: Line[] = [];
    /** a document was begun: by `---`, or by content before any */
    let begun = false;
    /** where the document being read starts, and its first line's number */
    let from = 0;
    let fromNumber = 1;
    const finish = (to: number): void => {
      if (!begun) return;
      const first = lines[0];
      // an empty document (`---` after `---`) costs nothing but its place: a file of half a
      // million of them is refused by the token budget, after as little garbage as can be
      if (first === undefined) docs.push(EMPTY_DOCUMENT);
      else {
        docs.push(this.#document(first, lines, { from, number: fromNumber, to }));
        lines = [];
      }
    };
    for (let start = 0, number = 1; start <= text.length; number++) {
      const end = lineEnd(text, start);
      const first = text.charCodeAt(start);
      if (
        first === MINUS &&
        text.startsWith("---", start) &&
        (end === start + 3 || text[start + 3] === " ")
      ) {
        // content after `---` on its line
        if (end !== start + 3 && !/^--- *(#.*)?$/.test(text.slice(start, end))) refuse();
        finish(start);
        begun = true;
        from = end + 1;
        fromNumber = number + 1;
        this.#count(1);
      } else {
        if (first === PERCENT || (first === DOT && text.startsWith("...", start))) refuse(); // directives, document end
        const line = significant(text, start, end, number);
        if (line !== undefined) {
          lines.push(line);
          begun = true;
        }
      }
      start = end + 1;
    }
    finish(text.length);
    return docs;
  }

  #document(first: Line, lines: Line[], range: DocumentRange): BlockDocument {
    if (first.indent !== 0 || isItem(first.text)) refuse(); // only a mapping at the top is read here
    this.#count(1);
    const value = this.#read(lines);
    let lineIn: ((path: readonly (string | number)[]) => number) | undefined;
    return {
      value,
      line: first.number,
      lineOf: (path) => {
        lineIn ??= this.#positionsOf(range, first.number);
        return lineIn(path);
      },
    };
  }

  /** The document's top mapping; refuses a line the mapping cannot hold. */
  #read(lines: Line[]): Record<string, unknown> {
    this.#lines = lines;
    this.#at = 0;
    const value = this.#mapping(0, 1);
    if (this.#at < lines.length) refuse();
    return value;
  }

  /** The document read again, recording where each key and item starts: the line of a path in it. */
  #positionsOf(range: DocumentRange, line: number): (path: readonly (string | number)[]) => number {
    const text = this.#text;
    const lines: Line[] = [];
    for (let start = range.from, number = range.number; start < range.to; number++) {
      const end = lineEnd(text, start);
      const significantLine = significant(text, start, end, number);
      if (significantLine !== undefined) lines.push(significantLine);
      start = end + 1;
    }
    const positions: Positions = new WeakMap();
    this.#positions = positions;
    this.#tokens = 0; // read once within the budget already
    const value = this.#read(lines);
    this.#positions = undefined;
    return (path) => {
      let at = line;
      let node: unknown = value;
      for (const step of path) {
        const next = typeof node === "object" && node !== null ? positions.get(node)?.get(step) : undefined;
        if (next === undefined) break;
        at = next;
        node = (node as Record<string | number, unknown>)[step];
      }
      return at;
    };
  }

  /** where the keys or items of this collection start, when a read records them */
  #positionsIn(collection: object): Map<string | number, number> | undefined {
    if (this.#positions === undefined) return undefined;
    const positions = new Map<string | number, number>();
    this.#positions.set(collection, positions);
    return positions;
  }

  #count(tokens: number): void {
    this.#tokens += tokens;
    if (this.#tokens > this.#tokenBudget) refuse();
  }

  /** the line being read, if it is at `indent` exactly */
  #lineAt(indent: number): Line | undefined {
    const line = this.#lines[this.#at];
    return line !== undefined && line.indent === indent ? line : undefined;
  }

  /** The node that starts at the current line, deeper than `parent` (or an item at the same indent). */
  #node(parent: number, depth: number): unknown {
    const line = this.#lines[this.#at] as Line;
    if (isItem(line.text)) return this.#sequence(line.indent, depth);
    if (keyOf(line.text) !== undefined) return this.#mapping(line.indent, depth);
    // a scalar alone on its line: it must end there
    this.#at++;
    const value = this.#scalar(line.text);
    this.#endOfValue(parent);
    return value;
  }

  #mapping(indent: number, depth: number): Record<string, unknown> {
    if (depth > MAX_MANIFEST_DEPTH) refuse();
    const map: Record<string, unknown> = {};
    const positions = this.#positionsIn(map);
    for (
      let line = this.#lineAt(indent);
      line !== undefined && !isItem(line.text);
      line = this.#lineAt(indent)
    ) {
      const entry = this.#entry(line.text);
      const key = entry.key;
      const known = key in map;
      if (known && Object.hasOwn(map, key)) refuse(); // a key twice: the library's reader says where
      positions?.set(key, line.number);
      this.#count(2);
      this.#at++;
      const value = this.#value(entry.rest, indent, depth);
      // as the library sets it: a key the prototype has (`__proto__`, `constructor`) becomes an own property
      if (known)
        Object.defineProperty(map, key, { value, writable: true, enumerable: true, configurable: true });
      else map[key] = value;
    }
    return map;
  }

  #sequence(indent: number, depth: number): unknown[] {
    if (depth > MAX_MANIFEST_DEPTH) refuse();
    const items: unknown[] = [];
    const positions = this.#positionsIn(items);
    for (
      let line = this.#lineAt(indent);
      line !== undefined && isItem(line.text);
      line = this.#lineAt(indent)
    ) {
      this.#count(1);
      const rest = line.text.slice(1);
      const content = trimStartSpaces(rest);
      if (content === "" || content.startsWith("#")) {
        this.#at++;
        const next = this.#lines[this.#at];
        positions?.set(items.length, next !== undefined && next.indent > indent ? next.number : line.number);
        items.push(next !== undefined && next.indent > indent ? this.#node(indent, depth + 1) : null);
        continue;
      }
      if (line.indicators + 1 > MAX_LINE_INDICATORS) refuse();
      positions?.set(items.length, line.number);
      // `- key: value` or `- - x`: the rest of the line is a node indented where its text starts
      const column = indent + 1 + (rest.length - content.length);
      this.#lines[this.#at] = {
        indent: column,
        text: content,
        number: line.number,
        indicators: line.indicators + 1,
      };
      items.push(this.#node(indent, depth + 1));
    }
    return items;
  }

  /** A mapping entry's value: on its line, or the node on the lines below. */
  #value(rest: string, indent: number, depth: number): unknown {
    if (rest !== "" && !rest.startsWith("#")) {
      const value = this.#scalar(rest);
      this.#endOfValue(indent);
      return value;
    }
    const next = this.#lines[this.#at];
    if (next === undefined) return null;
    // a sequence may sit at its key's indent (`key:\n- a`)
    if (next.indent > indent || (next.indent === indent && isItem(next.text)))
      return this.#node(indent, depth + 1);
    return null;
  }

  /** after a scalar: a deeper line would continue it (a multi-line scalar), which is not read here */
  #endOfValue(indent: number): void {
    const next = this.#lines[this.#at];
    if (next !== undefined && next.indent > indent) refuse();
  }

  /** A value on one line: `{}`, `[]`, a quoted or a plain scalar, with an optional comment after it. */
  #scalar(text: string): unknown {
    this.#count(1);
    const first = text[0];
    if (first === '"' || first === "'") {
      const quoted = readQuoted(text);
      const after = text.slice(quoted.end);
      if (!/^ *$|^ +#/.test(after)) refuse();
      return quoted.value;
    }
    const plain = withoutComment(text);
    if (plain === "{}" || plain === "[]") {
      this.#count(1); // the lexer counts the opening and the closing bracket
      return plain === "{}" ? {} : [];
    }
    return this.#resolvePlain(plain);
  }

  /** resolvePlain, once per text: a value that is not there was refused, or not met yet */
  #resolvePlain(text: string): unknown {
    let value = this.#plain.get(text); // never undefined once resolved
    if (value === undefined) {
      value = resolvePlain(text);
      this.#plain.set(text, value);
    }
    return value;
  }

  /** A mapping entry's line: its key as a property name and the rest of the line, once per text. */
  #entry(text: string): { key: string; rest: string } {
    let entry = this.#entries.get(text);
    if (entry === undefined) {
      const written = keyOf(text) ?? refuse();
      entry = { key: this.#key(written.key), rest: written.rest };
      this.#entries.set(text, entry);
    }
    return entry;
  }

  /** a key as the library's toJS makes it a property name */
  #key(text: string): string {
    if (text.length > MAX_KEY_LENGTH) refuse();
    const first = text[0];
    if (first === '"' || first === "'") {
      const quoted = readQuoted(text);
      if (quoted.end !== text.length) refuse();
      return quoted.value;
    }
    const value = this.#resolvePlain(text);
    return value === null ? "" : String(value);
  }
}

const SPACE = 32;
const MINUS = 45;
const DOT = 46;
const PERCENT = 37;
const HASH = 35;

/** Where the line that starts at `start` ends: its LF, or the end of the text. */
function lineEnd(text: string, start: number): number {
  const end = text.indexOf("\n", start);
  return end === -1 ? text.length : end;
}

/** The line text[start, end) if it has content: undefined for a blank or comment line. */
function significant(text: string, start: number, end: number, number: number): Line | undefined {
  let from = start;
  while (from < end && text.charCodeAt(from) === SPACE) from++;
  let to = end;
  while (to > from && text.charCodeAt(to - 1) === SPACE) to--;
  if (from === to || text.charCodeAt(from) === HASH) return undefined;
  return { indent: from - start, text: text.slice(from, to), number, indicators: 0 };
}

function isItem(text: string): boolean {
  return text === "-" || text.startsWith("- ");
}

/** `key: rest` or `key:`, the key as written; undefined for a line that is not a mapping entry */
function keyOf(text: string): { key: string; rest: string } | undefined {
  const first = text[0];
  if (first === '"' || first === "'") {
    let end: number;
    try {
      end = readQuoted(text).end;
    } catch {
      return undefined;
    }
    const after = trimStartSpaces(text.slice(end));
    if (after !== ":" && !after.startsWith(": ")) return undefined;
    return { key: text.slice(0, end), rest: trimStartSpaces(after.slice(1)) };
  }
  const colon = text.indexOf(": ");
  const at = colon === -1 ? (text.endsWith(":") ? text.length - 1 : -1) : colon;
  if (at <= 0) return undefined;
  const comment = text.indexOf(" #");
  if (comment !== -1 && comment < at) return undefined;
  return { key: trimEndSpaces(text.slice(0, at)), rest: trimStartSpaces(text.slice(at + 1)) };
}

/** the text before a ` #` comment, trimmed */
function withoutComment(text: string): string {
  const comment = text.indexOf(" #");
  return trimEndSpaces(comment === -1 ? text : text.slice(0, comment));
}

// YAML's white space is the space and the tab (refused here): String#trim would take U+00A0 and others too
function trimStartSpaces(text: string): string {
  let start = 0;
  while (text.charCodeAt(start) === 32) start++;
  return text.slice(start);
}

function trimEndSpaces(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 32) end--;
  return text.slice(0, end);
}

/** A plain scalar's value under the core schema; refuses what a plain scalar cannot be on one line. */
function resolvePlain(text: string): unknown {
  if (text === "") return null;
  if (NOT_PLAIN.test(text)) refuse();
  if (!NUMERIC_START.test(text)) {
    const word = WORDS.get(text);
    return word === undefined ? text : word;
  }
  for (const tag of CORE_SCALARS) if (tag.test.test(text)) return tag.resolve(text);
  return text;
}

/** A quoted scalar at the start of `text`: its value and where it ends; refuses one that goes on past the line. */
function readQuoted(text: string): { value: string; end: number } {
  const quote = text[0];
  let value = "";
  for (let i = 1; i < text.length; i++) {
    const c = text[i] as string;
    if (c === quote) {
      if (quote === "'" && text[i + 1] === "'") {
        value += "'";
        i++;
        continue;
      }
      return { value, end: i + 1 };
    }
    if (c === "\\" && quote === '"') {
      const escape = readEscape(text, i);
      value += escape.value;
      i = escape.last;
      continue;
    }
    value += c;
  }
  return refuse();
}

/** The escape at `text[at]` (a backslash) in a double-quoted scalar: its value and its last index. */
function readEscape(text: string, at: number): { value: string; last: number } {
  const code = text[at + 1] ?? "";
  const simple = ESCAPES[code];
  if (simple !== undefined) return { value: simple, last: at + 1 };
  const digits = code === "x" ? 2 : code === "u" ? 4 : 0;
  const hex = text.slice(at + 2, at + 2 + digits);
  if (digits === 0 || !new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex)) return refuse();
  const point = parseInt(hex, 16);
  // a surrogate half, or a character this reader does not take as written: the library's call
  if (point >= 0xd800 && point <= 0xdfff) return refuse();
  return { value: String.fromCharCode(point), last: at + 1 + digits };
}
