import { describe, expect, it } from "vitest";
import {
  parseAllocationList,
  parseAuthToken,
  parseErrorBody,
  parsePoolList,
  parseReleaseBody,
} from "../../src/nsx/documents.ts";
import { NsxResponseError } from "../../src/nsx/errors.ts";
import type { IpPool } from "../../src/nsx/types.ts";

const DECL = '<?xml version="1.0" encoding="UTF-8"?>\n';

/** one pool as a real manager writes it (spec 2.2 order, pretty-printed) */
function poolXml(n: number, overrides: Record<string, string | null> = {}): string {
  const fields: [string, string][] = [
    ["objectId", `ipaddresspool-${n}`],
    ["objectTypeName", "IpAddressPool"],
    ["vsmUuid", "420A1BB4-9B4B-1A8A-1E6F-61D2E1A6A0D4"],
    ["nodeId", "0e2f3b2a-6d8e-4bfa-8d5a-8e5cbbd7cf77"],
    ["revision", "3"],
    ["type", "<typeName>IpAddressPool</typeName>"],
    ["name", `pool-${n}`],
    ["scope", "<id>globalroot-0</id><objectTypeName>GlobalRoot</objectTypeName><name>Global</name>"],
    ["clientHandle", ""],
    ["extendedAttributes", ""],
    ["isUniversal", "false"],
    ["universalRevision", "0"],
    ["totalAddressCount", "3"],
    ["usedAddressCount", "1"],
    ["usedPercentage", "33"],
    ["prefixLength", "24"],
    ["gateway", "10.0.0.1"],
    ["dnsSuffix", "example.test"],
    ["dnsServer1", "10.0.0.2"],
    ["dnsServer2", "10.0.0.3"],
    ["ipPoolType", "ipv4"],
    [
      "ipRanges",
      `<ipRangeDto><id>iprange-${n}</id><startAddress>10.0.${n}.10</startAddress><endAddress>10.0.${n}.12</endAddress></ipRangeDto>`,
    ],
    ["subnetId", `subnet-${n}`],
  ];
  const known = new Set(fields.map(([name]) => name));
  for (const [name, value] of Object.entries(overrides))
    if (!known.has(name) && value !== null) fields.push([name, value]);
  const body = fields
    .map(([name, value]) => {
      const v = name in overrides ? overrides[name] : value;
      return v === null || v === undefined ? "" : `    <${name}>${v}</${name}>\n`;
    })
    .join("");
  return `  <ipamAddressPool>\n${body}  </ipamAddressPool>\n`;
}

function expectedPool(n: number): IpPool {
  return {
    objectId: `ipaddresspool-${n}`,
    name: `pool-${n}`,
    scopeId: "globalroot-0",
    vsmUuid: "420A1BB4-9B4B-1A8A-1E6F-61D2E1A6A0D4",
    totalAddressCount: 3,
    usedAddressCount: 1,
    usedPercentage: 33,
    prefixLength: 24,
    gateway: "10.0.0.1",
    ipPoolType: "ipv4",
    ranges: [{ id: `iprange-${n}`, startAddress: `10.0.${n}.10`, endAddress: `10.0.${n}.12` }],
  };
}

const pools = (...items: string[]): string =>
  `${DECL}<ipamAddressPools>\n${items.join("")}</ipamAddressPools>`;

