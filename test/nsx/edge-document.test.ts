import { describe, expect, it } from "vitest";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import { NsxDocumentError, NsxResponseError } from "../../src/nsx/errors.ts";

/** Shaped like a GET /api/4.0/edges/edge-7 answer from a 6.4 manager, with the field notes' oddities. */
const EDGE = `<?xml version="1.0" encoding="UTF-8"?>
<edge>
    <id>edge-7</id>
    <version>42</version>
    <status>deployed</status>
    <datacenterMoid>datacenter-21</datacenterMoid>
    <datacenterName>Lab &amp; Test</datacenterName>
    <tenant>team-a</tenant>
    <name>esg-Caf&#233;</name>
    <fqdn>esg.example.com</fqdn>
    <enableAesni>true</enableAesni>
    <enableFips>false</enableFips>
    <vseLogLevel>info</vseLogLevel>
    <vnics>
        <vnic>
            <label>vNic_0</label>
            <name>uplink</name>
            <addressGroups>
                <addressGroup>
                    <primaryAddress>192.0.2.10</primaryAddress>
                    <subnetMask>255.255.255.0</subnetMask>
                </addressGroup>
            </addressGroups>
            <mtu>1500</mtu>
            <type>uplink</type>
            <isConnected>true</isConnected>
            <index>0</index>
            <portgroupId>dvportgroup-36</portgroupId>
        </vnic>
        <vnic>
            <label>vNic_1</label>
            <name>vnic1</name>
            <addressGroups/>
            <index>1</index>
        </vnic>
    </vnics>
    <features>
        <featureConfig/>
        <firewall>
            <version>41</version>
            <enabled>true</enabled>
            <globalConfig>
                <tcpPickOngoingConnections>false</tcpPickOngoingConnections>
            </globalConfig>
            <firewallRules>
                <firewallRule>
                    <id>131074</id>
                    <ruleTag>131074</ruleTag>
                    <name>allow &lt;web&gt; &#x2192; db</name>
                    <ruleType>user</ruleType>
                    <enabled>true</enabled>
                    <description><![CDATA[opened for ticket #42 <urgent>]]></description>
                    <action>accept</action>
                    <application applicationId="application-66" type='service'>
                        <service><protocol>tcp</protocol><port>443</port></service>
                    </application>
                </firewallRule>
                <!-- rule 131075 disabled by ops -->
            </firewallRules>
        </firewall>
        <featureConfig></featureConfig>
    </features>
    <autoConfiguration>
        <enabled>true</enabled>
        <rulePriority>high</rulePriority>
    </autoConfiguration>
    <type>gatewayServices</type>
    <isUniversal>false</isUniversal>
    <hypervisorAssist>false</hypervisorAssist>
    <tunnels/>
    <edgeAssistId>5003</edgeAssistId>
    <queryDaemon>
        <enabled>false</enabled>
        <port>5666</port>
    </queryDaemon>
    <description>Owned by &quot;team-a&quot;</description>
</edge>
`;

const withoutTenant = (xml: string): string => xml.replace(/\n *<tenant>team-a<\/tenant>/, "");
const OTHER_TENANT = EDGE.replace("team-a</tenant>", "team-b</tenant>");
const NAME_THEN_FQDN = /(<name>esg.*<\/name>)(\n *)(<fqdn>.*<\/fqdn>)/;

function responseError(xml: string): NsxResponseError {
  try {
    EdgeDocument.parse(xml);
  } catch (error) {
    if (error instanceof NsxResponseError) return error;
    throw error;
  }
  throw new Error("accepted");
}

