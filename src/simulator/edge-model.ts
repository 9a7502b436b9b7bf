/**
 * An edge as a manager holds it: elements, attributes and text, nothing of the sender's formatting.
 * A real manager unmarshals a PUT into its object model and answers later GETs by marshalling
 * that model, so declaration, indentation, quoting, comments, CDATA sections, namespace
 * declarations and the order of differently named siblings in the client's text are gone; what
 * survives is what this type holds. Comparing two models is therefore what "lost content" means:
 * information, not bytes.
 */
import { EDGE_FIELD_ORDER } from "../nsx/edge-document.ts";
import { decodeXmlText, parseXmlDocument, type XmlElement } from "../nsx/xml.ts";

export interface EdgeModel {
  readonly name: string;
  /** in document order; compared as a set */
  attributes: [string, string][];
  /** child elements; empty for a leaf */
  children: EdgeModel[];
  /** the decoded text of a leaf ("" when empty); undefined for an element with children */
  text: string | undefined;
}

/** A document a manager's model cannot hold (text beside child elements). */
export class EdgeModelError extends Error {
  override readonly name = "EdgeModelError";
}

const WHITESPACE = /^[ \t\r\n]*$/;
/** `xmlns` and `xmlns:p`: declarations of the text, not data of the model */
const NAMESPACE_DECLARATION = /^xmlns(?::|$)/;

/** The model of an XML text (its root element, whatever its name; the caller checks it). */
export function edgeModelOf(xml: string): EdgeModel {
  return modelOfElement(parseXmlDocument(xml, "edge document").root);
}

export function modelOfElement(element: XmlElement, path = element.name): EdgeModel {
  const children: EdgeModel[] = [];
  let text = "";
  for (const child of element.children) {
    if (child.kind === "element") children.push(modelOfElement(child, `${path}.${child.name}`));
    else if (child.kind === "text") text += decodeXmlText(child.raw);
    else if (child.kind === "cdata") text += child.raw.slice(9, -3);
    // comments and processing instructions are not part of a manager's model
  }
  if (children.length > 0 && !WHITESPACE.test(text)) {
    throw new EdgeModelError(`<${path.replaceAll(".", "><")}> has text beside child elements`);
  }
  const attributes: [string, string][] = [];
  for (const a of element.attributes) {
    if (!NAMESPACE_DECLARATION.test(a.name)) attributes.push([a.name, decodeXmlText(a.rawValue)]);
  }
  return { name: element.name, attributes, children, text: children.length > 0 ? undefined : text };
}

/** A copy sharing nothing that the PUT's rules change in place (children lists, elements). */
export function cloneModel(model: EdgeModel): EdgeModel {
  return { ...model, children: model.children.map(cloneModel) };
}

/** True when the two models hold the same information outside the named children of `<edge>`. */
export function modelsEqualExcept(a: EdgeModel, b: EdgeModel, ignored: ReadonlySet<string>): boolean {
  if (a.name !== b.name || !attributesEqual(a, b)) return false;
  const ca = a.children.filter((c) => !ignored.has(c.name));
  const cb = b.children.filter((c) => !ignored.has(c.name));
  return ca.length === cb.length && ca.every((c, i) => modelsEqual(c, cb[i] as EdgeModel));
}

export function modelsEqual(a: EdgeModel, b: EdgeModel): boolean {
  return (
    a.name === b.name &&
    a.text === b.text &&
    attributesEqual(a, b) &&
    a.children.length === b.children.length &&
    a.children.every((c, i) => modelsEqual(c, b.children[i] as EdgeModel))
  );
}

export function attributesEqual(a: EdgeModel, b: EdgeModel): boolean {
  if (a.attributes.length !== b.attributes.length) return false;
  const values = new Map(a.attributes);
  return b.attributes.every(([name, value]) => values.get(name) === value);
}

/** The direct child of that name (the first), undefined when absent. */
export function child(model: EdgeModel, name: string): EdgeModel | undefined {
  return model.children.find((c) => c.name === name);
}

/** The text of a direct child, undefined when absent or not a leaf. */
export function childText(model: EdgeModel, name: string): string | undefined {
  return child(model, name)?.text;
}

/**
 * Puts `replacement` in place of the direct child of that name, or, when there is none, after the
 * nearest field that precedes it in spec order (at the end for fields outside the spec);
 * `undefined` removes it.
 */
export function replaceChild(model: EdgeModel, name: string, replacement: EdgeModel | undefined): void {
  const index = model.children.findIndex((c) => c.name === name);
  if (index !== -1) {
    if (replacement === undefined) model.children.splice(index, 1);
    else model.children[index] = replacement;
    return;
  }
  if (replacement === undefined) return;
  model.children.splice(specPosition(model.children, name), 0, replacement);
}

