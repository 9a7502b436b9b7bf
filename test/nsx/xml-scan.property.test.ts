/**
 * Property: a scan and a sink read a document as the whole tree does. The content of elements not
 * kept (a scan below its depth, everything under a sink) is read by a loop of its own for the
 * common tokens, the whole tree by the general path: for random documents, and for mutations of
 * them (a piece of markup inserted, a span deleted, the end cut off), both refuse the same
 * documents with the same words, and a sink hears exactly the elements and character data the
 * tree holds (nothing inside an element it says does not concern it).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_XML_DEPTH,
  parseXmlDocument,
  parseXmlObject,
  walkXml,
  XmlChildFilter,
  type XmlNode,
  type XmlSink,
} from "../../src/nsx/xml.ts";

/** names that share prefixes (an end tag naming a prefix or an extension of the open one), and the other kinds of NAME */
const NAMES = ["a", "ab", "a-b", "a.b", "a1", "_c", ":d", "skip", "skipped", "é", "aé"];
const name = fc.constantFrom(...NAMES);
const TEXT = [
  "x",
  "10.0.0.1",
  " ",
  "\r\n\t",
  "&amp;",
  "&lt;&gt;",
  "&#65;",
  "&#x1F600;",
  "]]",
  "]",
  ">",
  "é",
  "\u{1F600}",
];
const CONTENT_LEAF = ["<!-- c -->", "<![CDATA[<x>&]]>", "<?pi data?>", ...TEXT];
/** what mutations put in: pieces of markup, and what must be refused */
const PIECES = [
  "<",
  ">",
  "/",
  "</",
  "/>",
  "&",
  "&nbsp;",
  "&#0;",
  "]]>",
  "<a>",
  "</a>",
  "</ab>",
  "<a/>",
  "<a />",
  "<skip>",
  "</skip>",
  "<é>",
  '<a b="1">',
  '<a b="1" b="2">',
  "<1a>",
  "<a$>",
  "<!-- - -- -->",
  "<!DOCTYPE a>",
  "<![CDATA[",
  "\u0001",
  "\uD800",
  " ",
];

const space = fc.constantFrom("", "", "", " ", "\n", " \t");
const attributes = fc.constantFrom("", "", "", ' b="1"', " b='&amp;'", ' b="1" c="2"');

interface Gen {
  text: string;
}
const element: fc.Memo<Gen> = fc.memo((n) =>
  fc
    .tuple(
      name,
      attributes,
      space,
      n <= 1
        ? fc.constant([] as Gen[])
        : fc.array(
            fc.oneof(
              element(n - 1),
              fc.constantFrom(...CONTENT_LEAF).map((text) => ({ text })),
            ),
            {
              maxLength: 5,
            },
          ),
      fc.boolean(),
      space,
    )
    .map(([tag, attrs, startSpace, children, selfClosing, endSpace]) => ({
      text:
        selfClosing && children.length === 0
          ? `<${tag}${attrs}${startSpace}/>`
          : `<${tag}${attrs}${startSpace}>${children.map((c) => c.text).join("")}</${tag}${endSpace}>`,
    })),
);
const documents = fc
  .tuple(fc.constantFrom("", '<?xml version="1.0"?>', "<!-- p -->"), element(5))
  .map(([prolog, root]) => `${prolog}${root.text}`);

type Mutation = { at: number; piece: string } | { at: number; deleted: number } | { cutAt: number };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ at: fc.nat(), piece: fc.constantFrom(...PIECES) }),
  fc.record({ at: fc.nat(), deleted: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ cutAt: fc.nat() }),
);

function mutate(text: string, m: Mutation): string {
  if ("cutAt" in m) return text.slice(0, m.cutAt % (text.length + 1));
  const at = m.at % (text.length + 1);
  if ("piece" in m) return text.slice(0, at) + m.piece + text.slice(at);
  return text.slice(0, at) + text.slice(at + m.deleted);
}