describe("EdgeDocument.parse", () => {
  const edge = EdgeDocument.parse(EDGE);

  it("reads the section 2.1 fields, decoded", () => {
    expect({
      id: edge.id,
      version: edge.version,
      status: edge.status,
      datacenterMoid: edge.datacenterMoid,
      datacenterName: edge.datacenterName,
      tenant: edge.tenant,
      name: edge.name,
      fqdn: edge.fqdn,
      type: edge.type,
      description: edge.description,
    }).toEqual({
      id: "edge-7",
      version: 42,
      status: "deployed",
      datacenterMoid: "datacenter-21",
      datacenterName: "Lab & Test",
      tenant: "team-a",
      name: "esg-Café",
      fqdn: "esg.example.com",
      type: "gatewayServices",
      description: 'Owned by "team-a"',
    });
  });

  it("reads any direct child with getField, and only direct children", () => {
    expect(edge.getField("edgeAssistId")).toBe("5003");
    expect(edge.getField("tunnels")).toBe("");
    expect(edge.getField("queryDaemon")?.trim().split(/\s+/)).toEqual(["false", "5666"]);
    expect(edge.getField("label")).toBeUndefined();
  });

  it("reads CDATA as text and skips comments", () => {
    const doc = EdgeDocument.parse(
      "<edge><id>edge-1</id><description><![CDATA[a <b>]]> &amp;<!-- x --> c</description></edge>",
    );
    expect(doc.description).toBe("a <b> & c");
  });

  const versions: { name: string; reason: string; version: string; want: number | undefined }[] = [
    { name: "Padded", reason: "whitespace around a number is tolerated", version: " 9\n", want: 9 },
    { name: "NotNumber", reason: "text is not a version", version: "nine", want: undefined },
    { name: "Negative", reason: "versions only rise from zero", version: "-1", want: undefined },
    { name: "Huge", reason: "beyond a safe integer", version: "9007199254740993", want: undefined },
  ];
  it.each(versions)("version $name: $reason", ({ version, want }) => {
    const doc = EdgeDocument.parse(`<edge><id>edge-1</id><version>${version}</version></edge>`);
    expect(doc.version).toBe(want);
  });

  it("gives back the document byte for byte when nothing is set", () => {
    expect(edge.serialize()).toBe(EDGE);
    const oneLine = EDGE.replace(/>\s+</g, "><").trim();
    expect(EdgeDocument.parse(oneLine).serialize()).toBe(oneLine);
  });

  const XXE =
    '<!DOCTYPE edge [<!ENTITY t SYSTEM "file:///etc/shadow">]><edge><id>edge-1</id><tenant>&t;</tenant></edge>';
  const LAUGHS = '<!DOCTYPE e [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]><edge><id>&b;</id></edge>';
  const refusals: { name: string; reason: string; xml: string; message: RegExp }[] = [
    {
      name: "WrongRoot",
      reason: "a pool list is no edge",
      xml: "<ipamAddressPools/>",
      message: /<ipamAddressPools>/,
    },
    { name: "NoId", reason: "an edge without id", xml: "<edge><name>x</name></edge>", message: /no <id>/ },
    {
      name: "NestedId",
      reason: "id must be a direct child",
      xml: "<edge><a><id>1</id></a></edge>",
      message: /no <id>/,
    },
    {
      name: "EmptyId",
      reason: "an empty id names no edge",
      xml: "<edge><id> </id></edge>",
      message: /empty/,
    },
    { name: "Malformed", reason: "truncated body", xml: EDGE.slice(0, 500), message: /not well-formed/ },
    { name: "Doctype", reason: "no DTD", xml: `<!DOCTYPE edge>${EDGE.slice(39)}`, message: /DOCTYPE/ },
    { name: "Entity", reason: "XXE through an external entity", xml: XXE, message: /DOCTYPE/ },
    { name: "BillionLaughs", reason: "nested entities", xml: LAUGHS, message: /DOCTYPE/ },
    {
      name: "UndefinedEntity",
      reason: "no DTD defines it",
      xml: "<edge><id>&e7;</id></edge>",
      message: /&e7;/,
    },
    {
      name: "TypedFieldTwice",
      reason: "which <version> the manager reads is a guess",
      xml: "<edge><id>edge-1</id><version>1</version><name>a</name><version>2</version></edge>",
      message: /<version> appears 2 times in <edge>/,
    },
    {
      name: "TwoTypedFieldsTwice",
      reason: "the first of the typed fields in their order is named, with its count",
      xml: "<edge><id>edge-1</id><name>x</name><name>y</name><name>z</name><tenant>a</tenant><tenant>b</tenant></edge>",
      message: /<tenant> appears 2 times in <edge>/,
    },
  ];
  it.each(refusals)("refuses $name: $reason", ({ xml, message }) => {
    const error = responseError(xml);
    expect(error.code).toBe("NSX_ERR_BAD_RESPONSE");
    expect(error.message).toMatch(/^edge document: /);
    expect(error.message).toMatch(message);
  });
});