describe("parsePoolList", () => {
  it.each([
    {
      name: "EmptySelfClosing",
      reason: "a scope without pools is an empty root",
      xml: "<ipamAddressPools/>",
      want: [],
    },
    {
      name: "EmptyPair",
      reason: "the same, written as a pair",
      xml: `${DECL}<ipamAddressPools>\n</ipamAddressPools>`,
      want: [],
    },
    {
      name: "OnePool",
      reason: "one child must read as a list of one",
      xml: pools(poolXml(1)),
      want: [expectedPool(1)],
    },
    {
      name: "ManyPools",
      reason: "N children keep their order",
      xml: pools(poolXml(1), poolXml(2), poolXml(3)),
      want: [expectedPool(1), expectedPool(2), expectedPool(3)],
    },
    {
      name: "OneLine",
      reason: "managers also send documents without whitespace",
      xml: pools(poolXml(4)).replace(/\n\s*/g, ""),
      want: [expectedPool(4)],
    },
    {
      name: "UnknownElements",
      reason: "elements the spec does not list are ignored",
      xml: pools(poolXml(5, { futureField: "<x>1</x>", edgeAssistId: "7" })),
      want: [expectedPool(5)],
    },
    {
      name: "SeveralRanges",
      reason: "ranges are kept in order, inclusive ends as written, IPv6 too",
      xml: pools(
        poolXml(6, {
          ipRanges:
            "<ipRangeDto><startAddress>10.0.6.1</startAddress><endAddress>10.0.6.1</endAddress></ipRangeDto>" +
            "<ipRangeDto><id>iprange-9</id><startAddress>2001:db8::1</startAddress><endAddress>2001:db8::ff</endAddress></ipRangeDto>",
        }),
      ),
      want: [
        {
          ...expectedPool(6),
          ranges: [
            { startAddress: "10.0.6.1", endAddress: "10.0.6.1" },
            { id: "iprange-9", startAddress: "2001:db8::1", endAddress: "2001:db8::ff" },
          ],
        },
      ],
    },
    {
      name: "OptionalFieldsMissing",
      reason: "only ids and counts are required; usedPercentage is derived when absent",
      xml: pools(
        poolXml(7, {
          name: null,
          scope: null,
          prefixLength: null,
          gateway: "",
          ipPoolType: null,
          usedPercentage: null,
          ipRanges: "",
          vsmUuid: null,
        }),
      ),
      want: [
        {
          objectId: "ipaddresspool-7",
          name: "",
          totalAddressCount: 3,
          usedAddressCount: 1,
          usedPercentage: 33,
          ranges: [],
        },
      ],
    },
    {
      name: "NumbersWithSpaces",
      reason: "pretty-printers may put whitespace around numbers",
      xml: pools(
        poolXml(8, { totalAddressCount: "\n      300\n    ", usedAddressCount: " 0 ", usedPercentage: "0" }),
      ),
      want: [{ ...expectedPool(8), totalAddressCount: 300, usedAddressCount: 0, usedPercentage: 0 }],
    },
  ])("$name: $reason", ({ xml, want }) => {
    expect(parsePoolList(xml)).toEqual(want);
  });

  it.each([
    {
      name: "TotalMissing",
      reason: "a pool without its size cannot be judged",
      xml: pools(poolXml(1), poolXml(2, { totalAddressCount: null })),
      message: 'pool list: pool "ipaddresspool-2": totalAddressCount is missing',
    },
    {
      name: "UsedNotANumber",
      reason: "a count that is not a number is refused, not read as NaN",
      xml: pools(poolXml(3, { usedAddressCount: "12a" })),
      message: 'pool list: pool "ipaddresspool-3": usedAddressCount is not a number: "12a"',
    },
    {
      name: "NegativeCount",
      reason: "counts are never negative",
      xml: pools(poolXml(3, { totalAddressCount: "-1" })),
      message: "totalAddressCount is not a number",
    },
    {
      name: "FractionalPrefix",
      reason: "present optional numbers must be numbers too",
      xml: pools(poolXml(3, { prefixLength: "24.5" })),
      message: "prefixLength is not a number",
    },
    {
      name: "ObjectIdMissing",
      reason: "the pool is named by position when it has no id",
      xml: pools(poolXml(1), poolXml(2, { objectId: null })),
      message: "pool list: pool #2: objectId is missing",
    },
    {
      name: "RangeStartMissing",
      reason: "a range needs both ends",
      xml: pools(poolXml(4, { ipRanges: "<ipRangeDto><endAddress>10.0.0.1</endAddress></ipRangeDto>" })),
      message: 'pool "ipaddresspool-4": ipRanges[0]: startAddress is missing',
    },
    {
      name: "RangeReversed",
      reason: "an inclusive range must not end before it starts",
      xml: pools(
        poolXml(4, {
          ipRanges:
            "<ipRangeDto><startAddress>10.0.0.9</startAddress><endAddress>10.0.0.1</endAddress></ipRangeDto>",
        }),
      ),
      message: "ipRanges[0]: endAddress 10.0.0.1 does not end a range that starts at 10.0.0.9",
    },
    {
      name: "RangeMixedFamilies",
      reason: "a range cannot run from IPv4 to IPv6",
      xml: pools(
        poolXml(4, {
          ipRanges:
            "<ipRangeDto><startAddress>10.0.0.1</startAddress><endAddress>::1</endAddress></ipRangeDto>",
        }),
      ),
      message: "does not end a range",
    },
    {
      name: "RangeNotAnAddress",
      reason: "range ends must be IP addresses",
      xml: pools(
        poolXml(4, {
          ipRanges:
            "<ipRangeDto><startAddress>ten</startAddress><endAddress>10.0.0.1</endAddress></ipRangeDto>",
        }),
      ),
      message: 'startAddress is not an IP address: "ten"',
    },
    {
      name: "WrongRoot",
      reason: "another document must not read as an empty list",
      xml: "<allocatedIpAddresses/>",
      message: "pool list: root element is <allocatedIpAddresses>, expected <ipamAddressPools>",
    },
    {
      name: "Doctype",
      reason: "DTDs are refused (XXE, entity expansion)",
      xml: '<!DOCTYPE x [<!ENTITY a "b">]><ipamAddressPools/>',
      message: "DOCTYPE",
    },
    {
      name: "NotXml",
      reason: "a success body that is not XML is refused",
      xml: "<ipamAddressPools>",
      message: "not well-formed",
    },
  ])("refuses $name: $reason", ({ xml, message }) => {
    expect(() => parsePoolList(xml)).toThrow(NsxResponseError);
    expect(() => parsePoolList(xml)).toThrow(message);
  });
});

