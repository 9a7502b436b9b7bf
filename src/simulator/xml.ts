/**
 * The simulator's XML output: a tiny element builder and the documents a manager sends (pool
 * list, allocation list, one allocation, `<boolean>`, auth token, the error shapes). Parsing is
 * not done here: request bodies go through src/nsx/xml.ts and src/nsx/edge-document.ts.
 */
import { escapeXmlText } from "../nsx/xml.ts";

export interface XmlNode {
  name: string;
  /** text, child elements, or nothing for an empty element */
  content: string | XmlNode[] | undefined;
  /** name and decoded value; written with double quotes */
  attributes?: readonly (readonly [string, string])[];
}

export type XmlContent = string | number | boolean | readonly (XmlNode | undefined)[] | undefined;

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

export function el(name: string, content?: XmlContent): XmlNode {
  if (content === undefined) return { name, content: undefined };
  if (typeof content === "object") {
    return { name, content: content.filter((c): c is XmlNode => c !== undefined) };
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
export function renderDocument(root: XmlNode, options: RenderOptions): string {
  const out: string[] = [XML_DECLARATION];
  if (options.pretty) out.push("\n");
  writeNode(root, out, options.pretty ? 0 : -1);
  if (options.pretty) out.push("\n");
  return out.join("");
}

/** One element without a declaration, e.g. to embed in a larger generated text. */
export function renderElement(node: XmlNode, options: RenderOptions & { depth?: number }): string {
  const out: string[] = [];
  writeNode(node, out, options.pretty ? (options.depth ?? 0) : -1);
  return out.join("");
}

/** depth -1 means compact */
function writeNode(node: XmlNode, out: string[], depth: number): void {
  const indent = depth >= 0 ? "  ".repeat(depth) : "";
  const start = node.name + attributesText(node.attributes);
  if (node.content === undefined || (Array.isArray(node.content) && node.content.length === 0)) {
    out.push(`${indent}<${start}/>`);
    return;
  }
  if (typeof node.content === "string") {
    out.push(`${indent}<${start}>${escapeXmlText(node.content)}</${node.name}>`);
    return;
  }
  out.push(`${indent}<${start}>`);
  for (const child of node.content) {
    if (depth >= 0) out.push("\n");
    writeNode(child, out, depth >= 0 ? depth + 1 : -1);
  }
  out.push(depth >= 0 ? `\n${indent}</${node.name}>` : `</${node.name}>`);
}

function attributesText(attributes: XmlNode["attributes"]): string {
  let text = "";
  for (const [name, value] of attributes ?? []) {
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