describe("EdgeDocument.setTenant", () => {
  it("changes only the tenant's text, escaped", () => {
    const out = EdgeDocument.parse(EDGE).setTenant("Ünïcode & <co>").serialize();
    expect(out).toBe(EDGE.replace("<tenant>team-a</tenant>", "<tenant>Ünïcode &amp; &lt;co&gt;</tenant>"));
    expect(EdgeDocument.parse(out).tenant).toBe("Ünïcode & <co>");
  });

  it("inserts a missing tenant right after datacenterName, indented like it", () => {
    const out = EdgeDocument.parse(withoutTenant(EDGE)).setTenant("team-a").serialize();
    expect(out).toBe(EDGE);
  });

  const insertions: { name: string; reason: string; xml: string; want: string }[] = [
    {
      name: "OneLine",
      reason: "no whitespace is invented in a one-line document",
      xml: "<edge><id>edge-1</id><datacenterName>dc</datacenterName><name>n</name></edge>",
      want: "<edge><id>edge-1</id><datacenterName>dc</datacenterName><tenant>T</tenant><name>n</name></edge>",
    },
    {
      name: "AfterMoid",
      reason: "without datacenterName, after the last present earlier field",
      xml: "<edge>\n\t<id>edge-1</id>\n\t<status>deployed</status>\n\t<datacenterMoid>d</datacenterMoid>\n\t<name>n</name>\n</edge>",
      want: "<edge>\n\t<id>edge-1</id>\n\t<status>deployed</status>\n\t<datacenterMoid>d</datacenterMoid>\n\t<tenant>T</tenant>\n\t<name>n</name>\n</edge>",
    },
    {
      name: "AfterId",
      reason: "id is the only earlier field; the unknown element after it stays after the tenant",
      xml: "<edge>\n  <id>edge-1</id>\n  <edgeAssistId>1</edgeAssistId>\n</edge>",
      want: "<edge>\n  <id>edge-1</id>\n  <tenant>T</tenant>\n  <edgeAssistId>1</edgeAssistId>\n</edge>",
    },
    {
      name: "LastChild",
      reason: "datacenterName is the last child: the closing tag keeps its own line",
      xml: "<edge>\n  <id>edge-1</id>\n  <datacenterName>dc</datacenterName>\n</edge>",
      want: "<edge>\n  <id>edge-1</id>\n  <datacenterName>dc</datacenterName>\n  <tenant>T</tenant>\n</edge>",
    },
    {
      name: "SelfClosingTenant",
      reason: "an empty <tenant/> gets content and keeps its attributes",
      xml: '<edge><id>edge-1</id><tenant a="1" /></edge>',
      want: '<edge><id>edge-1</id><tenant a="1" >T</tenant></edge>',
    },
  ];
  it.each(insertions)("$name: $reason", ({ xml, want }) => {
    expect(EdgeDocument.parse(xml).setTenant("T").serialize()).toBe(want);
  });

  it("reads every field right after inserting one, also the fields read before it", () => {
    const doc = EdgeDocument.parse(
      "<edge>\n  <id>edge-1</id>\n  <datacenterName>dc</datacenterName>\n  <name>n</name>\n</edge>",
    );
    expect([doc.name, doc.tenant, doc.datacenterName]).toEqual(["n", undefined, "dc"]);
    doc.setTenant("t");
    expect([doc.name, doc.tenant, doc.datacenterName, doc.id]).toEqual(["n", "t", "dc", "edge-1"]);
  });

  it("sets an empty tenant as an empty element", () => {
    const out = EdgeDocument.parse(EDGE).setTenant("").serialize();
    expect(out).toBe(EDGE.replace("<tenant>team-a</tenant>", "<tenant></tenant>"));
    expect(EdgeDocument.parse(out).tenant).toBe("");
  });

  it("keeps leading and trailing whitespace and CR of a tenant", () => {
    const tenant = " a\r\n\tb ";
    expect(EdgeDocument.parse(EdgeDocument.parse(EDGE).setTenant(tenant).serialize()).tenant).toBe(tenant);
  });

  it("replaces mixed content of an existing tenant by the text", () => {
    const doc = EdgeDocument.parse("<edge><id>edge-1</id><tenant>a<!-- c --><b/>c</tenant></edge>");
    expect(doc.setTenant("x").serialize()).toBe("<edge><id>edge-1</id><tenant>x</tenant></edge>");
  });
});