const allocations = (...items: string[]): string =>
  `${DECL}<allocatedIpAddresses>\n${items.map((i) => `  <allocatedIpAddress>${i}</allocatedIpAddress>\n`).join("")}</allocatedIpAddresses>`;
const FULL_ALLOCATION =
  "<id>4</id><ipAddress>10.0.0.10</ipAddress><gateway>10.0.0.1</gateway><prefixLength>24</prefixLength>" +
  "<dnsServer1>10.0.0.2</dnsServer1><dnsServer2>10.0.0.3</dnsServer2><dnsSuffix>example.test</dnsSuffix>" +
  "<subnetId>subnet-1</subnetId><allocationNote>controller-1</allocationNote>";

describe("parseAllocationList", () => {
  it.each([
    {
      name: "EmptySelfClosing",
      reason: "a pool with no allocations",
      xml: "<allocatedIpAddresses/>",
      want: [],
    },
    {
      name: "EmptyPair",
      reason: "the same with a declaration and a pair",
      xml: `${DECL}<allocatedIpAddresses></allocatedIpAddresses>`,
      want: [],
    },
    {
      name: "OneFull",
      reason: "one child reads as a list of one, every known field kept",
      xml: allocations(FULL_ALLOCATION),
      want: [
        {
          id: "4",
          ipAddress: "10.0.0.10",
          gateway: "10.0.0.1",
          prefixLength: 24,
          subnetId: "subnet-1",
          allocationNote: "controller-1",
        },
      ],
    },
    {
      name: "StringId",
      reason: "real managers write ids like allocatedipaddress-4",
      xml: allocations("<id>allocatedipaddress-4</id><ipAddress>2001:db8::5</ipAddress>"),
      want: [{ id: "allocatedipaddress-4", ipAddress: "2001:db8::5" }],
    },
    {
      name: "ManyWithNotes",
      reason: "N children in order; an empty note stays an empty note, an absent one stays absent",
      xml: allocations(
        "<id>1</id><ipAddress>10.0.0.1</ipAddress><allocationNote>nsx-controller-2 &amp; vtep</allocationNote>",
        "<allocationNote/><ipAddress>10.0.0.2</ipAddress><id>2</id>",
        "<id>3</id><ipAddress>10.0.0.3</ipAddress><unknown>x</unknown>",
      ),
      want: [
        { id: "1", ipAddress: "10.0.0.1", allocationNote: "nsx-controller-2 & vtep" },
        { id: "2", ipAddress: "10.0.0.2", allocationNote: "" },
        { id: "3", ipAddress: "10.0.0.3" },
      ],
    },
  ])("$name: $reason", ({ xml, want }) => {
    expect(parseAllocationList(xml)).toEqual(want);
  });

  it.each([
    {
      name: "IpMissing",
      reason: "an allocation without its address cannot be released or compared",
      xml: allocations("<id>1</id><ipAddress>10.0.0.1</ipAddress>", "<id>2</id>"),
      message: "allocation list: allocation #2: ipAddress is missing",
    },
    {
      name: "IpInvalid",
      reason: "a garbled address is refused, not compared as text",
      xml: allocations("<id>1</id><ipAddress>10.0.0.256</ipAddress>"),
      message: 'allocation list: allocation "10.0.0.256": ipAddress is not an IP address',
    },
    {
      name: "IdMissing",
      reason: "every allocation has an id",
      xml: allocations("<ipAddress>10.0.0.1</ipAddress>"),
      message: 'allocation "10.0.0.1": id is missing',
    },
    {
      name: "PrefixNotANumber",
      reason: "numbers are parsed strictly",
      xml: allocations("<id>1</id><ipAddress>10.0.0.1</ipAddress><prefixLength>x</prefixLength>"),
      message: "prefixLength is not a number",
    },
    {
      name: "WrongRoot",
      reason: "an error document must not read as an empty list",
      xml: "<error><details>x</details></error>",
      message: "expected <allocatedIpAddresses>",
    },
  ])("refuses $name: $reason", ({ xml, message }) => {
    expect(() => parseAllocationList(xml)).toThrow(NsxResponseError);
    expect(() => parseAllocationList(xml)).toThrow(message);
  });
});

