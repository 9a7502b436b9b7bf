/**
 * Property: for any edge document D and tenant T, serialize(parse(D).setTenant(T)) is D with only
 * the tenant's text changed. Checked three ways: byte for byte against D rendered with the
 * expected tenant, with EdgeDocument.equalExcept, and independently against fast-xml-parser's
 * ordered tree of both documents with the tenant removed.
 */
import fc from "fast-check";
import { XMLParser } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";

interface Attr {
  space: string;
  name: string;
  quote: string;
  value: string;
}
interface El {
  k: "el";
  name: string;
  attrs: Attr[];
  startSpace: string;
  children: GenNode[];
  selfClose: boolean;
  endSpace: string;
}
/** the marker stands for the tenant, or for where a missing one goes (no line break before it) */
type GenNode = El | { k: "text" | "raw"; raw: string } | { k: "marker"; missing: boolean };

const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const MARKER = "\u0000tenant\u0000";
const xmlString = (maxLength: number): fc.Arbitrary<string> =>
  fc
    .oneof(
      fc.string({ maxLength }),
      fc.string({ unit: "binary", maxLength }),
      fc.string({ unit: "binary-ascii", maxLength }),
    )
    .map((s) => s.replace(NOT_XML, "?"));
const escapeAll = (s: string): string =>
  s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");