describe("EdgeDocument.setField", () => {
  const errors: { name: string; reason: string; field: string; value: string; message: RegExp }[] = [
    { name: "BadName", reason: "not an element name", field: "a b", value: "x", message: /element name/ },
    {
      name: "ControlChar",
      reason: "XML cannot carry U+0000",
      field: "tenant",
      value: "\u0000",
      message: /carry/,
    },
    {
      name: "Surrogate",
      reason: "a lone surrogate",
      field: "tenant",
      value: "\uDC00",
      message: /cannot carry/,
    },
    {
      name: "Ambiguous",
      reason: "which <dup> counts is unknown",
      field: "dup",
      value: "x",
      message: /2 <dup>/,
    },
  ];
  it.each(errors)("refuses $name: $reason", ({ field, value, message }) => {
    const doc = EdgeDocument.parse("<edge><id>edge-1</id><dup/><dup/></edge>");
    const before = doc.serialize();
    expect(() => doc.setField(field, value)).toThrow(NsxDocumentError);
    expect(() => doc.setField(field, value)).toThrow(message);
    expect(doc.serialize()).toBe(before);
  });

  it("appends an unknown field after the last element", () => {
    const doc = EdgeDocument.parse("<edge>\n  <id>edge-1</id>\n  <x/>\n</edge>");
    expect(doc.setField("extra", "1").serialize()).toBe(
      "<edge>\n  <id>edge-1</id>\n  <x/>\n  <extra>1</extra>\n</edge>",
    );
  });

  it("inserts a missing spec field after its nearest present predecessor", () => {
    const doc = EdgeDocument.parse(EDGE.replace(/\n {4}<description>.*<\/description>/, ""));
    const out = doc.setField("description", "d").serialize();
    expect(out).toMatch(/<tunnels\/>\n {4}<description>d<\/description>\n {4}<edgeAssistId>/);
  });
});

describe("EdgeDocument.clone and equalExcept", () => {
  it("clones deeply: setting the clone leaves the original alone", () => {
    const original = EdgeDocument.parse(withoutTenant(EDGE));
    const copy = original.clone().setTenant("b").setField("name", "other");
    expect(original.serialize()).toBe(withoutTenant(EDGE));
    expect([copy.tenant, copy.name, original.tenant]).toEqual(["b", "other", undefined]);
  });

  it("shares its fields with the original, never a change to one: each set leaves the other's fields and text as they were", () => {
    const original = EdgeDocument.parse(EDGE);
    const copy = original.clone().setField("name", "other").setField("tunnels", "t");
    // a field inserted: the original is then written from its fields, not from the text it read
    original.setField("newField", "n");
    expect([original.name, original.getField("tunnels"), copy.name, copy.getField("tunnels")]).toEqual([
      "esg-Café",
      "",
      "other",
      "t",
    ]);
    expect(original.serialize()).toMatch(
      /<name>esg-Caf&#233;<\/name>[^]*<tunnels\/>[^]*<newField>n<\/newField>/,
    );
    expect(copy.serialize()).toMatch(/<name>other<\/name>[^]*<tunnels>t<\/tunnels>/);
    expect(copy.getField("newField")).toBeUndefined();
  });

  /** each `b` compared with `a` (EDGE unless given), both ways */
  const pairs: { name: string; reason: string; a?: string; b: string; except: string[]; equal: boolean }[] = [
    { name: "Same", reason: "identical", b: EDGE, except: [], equal: true },
    {
      name: "Spelling",
      reason: "references, quotes, empty-element form and attribute order are spelling",
      a: `<edge><id>edge-1</id><a x='1' y="&#233;"/><b>&#x26;</b></edge>`,
      b: `<edge><id>edge-1</id><a y="é" x="1"></a><b>&amp;</b></edge>`,
      except: [],
      equal: true,
    },
    {
      name: "TenantDiffers",
      reason: "the tenant is what differs",
      b: OTHER_TENANT,
      except: ["tenant"],
      equal: true,
    },
    {
      name: "TenantCounts",
      reason: "without the exception it counts",
      b: OTHER_TENANT,
      except: [],
      equal: false,
    },
    {
      name: "TenantMissing",
      reason: "absence is fine when excepted",
      b: withoutTenant(EDGE),
      except: ["tenant"],
      equal: true,
    },
    {
      name: "NestedChange",
      reason: "deep in features",
      b: EDGE.replace(">443<", ">444<"),
      except: ["tenant"],
      equal: false,
    },
    {
      name: "Comment",
      reason: "comments count",
      b: EDGE.replace("by ops", "by dev"),
      except: [],
      equal: false,
    },
    {
      name: "Attribute",
      reason: "attributes count",
      b: EDGE.replace("type='service'", ""),
      except: [],
      equal: false,
    },
    {
      name: "Whitespace",
      reason: "whitespace is text",
      b: EDGE.replace("<vnics>", "<vnics> "),
      except: [],
      equal: false,
    },
    { name: "Prolog", reason: "the declaration counts", b: EDGE.slice(39), except: [], equal: false },
    {
      name: "Order",
      reason: "element order counts",
      b: EDGE.replace(NAME_THEN_FQDN, "$3$2$1"),
      except: [],
      equal: false,
    },
  ];
  it.each(pairs)("$name: $reason", ({ a = EDGE, b, except, equal }) => {
    expect(EdgeDocument.equalExcept(EdgeDocument.parse(a), EdgeDocument.parse(b), except)).toBe(equal);
    expect(EdgeDocument.equalExcept(EdgeDocument.parse(b), EdgeDocument.parse(a), except)).toBe(equal);
  });
});

