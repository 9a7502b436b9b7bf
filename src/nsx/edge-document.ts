/**
 * The edge document (spec 2.1) as a lossless tree: read, change one field, write back whole
 * (spec 4.2). Everything the manager sent that we do not set goes back byte for byte: unknown
 * elements, their order, attributes, empty elements, entity references as written, CDATA,
 * comments, PIs, the declaration and the whitespace between elements (see xml.ts for why the
 * tree is our own).
 */
import { edgeShapeOf, missingFromWholeEdge, ShapeReader, type EdgeShape } from "./edge-shape.ts";
import { NsxDocumentError, NsxResponseError } from "./errors.ts";
import {
  decodeXmlText,
  escapeXmlText,
  isXmlName,
  isXmlText,
  parseXmlDocument,
  serializedXmlLength,
  serializeXml,
  serializeXmlNode,
  textContent,
  type XmlAttribute,
  type XmlDocument,
  type XmlElement,
  type XmlLeaf,
  type XmlNode,
} from "./xml.ts";

/** Direct children of `<edge>` in the order of spec 2.1; a missing field is inserted by it. */
export const EDGE_FIELD_ORDER: readonly string[] = [
  "id",
  "version",
  "status",
  "datacenterMoid",
  "datacenterName",
  "tenant",
  "name",
  "fqdn",
  "enableAesni",
  "enableFips",
  "vseLogLevel",
  "vnics",
  "appliances",
  "cliSettings",
  "features",
  "autoConfiguration",
  "type",
  "isUniversal",
  "hypervisorAssist",
  "tunnels",
  "edgeSummary",
  "description",
];

/** the fields with typed getters below: each must be there at most once */
const TYPED_FIELDS: ReadonlySet<string> = new Set([
  "id",
  "version",
  "status",
  "datacenterMoid",
  "datacenterName",
  "tenant",
  "name",
  "fqdn",
  "type",
  "description",
]);

const WHAT = "edge document";
const WHITESPACE = /^[ \t\r\n]+$/;

function isWhitespace(node: XmlNode | undefined): node is XmlLeaf {
  return node !== undefined && node.kind === "text" && WHITESPACE.test(node.raw);
}

function childIndexes(parent: XmlElement, name: string): number[] {
  const found: number[] = [];
  const children = parent.children;
  for (let i = 0; i < children.length; i++) {
    const c = children[i] as XmlNode;
    if (c.kind === "element" && c.name === name) found.push(i);
  }
  return found;
}

/** the index of the first child element of this name; undefined when none (what every getter reads) */
function firstChildIndex(parent: XmlElement, name: string): number | undefined {
  const index = parent.children.findIndex((c) => c.kind === "element" && c.name === name);
  return index === -1 ? undefined : index;
}

/** the typed fields in order; each one's place is its slot in TypedFieldIndexes */
const TYPED_FIELD_NAMES = [...TYPED_FIELDS];
const TYPED_FIELD_SLOTS: ReadonlyMap<string, number> = new Map(
  TYPED_FIELD_NAMES.map((name, slot) => [name, slot]),
);

/**
 * Per typed field, the index of the first child of `<edge>` that has it (what the getters read:
 * a pass reads id, version and tenant many times); -1 when none.
 */
type TypedFieldIndexes = number[];

/**
 * The typed fields' indexes, and the first of them (in TYPED_FIELDS' order) that is there more
 * than once, with its count: one pass over the children, one lookup each in a map made once
 * (their names are XmlNames', whose hashes are kept).
 */
function indexTypedFields(root: XmlElement): {
  indexes: TypedFieldIndexes;
  repeated: [string, number] | undefined;
} {
  const indexes: TypedFieldIndexes = new Array<number>(TYPED_FIELD_NAMES.length).fill(-1);
  const counts = new Array<number>(TYPED_FIELD_NAMES.length).fill(0);
  const children = root.children;
  for (let i = 0; i < children.length; i++) {
    const child = children[i] as XmlNode;
    const slot = child.kind === "element" ? TYPED_FIELD_SLOTS.get(child.name) : undefined;
    if (slot === undefined) continue;
    if ((counts[slot] as number) === 0) indexes[slot] = i;
    counts[slot] = (counts[slot] as number) + 1;
  }
  const slot = counts.findIndex((count) => count > 1);
  return {
    indexes,
    repeated: slot === -1 ? undefined : [TYPED_FIELD_NAMES[slot] as string, counts[slot] as number],
  };
}