/** what a sink hears, in words; inside an element named skip... it hears nothing (it says so) */
function recorder(): XmlSink & { heard: string[] } {
  const heard: string[] = [];
  return {
    heard,
    start(text, start, length) {
      const elementName = text.slice(start, start + length);
      heard.push(`<${elementName}>`);
      return !elementName.startsWith("skip");
    },
    text(text, start, end, cdata) {
      heard.push(`${cdata ? "cdata" : "text"}:${text.slice(start, end)}`);
    },
    end() {
      heard.push("end");
    },
  };
}

/** what recorder() must hear of this node, from the whole tree */
function expectedHearing(node: XmlNode, heard: string[]): void {
  if (node.kind === "text") heard.push(`text:${node.raw}`);
  if (node.kind === "cdata") heard.push(`cdata:${node.raw.slice(9, -3)}`);
  if (node.kind !== "element") return;
  heard.push(`<${node.name}>`);
  if (!node.name.startsWith("skip")) for (const child of node.children) expectedHearing(child, heard);
  heard.push("end");
}

/** the error message, or "accepted" */
function outcome(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    return (error as Error).message;
  }
  return "accepted";
}

/** every reading of the text agrees with the whole tree's */
function readsAlike(text: string): void {
  const tree = outcome(() => parseXmlDocument(text, "doc"));
  expect(outcome(() => parseXmlDocument(text, "doc", { materializeDepth: 0 }))).toBe(tree);
  expect(outcome(() => parseXmlDocument(text, "doc", { materializeDepth: 1 }))).toBe(tree);
  expect(outcome(() => parseXmlObject(text, "doc"))).toBe(tree);
  const sink = recorder();
  expect(outcome(() => walkXml(text, "doc", sink))).toBe(tree);
  if (tree !== "accepted") return;
  const expected: string[] = [];
  expectedHearing(parseXmlDocument(text, "doc").root, expected);
  expect(sink.heard).toEqual(expected);
}

describe("a scan and a sink read as the whole tree does", () => {
  it("for generated documents", () => {
    fc.assert(fc.property(documents, readsAlike), { numRuns: 400 });
  });

  it("for mutated ones: the same refusals in the same words", () => {
    fc.assert(
      fc.property(documents, fc.array(mutation, { minLength: 1, maxLength: 3 }), (text, mutations) =>
        readsAlike(mutations.reduce(mutate, text)),
      ),
      { numRuns: 1500 },
    );
  });

  it.each([
    { why: "an end tag naming a prefix of the open element", text: "<r><ab>x</a></ab></r>" },
    { why: "an end tag naming an extension of it", text: "<r><a>x</ab></a></r>" },
    { why: "an end tag of another name as long", text: "<r><ab>x</cd></ab></r>" },
    { why: "white space and a self-closing slash", text: "<r><a  /><b\n>x</b\t></r>" },
    { why: "an end tag cut after its name", text: "<r><a>x</a" },
    { why: "a start tag cut after its name", text: "<r><a" },
    { why: "a name with a character NAME refuses", text: "<r><a$>x</a$></r>" },
    { why: "a name outside ASCII, read by the general path", text: "<r><é>x</é><aé/></r>" },
    { why: "attributes, read by the general path", text: '<r><a b="1">x<c/></a></r>' },
    { why: "an undefined entity in a later text", text: "<r><a>x</a><b>&bad;</b></r>" },
    { why: "']]>' in a later text", text: "<r><a>x</a><b>]]></b></r>" },
    { why: "'&' in an attribute after clean text", text: "<r><a>x</a><b c='&'/></r>" },
    { why: "a comment between tags", text: "<r><a><!-- x --></a><!-- - -- --></r>" },
    { why: "nesting at the bound", text: "<a>".repeat(MAX_XML_DEPTH) + "</a>".repeat(MAX_XML_DEPTH) },
    {
      why: "nesting past the bound",
      text: "<a>".repeat(MAX_XML_DEPTH + 1) + "</a>".repeat(MAX_XML_DEPTH + 1),
    },
    {
      why: "self-closing past the bound",
      text: "<a>".repeat(MAX_XML_DEPTH) + "<b/>" + "</a>".repeat(MAX_XML_DEPTH),
    },
  ])("$why", ({ text }) => readsAlike(text));
});

