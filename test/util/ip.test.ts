import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  encodeIpForPath,
  formatIp,
  InvalidIpError,
  ipEquals,
  isIpv4Mapped,
  isLoopbackHost,
  normalizeIp,
  parseIp,
  tryParseIp,
} from "../../src/util/ip.ts";

interface ValidCase {
  name: string;
  reason: string;
  text: string;
  family: 4 | 6;
  value: bigint;
  canonical: string;
}

const valid: ValidCase[] = [
  {
    name: "V4Zero",
    reason: "0.0.0.0 is the lowest IPv4 address",
    text: "0.0.0.0",
    family: 4,
    value: 0n,
    canonical: "0.0.0.0",
  },
  {
    name: "V4Max",
    reason: "every octet at 255 is the highest IPv4 address",
    text: "255.255.255.255",
    family: 4,
    value: 0xffffffffn,
    canonical: "255.255.255.255",
  },
  {
    name: "V4Plain",
    reason: "an ordinary private address",
    text: "10.1.2.3",
    family: 4,
    value: 0x0a010203n,
    canonical: "10.1.2.3",
  },
  {
    name: "V4SingleZeroOctet",
    reason: "a lone 0 is not a leading zero",
    text: "10.0.0.1",
    family: 4,
    value: 0x0a000001n,
    canonical: "10.0.0.1",
  },
  {
    name: "V6Loopback",
    reason: "::1 compresses seven zero groups",
    text: "::1",
    family: 6,
    value: 1n,
    canonical: "::1",
  },
  {
    name: "V6Unspecified",
    reason: ":: alone is all zeros",
    text: "::",
    family: 6,
    value: 0n,
    canonical: "::",
  },
  {
    name: "V6Full",
    reason: "eight groups with leading zeros normalise to the compressed form",
    text: "2001:0db8:0000:0000:0000:0000:0000:0001",
    family: 6,
    value: 0x20010db8000000000000000000000001n,
    canonical: "2001:db8::1",
  },
  {
    name: "V6Uppercase",
    reason: "hex digits are case-insensitive on input, lowercase on output (RFC 5952 4.3)",
    text: "2001:DB8::ABCD",
    family: 6,
    value: 0x20010db800000000000000000000abcdn,
    canonical: "2001:db8::abcd",
  },
  {
    name: "V6TrailingGap",
    reason: ":: at the end stands for the trailing zero groups",
    text: "fe80::",
    family: 6,
    value: 0xfe800000000000000000000000000000n,
    canonical: "fe80::",
  },
  {
    name: "V6SingleZeroNotCompressed",
    reason: "a single zero group is written as 0, not :: (RFC 5952 4.2.2)",
    text: "2001:db8:0:1:1:1:1:1",
    family: 6,
    value: 0x20010db8000000010001000100010001n,
    canonical: "2001:db8:0:1:1:1:1:1",
  },
  {
    name: "V6GapForOneGroup",
    reason: ":: may stand for a single zero group on input",
    text: "2001:db8::1:1:1:1:1",
    family: 6,
    value: 0x20010db8000000010001000100010001n,
    canonical: "2001:db8:0:1:1:1:1:1",
  },
  {
    name: "V6LongestRunWins",
    reason: "the longest zero run is compressed, not the first (RFC 5952 4.2.3)",
    text: "2001:0:0:1:0:0:0:1",
    family: 6,
    value: 0x20010000000000010000000000000001n,
    canonical: "2001:0:0:1::1",
  },
  {
    name: "V6FirstRunOnTie",
    reason: "on equal runs the first one is compressed (RFC 5952 4.2.3)",
    text: "2001:db8:0:0:1:0:0:1",
    family: 6,
    value: 0x20010db8000000000001000000000001n,
    canonical: "2001:db8::1:0:0:1",
  },
  {
    name: "V6Mapped",
    reason: "IPv4-mapped addresses are shown with a dotted quad (RFC 5952 5)",
    text: "::ffff:192.0.2.1",
    family: 6,
    value: 0xffffc0000201n,
    canonical: "::ffff:192.0.2.1",
  },
  {
    name: "V6MappedInHex",
    reason: "a mapped address written in hex is shown with a dotted quad too",
    text: "::FFFF:c000:0201",
    family: 6,
    value: 0xffffc0000201n,
    canonical: "::ffff:192.0.2.1",
  },
  {
    name: "V6CompatibleInHex",
    reason: "only ::ffff:0:0/96 gets the dotted form; ::a.b.c.d (deprecated) is hex",
    text: "::192.0.2.1",
    family: 6,
    value: 0xc0000201n,
    canonical: "::c000:201",
  },
  {
    name: "V6EmbeddedAfterSixGroups",
    reason: "a dotted quad may end a full eight-group address",
    text: "1:2:3:4:5:6:1.2.3.4",
    family: 6,
    value: 0x00010002000300040005000601020304n,
    canonical: "1:2:3:4:5:6:102:304",
  },
  {
    name: "V6Max",
    reason: "all ones is the highest IPv6 address",
    text: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    family: 6,
    value: (1n << 128n) - 1n,
    canonical: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
  },
];