export class EdgeDocument {
  /**
   * From parse, a scan: `<edge>` and its direct children, every byte checked, the content of a
   * field with child elements kept as one span of its text (most reads look only at the tenant
   * and version, and a write changes only top-level fields: neither needs more). The whole tree
   * is built when something needs it (a deep field's text, a comparison).
   */
  #doc: XmlDocument;
  /** true while #doc is a scan */
  #partial: boolean;
  /**
   * the document's text: as read, then with each field set spliced in (a write sends the text as
   * read but for one field: three pieces to join, not the seventy of the tree); undefined once an
   * element was inserted
   */
  #text: string | undefined;
  /** the shape of the document as it is: heard by its parse, kept through a clone and a field's new text, else read when asked for */
  #shape: EdgeShape | undefined;
  /** the typed fields' indexes among the children of `<edge>`: made on the first read, dropped when the children change */
  #fieldIndexes: TypedFieldIndexes | undefined;

  private constructor(doc: XmlDocument, partial: boolean, text: string | undefined, shape?: EdgeShape) {
    this.#doc = doc;
    this.#partial = partial;
    this.#text = text;
    this.#shape = shape;
  }

  /** the whole tree, built on first need from the text (as read, or as changed) */
  #tree(): XmlDocument {
    if (this.#partial) {
      this.#doc = parseXmlDocument(this.#text ?? serializeXml(this.#doc), WHAT);
      this.#partial = false;
      this.#fieldIndexes = undefined;
    }
    return this.#doc;
  }

  /**
   * Parses a manager's edge document. Throws NsxResponseError when it is not well-formed XML,
   * has a DOCTYPE or ENTITY declaration or an undefined entity reference, its root is not
   * `<edge>`, it has no `<id>` (or an empty one), or a field with a typed getter appears twice.
   */
  static parse(xml: string): EdgeDocument {
    // the shape is heard in the same pass: a second pass over the text would cost twice the scan
    const reader = new ShapeReader();
    const doc = parseXmlDocument(xml, WHAT, { materializeDepth: 1, sink: reader });
    if (doc.root.name !== "edge") {
      throw new NsxResponseError(`${WHAT}: root element is <${doc.root.name}>, expected <edge>`);
    }
    const edge = new EdgeDocument(doc, true, xml, reader.shape);
    const fields = indexTypedFields(doc.root);
    edge.#fieldIndexes = fields.indexes;
    if (!edge.getField("id")?.trim())
      throw new NsxResponseError(`${WHAT}: no <id> in <edge>, or an empty one`);
    // a field read here given twice: which one the manager reads (its tenant, its version) is a guess
    const repeated = fields.repeated;
    if (repeated !== undefined) {
      throw new NsxResponseError(`${WHAT}: <${repeated[0]}> appears ${repeated[1]} times in <edge>`);
    }
    return edge;
  }

  /** `edge-<n>`, as written */
  get id(): string {
    return this.getField("id") ?? "";
  }
  /** undefined when absent or not a non-negative safe integer */
  get version(): number | undefined {
    const text = this.getField("version")?.trim();
    if (text === undefined || !/^[0-9]+$/.test(text)) return undefined;
    const version = Number(text);
    return Number.isSafeInteger(version) ? version : undefined;
  }
  get status(): string | undefined {
    return this.getField("status");
  }
  get datacenterMoid(): string | undefined {
    return this.getField("datacenterMoid");
  }
  get datacenterName(): string | undefined {
    return this.getField("datacenterName");
  }
  get tenant(): string | undefined {
    return this.getField("tenant");
  }
  get name(): string | undefined {
    return this.getField("name");
  }
  get fqdn(): string | undefined {
    return this.getField("fqdn");
  }
  get type(): string | undefined {
    return this.getField("type");
  }
  get description(): string | undefined {
    return this.getField("description");
  }

  /**
   * The decoded text of the first direct child of `<edge>` with this name (its descendants'
   * text included), exactly as written, not trimmed; "" when empty, undefined when absent.
   */
  getField(name: string): string | undefined {
    const index = this.#fieldIndex(name);
    if (index === undefined) return undefined;
    const field = this.#doc.root.children[index] as XmlElement;
    // a field with child elements: the scan kept only its own text, the tree has all of it
    return textContent(field.partial ? (this.#tree().root.children[index] as XmlElement) : field);
  }

  #fieldIndex(name: string): number | undefined {
    const slot = TYPED_FIELD_SLOTS.get(name);
    if (slot === undefined) return firstChildIndex(this.#doc.root, name);
    this.#fieldIndexes ??= indexTypedFields(this.#doc.root).indexes;
    const index = this.#fieldIndexes[slot] as number;
    return index === -1 ? undefined : index;
  }

  /**
   * Sets the text of a direct child of `<edge>` (its former content, child elements included, is
   * replaced; its attributes stay). When absent it is inserted at its spec position: right after
   * the nearest preceding field of EDGE_FIELD_ORDER that is present (first when none is; after
   * the last child element for a name outside the spec), indented like the element it follows.
   * Throws NsxDocumentError for a name that is not an XML name, text with characters XML cannot
   * carry, or a name that occurs more than once (which one the manager would read is unknown).
   */
  setField(name: string, value: string): this {
    if (!isXmlName(name)) {
      throw new NsxDocumentError(`${WHAT}: ${JSON.stringify(name)} is not an element name`);
    }
    if (!isXmlText(value)) {
      throw new NsxDocumentError(`${WHAT}: the value for <${name}> has characters XML cannot carry`);
    }
    // a scan holds every direct child of <edge>: what setField changes
    const root = this.#doc.root;
    const found = childIndexes(root, name);
    if (found.length > 1) {
      throw new NsxDocumentError(
        `${WHAT}: <edge> has ${found.length} <${name}> elements; refusing to set one`,
      );
    }
    const children: XmlNode[] = value === "" ? [] : [{ kind: "text", raw: escapeXmlText(value) }];
    const index = found[0];
    this.#shape = shapeAfterSetting(
      this.#shape,
      name,
      index === undefined ? undefined : root.children[index],
    );
    if (index !== undefined) {
      const element = root.children[index] as XmlElement;
      const text = this.#text;
      const start = text === undefined ? 0 : this.#offsetOfChild(index);
      const length = serializedXmlLength(element);
      const changed = withContent(element, children);
      root.children[index] = changed;
      if (text !== undefined) {
        this.#text = text.slice(0, start) + serializeXmlNode(changed) + text.slice(start + length);
      }
    } else {
      const element: XmlElement = {
        kind: "element",
        name,
        startTag: `<${name}>`,
        attributes: [],
        selfClosing: false,
        children,
        endTag: `</${name}>`,
      };
      insertChild(root, element);
      this.#text = undefined;
      this.#fieldIndexes = undefined;
    }
    return this;
  }

  /** where the root's child at `index` starts in the document's text */
  #offsetOfChild(index: number): number {
    const doc = this.#doc;
    let offset = doc.root.startTag.length;
    for (const leaf of doc.prolog) offset += leaf.raw.length;
    for (let i = 0; i < index; i++) offset += serializedXmlLength(doc.root.children[i] as XmlNode);
    return offset;
  }

  /** Its sections, the counts of its lists, its type (edge-shape.ts), read once per text. */
  shape(): EdgeShape {
    this.#shape ??= edgeShapeOf(this.serialize());
    return this.#shape;
  }

  /** What it lacks of what every edge of its type carries (edge-shape.ts): none for a whole edge. */
  missingFromWholeEdge(): string[] {
    return missingFromWholeEdge(this.shape());
  }

  setTenant(tenant: string): this {
    return this.setField("tenant", tenant);
  }

  clone(): EdgeDocument {
    const doc = this.#doc;
    // the two share the children of <edge>, which neither changes: setField replaces the one it sets
    // (a write clones an edge to set its tenant: a copy of each child would be forty objects for one)
    const root = withChildren(doc.root, [...doc.root.children]);
    return new EdgeDocument(
      { prolog: [...doc.prolog], root, epilog: [...doc.epilog] },
      this.#partial,
      this.#text,
      this.#shape,
    );
  }

  /** The document as read, with only what was set changed. */
  serialize(): string {
    return this.#text ?? serializeXml(this.#doc);
  }

  /**
   * True when the two documents are equal as XML except for the named direct children of
   * `<edge>`. Equal as XML: same elements in the same order, same attributes (decoded values,
   * in any order), same decoded text (so `&#233;` equals `é`), same CDATA, comments and PIs,
   * same prolog and epilog; `<a/>` equals `<a></a>`. A named child is ignored together with the
   * whitespace just before it, which is what setField inserts with it.
   */
  static equalExcept(a: EdgeDocument, b: EdgeDocument, fields: readonly string[]): boolean {
    const skip = new Set(fields);
    const [da, db] = [a.#tree(), b.#tree()];
    const ra = da.root;
    const rb = db.root;
    return (
      nodeListsEqual(da.prolog, db.prolog) &&
      nodeListsEqual(da.epilog, db.epilog) &&
      ra.name === rb.name &&
      attributesEqual(ra.attributes, rb.attributes) &&
      nodeListsEqual(withoutFields(ra.children, skip), withoutFields(rb.children, skip))
    );
  }
}

