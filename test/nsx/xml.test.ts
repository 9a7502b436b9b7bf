import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NsxResponseError } from "../../src/nsx/errors.ts";
import {
  assertSafeXml,
  decodeXmlText,
  escapeXmlText,
  isXmlName,
  MAX_XML_DEPTH,
  parseXmlDocument,
  parseXmlObject,
  serializeXml,
  walkXml,
  XmlNames,
  type XmlSink,
} from "../../src/nsx/xml.ts";

const BILLION_LAUGHS = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
]>
<lolz>&lol2;</lolz>`;

function refusal(text: string): NsxResponseError {
  try {
    assertSafeXml(text, "test body");
  } catch (error) {
    if (error instanceof NsxResponseError) return error;
    throw error;
  }
  throw new Error("accepted");
}

describe("assertSafeXml refuses", () => {
  const cases: { name: string; reason: string; text: string; message: RegExp }[] = [
    { name: "Doctype", reason: "no DTD is ever processed", text: "<!DOCTYPE a><a/>", message: /DOCTYPE/ },
    { name: "BillionLaughs", reason: "entity expansion attack", text: BILLION_LAUGHS, message: /DOCTYPE/ },
    {
      name: "ExternalEntity",
      reason: "XXE: an external entity would read a local file",
      text: '<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>',
      message: /DOCTYPE/,
    },
    {
      name: "BareEntityDecl",
      reason: "ENTITY outside a DOCTYPE",
      text: '<!ENTITY x "y"><a/>',
      message: /ENTITY/,
    },
    {
      name: "EntityInRoot",
      reason: "ENTITY inside the root",
      text: '<a><!ENTITY x "y"></a>',
      message: /ENTITY/,
    },
    {
      name: "UndefinedEntity",
      reason: "&nbsp; is undefined without a DTD",
      text: "<a>&nbsp;</a>",
      message: /&nbsp;/,
    },
    { name: "EntityInAttribute", reason: "same rule in attributes", text: '<a b="&x;"/>', message: /&x;/ },
    { name: "BareAmpersand", reason: "& must start a reference", text: "<a>a & b</a>", message: /'&'/ },
    { name: "NulReference", reason: "&#0; is not an XML character", text: "<a>&#0;</a>", message: /&#0;/ },
    { name: "SurrogateReference", reason: "a lone surrogate", text: "<a>&#xD800;</a>", message: /&#xD800;/ },
    { name: "Mismatched", reason: "end tag must match", text: "<a><b></a></b>", message: /<\/a> closes <b>/ },
    { name: "Unclosed", reason: "document ends inside <a>", text: "<a><b/>", message: /<a> is not closed/ },
    { name: "TwoRoots", reason: "one root only", text: "<a/><b/>", message: /second root/ },
    { name: "TextOutside", reason: "no text beside the root", text: "<a/>x", message: /outside the root/ },
    { name: "Empty", reason: "an empty body is no document", text: "", message: /no root/ },
    { name: "OnlyComment", reason: "a comment is no root", text: "<!-- x -->", message: /no root/ },
    { name: "NotXml", reason: "plain text", text: "true", message: /outside the root/ },
    {
      name: "RepeatedAttribute",
      reason: "attributes are unique",
      text: '<a b="1" b="2"/>',
      message: /repeated/,
    },
    { name: "UnquotedAttribute", reason: "values are quoted", text: "<a b=1/>", message: /start tag/ },
    {
      name: "LtInAttribute",
      reason: "< is not allowed in a value",
      text: '<a b="<"/>',
      message: /start tag/,
    },
    { name: "CdataEndInText", reason: "]]> must be escaped in text", text: "<a>]]></a>", message: /]]>/ },
    { name: "DoubleDashComment", reason: "-- ends comments", text: "<a><!-- a -- b --></a>", message: /--/ },
    {
      name: "LateDeclaration",
      reason: "declaration only first",
      text: ' <?xml version="1.0"?><a/>',
      message: /start/,
    },
    {
      name: "BadDeclaration",
      reason: "version is required",
      text: "<?xml encoding='UTF-8'?><a/>",
      message: /decl/,
    },
    { name: "CdataOutside", reason: "CDATA only in content", text: "<![CDATA[x]]><a/>", message: /CDATA/ },
    { name: "ControlChar", reason: "U+0001 is not XML", text: "<a>\u0001</a>", message: /U\+1 / },
    { name: "LoneSurrogate", reason: "broken UTF-16", text: "<a>\uD800</a>", message: /U\+D800/ },
    {
      name: "OtherDecl",
      reason: "no ELEMENT declarations",
      text: "<!ELEMENT a ANY><a/>",
      message: /markup decl/,
    },
    {
      name: "TooDeep",
      reason: "bounded nesting keeps recursion safe",
      text: "<a>".repeat(MAX_XML_DEPTH + 1) + "</a>".repeat(MAX_XML_DEPTH + 1),
      message: /deeper than/,
    },
  ];
  it.each(cases)("$name: $reason", ({ text, message }) => {
    const error = refusal(text);
    expect(error.code).toBe("NSX_ERR_BAD_RESPONSE");
    expect(error.message.startsWith("test body: ")).toBe(true);
    expect(error.message).toMatch(message);
  });

  it.each([
    ...cases,
    {
      name: "DeepEntity",
      reason: "deep inside",
      text: "<a><b><c x='1'>&nbsp;</c></b></a>",
      message: /&nbsp;/,
    },
    {
      name: "DeepMismatch",
      reason: "deep inside",
      text: "<a><b><c></b></c></a>",
      message: /<\/b> closes <c>/,
    },
    { name: "DeepCdataEnd", reason: "deep inside", text: "<a><b>x<c/>]]></b></a>", message: /]]>/ },
  ])(
    "a scan (materializeDepth 0) and parseXmlObject refuse $name with the same words",
    ({ text, message }) => {
      const full = (() => {
        try {
          parseXmlDocument(text, "test body");
        } catch (error) {
          return (error as Error).message;
        }
        return "accepted";
      })();
      expect(full).toMatch(message);
      expect(() => parseXmlDocument(text, "test body", { materializeDepth: 0 })).toThrow(full);
      // the small documents are read without a tree: the same checks, the same words
      expect(() => parseXmlObject(text, "test body")).toThrow(full);
    },
  );

  it("reports line and column of a syntax error", () => {
    expect(refusal("<a>\n  <b>\n</a>").message).toMatch(/line 3, column 1/);
  });
});

describe("assertSafeXml accepts and the tree round-trips byte for byte", () => {
  const cases: { name: string; reason: string; text: string }[] = [
    { name: "Minimal", reason: "one empty element", text: "<a/>" },
    {
      name: "Declarations",
      reason: "declaration with single quotes and standalone",
      text: "<?xml version='1.0' encoding='UTF-8' standalone=\"yes\" ?>\r\n<a></a>\r\n",
    },
    {
      name: "Bom",
      reason: "a byte order mark before the declaration",
      text: '\uFEFF<?xml version="1.0"?><a/>',
    },
    {
      name: "Misc",
      reason: "comments and PIs around the root",
      text: "<!-- c --><?pi x?>\n<a/>\n<!----><?q?>",
    },
    {
      name: "XmlNamedPi",
      reason: "a PI whose target starts with xml",
      text: '<?xml-stylesheet href="s"?><a/>',
    },
    {
      name: "References",
      reason: "the five entities and char refs",
      text: "<a>&amp;&lt;&gt;&quot;&apos;&#233;&#x1F600;</a>",
    },
    { name: "Cdata", reason: "markup inside CDATA", text: "<a><![CDATA[<b>&x;]]]]><![CDATA[>]]></a>" },
    {
      name: "Attributes",
      reason: "quotes, spacing, refs",
      text: "<a x = '\"' y=\"&apos;&#10;\"\n\tz=''  />",
    },
    { name: "Spacing", reason: "whitespace in end tags", text: "<a ><b\n></b\t></a \n>" },
    { name: "Unicode", reason: "non-ASCII names and text", text: "<é:ü ä='ö'>日本 😀</é:ü>" },
    { name: "Gt", reason: "> is allowed in text", text: "<a>a > b</a>" },
    { name: "CombiningMark", reason: "a combining mark inside a name", text: "<e\u0301t\u00B7a/>" },
  ];
  it.each(cases)("$name: $reason", ({ text }) => {
    expect(() => assertSafeXml(text, "test body")).not.toThrow();
    expect(serializeXml(parseXmlDocument(text, "test body"))).toBe(text);
    // a scan accepts what the full parse accepts; what it keeps is marked partial where cut
    const scan = parseXmlDocument(text, "test body", { materializeDepth: 0 });
    expect(scan.root.children.some((c) => c.kind === "element")).toBe(false);
    const hasChildElements = parseXmlDocument(text, "test body").root.children.some(
      (c) => c.kind === "element",
    );
    expect(scan.root.partial === true).toBe(hasChildElements);
  });
});

describe("hostile input stays linear", () => {
  const attributes = Array.from({ length: 50_000 }, (_, i) => ` a${i}="x"`).join("");
  const cases: { name: string; reason: string; text: string; accepted: boolean }[] = [
    {
      name: "ManyAttributes",
      reason: "duplicate check is not quadratic",
      text: `<a${attributes}/>`,
      accepted: true,
    },
    {
      name: "UnclosedTag",
      reason: "no regex backtracking blow-up",
      text: `<a${attributes} `,
      accepted: false,
    },
    {
      name: "Spaces",
      reason: "a long run of whitespace in a tag",
      text: `<a${" ".repeat(500_000)}x`,
      accepted: false,
    },
    {
      name: "References",
      reason: "many references",
      text: `<a>${"&amp;&#233;".repeat(200_000)}</a>`,
      accepted: true,
    },
    {
      name: "QuietLeaves",
      reason: "a run of leaves the regex engine reads, in bounded calls",
      text: `<a><b>${"<c>x&amp;]</c>".repeat(300_000)}</b></a>`,
      accepted: true,
    },
    {
      name: "QuietLongText",
      reason: "a long text before a wrong end tag, where the run gives up",
      text: `<a><b><c>${"x".repeat(2_000_000)}</d></c></b></a>`,
      accepted: false,
    },
    {
      name: "Deep",
      reason: "deep but allowed nesting",
      text: "<a>".repeat(250) + "</a>".repeat(250),
      accepted: true,
    },
  ];
  it.each(cases)("$name: $reason", ({ text, accepted }) => {
    const started = performance.now();
    let ok = true;
    try {
      assertSafeXml(text, "test body");
    } catch (error) {
      expect(error).toBeInstanceOf(NsxResponseError);
      ok = false;
    }
    expect(ok).toBe(accepted);
    expect(performance.now() - started).toBeLessThan(5_000); // catches a quadratic blow-up (it was 59 s), not tuning
  });

  /** leaves with two references each, in `middle` elements of `inner` elements each, `outer` times */
  function nested(outer: number, middle: number, inner: number): string {
    const refs = "&amp;&lt;";
    const b = `<b>${refs}${`<c>${refs}${`<d>${refs}</d>${refs}`.repeat(inner)}</c>${refs}`.repeat(middle)}</b>`;
    return `<r><q>${b.repeat(outer)}</q></r>`;
  }
  const deaf: { name: string; reason: string; text: string; accepted: boolean }[] = [
    {
      name: "DeafWide",
      reason:
        "elements of 64 of 64 leaves, 300 in a row (34 MB): a run reads at most 16 of 16 a call, where 64 of 64 overflowed V8's regex stack",
      text: nested(300, 64, 64),
      accepted: true,
    },
    {
      name: "DeafTooDeep",
      reason:
        "elements one level too deep for a run, each read in vain once before the general path opens it",
      text: `<r><q>${`<a>${nested(1, 16, 16).slice(6, -8)}</a>`.repeat(2000)}</q></r>`,
      accepted: true,
    },
    {
      name: "DeafLongTextWrongEnd",
      reason: "a long text two elements down before a wrong end tag, where the run gives up",
      text: `<r><q><b><c><d>${"x".repeat(2_000_000)}</e></d></c></b></q></r>`,
      accepted: false,
    },
  ];
  it.each(deaf)("read by a sink deaf below the root, $name: $reason", ({ text, accepted }) => {
    const started = performance.now();
    let ok = true;
    try {
      walkXml(text, "test body", deafBelowRoot());
    } catch (error) {
      expect(error).toBeInstanceOf(NsxResponseError);
      ok = false;
    }
    expect(ok).toBe(accepted);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe("escapeXmlText and decodeXmlText", () => {
  const cases: { name: string; reason: string; text: string; escaped: string }[] = [
    { name: "Plain", reason: "nothing to escape", text: "tenant-1", escaped: "tenant-1" },
    { name: "Markup", reason: "& < > are escaped", text: "a&b<c>d", escaped: "a&amp;b&lt;c&gt;d" },
    { name: "Quotes", reason: "quotes need no escape in text", text: `"'`, escaped: `"'` },
    { name: "Cr", reason: "a CR would be normalised away", text: "a\r\nb", escaped: "a&#13;\nb" },
    { name: "Unicode", reason: "unicode is kept as is", text: "Zürich 東京 😀", escaped: "Zürich 東京 😀" },
  ];
  it.each(cases)("$name: $reason", ({ text, escaped }) => {
    expect(escapeXmlText(text)).toBe(escaped);
    expect(decodeXmlText(escaped)).toBe(text);
  });

  it("decodes each reference once", () => {
    expect(decodeXmlText("&amp;lt; &#38;amp; &#x41;&#233;&quot;&apos;")).toBe("&lt; &amp; Aé\"'");
  });
});

