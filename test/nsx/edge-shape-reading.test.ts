/**
 * The shape of an edge (edge-shape.ts) is heard in the same pass as the edge's own parse, and
 * kept through a clone and a field's new text rather than read again: it must be, in every case,
 * the shape a separate reading of the document's text gives (edgeShapeOf). Checked on generated
 * ESGs edited at random (sections, vNICs, rules and type removed, renamed, doubled; text behind
 * references and CDATA), after setting the tenant, the type, a section and fields that are new.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import { edgeShapeOf, type EdgeShape } from "../../src/nsx/edge-shape.ts";
import { NsxDocumentError } from "../../src/nsx/errors.ts";
import { generateEdgeXml } from "../../src/simulator/index.ts";

/** a shape as plain data: sets sorted */
function plain(shape: EdgeShape): unknown {
  return { ...shape, elements: [...shape.elements].sort() };
}

/** the document's shape as heard, and as a separate reading of its text gives it */
function bothShapes(doc: EdgeDocument): { heard: unknown; read: unknown } {
  return { heard: plain(doc.shape()), read: plain(edgeShapeOf(doc.serialize())) };
}

const EDIT = fc.constantFrom(
  "drop",
  "rename",
  "double",
  "entity",
  "cdata",
  "type",
) satisfies fc.Arbitrary<string>;

/** an edit at the `n`th element of the text (by its start tag) */
function edit(xml: string, kind: string, n: number): string {
  const starts = [...xml.matchAll(/<([A-Za-z][\w.-]*)>/g)];
  const at = starts[n % starts.length];
  if (at === undefined) return xml;
  const name = at[1] as string;
  const start = at.index;
  const close = xml.indexOf(`</${name}>`, start);
  if (close === -1) return xml;
  const end = close + name.length + 3;
  const whole = xml.slice(start, end);
  const inner = xml.slice(start + name.length + 2, close);
  const replaced: Record<string, () => string> = {
    drop: () => "",
    rename: () => whole.replace(`<${name}>`, `<${name}x>`).replace(new RegExp(`</${name}>$`), `</${name}x>`),
    double: () => whole + whole,
    entity: () => (/^[0-9a-z]$/.test(inner) ? `<${name}>&#${inner.charCodeAt(0)};</${name}>` : whole),
    cdata: () => (/^[^<]*$/.test(inner) ? `<${name}><![CDATA[${inner}]]></${name}>` : whole),
    type: () => (name === "type" ? "<type>distributedRouter</type>" : whole),
  };
  return xml.slice(0, start) + (replaced[kind]?.() ?? whole) + xml.slice(end);
}

const edges = fc
  .record({
    number: fc.integer({ min: 1, max: 50 }),
    rules: fc.integer({ min: 0, max: 4 }),
    pretty: fc.boolean(),
    edits: fc.array(fc.tuple(EDIT, fc.nat()), { maxLength: 4 }),
  })
  .map(({ number, rules, pretty, edits }) =>
    edits.reduce(
      (xml, [kind, n]) => edit(xml, kind, n),
      generateEdgeXml({ edgeNumber: number, firewallRules: rules, pretty }),
    ),
  );

/** parsed, or undefined where an edit made the document one the parse refuses */
function parsed(xml: string): EdgeDocument | undefined {
  try {
    return EdgeDocument.parse(xml);
  } catch {
    return undefined;
  }
}

describe("the shape heard in the edge's parse", () => {
  it("is the shape a separate reading of the text gives, on generated edges edited at random", () => {
    fc.assert(
      fc.property(edges, (xml) => {
        const doc = parsed(xml);
        if (doc === undefined) return;
        expect(plain(doc.shape())).toEqual(plain(edgeShapeOf(xml)));
      }),
      { numRuns: 400 },
    );
  });

  it.each([
    { field: "tenant", value: "blue", reason: "the write every correction makes: no new reading" },
    { field: "type", value: "distributedRouter", reason: "the type decides what a whole edge is" },
    { field: "vnics", value: "", reason: "a section set to text loses its members" },
    { field: "features", value: "x", reason: "the features' sections go" },
    { field: "description", value: "new", reason: "a field the edge did not have" },
    { field: "name", value: "", reason: "a field emptied" },
  ])("after setting <$field> ($reason), is still what a reading of the new text gives", (c) => {
    fc.assert(
      fc.property(edges, (xml) => {
        const doc = parsed(xml);
        if (doc === undefined) return;
        let changed: EdgeDocument;
        try {
          changed = doc.clone().setField(c.field, c.value);
        } catch (error) {
          // a field an edit doubled is refused (which of the two is meant is a guess)
          if (error instanceof NsxDocumentError) return;
          throw error;
        }
        const { heard, read } = bothShapes(changed);
        expect(heard).toEqual(read);
      }),
      { numRuns: 100 },
    );
  });
});