const invalid: { name: string; reason: string; text: string }[] = [
  { name: "Empty", reason: "the empty string is no address", text: "" },
  { name: "V4LeadingZero", reason: "010 is octal to some parsers and decimal to others", text: "010.0.0.1" },
  { name: "V4LeadingZeroLast", reason: "leading zeros are rejected in every octet", text: "10.0.0.01" },
  { name: "V4OctetTooBig", reason: "an octet holds at most 255", text: "10.0.0.256" },
  { name: "V4ThreeOctets", reason: "the short forms inet_aton accepts are ambiguous", text: "10.0.1" },
  { name: "V4FiveOctets", reason: "an IPv4 address has four octets", text: "1.2.3.4.5" },
  { name: "V4EmptyOctet", reason: "two dots in a row leave an empty octet", text: "1..3.4" },
  {
    name: "V4LeadingSpace",
    reason: "spaces are not trimmed: the text must be exactly an address",
    text: " 10.0.0.1",
  },
  { name: "V4TrailingSpace", reason: "spaces are not trimmed at the end either", text: "10.0.0.1 " },
  { name: "V4Sign", reason: "signs are not digits", text: "+1.2.3.4" },
  { name: "V4Hex", reason: "hex octets are not accepted in IPv4", text: "0x0a.0.0.1" },
  { name: "V4WithPrefix", reason: "a CIDR is not an address", text: "10.0.0.0/8" },
  { name: "V6Zone", reason: "zone ids only mean something on one host", text: "fe80::1%eth0" },
  { name: "V6Brackets", reason: "brackets belong to URLs, not to addresses", text: "[::1]" },
  { name: "V6TwoGaps", reason: ":: may appear once only", text: "1::2::3" },
  { name: "V6TripleColon", reason: "::: is not a gap", text: "1:::2" },
  { name: "V6FiveHexDigits", reason: "a group has at most four hex digits", text: "12345::1" },
  { name: "V6NineGroups", reason: "eight groups at most", text: "1:2:3:4:5:6:7:8:9" },
  { name: "V6SevenGroups", reason: "without :: there must be exactly eight groups", text: "1:2:3:4:5:6:7" },
  {
    name: "V6GapWithEightGroups",
    reason: ":: must stand for at least one zero group",
    text: "1:2:3:4:5:6:7::8",
  },
  { name: "V6LeadingColon", reason: "a single leading colon leaves an empty group", text: ":1:2:3:4:5:6:7" },
  {
    name: "V6TrailingColon",
    reason: "a single trailing colon leaves an empty group",
    text: "1:2:3:4:5:6:7:",
  },
  { name: "V6NonHex", reason: "g is not a hex digit", text: "2001:db8::g" },
  { name: "V6EmbeddedNotLast", reason: "a dotted quad may only end the address", text: "::1.2.3.4:1" },
  {
    name: "V6EmbeddedLeadingZero",
    reason: "the embedded dotted quad is as strict as IPv4",
    text: "::ffff:01.2.3.4",
  },
  {
    name: "V6EmbeddedTooLong",
    reason: "a dotted quad takes two groups, so only six may precede it",
    text: "1:2:3:4:5:6:7:1.2.3.4",
  },
  { name: "V6Space", reason: "spaces inside are rejected", text: "2001:db8:: 1" },
  {
    name: "TooLong",
    reason: "text longer than any address is rejected before parsing",
    text: `${"0".repeat(60)}::1`,
  },
  { name: "Hostname", reason: "names are not addresses", text: "manager.example.com" },
];

describe("tryParseIp and formatIp", () => {
  it.each(valid)("$name", ({ reason, text, family, value, canonical }) => {
    expect(tryParseIp(text), reason).toEqual({ family, value });
    expect(formatIp({ family, value }), reason).toBe(canonical);
    expect(normalizeIp(text), reason).toBe(canonical);
  });

  it.each(invalid)("rejects $name", ({ reason, text }) => {
    expect(tryParseIp(text), reason).toBeUndefined();
    expect(() => parseIp(text), reason).toThrow(InvalidIpError);
  });

  it("names the text in the error", () => {
    expect(() => parseIp("10.0.0.256")).toThrow('"10.0.0.256" is not an IPv4 or IPv6 address');
  });

  it.each([
    { name: "V4Negative", reason: "no address is negative", ip: { family: 4, value: -1n } },
    { name: "V4TooBig", reason: "2^32 does not fit in 32 bits", ip: { family: 4, value: 1n << 32n } },
    { name: "V6TooBig", reason: "2^128 does not fit in 128 bits", ip: { family: 6, value: 1n << 128n } },
  ] as const)("formatIp rejects $name", ({ reason, ip }) => {
    expect(() => formatIp(ip), reason).toThrow(InvalidIpError);
  });
});