/**
 * The shape once field `name` (now `before`, or absent) holds only text: the shape looks at
 * `<type>` and at what fields that hold elements contain, so setting any other field's text adds
 * it to the fields present and changes nothing else (a tenant set costs no new pass over the
 * text); for those two, undefined (read again from the text when asked for).
 */
function shapeAfterSetting(
  shape: EdgeShape | undefined,
  name: string,
  before: XmlNode | undefined,
): EdgeShape | undefined {
  const holdsElements =
    before?.kind === "element" &&
    (before.partial === true || before.children.some((c) => c.kind === "element"));
  if (shape === undefined || name === "type" || holdsElements) return undefined;
  // a field already there (the tenant a write sets, nearly always) changes nothing the shape holds
  if (shape.elements.has(name)) return shape;
  return { ...shape, elements: new Set([...shape.elements, name]) };
}

/** a copy of `element` with these children; `partial`: whether it holds a span a scan did not read */
function withChildren(
  element: XmlElement,
  children: XmlNode[],
  partial = element.partial === true,
): XmlElement {
  // fields named, not spread: a spread costs several times as much
  const copy: XmlElement = {
    kind: "element",
    name: element.name,
    startTag: element.startTag,
    attributes: element.attributes,
    selfClosing: element.selfClosing,
    children,
    endTag: element.endTag,
  };
  if (partial) copy.partial = true;
  return copy;
}

