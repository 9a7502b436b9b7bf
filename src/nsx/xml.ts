/**
 * XML for the manager client: one tokenizer, which is also the strict well-formedness and safety
 * check, read in three modes:
 * - the lossless tree (parseXmlDocument): every token kept as written, for a document we write
 *   back whole;
 * - a scan (ParseOptions.materializeDepth): elements kept only down to a depth, the rest checked
 *   as thoroughly but kept as one raw span under a `partial` parent (the edge document keeps its
 *   top level; assertSafeXml keeps only the root);
 * - a sink (ParseOptions.sink): each element's start, text and end go straight into plain objects,
 *   for the small documents (pools, allocations, errors, `<boolean>`), or into a reader of its own
 *   (the edge's shape, heard in the same pass as the edge's scan). A sink says per element what of
 *   its inside concerns it (all, nothing, some children: XmlChildFilter); what concerns nobody is
 *   still checked, by the regex engine where it can (QUIET_RUN, DEAF_RUNS), many tokens a call.
 *
 * Why a tokenizer of our own for the lossless tree: fast-xml-parser 5 (preserveOrder, no entity
 * processing) with its XMLBuilder does not give back what it read. Measured: `<e/>` becomes
 * `<e></e>`, `a='1'` becomes `a="1"`, spacing inside tags and `</edge >` are normalised, the XML
 * declaration is rewritten, a processing instruction loses its data (`<?pi z?>` → `<?pi?>`) and
 * the text after the root is dropped. The edge is written back whole (spec 4.2), so every byte we
 * do not mean to change must go back as read. The tree below keeps the raw text of every token;
 * serialising is concatenation, which makes "nothing lost" true by construction. The tokenizer is
 * also the safety check, because it refuses every DOCTYPE and entity declaration (XXE and
 * billion-laughs safe: nothing is ever expanded) and every entity reference without a DTD.
 */
import { detached } from "../util/detached.ts";
import { NsxResponseError } from "./errors.ts";

/** `raw`: the content of a `partial` element as written, kept as one unread span by a scan */
export type XmlLeafKind = "text" | "cdata" | "comment" | "pi" | "declaration" | "raw";

/** A token kept as written. Leaves are never mutated: a change replaces them. */
export interface XmlLeaf {
  readonly kind: XmlLeafKind;
  readonly raw: string;
}

export interface XmlAttribute {
  readonly name: string;
  /** between the quotes, entity references as written */
  readonly rawValue: string;
}

export interface XmlElement {
  readonly kind: "element";
  readonly name: string;
  /** as written: `<name a="1">`, or `<name/>` when selfClosing */
  startTag: string;
  readonly attributes: readonly XmlAttribute[];
  selfClosing: boolean;
  children: XmlNode[];
  /** as written, `</name>`; "" when selfClosing */
  endTag: string;
  /**
   * Set by a scan (ParseOptions.materializeDepth) on an element whose child elements were checked
   * but not kept: its children are then one `raw` leaf, its content exactly as written.
   */
  partial?: true;
}

export type XmlNode = XmlElement | XmlLeaf;

export interface XmlDocument {
  /** declaration, whitespace, comments and PIs before the root, as written */
  prolog: XmlLeaf[];
  root: XmlElement;
  /** whitespace, comments and PIs after the root */
  epilog: XmlLeaf[];
}

/** Deeper nesting than this is refused: real edges nest about ten deep. Bounds recursion. */
export const MAX_XML_DEPTH = 256;

const S = "[ \\t\\r\\n]";
const NAME_START =
  ":A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D" +
  "\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}";
// the combining marks first: after another character eslint takes them for one combined character
const NAME = `[${NAME_START}][\\u0300-\\u036F${NAME_START}\\-.0-9\\u00B7\\u203F-\\u2040]*`;
const ATTRIBUTE = `${S}+(${NAME})${S}*=${S}*(?:"([^"<]*)"|'([^'<]*)')`;
const ANY_ATTRIBUTE = `${S}+${NAME}${S}*=${S}*(?:"[^"<]*"|'[^'<]*')`;
const START_TAG = new RegExp(`<(${NAME})((?:${ANY_ATTRIBUTE})*)${S}*(/?)>`, "uy");
const ATTRIBUTES = new RegExp(ATTRIBUTE, "gu");
const END_TAG = new RegExp(`</(${NAME})${S}*>`, "uy");
const PI_START = new RegExp(`<\\?(${NAME})(?:${S}|\\?>)`, "uy");
const XML_DECLARATION = new RegExp(
  `^<\\?xml${S}+version${S}*=${S}*(?:'1\\.[0-9]+'|"1\\.[0-9]+")` +
    `(?:${S}+encoding${S}*=${S}*(?:'[A-Za-z][\\w.-]*'|"[A-Za-z][\\w.-]*"))?` +
    `(?:${S}+standalone${S}*=${S}*(?:'(?:yes|no)'|"(?:yes|no)"))?${S}*\\?>`,
  "u",
);
const XML_NAME = new RegExp(`^${NAME}$`, "u");
const WHITESPACE = /^[ \t\r\n]*$/;
const INVALID_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
/**
 * every text INVALID_CHAR refuses has one of these (surrogates: paired ones are fine, INVALID_CHAR
 * decides); named rather than negated, which the regex engine scans twice as fast
 */