describe("the shape of a known edge", () => {
  // every kind of thing the shape reads, with what it must not read beside each
  const xml =
    `<?xml version="1.0"?><edge><id>edge-9</id><version>3</version><tenant>t</tenant>` +
    `<vnics><vnic><index> 0 </index><name>a</name><addressGroups><addressGroup><index>7</index></addressGroup></addressGroups></vnic>` +
    `<vnic><index><![CDATA[1]]></index></vnic><vnic><label>no index</label></vnic></vnics>` +
    `<appliances><appliance><index>5</index></appliance></appliances><cliSettings/><emptySection></emptySection>` +
    `<features><firewall><firewallRules><firewallRule><id>1</id><firewallRule>nested, not counted</firewallRule></firewallRule>` +
    `<firewallRule/><other/></firewallRules></firewall><nat><natRules><natRule/></natRules></nat><syslog/></features>` +
    `<type>gateway&#83;ervices</type><description>d</description></edge>`;
  const want = {
    type: "gatewayServices",
    elements: [
      "appliances",
      "cliSettings",
      "description",
      "emptySection",
      "features",
      "features/firewall",
      "features/nat",
      "features/syslog",
      "id",
      "tenant",
      "type",
      "version",
      "vnics",
    ],
    // direct children of <edge> that hold elements, and every child of <features>
    sections: ["appliances", "features", "features/firewall", "features/nat", "features/syslog", "vnics"],
    counts: {
      "vnics/vnic": 3,
      "features/firewall/firewallRules/firewallRule": 2,
      "features/nat/natRules/natRule": 1,
    },
    vnicIndexes: ["0", "1"],
  };

  it("is what the edge's own parse hears", () => {
    expect(plain(EdgeDocument.parse(xml).shape())).toEqual(want);
  });

  it("is what a reading of the text alone gives", () => {
    expect(plain(edgeShapeOf(xml))).toEqual(want);
  });
});

/**
 * The sections of one edge read after another are sorted once while they are the same and in the
 * same order (a thousand edges of a fleet nearly always are): each shape still has its own.
 */
describe("the sections of edges read one after another", () => {
  const edge = (sections: string[]): string =>
    `<edge><id>edge-1</id>${sections.map((s) => `<${s}><x/></${s}>`).join("")}<features><syslog/></features></edge>`;
  const sorted = (sections: string[]): string[] => [...sections, "features", "features/syslog"].sort();

  it.each([
    { reason: "the same sections", next: ["vnics", "appliances", "cliSettings"] },
    { reason: "the same sections in another order", next: ["cliSettings", "vnics", "appliances"] },
    { reason: "one section fewer", next: ["vnics", "appliances"] },
    { reason: "one section more", next: ["vnics", "appliances", "cliSettings", "tunnels"] },
    { reason: "as many, one of them another", next: ["vnics", "appliances", "autoConfiguration"] },
  ])("are each edge's own after an edge with others: $reason", ({ next }) => {
    const first = ["vnics", "appliances", "cliSettings"];
    const before = EdgeDocument.parse(edge(first)).shape().sections;
    const after = EdgeDocument.parse(edge(next)).shape().sections;
    expect([before, after]).toEqual([sorted(first), sorted(next)]);
  });

  it("are a list of each shape's own: a change to one leaves the next edge's alone", () => {
    const xml = edge(["vnics", "appliances"]);
    EdgeDocument.parse(xml).shape().sections.push("changed");
    EdgeDocument.parse(xml).shape().sections.push("changed");
    expect(EdgeDocument.parse(xml).shape().sections).toEqual(sorted(["vnics", "appliances"]));
  });
});
