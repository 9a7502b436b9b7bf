/**
 * The simulator's XML output: a tiny element builder and the documents a manager sends (pool
 * list, allocation list, one allocation, `<boolean>`, auth token, the error shapes). Parsing is
 * not done here: request bodies go through src/nsx/xml.ts and src/nsx/edge-document.ts.
 */
import { escapeXmlText } from "../nsx/xml.ts";

export interface XmlNode {
  name: string;
  /** text, child elements, or nothing for an empty element */
  content: string | Writable[] | undefined;
  /** name and decoded value; written with double quotes */
  attributes?: readonly (readonly [string, string])[];
}

/**
 * An element as a manager's model holds it (edge-model.ts' EdgeModel): children, or the text of a
 * leaf ("" for an empty one). Written as it is, without a copy into XmlNodes.
 */
export interface ModelNode {
  readonly name: string;
  readonly attributes: readonly (readonly [string, string])[];
  readonly children: readonly ModelNode[];
  readonly text: string | undefined;
}

/** what the writer writes */
export type Writable = XmlNode | ModelNode;

export type XmlContent = string | number | boolean | readonly (Writable | undefined)[] | undefined;

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

export function el(name: string, content?: XmlContent): XmlNode {
  if (content === undefined) return { name, content: undefined };
  if (typeof content === "object") {
    return { name, content: content.filter((c): c is Writable => c !== undefined) };
  }
  return { name, content: String(content) };
}

/** the element when the value is set, nothing otherwise (real managers omit unset fields) */
export function opt(name: string, value: string | number | boolean | undefined): XmlNode | undefined {
  return value === undefined ? undefined : el(name, value);
}

export interface RenderOptions {
  /** two-space indentation and one element per line; false gives one line, as managers usually send */
  pretty: boolean;
}

/** The whole document, XML declaration first. */
export function renderDocument(root: Writable, options: RenderOptions): string {
  return writeDocument(root, options, undefined);
}

/** renderDocument's text, and the offset in it at which each child of the root ends. */
export function renderDocumentWithChildEnds(
  root: Writable,
  options: RenderOptions,
): { text: string; childEnds: number[] } {
  const marks: number[] = [];
  const out: string[] = [];
  const text = writeDocument(root, options, { out, marks });
  // a mark is how many pieces were written when a child ended: add up their lengths to it
  const childEnds: number[] = [];
  let offset = 0;
  let piece = 0;
  for (const mark of marks) {
    for (; piece < mark; piece++) offset += out[piece]!.length;
    childEnds.push(offset);
  }
  return { text, childEnds };
}

function writeDocument(
  root: Writable,
  options: RenderOptions,
  trace: { out: string[]; marks: number[] } | undefined,
): string {
  const out = trace?.out ?? [];
  out.push(XML_DECLARATION);
  if (options.pretty) out.push("\n");
  writeNode(root, out, options.pretty ? 0 : -1, trace?.marks);
  if (options.pretty) out.push("\n");
  return out.join("");
}

/** One element without a declaration, e.g. to embed in a larger generated text. */
export function renderElement(node: Writable, options: RenderOptions & { depth?: number }): string {
  const out: string[] = [];
  writeNode(node, out, options.pretty ? (options.depth ?? 0) : -1);
  return out.join("");
}

/** text, children, or undefined for an empty element (a model's leaf with text "" is one) */
function contentOf(node: Writable): string | readonly Writable[] | undefined {
  if ("content" in node) return node.content;
  return node.text === "" ? undefined : (node.text ?? node.children);
}

/** indentation by depth, made once */
const INDENTS: string[] = [];
function indentOf(depth: number): string {
  return (INDENTS[depth] ??= "  ".repeat(depth));
}

/** depth -1 means compact; `childEnds` hears out.length as each child of the node ends */
function writeNode(node: Writable, out: string[], depth: number, childEnds?: number[]): void {
  const indent = depth >= 0 ? indentOf(depth) : "";
  const attributes = node.attributes;
  const start =
    attributes === undefined || attributes.length === 0 ? node.name : node.name + attributesText(attributes);
  const content = contentOf(node);
  if (typeof content === "string") {
    out.push(`${indent}<${start}>${escapeXmlText(content)}</${node.name}>`);
    return;
  }
  if (content === undefined || content.length === 0) {
    out.push(`${indent}<${start}/>`);
    return;
  }
  out.push(`${indent}<${start}>`);
  const childDepth = depth >= 0 ? depth + 1 : -1;
  for (const child of content) {
    if (depth >= 0) out.push("\n");
    writeNode(child, out, childDepth);
    childEnds?.push(out.length);
  }
  out.push(depth >= 0 ? `\n${indent}</${node.name}>` : `</${node.name}>`);
}

function attributesText(attributes: readonly (readonly [string, string])[]): string {
  let text = "";
  for (const [name, value] of attributes) {
    // tab, newline and CR as references: a reader normalises them to spaces otherwise
    const escaped = escapeXmlText(value).replace(/["\t\n]/g, (c) =>
      c === '"' ? "&quot;" : c === "\t" ? "&#9;" : "&#10;",
    );
    text += ` ${name}="${escaped}"`;
  }
  return text;
}

/** What a manager says in an error document; every field but errorCode is optional in the wild. */
export interface NsxErrorEntry {
  details?: string;
  errorCode: string;
  moduleName?: string;
  /** rendered as `<errorData><data><key/><value/></data>...</errorData>` in the errorData shape */
  data?: Record<string, string>;
}

/**
 * The error body shapes seen from real managers: `error` (one `<error>`), `errors` (every entry
 * inside `<errors>`), `errorData` (`<error>` with `<errorData>` key/value pairs) and `codeOnly`
 * (`<error>` with only `<errorCode>`, as some 500s carry).
 */
export const ERROR_SHAPES = ["error", "errors", "errorData", "codeOnly"] as const;
export type ErrorShape = (typeof ERROR_SHAPES)[number];

export function errorDocument(
  entries: readonly NsxErrorEntry[],
  shape: ErrorShape,
  options: RenderOptions,
): string {
  const first = entries[0] ?? { errorCode: "100" };
  switch (shape) {
    case "errors":
      return renderDocument(
        el(
          "errors",
          entries.map((e) => errorElement(e)),
        ),
        options,
      );
    case "errorData": {
      const data = Object.entries(first.data ?? { errorCode: first.errorCode });
      const errorData = el(
        "errorData",
        data.map(([key, value]) => el("data", [el("key", key), el("value", value)])),
      );
      return renderDocument(errorElement(first, [errorData]), options);
    }
    case "codeOnly":
      return renderDocument(el("error", [el("errorCode", first.errorCode)]), options);
    case "error":
      return renderDocument(errorElement(first), options);
  }
}

/** The edge module writes errorCode first; the others details first (element order varies). */
function errorElement(entry: NsxErrorEntry, extra: XmlNode[] = []): XmlNode {
  const details = opt("details", entry.details);
  const code = el("errorCode", entry.errorCode);
  const moduleName = opt("moduleName", entry.moduleName);
  const ordered =
    entry.moduleName === "vShield Edge" ? [code, details, moduleName] : [details, code, moduleName];
  return el("error", [...ordered, ...extra]);
}

export function booleanDocument(value: boolean): string {
  return `${XML_DECLARATION}<boolean>${String(value)}</boolean>`;
}

export function tokenDocument(token: { value: string; validToMs: number }, options: RenderOptions): string {
  return renderDocument(el("authToken", [el("value", token.value), el("validTo", token.validToMs)]), options);
}