/** `element` holding only `children` (no span a scan did not read): a new element, the one given unchanged */
function withContent(element: XmlElement, children: XmlNode[]): XmlElement {
  const copy = withChildren(element, children, false);
  if (copy.selfClosing && children.length > 0) {
    copy.startTag = `${copy.startTag.slice(0, -2)}>`;
    copy.endTag = `</${copy.name}>`;
    copy.selfClosing = false;
  }
  return copy;
}

function insertChild(root: XmlElement, element: XmlElement): void {
  const children = root.children;
  const specIndex = EDGE_FIELD_ORDER.indexOf(element.name);
  let anchor: number | undefined;
  if (specIndex === -1) {
    anchor = children.findLastIndex((c) => c.kind === "element");
  } else {
    for (let i = specIndex - 1; i >= 0 && anchor === undefined; i--) {
      anchor = firstChildIndex(root, EDGE_FIELD_ORDER[i] ?? "");
    }
  }
  if (anchor !== undefined && anchor >= 0) {
    const indent = children[anchor - 1];
    const inserted: XmlNode[] = isWhitespace(indent)
      ? [{ kind: "text", raw: indent.raw }, element]
      : [element];
    children.splice(anchor + 1, 0, ...inserted);
  } else if (isWhitespace(children[0])) {
    children.splice(1, 0, element, { kind: "text", raw: children[0].raw });
  } else {
    children.unshift(element);
  }
}

/** children without the skipped elements and the whitespace right before each */
function withoutFields(children: readonly XmlNode[], skip: ReadonlySet<string>): XmlNode[] {
  const kept: XmlNode[] = [];
  for (const child of children) {
    if (child.kind === "element" && skip.has(child.name)) {
      if (isWhitespace(kept.at(-1))) kept.pop();
    } else {
      kept.push(child);
    }
  }
  return kept;
}

/** Adjacent text leaves merged and decoded, so that text is compared as text. */
function normalized(nodes: readonly XmlNode[]): XmlNode[] {
  const out: XmlNode[] = [];
  for (const node of nodes) {
    const last = out.at(-1);
    if (node.kind !== "text") out.push(node);
    else if (last?.kind === "text")
      out[out.length - 1] = { kind: "text", raw: last.raw + decodeXmlText(node.raw) };
    else out.push({ kind: "text", raw: decodeXmlText(node.raw) });
  }
  return out;
}

function nodeListsEqual(a: readonly XmlNode[], b: readonly XmlNode[]): boolean {
  const na = normalized(a);
  const nb = normalized(b);
  return na.length === nb.length && na.every((node, i) => nodesEqual(node, nb[i] as XmlNode));
}

function nodesEqual(a: XmlNode, b: XmlNode): boolean {
  if (a.kind === "element" || b.kind === "element") {
    return (
      a.kind === "element" &&
      b.kind === "element" &&
      a.name === b.name &&
      attributesEqual(a.attributes, b.attributes) &&
      nodeListsEqual(a.children, b.children)
    );
  }
  return a.kind === b.kind && a.raw === b.raw;
}

function attributesEqual(a: readonly XmlAttribute[], b: readonly XmlAttribute[]): boolean {
  if (a.length !== b.length) return false;
  const values = new Map(a.map((x) => [x.name, decodeXmlText(x.rawValue)]));
  return b.every((x) => values.get(x.name) === decodeXmlText(x.rawValue));
}