describe("parseReleaseBody", () => {
  it.each([
    { name: "BareTrue", reason: "the spec's answer", body: "true", want: true },
    {
      name: "BareTrueWhitespace",
      reason: "surrounding whitespace is not content",
      body: "\n true \r\n",
      want: true,
    },
    {
      name: "BooleanElement",
      reason: "what real managers send",
      body: "<boolean>true</boolean>",
      want: true,
    },
    {
      name: "BooleanWithDeclaration",
      reason: "real managers add a declaration",
      body: `${DECL}<boolean>true</boolean>`,
      want: true,
    },
    {
      name: "BooleanPretty",
      reason: "whitespace inside the element",
      body: `${DECL}\n<boolean>\n  true\n</boolean>\n`,
      want: true,
    },
    { name: "BareFalse", reason: "not released", body: "false", want: false },
    { name: "BooleanFalse", reason: "not released", body: `${DECL}<boolean>false</boolean>`, want: false },
    { name: "Empty", reason: "no answer is not a yes", body: "", want: false },
    { name: "UpperCase", reason: "only the exact value counts", body: "TRUE", want: false },
    { name: "OtherElement", reason: "only <boolean> counts", body: "<result>true</result>", want: false },
    {
      name: "ErrorDocument",
      reason: "an error document is not a release",
      body: "<error><details>true</details></error>",
      want: false,
    },
    { name: "TrueWithTail", reason: "extra text is not the value true", body: "true false", want: false },
  ])("$name: $reason", ({ body, want }) => {
    expect(parseReleaseBody(body).released).toBe(want);
  });

  it.each([
    { name: "Unclosed", reason: "a success body that is not well-formed is refused", body: "<boolean>true" },
    {
      name: "Doctype",
      reason: "DTDs are refused",
      body: '<!DOCTYPE boolean [<!ENTITY t "true">]><boolean>&t;</boolean>',
    },
  ])("refuses $name: $reason", ({ body }) => {
    expect(() => parseReleaseBody(body)).toThrow(NsxResponseError);
  });

  it.each([
    {
      reason: "an empty 204 is said as such, not as false",
      body: "",
      status: 204,
      answer: "nothing (an empty 204)",
    },
    { reason: "an empty 200 too", body: " \n", status: 200, answer: "nothing (an empty 200)" },
    { reason: "text is quoted", body: "false", status: 200, answer: '"false"' },
    {
      reason: "a document on one line, cut",
      body: `<result>\n  ${"y".repeat(100)}\n</result>`,
      status: 200,
      answer: JSON.stringify(`<result> ${"y".repeat(100)}`.slice(0, 80)),
    },
  ])("says what a refusal was: $reason", ({ body, status, answer }) => {
    expect(parseReleaseBody(body, status)).toEqual({ released: false, answer });
  });
});