describe("parseXmlObject", () => {
  const pool = (n: number): string =>
    `<ipamAddressPool><objectId>ipaddresspool-${n}</objectId><totalAddressCount>10</totalAddressCount></ipamAddressPool>`;
  const cases: { name: string; reason: string; text: string; arrays?: string[]; want: unknown }[] = [
    {
      name: "NoPool",
      reason: "an empty element is an empty string",
      text: "<ipamAddressPools/>",
      arrays: ["ipamAddressPool"],
      want: { ipamAddressPools: "" },
    },
    {
      name: "OnePoolListed",
      reason: "a name in arrays is an array even once",
      text: `<ipamAddressPools>\n  ${pool(1)}\n</ipamAddressPools>`,
      arrays: ["ipamAddressPool"],
      want: {
        ipamAddressPools: { ipamAddressPool: [{ objectId: "ipaddresspool-1", totalAddressCount: "10" }] },
      },
    },
    {
      name: "OnePoolUnlisted",
      reason: "without arrays a single child is an object",
      text: `<ipamAddressPools>${pool(1)}</ipamAddressPools>`,
      want: {
        ipamAddressPools: { ipamAddressPool: { objectId: "ipaddresspool-1", totalAddressCount: "10" } },
      },
    },
    {
      name: "TwoPools",
      reason: "a repeated name is an array in document order",
      text: `<ipamAddressPools>${pool(1)}${pool(2)}</ipamAddressPools>`,
      want: {
        ipamAddressPools: {
          ipamAddressPool: [
            { objectId: "ipaddresspool-1", totalAddressCount: "10" },
            { objectId: "ipaddresspool-2", totalAddressCount: "10" },
          ],
        },
      },
    },
    {
      name: "Boolean",
      reason: "the release answer, declaration dropped",
      text: '<?xml version="1.0" encoding="UTF-8"?>\n<boolean>true</boolean>',
      want: { boolean: "true" },
    },
    {
      name: "Entities",
      reason: "references decoded once, CDATA kept as written, values trimmed",
      text: "<a><b> x &amp;lt; &#233; &#x1F600; </b><c><![CDATA[&amp; <d>]]></c></a>",
      want: { a: { b: "x &lt; é 😀", c: "&amp; <d>" } },
    },
    {
      name: "Strings",
      reason: "nothing is converted to numbers or booleans",
      text: "<a><n>007</n><t>true</t></a>",
      want: { a: { n: "007", t: "true" } },
    },
    {
      name: "Dropped",
      reason: "attributes, comments and PIs are dropped",
      text: '<a k="v"><!-- c --><?p q?><b z="1">1</b></a>',
      want: { a: { b: "1" } },
    },
    {
      name: "ErrorData",
      reason: "an error document with errorData",
      text:
        "<error><details>Pool not found</details><errorCode>120054</errorCode>" +
        "<errorData><data><key>a</key><value>b</value></data></errorData></error>",
      arrays: ["data"],
      want: {
        error: {
          details: "Pool not found",
          errorCode: "120054",
          errorData: { data: [{ key: "a", value: "b" }] },
        },
      },
    },
  ];
  it.each(cases)("$name: $reason", ({ text, arrays, want }) => {
    expect(parseXmlObject(text, "pool list", { arrays })).toEqual(want);
  });

  it("refuses an unsafe document before parsing it", () => {
    expect(() => parseXmlObject(BILLION_LAUGHS, "pool list")).toThrow(/^pool list: DOCTYPE/);
  });

  it("reads elements named like an object's own properties as data, never as its prototype", () => {
    const parsed = parseXmlObject(
      "<a><constructor>1</constructor><__proto__><polluted>yes</polluted></__proto__></a>",
      "pool list",
    ) as { a: Record<string, unknown> };
    expect(Object.hasOwn(parsed.a, "constructor")).toBe(true);
    expect(parsed.a["constructor"]).toBe("1");
    expect(Object.hasOwn(parsed.a, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(parsed.a)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("does not change the caller's options", () => {
    const options = Object.freeze({ arrays: Object.freeze(["b"]) });
    expect(parseXmlObject("<a><b>1</b></a>", "x", options)).toEqual({ a: { b: ["1"] } });
    expect(options.arrays).toEqual(["b"]);
  });

  describe("only: the children kept of an element", () => {
    const only = { s: ["id", "name"] };
    const cases = [
      {
        name: "kept and dropped",
        text: "<l><s><id>1</id><big><x>a</x><x>b</x></big><name> n </name></s><s><id>2</id></s></l>",
        want: { l: { s: [{ id: "1", name: "n" }, { id: "2" }] } },
        reason: "children not listed are not in the value; listed ones read as without `only`",
      },
      {
        name: "only elements named s",
        text: "<l><big>text</big><s><big>no</big><id>1</id></s></l>",
        want: { l: { big: "text", s: [{ id: "1" }] } },
        reason: "a name outside `only` keeps all its children",
      },
      {
        name: "a kept field with elements",
        text: "<l><s><name><first>a</first></name></s></l>",
        want: { l: { s: [{ name: { first: "a" } }] } },
        reason: "what a kept child holds is built whole: a reader can tell it is not text",
      },
      {
        name: "a kept field twice",
        text: "<l><s><id>1</id><skip/><id>2</id></s></l>",
        want: { l: { s: [{ id: ["1", "2"] }] } },
        reason: "a field given twice stays visible to the reader that refuses it",
      },
      {
        name: "only dropped children",
        text: "<l><s><big>x</big> t </s></l>",
        want: { l: { s: ["t"] } },
        reason: "its own text as without the dropped child",
      },
    ];
    it.each(cases)("$name: $reason", ({ text, want }) => {
      expect(parseXmlObject(text, "edge list", { arrays: ["s"], only })).toEqual(want);
    });

    it.each([
      { inside: "<x>a</y>", why: /<\/y>/ },
      { inside: "<x>&undefined;</x>", why: /undefined entity reference &undefined;/ },
      { inside: "<![CDATA[a]]> ]]>", why: /']]>' in text/ },
      { inside: "<!DOCTYPE x>", why: /DOCTYPE declarations are refused/ },
    ])("what it drops is still checked: $inside", ({ inside, why }) => {
      const text = `<l><s><id>1</id><big>${inside}</big></s></l>`;
      expect(() => parseXmlObject(text, "edge list", { arrays: ["s"], only })).toThrow(why);
    });
  });
});

describe("a sink that says what does not concern it", () => {
  /** records what it hears; an element named skip... is not its concern inside */
  function recorder(): XmlSink & { heard: string[] } {
    const heard: string[] = [];
    return {
      heard,
      start(text, start, length) {
        const name = text.slice(start, start + length);
        heard.push(`<${name}>`);
        return !name.startsWith("skip");
      },
      text(text, start, end) {
        heard.push(text.slice(start, end));
      },
      end() {
        heard.push("end");
      },
    };
  }

  it("hears the element's start and end, nothing inside it, and all that comes after", () => {
    const sink = recorder();
    walkXml("<a>x<skip>y<b>z</b><skip2/></skip><skip3/><c>w</c></a>", "test body", sink);
    expect(sink.heard).toEqual(["<a>", "x", "<skip>", "end", "<skip3>", "end", "<c>", "w", "end", "end"]);
  });

  it("hears a CDATA section only outside such an element", () => {
    const sink = recorder();
    walkXml("<a><skip><![CDATA[in]]></skip><![CDATA[out]]></a>", "test body", sink);
    expect(sink.heard).toEqual(["<a>", "<skip>", "end", "out", "end"]);
  });

  it.each([
    { reason: "a mismatched end tag", text: "<a><skip><b></c></skip></a>", message: /<\/c> closes <b>/ },
    {
      reason: "an undefined entity",
      text: "<a><skip><b>&x;</b></skip></a>",
      message: /undefined entity reference &x;/,
    },
    { reason: "a DOCTYPE", text: "<a><skip><!DOCTYPE x></skip></a>", message: /DOCTYPE/ },
    {
      reason: "a character XML cannot carry",
      text: "<a><skip>\u0001</skip></a>",
      message: /U\+1 not allowed/,
    },
    {
      reason: "a repeated attribute",
      text: '<a><skip><b x="1" x="2"/></skip></a>',
      message: /attribute x repeated/,
    },
    { reason: "an element left open", text: "<a><skip><b></skip></a>", message: /<\/skip> closes <b>/ },
  ])("still refuses what is inside it: $reason", ({ text, message }) => {
    expect(() => walkXml(text, "test body", recorder())).toThrow(message);
  });
});

/** a sink that hears the root and is deaf to each of its children (what DEAF_RUNS read) */
function deafBelowRoot(): XmlSink {
  let heardRoot = false;
  return {
    start: () => {
      const root = !heardRoot;
      heardRoot = true;
      return root;
    },
    text: () => undefined,
    end: () => undefined,
  };
}

/**
 * Every character is checked in the pass that reads it (no pass of its own over the document), and
 * the content no sink hears is read by a regex of many tokens a call (QUIET_RUN; DEAF_RUNS inside
 * an element below the root a sink is deaf to, with elements two deep taken whole): each reading
 * must refuse, in the same words, what the whole tree refuses, wherever the fault sits.
 */
describe("each token and each reading checks its own characters", () => {
  const quiet: XmlSink = { start: () => false, text: () => undefined, end: () => undefined };
  function readings(text: string): Record<string, string> {
    const outcome = (read: () => unknown): string => {
      try {
        read();
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    };
    return {
      tree: outcome(() => parseXmlDocument(text, "test body")),
      scan0: outcome(() => parseXmlDocument(text, "test body", { materializeDepth: 0 })),
      scan1: outcome(() => parseXmlDocument(text, "test body", { materializeDepth: 1 })),
      quietSink: outcome(() => walkXml(text, "test body", quiet)),
      deafBelowRoot: outcome(() => walkXml(text, "test body", deafBelowRoot())),
      object: outcome(() => parseXmlObject(text, "test body")),
    };
  }

  it.each([
    { where: "a leaf's text", text: "<r><q><a>x\u0001</a></q></r>", message: /U\+1 not allowed/ },
    { where: "text between leaves", text: "<r><q><a/>\u0008<b/></q></r>", message: /U\+8 not allowed/ },
    { where: "a lone high surrogate", text: "<r><q><a>\uD800x</a></q></r>", message: /U\+D800 not allowed/ },
    { where: "a lone low surrogate", text: "<r><q><a>\uDC00</a></q></r>", message: /U\+DC00 not allowed/ },
    { where: "U+FFFE", text: "<r><q><a>\uFFFE</a></q></r>", message: /U\+FFFE not allowed/ },
    { where: "U+FFFF", text: "<r><q><a>\uFFFF</a></q></r>", message: /U\+FFFF not allowed/ },
    {
      where: "a long text",
      text: `<r><q><a>${"x".repeat(100)}\u001F</a></q></r>`,
      message: /U\+1F not allowed/,
    },
    { where: "a comment", text: "<r><q><!-- \u0001 --></q></r>", message: /U\+1 not allowed/ },
    { where: "a comment before the root", text: "<!-- \u0002 --><r/>", message: /U\+2 not allowed/ },
    { where: "a CDATA section", text: "<r><q><![CDATA[\u0001]]></q></r>", message: /U\+1 not allowed/ },
    { where: "a processing instruction", text: "<r><q><?pi \u0001?></q></r>", message: /U\+1 not allowed/ },
    { where: "an attribute value", text: '<r><q><a b="\u0001"/></q></r>', message: /U\+1 not allowed/ },
    { where: "the root's attribute", text: '<r b="\uFFFF"/>', message: /U\+FFFF not allowed/ },
    { where: "a tag's name", text: "<r><q><a\u0001/></q></r>", message: /malformed start tag/ },
    { where: "an end tag's name", text: "<r><q><a>x</a\u0001></q></r>", message: /malformed end tag/ },
    {
      where: "an undefined entity",
      text: "<r><q><a>&nbsp;</a></q></r>",
      message: /undefined entity reference &nbsp;/,
    },
    { where: "a bare ampersand", text: "<r><q><a>a & b</a></q></r>", message: /'&' that does not start/ },
    {
      where: "a character reference to U+0",
      text: "<r><q><a>&#0;</a></q></r>",
      message: /&#0; is not an XML/,
    },
    { where: "']]>' in a leaf", text: "<r><q><a>x]]>y</a></q></r>", message: /']]>' in text/ },
    { where: "']]>' after ']'", text: "<r><q><a>]]]></a></q></r>", message: /']]>' in text/ },
    { where: "an end tag naming a prefix", text: "<r><q><ab>x</a></q></r>", message: /<\/a> closes <ab>/ },
    {
      where: "an end tag naming an extension",
      text: "<r><q><a>x</ab></q></r>",
      message: /<\/ab> closes <a>/,
    },
    { where: "a leaf left open", text: "<r><q><a>x</q></r>", message: /<\/q> closes <a>/ },
    {
      where: "a leaf past the depth bound",
      text: `${"<a>".repeat(MAX_XML_DEPTH)}<b>x</b>${"</a>".repeat(MAX_XML_DEPTH)}`,
      message: /deeper than/,
    },
    { where: "a DOCTYPE among leaves", text: "<r><q><a/><!DOCTYPE x></q></r>", message: /DOCTYPE/ },
    {
      where: "text two elements down",
      text: "<r><q><a><b><c>\u0001</c></b></a></q></r>",
      message: /U\+1 not allowed/,
    },
    {
      where: "an undefined entity two elements down",
      text: "<r><q><a>1<b>2<c>3</c>&nbsp;</b></a></q></r>",
      message: /undefined entity reference &nbsp;/,
    },
    {
      where: "']]>' two elements down",
      text: "<r><q><a><b><c/>]]></b></a></q></r>",
      message: /']]>' in text/,
    },
    {
      where: "an end tag naming another element two down",
      text: "<r><q><a><b><c>x</b></c></a></q></r>",
      message: /<\/b> closes <c>/,
    },
    {
      where: "an end tag naming a prefix one down",
      text: "<r><q><ab><c>x</c></a></ab></q></r>",
      message: /<\/a> closes <ab>/,
    },
    {
      where: "an element left open two down",
      text: "<r><q><a><b><c></b></a></q></r>",
      message: /<\/b> closes <c>/,
    },
    {
      where: "an element two below a run past the depth bound",
      text: `${"<a>".repeat(MAX_XML_DEPTH - 2)}<b><c><d>x</d></c></b>${"</a>".repeat(MAX_XML_DEPTH - 2)}`,
      message: /deeper than/,
    },
    {
      where: "an element one below a run past the depth bound",
      text: `${"<a>".repeat(MAX_XML_DEPTH - 1)}<b><c/></b>${"</a>".repeat(MAX_XML_DEPTH - 1)}`,
      message: /deeper than/,
    },
  ])("refuses a fault in $where in every reading, in the same words", ({ text, message }) => {
    const read = readings(text);
    expect(read.tree).toMatch(message);
    expect(read).toEqual({
      tree: read.tree,
      scan0: read.tree,
      scan1: read.tree,
      quietSink: read.tree,
      deafBelowRoot: read.tree,
      object: read.tree,
    });
  });

  it.each([
    { what: "a surrogate pair", text: "<r><q><a>\u{1F600}</a></q></r>" },
    {
      what: "the five entities and character references",
      text: "<r><q><a>&amp;&lt;&gt;&quot;&apos;&#233;&#x1F600;</a></q></r>",
    },
    { what: "']' and ']]' and '>'", text: "<r><q><a>]x]]>y</a></q></r>".replace("]]>", "]] >") },
    { what: "tab, line feed, carriage return", text: "<r><q>\t<a>\r\n</a>\n</q></r>" },
    {
      what: "names of every ASCII kind and white space in tags",
      text: "<r><q><_a.b-c:1 ></_a.b-c:1\n><A/><z /></q></r>",
    },
    { what: "a name outside ASCII", text: "<r><q><é>x</é></q></r>" },
    {
      what: "leaves at the depth bound",
      text: `${"<a>".repeat(MAX_XML_DEPTH - 1)}<b>x</b>${"</a>".repeat(MAX_XML_DEPTH - 1)}`,
    },
    { what: "more leaves than one regex call reads", text: `<r><q>${"<a>x&amp;</a>".repeat(1000)}</q></r>` },
    {
      what: "more references in one text than one call reads",
      text: `<r><q><a>${"&amp;".repeat(1000)}</a></q></r>`,
    },
    {
      what: "elements two deep at the depth bound",
      text: `${"<a>".repeat(MAX_XML_DEPTH - 3)}<b><c><d>x</d></c></b>${"</a>".repeat(MAX_XML_DEPTH - 3)}`,
    },
    {
      what: "more children two down than one call reads",
      text: `<r><q><a><b>${"<c>x</c>".repeat(40)}</b>${"<b/>".repeat(40)}</a></q></r>`,
    },
    {
      what: "more references two down than one call reads",
      text: `<r><q><a><b>&amp;&lt;&gt;&quot;&apos;<c>]&amp;]&lt;</c>]]</b></a></q></r>`,
    },
    {
      what: "elements three and four deep among shallow ones",
      text: `<r><q><a><b/><b><c><d><e>x</e></d></c></b><b>y</b></a><a><b><c><d/></c></b></a></q></r>`,
    },
  ])("accepts $what in every reading", ({ text }) => {
    expect(Object.values(readings(text))).toEqual(Array(6).fill("accepted"));
  });
});

describe("isXmlName", () => {
  it.each([
    { name: "a", valid: true },
    { name: "_a.b-c:1", valid: true },
    { name: ":a", valid: true },
    { name: "é", valid: true },
    { name: "aé", valid: true },
    { name: "", valid: false },
    { name: "1a", valid: false },
    { name: "-a", valid: false },
    { name: ".a", valid: false },
    { name: "a b", valid: false },
    { name: "a$", valid: false },
    { name: "a\n", valid: false },
    { name: "a\u0000", valid: false },
  ])("$name: $valid (the ASCII names by a regex of their own, the others by NAME)", ({ name, valid }) => {
    expect(isXmlName(name)).toBe(valid);
  });
});

describe("XmlNames", () => {
  it("reads each name as written, however many of one length it has kept or not", () => {
    // more names of one length than it keeps, and names longer than it keeps, read in every order
    const names = [..."abcdefghijklmnopqrstuvwxyz"].flatMap((c) => [`${c}12`, `${c}13`]);
    const long = ["x".repeat(70), `${"x".repeat(69)}y`];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...names, ...long), { minLength: 1, maxLength: 200 }), (read) => {
        const table = new XmlNames();
        const text = read.map((name) => `<${name}/>`).join("");
        let at = 1;
        for (const name of read) {
          expect(table.at(text, at, name.length)).toBe(name);
          at += name.length + 3;
        }
      }),
    );
  });
});