describe("a large edge", () => {
  it("round-trips a 2 MB document with 24000 firewall rules, byte-exact and in linear time", () => {
    const rule = (i: number): string =>
      `\n        <firewallRule><id>${i}</id><name>r&#233; ${i}</name><action>accept</action></firewallRule>`;
    const rules = Array.from({ length: 24_000 }, (_, i) => rule(i)).join("");
    const bigger = EDGE.replace("<firewallRules>", `<firewallRules>${rules}`);
    const started = performance.now();
    const out = EdgeDocument.parse(bigger).setTenant("t").serialize();
    const elapsedMs = performance.now() - started;
    expect(bigger.length).toBeGreaterThan(2_000_000);
    expect(out).toBe(bigger.replace("<tenant>team-a</tenant>", "<tenant>t</tenant>"));
    expect(elapsedMs).toBeLessThan(10_000); // about 0.1 s alone; generous for a loaded machine
  });
});

describe("a read is a scan; the tree is built when needed", () => {
  const text =
    '<?xml version="1.0"?>\n<edge>\n  <id>edge-4</id>\n  <tenant>a<b>&amp;b</b><!-- c --></tenant>\n' +
    "  <features><nat><rule>x</rule></nat></features>\n</edge>\n";

  it("reads a field with child elements whole, as the full tree would", () => {
    expect(EdgeDocument.parse(text).tenant).toBe("a&b");
  });

  it("gives the text back as read, and a copy changed is written from the whole tree", () => {
    const doc = EdgeDocument.parse(text);
    expect(doc.serialize()).toBe(text);
    const changed = doc.clone().setField("description", "d");
    expect(changed.serialize()).toContain("<features><nat><rule>x</rule></nat></features>");
    expect(changed.serialize()).toContain("<description>d</description>");
    expect(doc.serialize()).toBe(text);
    expect(EdgeDocument.equalExcept(doc, changed, ["description"])).toBe(true);
  });

  it("writes a field set into the text as read, as the whole tree writes it, however often and after whatever was read", () => {
    const bom = `\uFEFF${text.replace("\n<edge>", "\n<!-- p -->\n<edge>").replace("<id>", '<name a="1"/>\n  <id>')}`;
    const set = (doc: EdgeDocument): EdgeDocument =>
      doc.setField("name", "n&1").setTenant("t").setTenant("u");
    const expected = bom
      .replace('<name a="1"/>', '<name a="1">n&amp;1</name>')
      .replace("<tenant>a<b>&amp;b</b><!-- c --></tenant>", "<tenant>u</tenant>");
    expect(set(EdgeDocument.parse(bom)).serialize()).toBe(expected);
    // the same once the whole tree was built (a field with child elements read first)
    const read = EdgeDocument.parse(bom);
    expect(read.getField("features")).toBe("x");
    expect(set(read).serialize()).toBe(expected);
    expect(EdgeDocument.parse(expected).tenant).toBe("u");
  });

  it("still refuses what is wrong deep inside, before anything is read from it", () => {
    expect(() => EdgeDocument.parse(text.replace("<rule>x</rule>", "<rule>&nbsp;</rule>"))).toThrow(
      /undefined entity reference &nbsp;/,
    );
    expect(() => EdgeDocument.parse(text.replace("</nat>", "</rule>"))).toThrow(/<\/rule> closes <nat>/);
  });
});