describe("parseErrorBody", () => {
  it.each([
    {
      name: "SingleError",
      reason: "the common shape",
      body: "<error><details>The requested object : edge-9 could not be found.</details><errorCode>202</errorCode><moduleName>core-services</moduleName></error>",
      want: [
        {
          details: "The requested object : edge-9 could not be found.",
          errorCode: "202",
          moduleName: "core-services",
        },
      ],
    },
    {
      name: "OrderVaries",
      reason: "element order is not fixed; a declaration and unknown elements are fine",
      body: `${DECL}<error>\n <moduleName>core-services</moduleName>\n <rootCauseString>x</rootCauseString>\n <errorCode>120051</errorCode>\n <details>No free address</details>\n</error>`,
      want: [{ details: "No free address", errorCode: "120051", moduleName: "core-services" }],
    },
    {
      name: "Errors",
      reason: "several errors in <errors>, all kept in order",
      body: "<errors><error><details>first</details><errorCode>1</errorCode></error><error><errorCode>2</errorCode><details>second</details></error></errors>",
      want: [
        { details: "first", errorCode: "1" },
        { details: "second", errorCode: "2" },
      ],
    },
    {
      name: "ErrorsOfOne",
      reason: "one error in <errors> still reads",
      body: "<errors><error><details>only</details></error></errors>",
      want: [{ details: "only" }],
    },
    {
      name: "ErrorData",
      reason: "<errorData> pairs become data",
      body:
        "<error><details>Edge is unreachable</details><errorCode>10013</errorCode><moduleName>vShield Edge</moduleName>" +
        "<errorData><data><key>edgeId</key><value>edge-1</value></data><data><key>reason</key><value>timeout</value></data></errorData></error>",
      want: [
        {
          details: "Edge is unreachable",
          errorCode: "10013",
          moduleName: "vShield Edge",
          data: { edgeId: "edge-1", reason: "timeout" },
        },
      ],
    },
    {
      name: "ErrorDataFirst",
      reason: "<errorData> may come before the other fields, with one pair",
      body: "<error><errorData><data><key>k</key><value>v</value></data></errorData><errorCode>7</errorCode></error>",
      want: [{ errorCode: "7", data: { k: "v" } }],
    },
    {
      name: "OnlyErrorCode",
      reason: "some 500s carry only a code",
      body: "<error><errorCode>500</errorCode></error>",
      want: [{ errorCode: "500" }],
    },
    { name: "Empty", reason: "no body: the status alone speaks", body: "", want: [] },
    { name: "WhitespaceOnly", reason: "the same", body: " \n", want: [] },
    {
      name: "PlainText",
      reason: "proxies answer in text; it is shown, whitespace collapsed",
      body: "Service\n  Unavailable",
      want: [{ details: "Service Unavailable" }],
    },
    {
      name: "Html",
      reason: "an HTML page is not an NSX error",
      body: "<html><body><h1>502 Bad Gateway</h1></body></html>",
      want: [],
    },
    { name: "BrokenXml", reason: "never throws", body: "<error><details>x</error>", want: [] },
    { name: "EmptyError", reason: "an empty <error> carries nothing", body: "<error/>", want: [] },
  ])("$name: $reason", ({ body, want }) => {
    expect(parseErrorBody(body)).toEqual(want);
  });

  it("keeps at most a few hundred characters of a text body", () => {
    expect(parseErrorBody("x".repeat(10_000))[0]?.details).toHaveLength(300);
  });
});

describe("parseAuthToken", () => {
  const jwt = (claims: object): string =>
    `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.c2ln`;
  it.each([
    {
      name: "ExpiresOnMs",
      reason: "NSX 6.4 answers with epoch milliseconds",
      xml: "<authToken><value>abc.def.ghi</value><expiresOn>1700000000000</expiresOn></authToken>",
      want: { value: "abc.def.ghi", expiresAtMs: 1_700_000_000_000 },
    },
    {
      name: "ExpiresOnSeconds",
      reason: "a small number is read as seconds",
      xml: `${DECL}<authToken>\n<expiresOn>1700000000</expiresOn>\n<value>t</value>\n</authToken>`,
      want: { value: "t", expiresAtMs: 1_700_000_000_000 },
    },
    {
      name: "ValidTo",
      reason: "some sources name the expiry validTo",
      xml: "<authToken><value>t</value><validTo>1700000000000</validTo></authToken>",
      want: { value: "t", expiresAtMs: 1_700_000_000_000 },
    },
    {
      name: "JwtExp",
      reason: "without expiresOn the token's exp claim is used",
      xml: `<authToken><value>${jwt({ exp: 1_700_000_123 })}</value></authToken>`,
      want: { value: jwt({ exp: 1_700_000_123 }), expiresAtMs: 1_700_000_123_000 },
    },
    {
      name: "NoExpiry",
      reason: "an opaque token without expiry: the client falls back to its default lifetime",
      xml: "<authToken><value>opaque</value></authToken>",
      want: { value: "opaque" },
    },
  ])("$name: $reason", ({ xml, want }) => {
    expect(parseAuthToken(xml)).toEqual(want);
  });

  it("refuses a token document without a value", () => {
    expect(() => parseAuthToken("<authToken><expiresOn>1</expiresOn></authToken>")).toThrow(
      "auth token: <value> is missing",
    );
  });
});