// eslint-disable-next-line no-control-regex -- the control characters XML refuses are what it looks for
const MAYBE_INVALID_CHAR = /[\x00-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/;
/**
 * From where it starts, the characters of a text up to its end (the next `<`) that
 * MAYBE_INVALID_CHAR does not name: one call of the regex engine, no slice, even before the JIT
 * has compiled the caller (a loop over the characters costs ten times as much then)
 */
// eslint-disable-next-line no-control-regex -- the control characters XML refuses are what it stops at
const PLAIN_TEXT = /[^<\x00-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]*/y;
/**
 * A quiet run: the common content of an element nobody hears (text, the five entities, and leaf
 * elements with an ASCII name and no attribute), read by one regex call instead of a call per
 * token. Every character it takes is one the general path accepts the same way: no character
 * MAYBE_INVALID_CHAR names (a surrogate pair, allowed, is left to the general path), no `&` but
 * the five entities, no `]]>`, an end tag that names its start tag. It stops before anything else
 * (a character reference, a comment, an element with children or attributes, a mismatch), where
 * the general path goes on with its own checks and words. The repeats are bounded so that the
 * regex engine's backtrack stack stays small on a document of megabytes.
 */
const RUN_CHAR = "[^<&\\]\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\uD800-\\uDFFF\\uFFFE\\uFFFF]";
/** text of a run: its characters, and up to `references` of the five entities or a `]` that starts no `]]>` */
function runText(references: number): string {
  return `${RUN_CHAR}*(?:(?:&(?:amp|lt|gt|quot|apos);|\\](?!\\]>))${RUN_CHAR}*){0,${references}}`;
}
const RUN_TEXT = runText(256);
/** bounds of DEAF_RUNS (below): levels of elements, child elements per element, references per text */
const NESTED_LEVELS = 2;
const NESTED_CHILDREN = 16;
const NESTED_REFERENCES = 2;
const NESTED_TEXT = runText(NESTED_REFERENCES);
/**
 * An element of a run: an ASCII name, no attribute, holding `text` and, `levels` deep, such
 * elements (NESTED_CHILDREN at most each, NESTED_TEXT between them); `notNamed`: a lookahead its
 * name must pass. Level 0 is a leaf.
 */
function runElement(levels: number, text: string, notNamed = ""): string {
  const name = `l${levels}`;
  const children =
    levels === 0 ? "" : `(?:${runElement(levels - 1, text)}${NESTED_TEXT}){0,${NESTED_CHILDREN}}`;
  return `<${notNamed}(?<${name}>[A-Za-z_:][A-Za-z0-9_:.\\-]*)${S}*(?:/>|>${text}${children}</\\k<${name}>${S}*>)`;
}
/** a sticky run of text and `element`s, 256 of each at most */
function runOf(element: string): RegExp {
  return new RegExp(`${RUN_TEXT}(?:${element}${RUN_TEXT}){0,256}`, "y");
}
const QUIET_RUN = runOf(runElement(0, RUN_TEXT));
/**
 * Inside an element below the root that a sink is deaf to (a firewall rule, a route, a section the
 * edge's shape does not look at), DEAF_RUNS read its content as QUIET_RUN does, and take whole
 * the elements that hold leaves and those that hold such elements: a rule's source, destination
 * and application are not a token each for the general path (a 24 KB edge's parse: 60 -> 50 us).
 * A scan without a sink (or one deaf to the root) keeps QUIET_RUN: there runs start at the top of
 * a document, where an element too deep for these is read in vain before the regex gives it up
 * (the same edge's scan: 45 -> 60 us with them).
 * Inside an element of a run, NESTED_CHILDREN child elements and NESTED_REFERENCES references per
 * text at most (more: the run stops before that element, and the general path reads it), so that
 * one call reads at most 256 x 16 x 16 leaves: the regex engine's backtrack stack overflowed with
 * 64 x 64 (test/nsx/xml.test.ts, DeafWide).
 * DEAF_RUNS[k]: runs of elements k levels deep at most (fewer where the depth bound is near).
 */
const DEAF_RUNS = Array.from({ length: NESTED_LEVELS + 1 }, (_, levels) =>
  runOf(runElement(levels, NESTED_TEXT)),
);
/** an `&` that starts none of the five entities or a character reference */
const BAD_AMPERSAND = /&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)/;
const CHARACTER_REFERENCE = /&#(?:([0-9]+)|x([0-9a-fA-F]+));/g;
const NAMED_REFERENCE = new RegExp(`&(${NAME});`, "uy");
const DECODE = /&(?:(amp|lt|gt|quot|apos)|#([0-9]+)|#x([0-9a-fA-F]+));/g;
const NO_ATTRIBUTES: readonly XmlAttribute[] = Object.freeze([]);
/** character codes the tokenizer branches on */
const SLASH = 47;
const BANG = 33;
const QUESTION = 63;
const GT = 62;
const LT = 60;

/** ASCII_NAME bits: NAME_START allows the character (A-Z a-z _ :), NAME allows it after the first (and 0-9 - .) */
const NAME_START_BIT = 1;
const NAME_CHAR_BIT = 2;
/** per ASCII character code, its NAME_START_BIT and NAME_CHAR_BIT: one load instead of a chain of comparisons */
const ASCII_NAME = Uint8Array.from({ length: 128 }, (_, c) => {
  const start = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 58;
  const char = start || (c >= 48 && c <= 57) || c === 45 || c === 46;
  return (start ? NAME_START_BIT : 0) | (char ? NAME_CHAR_BIT : 0);
});

function indexOrEnd(text: string, search: string, from: number): number {
  const at = text.indexOf(search, from);
  return at === -1 ? text.length : at;
}
const PREDEFINED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** the names most are: the u-flag NAME, with its ranges beyond ASCII, decides the others */
const ASCII_XML_NAME = /^[A-Za-z_:][A-Za-z0-9_:.-]*$/;

export function isXmlName(name: string): boolean {
  return ASCII_XML_NAME.test(name) || XML_NAME.test(name);
}

/** true when every character of the text may appear in an XML 1.0 document */
export function isXmlText(text: string): boolean {
  return !INVALID_CHAR.test(text);
}

/** The first character an XML 1.0 document cannot carry, as U+XXXX with its offset; undefined when none. */
export function invalidXmlChar(text: string): { codePoint: string; index: number } | undefined {
  const found = INVALID_CHAR.exec(text);
  if (found === null) return undefined;
  const hex = (found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
  return { codePoint: `U+${hex}`, index: found.index };
}

/** a character escapeXmlText replaces: most text has none, and a test is cheaper than a replace */
const TO_ESCAPE = /[&<>\r]/;

/** Escapes text content; `\r` too, so that it survives the reader's line-end normalisation. */
export function escapeXmlText(text: string): string {
  if (!TO_ESCAPE.test(text)) return text;
  return text.replace(/[&<>\r]/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&#13;",
  );
}

/** Decodes the five predefined entities and character references of already checked text. */
export function decodeXmlText(raw: string): string {
  if (!raw.includes("&")) return raw;
  return raw.replace(
    DECODE,
    (_m, named: string | undefined, dec: string | undefined, hex: string | undefined) =>
      named !== undefined
        ? (PREDEFINED[named] ?? "")
        : String.fromCodePoint(parseInt(dec ?? hex ?? "", dec ? 10 : 16)),
  );
}

function isXmlCodePoint(cp: number): boolean {
  return cp <= 0x10ffff && isXmlText(String.fromCodePoint(cp));
}

export interface ParseOptions {
  /**
   * Keep elements only down to this depth (the root is 0); deeper ones are checked as thoroughly
   * but not kept, and their parent is marked `partial`. A scan: what the tree of a converged
   * edge is never needed for. Default: keep everything.
   */
  materializeDepth?: number;
  /**
   * Hears every element inside the root, kept or not, in the same pass; with a sink and no
   * materializeDepth nothing is kept.
   */
  sink?: XmlSink;
}

/**
 * What a sink's start may answer for an element of which only some children concern it: it hears
 * the element's own text and, of its child elements, only those with these names (each whole, as
 * after a start that answered true); of the others it hears nothing, not even their start and end.
 * Runs of those others are read by the regex engine, many a call (a vnic's dozen fields around its
 * index; an edge summary's thirty around the nine a list reads). Made once per list of names.
 */
export class XmlChildFilter {
  readonly names: readonly string[];
  /** leaves (QUIET_RUN's) whose name is none of `names`, and what is inside them: stops before any other token */
  readonly run: RegExp;

  constructor(names: readonly string[]) {
    this.names = names;
    const named = names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    this.run = new RegExp(`(?:${runElement(0, RUN_TEXT, `(?!(?:${named})[ \\t\\r\\n/>])`)}){0,256}`, "y");
  }

  /** whether the element named text[start, start + length) is one of `names` */
  wants(text: string, start: number, length: number): boolean {
    for (const name of this.names) if (isNameAt(text, start, length, name)) return true;
    return false;
  }
}

/**
 * What a reading hears besides (or instead of) a tree: each element's start and end and its
 * character data, as positions in the text, so that a sink pays only for the names and text it
 * reads (a 24 KB edge has 1600 elements), and hears nothing of what it says does not concern it.
 */
export interface XmlSink {
  /**
   * an element opens; its name is `text.slice(nameStart, nameStart + nameLength)`. `false`: what
   * is inside it (elements, text) does not concern the sink, which then hears only its end
   * (everything inside is still checked); an XmlChildFilter: only its text and the children it
   * names do
   */
  start(text: string, nameStart: number, nameLength: number): boolean | void | XmlChildFilter;
  /** character data at `text[start, end)` as written: decodeXmlText it, but inside CDATA (`cdata`) */
  text(text: string, start: number, end: number, cdata: boolean): void;
  end(): void;
}

/**
 * Whether the name a sink hears, text[start, start + length), is `name`: compared where it is
 * written, without the string a slice would allocate.
 */
export function isNameAt(text: string, start: number, length: number, name: string): boolean {
  return name.length === length && text.startsWith(name, start);
}

/** Names of this length at most are kept by XmlNames (longer ones are sliced each time they are read). */
const MAX_KEPT_NAME_CHARS = 64;
/** Per length, XmlNames keeps this many names at most: a lookup compares with no more. */
const MAX_KEPT_NAMES_PER_LENGTH = 16;

/**
 * One string per element name that recurs from document to document (an edge's fields, an edge
 * summary's): found where it is written, by its length and then its characters, rather than a new
 * string sliced for each element read, whose hash every Map and Set it meets computes again (a
 * thousand edges name the same forty fields). A name is kept detached from the document it was
 * read in; what is kept is bounded, per length and in length, whatever names a manager sends.
 */
export class XmlNames {
  /** per length, the names kept */
  readonly #byLength: string[][] = [];

  /** text[start, start + length) as a string: the one kept when it is, else a new one (kept when there is room) */
  at(text: string, start: number, length: number): string {
    const kept = this.#byLength[length];
    if (kept !== undefined) {
      // indexed, not for-of: a document's first thousands of names are read before the JIT compiles this
      for (let i = 0; i < kept.length; i++) {
        const name = kept[i] as string;
        if (text.startsWith(name, start)) return name;
      }
    }
    const name = text.slice(start, start + length);
    if (length > MAX_KEPT_NAME_CHARS) return name;
    const names = (this.#byLength[length] ??= []);
    if (names.length >= MAX_KEPT_NAMES_PER_LENGTH) return name;
    const copy = detached(name);
    names.push(copy);
    return copy;
  }
}

/** the names of elements a tree keeps and of those a parseXmlObject builds */
export const ELEMENT_NAMES = new XmlNames();

/**
 * Adds a child to an element being read: its first in a list of its own size (most elements kept
 * hold one, their text), where a push onto the empty list would make room for seventeen.
 */
function addChild(parent: XmlElement, child: XmlNode): void {
  if (parent.children.length === 0) parent.children = [child];
  else parent.children.push(child);
}

/** One pass over a document; positions index `text`. */
class Tokenizer {
  readonly #text: string;
  readonly #what: string;
  #pos = 0;
  readonly #prolog: XmlLeaf[] = [];
  readonly #epilog: XmlLeaf[] = [];
  readonly #stack: XmlElement[] = [];
  /** where the content of each element of #stack starts (after its start tag) */
  readonly #contentStarts: number[] = [];
  /**
   * the open elements below materializeDepth, innermost last: checked, not kept. Where each name
   * starts in the text and its length, not the name: a scan of a large edge opens thousands, and
   * a string for each is garbage the collector pays for.
   */
  readonly #unkeptStarts: number[] = [];
  readonly #unkeptLengths: number[] = [];
  readonly #keepDepth: number;
  readonly #sink: XmlSink | undefined;
  /** elements open, kept or not */
  #depth = 0;
  /** the depth of the element inside which the sink hears nothing (its start said so); -1: none */
  #quietAt = -1;
  /** the element at #quietAt is one a filter left out: the sink hears not even its end */
  #quietUnheard = false;
  /** per depth, the filter of the open element at that depth whose start answered one */
  readonly #filters: (XmlChildFilter | undefined)[] = [];
  #root: XmlElement | undefined;
  /** a root element was read (kept or not) */
  #sawRoot = false;
  /** positions of the next `]]>` and `&` at or after the last text checked (text.length: none) */
  #nextCdataEnd = -1;
  #nextAmpersand = -1;
  /** the length of the name of the tag #plainTag last read */
  #plainNameLength = 0;

  constructor(text: string, what: string, options: ParseOptions = {}) {
    this.#text = text;
    this.#what = what;
    this.#sink = options.sink;
    this.#keepDepth = options.materializeDepth ?? (options.sink !== undefined ? -1 : Infinity);
  }

  run(): XmlDocument | undefined {
    const text = this.#text;
    if (text.startsWith("\uFEFF")) this.#leaf("text", 1);
    if (text.startsWith("<?xml", this.#pos)) this.#declaration();
    this.#tokens();
    const open = this.#unkeptName(this.#unkeptStarts.length - 1) ?? this.#stack.at(-1)?.name;
    if (open !== undefined) this.#fail(text.length, `<${open}> is not closed`);
    if (!this.#sawRoot) this.#fail(text.length, "no root element");
    return this.#root === undefined
      ? undefined
      : { prolog: this.#prolog, root: this.#root, epilog: this.#epilog };
  }

  /** every token after the declaration, in document order */
  #tokens(): void {
    const text = this.#text;
    while (this.#pos < text.length) {
      if (this.#unkeptStarts.length > 0) this.#unkeptContent();
      const lt = this.#nextMarkup(this.#pos);
      const textEnd = lt === -1 ? text.length : lt;
      if (textEnd > this.#pos) this.#characterData(textEnd);
      if (lt === -1) break;
      this.#markup();
    }
  }

  /** the next `<` at or after `from`; -1 when none. Markup mostly follows markup (`</a><b>`): then no search */
  #nextMarkup(from: number): number {
    return this.#text.charCodeAt(from) === LT ? from : this.#text.indexOf("<", from);
  }

  #fail(pos: number, reason: string): never {
    const before = this.#text.slice(0, pos);
    const line = before.split("\n").length;
    const column = pos - before.lastIndexOf("\n");
    throw new NsxResponseError(
      `${this.#what}: not well-formed XML (line ${line}, column ${column}): ${reason}`,
    );
  }

  #refuse(what: string): never {
    throw new NsxResponseError(`${this.#what}: ${what} declarations are refused (no DTD processing)`);
  }

  /** appends text[pos, end) as a leaf where it belongs, and moves past it */
  #leaf(kind: XmlLeafKind, end: number): void {
    if (kind === "cdata" && this.#quietAt === -1) this.#sink?.text(this.#text, this.#pos + 9, end - 3, true);
    if (this.#unkeptStarts.length > 0) {
      this.#pos = end;
      return;
    }
    const leaf: XmlLeaf = { kind, raw: this.#text.slice(this.#pos, end) };
    const parent = this.#stack.at(-1);
    if (parent) addChild(parent, leaf);
    else (this.#sawRoot ? this.#epilog : this.#prolog).push(leaf);
    this.#pos = end;
  }

  #declaration(): void {
    const end = this.#text.indexOf("?>", this.#pos);
    const next = this.#text.charAt(this.#pos + 5);
    if (next !== "?" && !/[ \t\r\n]/.test(next)) return; // a PI named like `xml-foo`
    if (end === -1 || !XML_DECLARATION.test(this.#text.slice(this.#pos, end + 2))) {
      this.#fail(this.#pos, "malformed XML declaration");
    }
    this.#leaf("declaration", end + 2);
  }

  #characterData(end: number): void {
    const pos = this.#pos;
    if (this.#depth === 0) {
      if (!WHITESPACE.test(this.#text.slice(pos, end))) this.#fail(pos, "text outside the root element");
    } else {
      // the next `]]>` and `&` found once, not searched for in every text: most text has neither
      if (this.#nextCdataEnd < pos) this.#nextCdataEnd = indexOrEnd(this.#text, "]]>", pos);
      if (this.#nextCdataEnd < end) this.#fail(this.#nextCdataEnd, "']]>' in text");
      if (this.#nextAmpersand < pos) this.#nextAmpersand = indexOrEnd(this.#text, "&", pos);
      if (this.#nextAmpersand < end) this.#checkReferences(this.#text.slice(pos, end), pos);
      this.#checkChars(pos, end);
      if (this.#quietAt === -1) this.#sink?.text(this.#text, pos, end, false);
    }
    if (this.#unkeptStarts.length > 0) {
      this.#pos = end;
      return;
    }
    this.#leaf("text", end);
  }

  /**
   * Refuses a character XML 1.0 cannot carry in text[from, to). Every span of the document passes
   * here but what NAME, ASCII_NAME, QUIET_RUN or the declaration's regex read, which take none:
   * each character is looked at once, in the pass that reads it.
   */
  #checkChars(from: number, to: number): void {
    const text = this.#text;
    PLAIN_TEXT.lastIndex = from;
    PLAIN_TEXT.test(text);
    // text ends at a `<`: most spans are read whole; a comment or CDATA section may hold a `<`
    if (PLAIN_TEXT.lastIndex >= to || !MAYBE_INVALID_CHAR.test(text.slice(from, to))) return;
    // the u-flag regex decides (a surrogate pair is allowed): it is slow on long text
    const bad = INVALID_CHAR.exec(text.slice(from, to));
    if (bad) {
      const codePoint = bad[0].codePointAt(0)?.toString(16).toUpperCase();
      this.#fail(from + bad.index, `character U+${codePoint} not allowed`);
    }
  }

  /** only the predefined entities and character references: without a DTD nothing else is defined */
  #checkReferences(raw: string, offset: number): void {
    if (!raw.includes("&")) return;
    const bad = BAD_AMPERSAND.exec(raw);
    if (bad) {
      NAMED_REFERENCE.lastIndex = bad.index;
      const named = NAMED_REFERENCE.exec(raw);
      if (named) this.#fail(offset + bad.index, `undefined entity reference ${named[0]} (no DTD)`);
      this.#fail(offset + bad.index, "'&' that does not start a reference");
    }
    if (!raw.includes("&#")) return;
    CHARACTER_REFERENCE.lastIndex = 0; // exec on the shared regex: matchAll would clone it per call
    for (let m = CHARACTER_REFERENCE.exec(raw); m; m = CHARACTER_REFERENCE.exec(raw)) {
      const cp = m[1] !== undefined ? parseInt(m[1], 10) : parseInt(m[2] ?? "", 16);
      if (!isXmlCodePoint(cp)) {
        this.#fail(offset + m.index, `character reference ${m[0]} is not an XML character`);
      }
    }
  }

  #markup(): void {
    const text = this.#text;
    const pos = this.#pos;
    // one character decides for nearly every tag: no chain of startsWith
    const next = text.charCodeAt(pos + 1);
    if (next === SLASH) return this.#endTag();
    if (next !== BANG && next !== QUESTION) return this.#startTag();
    if (text.startsWith("<!--", pos)) return this.#comment();
    if (text.startsWith("<![CDATA[", pos)) return this.#cdata();
    if (text.startsWith("<!DOCTYPE", pos)) this.#refuse("DOCTYPE");
    if (text.startsWith("<!ENTITY", pos)) this.#refuse("ENTITY");
    if (text.startsWith("<!", pos)) this.#fail(pos, "unknown markup declaration");
    if (text.startsWith("<?", pos)) return this.#processingInstruction();
    this.#startTag();
  }

  #comment(): void {
    const text = this.#text;
    const pos = this.#pos;
    const end = text.indexOf("-->", pos + 4);
    if (end === -1) this.#fail(pos, "unterminated comment");
    if (text.slice(pos + 4, end).includes("--") || (end > pos + 4 && text.charAt(end - 1) === "-")) {
      this.#fail(pos, "'--' inside a comment");
    }
    this.#checkChars(pos + 4, end);
    this.#leaf("comment", end + 3);
  }

  #cdata(): void {
    const pos = this.#pos;
    if (this.#depth === 0) this.#fail(pos, "CDATA section outside the root element");
    const end = this.#text.indexOf("]]>", pos + 9);
    if (end === -1) this.#fail(pos, "unterminated CDATA section");
    this.#checkChars(pos + 9, end);
    this.#leaf("cdata", end + 3);
  }

  #processingInstruction(): void {
    PI_START.lastIndex = this.#pos;
    const m = PI_START.exec(this.#text);
    if (!m?.[1]) this.#fail(this.#pos, "malformed processing instruction");
    if (m[1].toLowerCase() === "xml") {
      this.#fail(this.#pos, "XML declaration not at the start of the document");
    }
    const end = this.#text.indexOf("?>", this.#pos + 2 + m[1].length);
    if (end === -1) this.#fail(this.#pos, "unterminated processing instruction");
    this.#checkChars(this.#pos + 2 + m[1].length, end);
    this.#leaf("pi", end + 2);
  }

  /** a start tag at #pos: a plain one (#plainTag) read without a regex, any other by START_TAG */
  #startTag(): void {
    const pos = this.#pos;
    let end = this.#plainTag(pos);
    let nameLength = this.#plainNameLength;
    let attributes = "";
    if (end === -1) {
      START_TAG.lastIndex = pos;
      const m = START_TAG.exec(this.#text);
      if (!m?.[1]) this.#fail(pos, "malformed start tag");
      end = pos + m[0].length;
      nameLength = m[1].length;
      attributes = m[2] ?? "";
    }
    this.#opening(this.#depth);
    this.#openElement(nameLength, attributes, end);
  }

  /** the start tag text[#pos, end), well-formed, its name `nameLength` long and its attributes as written: opened, kept or not */
  #openElement(nameLength: number, rawAttributes: string, end: number): void {
    const text = this.#text;
    const pos = this.#pos;
    const selfClosing = text.charCodeAt(end - 2) === SLASH;
    if (this.#depth > this.#keepDepth) {
      this.#attributes(rawAttributes, pos + 1 + nameLength);
      const parent = this.#stack.at(-1);
      if (parent && this.#unkeptStarts.length === 0) parent.partial = true;
      this.#openUnkept(pos + 1, nameLength, selfClosing);
      this.#pos = end;
      return;
    }
    const element: XmlElement = {
      kind: "element",
      name: ELEMENT_NAMES.at(text, pos + 1, nameLength),
      startTag: text.slice(pos, end),
      attributes: this.#attributes(rawAttributes, pos + 1 + nameLength),
      selfClosing,
      children: [],
      endTag: "",
    };
    const parent = this.#stack.at(-1);
    if (parent) addChild(parent, element);
    else this.#root = element;
    this.#heardStart(pos + 1, nameLength, selfClosing);
    this.#pos = end;
    if (!selfClosing) {
      this.#stack.push(element);
      this.#contentStarts.push(this.#pos);
      this.#depth++;
    }
  }

  /**
   * The content of elements not kept (most of a scan), for as long as it is of the common kinds:
   * text, start tags with an ASCII name and no attribute, and the end tag of the innermost open
   * element. It stops at the first other token (comment, CDATA, PI, attributes, another name, a
   * mismatch, nesting too deep) with #pos at its `<`, and when the kept element around is reached:
   * the general path reads what is left, with the same checks and the same words for what it
   * refuses.
   */
  #unkeptContent(): void {
    const text = this.#text;
    while (this.#unkeptStarts.length > 0) {
      const run = this.#runHere();
      if (run !== undefined) {
        run.lastIndex = this.#pos;
        run.test(text);
        this.#pos = run.lastIndex;
      }
      const pos = this.#pos;
      const lt = this.#nextMarkup(pos);
      if (lt === -1) return;
      if (lt > pos) this.#characterData(lt);
      const next = text.charCodeAt(lt + 1) === SLASH ? this.#closeUnkept() : this.#plainUnkeptTag(lt);
      if (next === -1) return;
      this.#pos = next;
    }
  }

  /**
   * What reads on from #pos by the regex engine, many elements a call: QUIET_RUN where there is no
   * sink, DEAF_RUNS where it is deaf, a filter's run where it hears only some children; from a start tag on (before an
   * end tag a call would read nothing, and the text of a leaf costs less read here than a call)
   */
  #runHere(): RegExp | undefined {
    const text = this.#text;
    const pos = this.#pos;
    if (this.#depth >= MAX_XML_DEPTH || text.charCodeAt(pos) !== LT || text.charCodeAt(pos + 1) === SLASH) {
      return undefined;
    }
    // the elements of a run open at #depth, their children below: none past the bound
    if (this.#quietAt > 0) return DEAF_RUNS[Math.min(NESTED_LEVELS, MAX_XML_DEPTH - 1 - this.#depth)];
    if (this.#sink === undefined || this.#quietAt === 0) return QUIET_RUN;
    return this.#filters[this.#depth - 1]?.run;
  }

  /**
   * The start tag at `lt` inside an element not kept, when it is plain (#plainTag) and nesting is
   * within bounds: opened, and where it ends is returned; -1 leaves it to the general path.
   */
  #plainUnkeptTag(lt: number): number {
    const end = this.#plainTag(lt);
    if (end === -1 || this.#depth >= MAX_XML_DEPTH) return -1;
    this.#openUnkept(lt + 1, this.#plainNameLength, this.#text.charCodeAt(end - 2) === SLASH);
    return end;
  }

  /**
   * Where the start tag at `lt` ends (after its `>`) when it is the common kind, read without a
   * regex: an ASCII name (its length then in #plainNameLength) and no attribute; -1 for any other.
   */
  #plainTag(lt: number): number {
    const text = this.#text;
    let i = lt + 1;
    let c = text.charCodeAt(i);
    if (c >= 128 || ((ASCII_NAME[c] as number) & NAME_START_BIT) === 0) return -1;
    do c = text.charCodeAt(++i);
    while (c < 128 && ((ASCII_NAME[c] as number) & NAME_CHAR_BIT) !== 0);
    this.#plainNameLength = i - lt - 1;
    i = this.#skipSpace(i);
    if (text.charCodeAt(i) === SLASH) i++;
    return text.charCodeAt(i) === GT ? i + 1 : -1;
  }

  /**
   * The end tag at #pos, when it closes the innermost element not kept: closed, and where it ends
   * is returned; -1 when it closes something else
   */
  #closeUnkept(): number {
    const end = this.#endOfUnkept(this.#unkeptStarts.length - 1);
    if (end === -1) return -1;
    this.#unkeptStarts.pop();
    this.#unkeptLengths.pop();
    this.#depth--;
    this.#heardEnd();
    return end + 1;
  }

  /** the checks of every start tag, kept or not: one root element, nesting bounded */
  #opening(depth: number): void {
    if (this.#sawRoot && depth === 0) this.#fail(this.#pos, "a second root element");
    this.#sawRoot = true;
    if (depth >= MAX_XML_DEPTH) {
      this.#fail(this.#pos, `elements nested deeper than ${MAX_XML_DEPTH}`);
    }
  }

  /** an element checked but not kept, its name at text[start, start + length): the sink, if any, hears it open (and close, when empty) */
  #openUnkept(start: number, length: number, selfClosing: boolean): void {
    this.#heardStart(start, length, selfClosing);
    if (!selfClosing) {
      this.#unkeptStarts.push(start);
      this.#unkeptLengths.push(length);
      this.#depth++;
    }
  }

  /**
   * the sink hears an element open at the current depth, unless it is inside one the sink said is
   * not its concern, or its parent's filter leaves it out
   */
  #heardStart(start: number, length: number, selfClosing: boolean): void {
    const sink = this.#sink;
    if (sink === undefined || this.#quietAt !== -1) return;
    const depth = this.#depth;
    const filter = depth > 0 ? this.#filters[depth - 1] : undefined;
    if (filter !== undefined && !filter.wants(this.#text, start, length)) {
      if (!selfClosing) {
        this.#quietAt = depth;
        this.#quietUnheard = true;
      }
      return;
    }
    const listening = sink.start(this.#text, start, length);
    if (selfClosing) sink.end();
    else if (listening === false) this.#quietAt = depth;
    else if (listening instanceof XmlChildFilter) this.#filters[depth] = listening;
  }

  /** the sink hears the element that closed (now at depth #depth) end, unless it is inside one it is deaf to or was left out */
  #heardEnd(): void {
    const depth = this.#depth;
    if (this.#quietAt === depth) {
      this.#quietAt = -1;
      if (this.#quietUnheard) {
        this.#quietUnheard = false;
        return;
      }
    }
    if (this.#quietAt !== -1) return;
    if (this.#filters[depth] !== undefined) this.#filters[depth] = undefined;
    this.#sink?.end();
  }

  /** the name of the unkept element at this index of the stack; undefined when there is none */
  #unkeptName(index: number): string | undefined {
    const start = this.#unkeptStarts[index];
    return start === undefined
      ? undefined
      : this.#text.slice(start, start + (this.#unkeptLengths[index] ?? 0));
  }

  #attributes(raw: string, offset: number): readonly XmlAttribute[] {
    if (raw === "") return NO_ATTRIBUTES; // most elements: no allocation
    this.#checkChars(offset, offset + raw.length);
    const attributes: XmlAttribute[] = [];
    const names = new Set<string>();
    ATTRIBUTES.lastIndex = 0;
    for (let m = ATTRIBUTES.exec(raw); m; m = ATTRIBUTES.exec(raw)) {
      const name = m[1] ?? "";
      const rawValue = m[2] ?? m[3] ?? "";
      if (names.has(name)) this.#fail(offset + m.index, `attribute ${name} repeated`);
      names.add(name);
      this.#checkReferences(rawValue, offset + m.index);
      attributes.push({ name, rawValue });
    }
    return attributes;
  }

  #endTag(): void {
    const text = this.#text;
    if (this.#unkeptStarts.length > 0) {
      const next = this.#closeUnkept();
      if (next === -1) this.#mismatch(this.#unkeptName(this.#unkeptStarts.length - 1));
      this.#pos = next;
      return;
    }
    const open = this.#stack.pop();
    const contentStart = this.#contentStarts.pop() ?? this.#pos;
    // fast path, no regex: the end tag of the open element, as it nearly always is
    const end = open === undefined ? -1 : this.#endOf(open.name);
    if (open === undefined || end === -1) this.#mismatch(open?.name);
    if (open.partial) open.children = [{ kind: "raw", raw: text.slice(contentStart, this.#pos) }];
    open.endTag = text.slice(this.#pos, end + 1);
    this.#depth--;
    this.#heardEnd();
    this.#pos = end + 1;
  }

  /** where the end tag of `name` at pos ends (its `>`), no regex: it nearly always is that one; -1 if not */
  #endOf(name: string): number {
    return this.#text.startsWith(name, this.#pos + 2) ? this.#endTagClose(this.#pos + 2 + name.length) : -1;
  }

  /** #endOf for the unkept element at this index of the stack, its name compared where it is written */
  #endOfUnkept(index: number): number {
    const text = this.#text;
    const start = this.#unkeptStarts[index] as number;
    const length = this.#unkeptLengths[index] as number;
    const at = this.#pos + 2;
    for (let i = 0; i < length; i++) if (text.charCodeAt(start + i) !== text.charCodeAt(at + i)) return -1;
    return this.#endTagClose(at + length);
  }

  /** the `>` after an end tag's name at `from`, white space allowed before it; -1 when something else comes */
  #endTagClose(from: number): number {
    const end = this.#skipSpace(from);
    return this.#text.charCodeAt(end) === GT ? end : -1;
  }

  /** the first position at or after `from` that is not XML white space */
  #skipSpace(from: number): number {
    const text = this.#text;
    let at = from;
    let c = text.charCodeAt(at);
    while (c === 32 || c === 9 || c === 10 || c === 13) c = text.charCodeAt(++at);
    return at;
  }

  #mismatch(open: string | undefined): never {
    END_TAG.lastIndex = this.#pos;
    const m = END_TAG.exec(this.#text);
    if (!m) this.#fail(this.#pos, "malformed end tag");
    if (open === undefined) this.#fail(this.#pos, `</${m[1]}> without a start tag`);
    this.#fail(this.#pos, `</${m[1]}> closes <${open}>`);
  }
}

/**
 * Parses a whole document into a lossless tree, refusing anything not well-formed, any DOCTYPE or
 * ENTITY declaration and any entity reference other than the predefined five and character
 * references. Errors are NsxResponseError naming `what`.
 */
export function parseXmlDocument(text: string, what: string, options: ParseOptions = {}): XmlDocument {
  // the root is kept (keepDepth >= 0) unless a sink came without a depth: then there is no tree
  const document = new Tokenizer(text, what, options).run();
  if (document === undefined) throw new Error("parseXmlDocument with a sink needs a materializeDepth");
  return document;
}

/** throws NsxResponseError(`${what}: ...`) unless text is well-formed XML without DOCTYPE/ENTITY */
export function assertSafeXml(text: string, what: string): void {
  // a scan: every byte checked, nothing below the root kept (a 5000-pool list is 4 MB)
  parseXmlDocument(text, what, { materializeDepth: 0 });
}

/** The document as text: every token as it was read, or as it was set. */
export function serializeXml(doc: XmlDocument): string {
  let out = "";
  for (const leaf of doc.prolog) out += leaf.raw;
  out = writeNode(doc.root, out);
  for (const leaf of doc.epilog) out += leaf.raw;
  return out;
}

/** One node as text, as serializeXml writes it within its document. */
export function serializeXmlNode(node: XmlNode): string {
  return writeNode(node, "");
}

/** The length of serializeXmlNode(node), without writing it. */
export function serializedXmlLength(node: XmlNode): number {
  if (node.kind !== "element") return node.raw.length;
  let length = node.startTag.length + node.endTag.length;
  for (const child of node.children) length += serializedXmlLength(child);
  return length;
}

/** string concatenation, not an array join: V8 builds ropes, measured about twice as fast here */
function writeNode(node: XmlNode, out: string): string {
  if (node.kind !== "element") return out + node.raw;
  let text = out + node.startTag;
  for (const child of node.children) text = writeNode(child, text);
  return text + node.endTag;
}

/** The decoded text of the node and its descendants (CDATA included, comments and PIs not). */
export function textContent(node: XmlNode): string {
  if (node.kind === "raw") throw new Error("textContent of a span a scan did not read: parse the whole tree");
  if (node.kind === "text") return decodeXmlText(node.raw);
  if (node.kind === "cdata") return node.raw.slice(9, -3);
  if (node.kind !== "element") return "";
  let text = "";
  for (const child of node.children) text += textContent(child);
  return text;
}

/**
 * Reads a document into `sink` with the same checks as every document here, building nothing: one
 * pass of the tokenizer (what the edge's shape is read with, in a document of megabytes).
 */
export function walkXml(text: string, what: string, sink: XmlSink): void {
  new Tokenizer(text, what, { sink }).run();
}

export interface XmlObjectOptions {
  /** names of elements that are always arrays, also when they occur once; absent ones stay absent */
  arrays?: readonly string[];
  /**
   * element name → the only children kept in its value: the others are checked as thoroughly but
   * not built (a page of a thousand edge summaries, each mostly what the reader never looks at)
   */
  only?: Readonly<Record<string, readonly string[]>>;
}

/**
 * Parses a small manager document (pool list, allocation list, error body, `<boolean>`) into
 * plain JS, with the same checks as every document here (one pass of the tokenizer, into a sink:
 * no tree is built). The result is `{ [rootName]: value }` where a value is: the element's text
 * (entities decoded, CDATA as is, trimmed; "" for an empty element) when it has no child
 * elements; otherwise an object keyed by child name, with a name that occurs more than once, or
 * is listed in `options.arrays`, mapped to an array in document order, and any text beside the
 * children under "#text". Attributes, comments, PIs and the declaration are dropped. Every value
 * is a string: nothing is converted to numbers or booleans.
 */
export function parseXmlObject(
  text: string,
  what: string,
  options: XmlObjectOptions = {},
): Record<string, unknown> {
  const only = new Map(Object.entries(options.only ?? {}).map(([name, kept]) => [name, childFilter(kept)]));
  const builder = new ObjectBuilder(new Set(options.arrays ?? []), only);
  new Tokenizer(text, what, { sink: builder }).run();
  return builder.result;
}

/** the filter of each list of names given as `only`: its regex is compiled once, not per document */
const CHILD_FILTERS = new WeakMap<readonly string[], XmlChildFilter>();

function childFilter(names: readonly string[]): XmlChildFilter {
  let filter = CHILD_FILTERS.get(names);
  if (filter === undefined) {
    filter = new XmlChildFilter([...names]);
    CHILD_FILTERS.set(names, filter);
  }
  return filter;
}

interface Frame {
  name: string;
  text: string;
  object: Record<string, unknown> | undefined;
}

/** Builds parseXmlObject's value as the tokenizer reads, with no tree in between. */
class ObjectBuilder implements XmlSink {
  readonly #arrays: ReadonlySet<string>;
  readonly #only: ReadonlyMap<string, XmlChildFilter>;
  readonly #frames: Frame[] = [];
  result: Record<string, unknown> = {};

  constructor(arrays: ReadonlySet<string>, only: ReadonlyMap<string, XmlChildFilter>) {
    this.#arrays = arrays;
    this.#only = only;
  }

  /** an element named in `only` hears only the children it keeps: of the others it hears nothing */
  start(text: string, nameStart: number, nameLength: number): true | XmlChildFilter {
    const name = ELEMENT_NAMES.at(text, nameStart, nameLength);
    this.#frames.push({ name, text: "", object: undefined });
    return this.#only.get(name) ?? true;
  }

  text(text: string, start: number, end: number, cdata: boolean): void {
    const frame = this.#frames.at(-1);
    if (frame === undefined) return;
    const raw = text.slice(start, end);
    frame.text += cdata ? raw : decodeXmlText(raw);
  }

  end(): void {
    const frame = this.#frames.pop() as Frame;
    const trimmed = frame.text.trim();
    let value: unknown = trimmed;
    if (frame.object !== undefined) {
      if (trimmed !== "") frame.object["#text"] = trimmed;
      value = frame.object;
    }
    const parent = this.#frames.at(-1);
    if (parent === undefined) {
      this.result = { [frame.name]: value };
      return;
    }
    parent.object ??= {};
    const existing: unknown = Object.hasOwn(parent.object, frame.name)
      ? parent.object[frame.name]
      : undefined;
    if (Array.isArray(existing)) existing.push(value);
    else {
      const next =
        existing !== undefined ? [existing, value] : this.#arrays.has(frame.name) ? [value] : value;
      // a name the prototype has (__proto__, constructor) is defined, not assigned: data, never the
      // object's prototype; any other is assigned, which keeps the object fast to read
      if (frame.name in parent.object) {
        Object.defineProperty(parent.object, frame.name, {
          value: next,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else parent.object[frame.name] = next;
    }
  }
}