/** inside an element named a-b the sink hears its text and only its children named a or ab (a filter) */
const ONLY_A = new XmlChildFilter(["a", "ab"]);

function filteringRecorder(): XmlSink & { heard: string[] } {
  const sink = recorder();
  return {
    ...sink,
    start(text, start, length) {
      const listening = sink.start(text, start, length);
      return text.slice(start, start + length) === "a-b" ? ONLY_A : listening;
    },
  };
}

/** what filteringRecorder() must hear of this node (`filtered`: its parent answered ONLY_A), from the whole tree */
function expectedFilteredHearing(node: XmlNode, heard: string[], filtered: boolean): void {
  if (node.kind === "text") heard.push(`text:${node.raw}`);
  if (node.kind === "cdata") heard.push(`cdata:${node.raw.slice(9, -3)}`);
  if (node.kind !== "element" || (filtered && !ONLY_A.names.includes(node.name))) return;
  heard.push(`<${node.name}>`);
  if (!node.name.startsWith("skip")) {
    for (const child of node.children) expectedFilteredHearing(child, heard, node.name === "a-b");
  }
  heard.push("end");
}

/** a sink that filters children refuses what the whole tree refuses, and hears exactly what the filter lets through */
function filteredReadsAlike(text: string): void {
  const tree = outcome(() => parseXmlDocument(text, "doc"));
  const sink = filteringRecorder();
  expect(outcome(() => walkXml(text, "doc", sink))).toBe(tree);
  expect(
    outcome(() => parseXmlDocument(text, "doc", { materializeDepth: 1, sink: filteringRecorder() })),
  ).toBe(tree);
  if (tree !== "accepted") return;
  const expected: string[] = [];
  expectedFilteredHearing(parseXmlDocument(text, "doc").root, expected, false);
  expect(sink.heard).toEqual(expected);
}

describe("a sink that hears only some children (XmlChildFilter) reads as the whole tree does", () => {
  it("for generated documents", () => {
    fc.assert(fc.property(documents, filteredReadsAlike), { numRuns: 400 });
  });

  it("for mutated ones: the same refusals in the same words", () => {
    fc.assert(
      fc.property(documents, fc.array(mutation, { minLength: 1, maxLength: 3 }), (text, mutations) =>
        filteredReadsAlike(mutations.reduce(mutate, text)),
      ),
      { numRuns: 1500 },
    );
  });

  it.each([
    { why: "text, left-out leaves and kept ones", text: "<r><a-b>t<x>1</x><a>2</a><a-c/><ab/>u</a-b></r>" },
    { why: "a left-out element with children", text: "<r><a-b><x><a>in</a></x><a>out</a></a-b></r>" },
    {
      why: "a kept child with children of its own",
      text: "<r><a-b><a><x>1</x><a-b><a/><y/></a-b></a></a-b></r>",
    },
    { why: "a name that extends a kept one", text: "<r><a-b><abc>1</abc><a.b/><ab>2</ab></a-b></r>" },
    { why: "a fault in a left-out leaf", text: "<r><a-b><x>&nbsp;</x><a/></a-b></r>" },
    { why: "a wrong end tag in a left-out leaf", text: "<r><a-b><x>1</xy><a/></a-b></r>" },
    { why: "a character XML refuses in a left-out leaf", text: "<r><a-b><x>\u0001</x></a-b></r>" },
    {
      why: "left-out leaves at the depth bound",
      text: `${"<a>".repeat(MAX_XML_DEPTH - 2)}<a-b><x/><y>1</y></a-b>${"</a>".repeat(MAX_XML_DEPTH - 2)}`,
    },
    {
      why: "left-out leaves past the depth bound",
      text: `${"<a>".repeat(MAX_XML_DEPTH - 1)}<a-b><x/></a-b>${"</a>".repeat(MAX_XML_DEPTH - 1)}`,
    },
  ])("$why", ({ text }) => filteredReadsAlike(text));
});