/** where a direct child of `<edge>` goes: after the nearest spec field before it, else first (or last outside the spec) */
function specPosition(children: readonly EdgeModel[], name: string): number {
  const specIndex = EDGE_FIELD_ORDER.indexOf(name);
  if (specIndex === -1) return children.length;
  for (let i = specIndex - 1; i >= 0; i--) {
    const anchor = children.findIndex((c) => c.name === EDGE_FIELD_ORDER[i]);
    if (anchor !== -1) return anchor + 1;
  }
  return 0;
}

export function leaf(name: string, text: string): EdgeModel {
  return { name, attributes: [], children: [], text };
}

/** Sets a leaf child's text, adding the child where replaceChild would. */
export function setChildText(model: EdgeModel, name: string, text: string): void {
  const existing = child(model, name);
  replaceChild(model, name, { ...leaf(name, text), attributes: existing?.attributes ?? [] });
}

/**
 * The sent element with its children in the order the manager keeps, as a manager marshals its
 * model in its own order, not in the client's. The k-th sent child of a name takes the place of
 * the k-th child of that name in `reference` (what the manager holds for this element), so
 * differently named siblings come back in the manager's order while children of one name keep the
 * order sent (a list's order is content: firewall rules apply in order), interleaved as the
 * manager has them. A child without a counterpart follows the sent child before it (at the top of
 * `<edge>`, a spec field follows the nearest spec field before it). Attributes likewise follow
 * the reference's order.
 */
export function inManagerOrder(sent: EdgeModel, reference: EdgeModel | undefined): EdgeModel {
  return ordered(sent, reference, true);
}

interface Placed {
  child: EdgeModel;
  counterpart: EdgeModel | undefined;
  /** sort key: the reference position it takes or follows, then after it (1) or at it (0), then the sent order */
  key: [number, number, number];
}

function ordered(sent: EdgeModel, reference: EdgeModel | undefined, isRoot: boolean): EdgeModel {
  const attributes = attributesInOrder(sent.attributes, reference?.attributes ?? []);
  if (sent.children.length === 0) return { ...sent, attributes };
  const referenceChildren = reference?.children ?? [];
  if (sameNames(sent.children, referenceChildren)) {
    // what a client that changes nothing sends: each child takes the place it has, by position
    const children = sent.children.map((c, i) => ordered(c, referenceChildren[i], false));
    return { ...sent, attributes, children };
  }
  const positions = new Map<string, number[]>();
  referenceChildren.forEach((c, i) => {
    const list = positions.get(c.name);
    if (list === undefined) positions.set(c.name, [i]);
    else list.push(i);
  });
  const seen = new Map<string, number>();
  const placed: Placed[] = [];
  sent.children.forEach((c, i) => {
    const k = seen.get(c.name) ?? 0;
    seen.set(c.name, k + 1);
    const at = positions.get(c.name)?.[k];
    const first = positions.get(c.name)?.[0];
    const counterpart = referenceChildren[at ?? first ?? -1];
    const key: [number, number, number] =
      at !== undefined ? [at, 0, i] : [anchorOf(c.name, placed, positions, isRoot), 1, i];
    placed.push({ child: c, counterpart, key });
  });
  placed.sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2]);
  return { ...sent, attributes, children: placed.map((p) => ordered(p.child, p.counterpart, false)) };
}

/** the same names in the same order */
function sameNames(a: readonly EdgeModel[], b: readonly EdgeModel[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]?.name !== b[i]?.name) return false;
  return true;
}

/** the reference position a child without counterpart follows; -1: first */
function anchorOf(
  name: string,
  before: readonly Placed[],
  positions: ReadonlyMap<string, number[]>,
  isRoot: boolean,
): number {
  if (isRoot && EDGE_FIELD_ORDER.includes(name)) {
    const predecessor = EDGE_FIELD_ORDER.slice(0, EDGE_FIELD_ORDER.indexOf(name)).findLast((n) =>
      positions.has(n),
    );
    if (predecessor !== undefined) return positions.get(predecessor)?.[0] ?? -1;
  }
  return before.at(-1)?.key[0] ?? -1;
}

/** attributes the reference has, in its order; then the others as sent */
function attributesInOrder(
  sent: [string, string][],
  reference: readonly [string, string][],
): [string, string][] {
  if (sent.length < 2) return sent;
  const rank = new Map(reference.map(([name], i) => [name, i]));
  const known = sent.filter(([name]) => rank.has(name));
  known.sort(([a], [b]) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0));
  return [...known, ...sent.filter(([name]) => !rank.has(name))];
}

/** children by name, names in order of first appearance */
export function groupByName(children: readonly EdgeModel[]): Map<string, EdgeModel[]> {
  const groups = new Map<string, EdgeModel[]>();
  for (const c of children) {
    const group = groups.get(c.name);
    if (group === undefined) groups.set(c.name, [c]);
    else group.push(c);
  }
  return groups;
}