const codePoint = fc.oneof(
  fc.constantFrom(9, 10, 13, 0x26, 0x3c),
  fc.integer({ min: 0x20, max: 0xd7ff }),
  fc.integer({ min: 0x10000, max: 0x10ffff }),
);
/** text as a manager may write it: literal runs, named entities, decimal and hex references */
const rawText = fc
  .array(
    fc.oneof(
      xmlString(6).map(escapeAll),
      xmlString(6).map((s) => s.replace(/[&<>"']/g, "_")),
      fc.constantFrom("&amp;", "&lt;", "&gt;", "&quot;", "&apos;"),
      codePoint.chain((cp) =>
        fc.constantFrom(`&#${cp};`, `&#x${cp.toString(16)};`, `&#x${cp.toString(16).toUpperCase()};`),
      ),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((parts) => parts.join(""));

const attrs = fc.uniqueArray(
  fc.record({
    space: fc.constantFrom(" ", "  ", "\n\t"),
    name: fc.constantFrom("a", "b:c", "applicationId", "ü", "type"),
    quote: fc.constantFrom('"', "'"),
    value: fc.oneof(fc.constant(""), rawText),
  }),
  { selector: (a) => a.name, maxLength: 3 },
);

const leaf: fc.Arbitrary<GenNode> = fc.oneof(
  rawText.map((raw) => ({ k: "text" as const, raw })),
  xmlString(8).map((s) => ({ k: "raw" as const, raw: `<![CDATA[${s.replace(/>/g, ")")}]]>` })),
  xmlString(8).map((s) => ({ k: "raw" as const, raw: `<!--${s.replace(/-/g, "_")}-->` })),
  // no quotes in PI data: fast-xml-parser, the independent check below, reads them as attributes
  xmlString(6).map((s) => ({ k: "raw" as const, raw: `<?nsx-hint ${s.replace(/[>'"]/g, ")")}?>` })),
);

function element(names: readonly string[], children: fc.Arbitrary<GenNode[]>): fc.Arbitrary<El> {
  return fc.record({
    k: fc.constant("el" as const),
    name: fc.constantFrom(...names),
    attrs,
    startSpace: fc.constantFrom("", "", " "),
    children,
    selfClose: fc.boolean(),
    endSpace: fc.constantFrom("", "", "\n"),
  });
}

/** nested unknown content; `tenant` and `id` appear too, deeper than <edge>'s children */
const NESTED_NAMES = ["vnic", "label", "featureConfig", "firewallRule", "x:y", "é-ü", "_a.b", "tenant", "id"];
const { nested } = fc.letrec<{ nested: El; node: GenNode }>((tie) => ({
  nested: element(NESTED_NAMES, fc.array(tie("node"), { maxLength: 4 })),
  node: fc.oneof({ depthSize: "small" }, leaf, tie("nested")),
}));
const textOnly = rawText.map((raw): GenNode[] => [{ k: "text", raw }]);
const content = fc.oneof(
  fc.constant<GenNode[]>([]),
  textOnly,
  fc.array(fc.oneof(leaf, nested), { maxLength: 3 }),
);

const FIELDS = [
  "version",
  "status",
  "datacenterMoid",
  "datacenterName",
  "name",
  "fqdn",
  "type",
  "description",
];
const ANCHORS = ["datacenterName", "datacenterMoid", "status", "version", "id"];
const UNKNOWN_ROOT = ["edgeAssistId", "queryDaemon", "featureConfig", "vnics", "features", "x:y", "é-ü"];

const edgeCase = fc.record({
  prolog: fc.constantFrom(
    "",
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    "<?xml version='1.0'?>",
    '<?xml version="1.0" standalone="yes" ?>\r\n<!-- edge -->\n',
    '\uFEFF<?xml version="1.0"?>\n<?nsx hint?>',
  ),
  epilog: fc.constantFrom("", "\n", "\n<!-- end -->\n", "\r\n"),
  indent: fc.constantFrom(undefined, "  ", "    ", "\t"),
  rootAttrs: attrs,
  fields: fc.subarray(FIELDS).chain((names) => fc.tuple(...names.map((n) => element([n], textOnly)))),
  tenant: fc.option(element(["tenant"], content), { nil: undefined, freq: 2 }),
  extras: fc.array(
    fc.tuple(
      fc.nat(),
      fc.oneof(
        leaf.filter((n) => n.k === "raw"),
        element(UNKNOWN_ROOT, content),
      ),
    ),
    {
      maxLength: 4,
    },
  ),
  newTenant: fc.oneof(xmlString(12), fc.constantFrom("", "a&b<c>", " x\r\n", "Zürich-東京-😀")),
});
type EdgeCase = typeof edgeCase extends fc.Arbitrary<infer T> ? T : never;

function startTag(el: El): string {
  return `<${el.name}${el.attrs.map((a) => `${a.space}${a.name}=${a.quote}${a.value}${a.quote}`).join("")}${el.startSpace}`;
}

function render(node: GenNode, indent: string | undefined, depth: number): string {
  if (node.k === "marker") return MARKER;
  if (node.k !== "el") return node.raw;
  if (node.selfClose && node.children.length === 0) return `${startTag(node)}/>`;
  const isElement = (c: GenNode): boolean => c.k === "el" || (c.k === "marker" && !c.missing);
  const pretty = indent !== undefined && node.children.some(isElement);
  const line = (d: number): string => (pretty ? `\n${indent.repeat(d)}` : "");
  const body = node.children
    .map((c) => (isElement(c) ? line(depth + 1) : "") + render(c, indent, depth + 1))
    .join("");
  return `${startTag(node)}>${body}${line(depth)}</${node.name}${node.endSpace}>`;
}

/**
 * D with a marker where the tenant is, or where a missing one must be inserted (right after the
 * nearest present ANCHORS field, indented like it); what D has there, and what setTenant must put.
 */
function build(c: EdgeCase): { template: string; before: string; after: string } {
  const id: El = {
    k: "el",
    name: "id",
    attrs: [],
    startSpace: "",
    selfClose: false,
    endSpace: "",
    children: [],
  };
  const children: GenNode[] = [{ ...id, children: [{ k: "text", raw: "edge-7" }] }, ...c.fields];
  const indexOf = (name: string): number => children.findIndex((n) => n.k === "el" && n.name === name);
  if (c.tenant) children.splice(indexOf("datacenterName") + 1 || 1, 0, { k: "marker", missing: false });
  for (const [at, node] of c.extras) children.splice(at % (children.length + 1), 0, node);
  const anchor = ANCHORS.map(indexOf).find((i) => i !== -1) ?? 0;
  if (!c.tenant) children.splice(anchor + 1, 0, { k: "marker", missing: true });
  const root: El = {
    k: "el",
    name: "edge",
    attrs: c.rootAttrs,
    startSpace: "",
    children,
    selfClose: false,
    endSpace: "",
  };
  const template = c.prolog + render(root, c.indent, 0) + c.epilog;
  const escaped = c.newTenant
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/\r/g, "&#13;");
  const t = c.tenant;
  if (!t)
    return { template, before: "", after: `${c.indent ? `\n${c.indent}` : ""}<tenant>${escaped}</tenant>` };
  const empty = t.selfClose && t.children.length === 0;
  const after = !empty
    ? `${startTag(t)}>${escaped}</tenant${t.endSpace}>`
    : escaped === ""
      ? `${startTag(t)}/>`
      : `${startTag(t)}>${escaped}</tenant>`;
  return { template, before: render(t, c.indent, 1), after };
}

type OrderedNode = Record<string, unknown>;
const fxp = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  processEntities: false,
  trimValues: false,
  parseTagValue: false,
  parseAttributeValue: false,
  commentPropName: "#comment",
  cdataPropName: "#cdata",
  ignoreDeclaration: false,
  ignorePiTags: false,
});
/** fast-xml-parser's ordered tree with <edge>'s tenant children and whitespace-only text removed */
function independentTree(xml: string): { tree: OrderedNode[]; tenants: number; afterTenant?: string } {
  const tree = fxp.parse(xml) as OrderedNode[];
  const root = tree.find((n) => "edge" in n);
  const children = (root?.edge ?? []) as OrderedNode[];
  const elements = children.filter((n) => /^[^#?]/.test(Object.keys(n)[0] ?? "#"));
  const at = elements.findIndex((n) => "tenant" in n);
  const kept = children.filter(
    (n) => !("tenant" in n) && !(typeof n["#text"] === "string" && /^\s*$/.test(n["#text"])),
  );
  if (root) root.edge = kept;
  const afterTenant = at > 0 ? Object.keys(elements[at - 1] ?? {})[0] : undefined;
  return { tree, tenants: elements.filter((n) => "tenant" in n).length, afterTenant };
}

describe("edge document round trip (property)", () => {
  it("changes nothing but the tenant's text", () => {
    fc.assert(
      fc.property(edgeCase, (c) => {
        const { template, before, after } = build(c);
        const original = template.replace(MARKER, () => before);
        const doc = EdgeDocument.parse(original);
        expect(doc.serialize()).toBe(original);

        const out = doc.clone().setTenant(c.newTenant).serialize();
        const reread = EdgeDocument.parse(out);
        expect(reread.tenant).toBe(c.newTenant);
        expect(EdgeDocument.equalExcept(reread, doc, ["tenant"])).toBe(true);
        expect(EdgeDocument.equalExcept(reread, EdgeDocument.parse(original), ["tenant"])).toBe(true);
        expect(out).toBe(template.replace(MARKER, () => after));

        const treeBefore = independentTree(original);
        const treeAfter = independentTree(out);
        expect(treeAfter.tree).toEqual(treeBefore.tree);
        expect(treeAfter.tenants).toBe(1);
        if (!c.tenant) {
          const present = new Set(["id", ...c.fields.map((f) => f.name)]);
          expect(treeAfter.afterTenant).toBe(ANCHORS.find((a) => present.has(a)));
        }
      }),
      { numRuns: 200 },
    );
  });
});
