/**
 * An edge as a manager holds it: elements, attributes and text, nothing of the sender's formatting.
 * A real manager unmarshals a PUT into its object model and answers later GETs by marshalling
 * that model, so declaration, indentation, quoting, comments and CDATA sections of the client's
 * text are gone; what survives is what this type holds. Comparing two models is therefore what
 * "lost content" means: information, not bytes.
 */
import { EDGE_FIELD_ORDER } from "../nsx/edge-document.ts";
import { decodeXmlText, parseXmlDocument, type XmlElement } from "../nsx/xml.ts";
import { el, renderDocument, type XmlNode } from "./xml.ts";

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

/**
 * The elements of `<edgeSummary>` that a manager derives from the edge itself, and the top-level
 * field each follows; the rest of the summary (appliances, status) is the manager's own data.
 */
const DERIVED_SUMMARY_FIELDS: readonly (readonly [summaryField: string, edgeField: string])[] = [
  ["name", "name"],
  ["tenantId", "tenant"],
  ["revision", "version"],
];

const WHITESPACE = /^[ \t\r\n]*$/;

/** The model of an XML text whose root is `<edge>` (already checked by EdgeDocument.parse). */
export function edgeModelOf(xml: string): EdgeModel {
  return fromElement(parseXmlDocument(xml, "edge document").root, "edge");
}

function fromElement(element: XmlElement, path: string): EdgeModel {
  const children: EdgeModel[] = [];
  let text = "";
  for (const child of element.children) {
    if (child.kind === "element") children.push(fromElement(child, `${path}.${child.name}`));
    else if (child.kind === "text") text += decodeXmlText(child.raw);
    else if (child.kind === "cdata") text += child.raw.slice(9, -3);
    // comments and processing instructions are not part of a manager's model
  }
  if (children.length > 0 && !WHITESPACE.test(text)) {
    throw new EdgeModelError(`<${path.replaceAll(".", "><")}> has text beside child elements`);
  }
  return {
    name: element.name,
    attributes: element.attributes.map((a) => [a.name, decodeXmlText(a.rawValue)]),
    children,
    text: children.length > 0 ? undefined : text,
  };
}

/** The model as the manager writes it: declaration first, one line or two-space indentation. */
export function renderEdgeModel(model: EdgeModel, options: { pretty: boolean }): string {
  return renderDocument(modelToXmlNode(model), options);
}

export function modelToXmlNode(model: EdgeModel): XmlNode {
  const node =
    model.text === undefined
      ? el(model.name, model.children.map(modelToXmlNode))
      : el(model.name, model.text === "" ? undefined : model.text);
  return model.attributes.length > 0 ? { ...node, attributes: model.attributes } : node;
}

/** True when the two models hold the same information outside the named children of `<edge>`. */
export function modelsEqualExcept(a: EdgeModel, b: EdgeModel, ignored: ReadonlySet<string>): boolean {
  if (a.name !== b.name || !attributesEqual(a, b)) return false;
  const ca = a.children.filter((c) => !ignored.has(c.name));
  const cb = b.children.filter((c) => !ignored.has(c.name));
  return ca.length === cb.length && ca.every((c, i) => modelsEqual(c, cb[i] as EdgeModel));
}

function modelsEqual(a: EdgeModel, b: EdgeModel): boolean {
  return (
    a.name === b.name &&
    a.text === b.text &&
    attributesEqual(a, b) &&
    a.children.length === b.children.length &&
    a.children.every((c, i) => modelsEqual(c, b.children[i] as EdgeModel))
  );
}

function attributesEqual(a: EdgeModel, b: EdgeModel): boolean {
  if (a.attributes.length !== b.attributes.length) return false;
  const values = new Map(a.attributes);
  return b.attributes.every(([name, value]) => values.get(name) === value);
}

/** The text of a direct child, undefined when absent or not a leaf. */
export function childText(model: EdgeModel, name: string): string | undefined {
  return model.children.find((c) => c.name === name)?.text;
}

/**
 * Puts `child` in place of the direct child of that name, or, when there is none, after the
 * nearest field that precedes it in spec order (at the end for fields outside the spec);
 * `undefined` removes it.
 */
export function replaceChild(model: EdgeModel, name: string, child: EdgeModel | undefined): void {
  const index = model.children.findIndex((c) => c.name === name);
  if (index !== -1) {
    if (child === undefined) model.children.splice(index, 1);
    else model.children[index] = child;
    return;
  }
  if (child === undefined) return;
  const specIndex = EDGE_FIELD_ORDER.indexOf(name);
  for (let i = specIndex - 1; i >= 0; i--) {
    const anchor = model.children.findIndex((c) => c.name === EDGE_FIELD_ORDER[i]);
    if (anchor !== -1) {
      model.children.splice(anchor + 1, 0, child);
      return;
    }
  }
  if (specIndex === -1) model.children.push(child);
  else model.children.unshift(child);
}

export function leaf(name: string, text: string): EdgeModel {
  return { name, attributes: [], children: [], text };
}

/** Sets a leaf child's text, adding the child where replaceChild would. */
export function setChildText(model: EdgeModel, name: string, text: string): void {
  const existing = model.children.find((c) => c.name === name);
  replaceChild(model, name, { ...leaf(name, text), attributes: existing?.attributes ?? [] });
}

/** Brings the `<edgeSummary>` fields a manager derives (name, tenantId, revision) in line with the edge. */
export function followDerivedSummary(edge: EdgeModel): void {
  const summary = edge.children.find((c) => c.name === "edgeSummary");
  if (summary === undefined || summary.text !== undefined) return;
  for (const [summaryField, edgeField] of DERIVED_SUMMARY_FIELDS) {
    const value = childText(edge, edgeField);
    const index = summary.children.findIndex((c) => c.name === summaryField);
    if (value !== undefined && index !== -1) summary.children[index] = leaf(summaryField, value);
  }
}