describe("ipEquals", () => {
  it.each([
    { name: "SameText", reason: "identical text", a: "10.0.0.1", b: "10.0.0.1", equal: true },
    {
      name: "CompressedAndFull",
      reason: "the same value written two ways",
      a: "2001:db8::1",
      b: "2001:0db8:0:0:0:0:0:1",
      equal: true,
    },
    { name: "CaseDiffers", reason: "hex case does not matter", a: "FE80::A", b: "fe80::a", equal: true },
    {
      name: "MappedIsNotV4",
      reason: "::ffff:10.0.0.1 is an IPv6 address, not 10.0.0.1",
      a: "::ffff:10.0.0.1",
      b: "10.0.0.1",
      equal: false,
    },
    {
      name: "SameNumberOtherFamily",
      reason: "::1 and 0.0.0.1 share a value but not a family",
      a: "::1",
      b: "0.0.0.1",
      equal: false,
    },
    {
      name: "Unparsable",
      reason: "text that is not an address equals nothing, not even itself",
      a: "x",
      b: "x",
      equal: false,
    },
  ])("$name", ({ reason, a, b, equal }) => {
    expect(ipEquals(a, b), reason).toBe(equal);
  });
});

describe("encodeIpForPath and isIpv4Mapped", () => {
  it("escapes the colons of IPv6 and leaves IPv4 alone", () => {
    expect(encodeIpForPath("2001:db8::1")).toBe("2001%3Adb8%3A%3A1");
    expect(encodeIpForPath("10.0.0.1")).toBe("10.0.0.1");
  });

  it("knows mapped addresses by their prefix only", () => {
    expect(isIpv4Mapped(parseIp("::ffff:1.2.3.4"))).toBe(true);
    expect(isIpv4Mapped(parseIp("::fffe:1.2.3.4"))).toBe(false);
    expect(isIpv4Mapped(parseIp("1.2.3.4"))).toBe(false);
  });
});

describe("round trip", () => {
  const v4 = fc.bigInt({ min: 0n, max: (1n << 32n) - 1n }).map((value) => ({ family: 4 as const, value }));
  // bias toward zero groups so that compression and the mapped form are exercised
  const group = fc.oneof(fc.constant(0n), fc.constant(0xffffn), fc.bigInt({ min: 0n, max: 0xffffn }));
  const v6 = fc
    .array(group, { minLength: 8, maxLength: 8 })
    .map((groups) => ({ family: 6 as const, value: groups.reduce((acc, g) => (acc << 16n) | g, 0n) }));

  it("format(parse(format(x))) equals format(x), and parse(format(x)) equals x", () => {
    fc.assert(
      fc.property(fc.oneof(v4, v6), (ip) => {
        const text = formatIp(ip);
        expect(formatIp(parseIp(text))).toBe(text);
        expect(parseIp(text)).toEqual(ip);
      }),
      { numRuns: 2000 },
    );
  });

  it("accepts any 128-bit value", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (value) => {
        expect(parseIp(formatIp({ family: 6, value })).value).toBe(value);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("isLoopbackHost", () => {
  it.each([
    { host: "localhost", want: true, reason: "the name of this machine" },
    { host: "LOCALHOST", want: true, reason: "host names are case-insensitive" },
    { host: "127.0.0.1", want: true, reason: "the usual loopback address" },
    { host: "127.255.0.9", want: true, reason: "all of 127.0.0.0/8 is loopback" },
    { host: "[::1]", want: true, reason: "IPv6 loopback as a URL writes it" },
    { host: "::1", want: true, reason: "IPv6 loopback as a listen address" },
    { host: "::ffff:127.0.0.1", want: true, reason: "IPv4 loopback written IPv4-mapped" },
    { host: "0.0.0.0", want: false, reason: "the wildcard listens on every interface" },
    { host: "::", want: false, reason: "the IPv6 wildcard too" },
    { host: "10.0.0.1", want: false, reason: "a private address is another machine's" },
    { host: "128.0.0.1", want: false, reason: "just outside 127/8" },
    { host: "localhost.example.org", want: false, reason: "a name is whatever DNS says" },
    { host: "::2", want: false, reason: "only ::1 is IPv6 loopback" },
  ])("$host: $want ($reason)", ({ host, want }) => {
    expect(isLoopbackHost(host)).toBe(want);
  });
});
