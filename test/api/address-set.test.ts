import { describe, expect, it } from "vitest";
import { AddressSet, AddressSetError, parseAddressEntry } from "../../src/api/address-set.ts";

describe("parseAddressEntry", () => {
  it.each([
    {
      name: "V4Address",
      reason: "a single address is a one-address interval",
      entry: "10.0.0.5",
      family: 4,
      start: "10.0.0.5",
      end: "10.0.0.5",
    },
    {
      name: "V6Address",
      reason: "IPv6 works the same",
      entry: "2001:db8::5",
      family: 6,
      start: "2001:db8::5",
      end: "2001:db8::5",
    },
    {
      name: "V4Range",
      reason: "a-b is inclusive at both ends",
      entry: "10.0.0.10-10.0.0.20",
      family: 4,
      start: "10.0.0.10",
      end: "10.0.0.20",
    },
    {
      name: "V4RangeOneAddress",
      reason: "a range may start and end on one address",
      entry: "10.0.0.1-10.0.0.1",
      family: 4,
      start: "10.0.0.1",
      end: "10.0.0.1",
    },
    {
      name: "V6Range",
      reason: "IPv6 addresses contain no dash, so a-b splits cleanly",
      entry: "2001:db8::1-2001:db8::ff",
      family: 6,
      start: "2001:db8::1",
      end: "2001:db8::ff",
    },
    {
      name: "V4Cidr",
      reason: "a /24 holds 256 addresses",
      entry: "10.0.1.0/24",
      family: 4,
      start: "10.0.1.0",
      end: "10.0.1.255",
    },
    {
      name: "V4CidrHostBits",
      reason: "host bits are accepted and the whole network is meant, as netip.ParsePrefix does",
      entry: "10.0.1.7/24",
      family: 4,
      start: "10.0.1.0",
      end: "10.0.1.255",
    },
    {
      name: "V4CidrAll",
      reason: "/0 is every IPv4 address",
      entry: "0.0.0.0/0",
      family: 4,
      start: "0.0.0.0",
      end: "255.255.255.255",
    },
    {
      name: "V4Cidr32",
      reason: "/32 is one address",
      entry: "10.0.0.1/32",
      family: 4,
      start: "10.0.0.1",
      end: "10.0.0.1",
    },
    {
      name: "V6Cidr",
      reason: "a /120 holds 256 addresses",
      entry: "2001:db8::/120",
      family: 6,
      start: "2001:db8::",
      end: "2001:db8::ff",
    },
    {
      name: "V6Cidr128",
      reason: "/128 is one address",
      entry: "::1/128",
      family: 6,
      start: "::1",
      end: "::1",
    },
  ])("$name", ({ reason, entry, family, start, end }) => {
    const set = AddressSet.parse([entry]);
    const interval = parseAddressEntry(entry);
    expect(interval.family, reason).toBe(family);
    expect(set.has(start), reason).toBe(true);
    expect(set.has(end), reason).toBe(true);
    expect(set.size, reason).toBe(interval.end - interval.start + 1n);
  });

  it.each([
    {
      name: "NotAnAddress",
      reason: "free text is none of the three shapes",
      entry: "pool-a",
      want: "is not an IP address, a range a-b or a CIDR a/n",
    },
    { name: "Empty", reason: "the empty string is no entry", entry: "", want: "is not an IP address" },
    { name: "V4LeadingZero", reason: "010 is ambiguous", entry: "010.0.0.1", want: "is not an IP address" },
    {
      name: "Spaces",
      reason: "spaces around the dash are not trimmed",
      entry: "10.0.0.1 - 10.0.0.5",
      want: "contains white space",
    },
    { name: "Zone", reason: "zone ids are host-local", entry: "fe80::1%eth0", want: "has a zone id" },
    {
      name: "Mapped",
      reason: "the API server's isIP rejects IPv4-mapped IPv6",
      entry: "::ffff:10.0.0.1",
      want: "IPv4-mapped",
    },
    {
      name: "MappedCidr",
      reason: "isCIDR rejects a mapped network address too",
      entry: "::ffff:10.0.0.0/120",
      want: "IPv4-mapped",
    },
    {
      name: "RangeReversed",
      reason: "a range must not run backwards",
      entry: "10.0.0.9-10.0.0.1",
      want: "start is above its end",
    },
    {
      name: "RangeMixed",
      reason: "a range cannot cross families",
      entry: "10.0.0.1-::1",
      want: "mixes IPv4 and IPv6",
    },
    {
      name: "RangeBadEnd",
      reason: "both ends must be addresses",
      entry: "10.0.0.1-10.0.0",
      want: 'has the end "10.0.0"',
    },
    {
      name: "RangeThreeParts",
      reason: "a-b-c is no range",
      entry: "10.0.0.1-10.0.0.2-10.0.0.3",
      want: "has the end",
    },
    { name: "RangeOpen", reason: "a range needs two ends", entry: "10.0.0.1-", want: "has the end" },
    {
      name: "CidrTooLong",
      reason: "IPv4 prefixes stop at 32",
      entry: "10.0.0.0/33",
      want: "want 0 to 32 for IPv4",
    },
    {
      name: "CidrV6TooLong",
      reason: "IPv6 prefixes stop at 128",
      entry: "::/129",
      want: "want 0 to 128 for IPv6",
    },
    {
      name: "CidrLeadingZero",
      reason: "prefix lengths with leading zeros are rejected, as Go does",
      entry: "10.0.0.0/08",
      want: 'prefix length "08"',
    },
    {
      name: "CidrEmptyPrefix",
      reason: "a slash needs a number",
      entry: "10.0.0.0/",
      want: 'prefix length ""',
    },
    { name: "CidrSign", reason: "signs are not digits", entry: "10.0.0.0/+8", want: 'prefix length "+8"' },
    {
      name: "CidrBadNetwork",
      reason: "the network must be an address",
      entry: "10.0.0/8",
      want: 'has the network "10.0.0"',
    },
    {
      name: "CidrAndRange",
      reason: "a CIDR cannot also be a range",
      entry: "10.0.0.0/24-10.0.1.0",
      want: "prefix length",
    },
  ])("rejects $name", ({ reason, entry, want }) => {
    let error: unknown;
    try {
      AddressSet.parse(["10.0.0.1", entry]);
    } catch (e) {
      error = e;
    }
    expect(error, reason).toBeInstanceOf(AddressSetError);
    const e = error as AddressSetError;
    expect(e.index, reason).toBe(1);
    expect(e.entry, reason).toBe(entry);
    expect(e.code, reason).toBe("INVALID_ADDRESS_ENTRY");
    expect(e.message, reason).toContain(`spec.allowed[1]: ${JSON.stringify(entry)}`);
    expect(e.reason, reason).toContain(want);
  });
});

describe("AddressSet", () => {
  const set = AddressSet.parse([
    "10.0.0.5",
    "10.0.0.10-10.0.0.20",
    "10.0.0.21", // touches the range before: merged
    "10.0.0.15-10.0.0.30", // overlaps: merged
    "192.168.0.0/30",
    "2001:db8::1",
    "2001:0db8:0:0:0:0:0:1", // the same address written in full
    "2001:db8::100-2001:db8::1ff",
  ]);

  it.each([
    { name: "SingleAddress", reason: "listed alone", ip: "10.0.0.5", has: true },
    {
      name: "NextToSingle",
      reason: "neighbours of a single address are not in the set",
      ip: "10.0.0.6",
      has: false,
    },
    { name: "RangeStart", reason: "ranges are inclusive at the start", ip: "10.0.0.10", has: true },
    {
      name: "MergedMiddle",
      reason: "touching and overlapping entries form one interval",
      ip: "10.0.0.25",
      has: true,
    },
    {
      name: "MergedEnd",
      reason: "the merged interval ends at the last entry's end",
      ip: "10.0.0.30",
      has: true,
    },
    { name: "AfterMerged", reason: "one past the end is outside", ip: "10.0.0.31", has: false },
    { name: "CidrLast", reason: "the broadcast address of a CIDR is in it", ip: "192.168.0.3", has: true },
    {
      name: "V6OtherSpelling",
      reason: "addresses compare by value, not text",
      ip: "2001:DB8:0::1",
      has: true,
    },
    { name: "V6Range", reason: "IPv6 ranges work like IPv4 ones", ip: "2001:db8::1ab", has: true },
    {
      name: "SameValueOtherFamily",
      reason: "::a00:5 has 10.0.0.5's value but is IPv6",
      ip: "::a00:5",
      has: false,
    },
    {
      name: "V4MappedOfAllowed",
      reason: "::ffff:10.0.0.5 is 10.0.0.5 written as IPv6, as a manager may list it",
      ip: "::ffff:10.0.0.5",
      has: true,
    },
    {
      name: "V4MappedOfOther",
      reason: "a mapped address is allowed only when the IPv4 address it carries is",
      ip: "::ffff:10.0.0.6",
      has: false,
    },
    {
      name: "Unparsable",
      reason: "text that is no address is never in the set",
      ip: "10.0.0.5 ",
      has: false,
    },
  ])("has: $name", ({ reason, ip, has }) => {
    expect(set.has(ip), reason).toBe(has);
  });

  it("counts every address once", () => {
    // 1 + 21 (10..30) + 4 + 1 + 256
    expect(set.size).toBe(283n);
  });

  it.each([
    { name: "NoRanges", reason: "nothing to count in", ranges: [], count: 0n },
    {
      name: "WholeRangeInside",
      reason: "a pool range covering 10.0.0.0-10.0.0.255 holds the single address and the merged range",
      ranges: [["10.0.0.0", "10.0.0.255"]],
      count: 22n,
    },
    {
      name: "PartialOverlap",
      reason: "only the part of the set inside the range counts",
      ranges: [["10.0.0.25", "10.0.0.40"]],
      count: 6n,
    },
    {
      name: "OverlappingRangesCountOnce",
      reason: "pool ranges that overlap must not count an address twice",
      ranges: [
        ["10.0.0.20", "10.0.0.30"],
        ["10.0.0.25", "10.0.0.35"],
      ],
      count: 11n,
    },
    {
      name: "BothFamilies",
      reason: "IPv4 and IPv6 ranges are counted separately and summed",
      ranges: [
        ["192.168.0.0", "192.168.0.255"],
        ["2001:db8::", "2001:db8::ffff"],
      ],
      count: 261n,
    },
    {
      name: "OtherSpelling",
      reason: "range ends are compared by value",
      ranges: [["2001:0db8::0100", "2001:0DB8::0101"]],
      count: 2n,
    },
    {
      name: "BadRangeIgnored",
      reason: "a range the manager wrote badly counts nothing",
      ranges: [
        ["10.0.0.0", "nope"],
        ["10.0.0.9", "10.0.0.1"],
        ["10.0.0.1", "::1"],
      ],
      count: 0n,
    },
  ])("countIn: $name", ({ reason, ranges, count }) => {
    const input = ranges.map(([startAddress = "", endAddress = ""]) => ({ startAddress, endAddress }));
    expect(set.countIn(input), reason).toBe(count);
  });

  it("counts in huge IPv6 spaces without enumerating", () => {
    const big = AddressSet.parse(["2001:db8::/32", "::/0"]);
    expect(big.size).toBe(1n << 128n);
    expect(
      big.countIn([{ startAddress: "2001:db8::", endAddress: "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff" }]),
    ).toBe(1n << 96n);
  });

  it("parses 10 000 entries fast and answers has() for each", () => {
    const entries = Array.from({ length: 10_000 }, (_, i) =>
      i % 2 === 0 ? `10.${i >> 8}.${i & 0xff}.1` : `2001:db8::${i.toString(16)}:0/120`,
    );
    const started = performance.now();
    const big = AddressSet.parse(entries);
    const parsedMs = performance.now() - started;
    for (let i = 0; i < 10_000; i += 2) expect(big.has(`10.${i >> 8}.${i & 0xff}.1`)).toBe(true);
    expect(big.has("10.0.0.2")).toBe(false);
    // generous for a loaded 2-core machine; typical is a few tens of ms
    expect(parsedMs).toBeLessThan(1500);
  });
});

describe("AddressSet.entries", () => {
  it.each([
    { name: "Single", input: ["10.0.0.5"], entries: ["10.0.0.5"], reason: "one address stays an address" },
    {
      name: "Run",
      input: ["10.0.0.7", "10.0.0.5", "10.0.0.6"],
      entries: ["10.0.0.5-10.0.0.7"],
      reason: "adjacent addresses in any order merge into one range",
    },
    {
      name: "AlignedBlock",
      input: ["10.0.0.4", "10.0.0.5", "10.0.0.6", "10.0.0.7"],
      entries: ["10.0.0.4/30"],
      reason: "exactly an aligned power-of-two block is a CIDR",
    },
    {
      name: "UnalignedFour",
      input: ["10.0.0.5", "10.0.0.6", "10.0.0.7", "10.0.0.8"],
      entries: ["10.0.0.5-10.0.0.8"],
      reason: "four addresses off a boundary are no CIDR: a range says it exactly",
    },
    {
      name: "Gap",
      input: ["10.0.0.1", "10.0.0.3"],
      entries: ["10.0.0.1", "10.0.0.3"],
      reason: "a gap is never filled",
    },
    {
      name: "BothFamilies",
      input: ["2001:db8::11", "10.0.0.1", "2001:0db8::10"],
      entries: ["10.0.0.1", "2001:db8::10/127"],
      reason: "IPv4 first, IPv6 by value, written as RFC 5952",
    },
    { name: "Empty", input: [], entries: [], reason: "nothing allocated, nothing allowed" },
  ])("$name: $reason", ({ input, entries }) => {
    const set = AddressSet.parse(input);
    expect(set.entries()).toEqual(entries);
    const again = AddressSet.parse(entries);
    for (const ip of input) expect(again.has(ip)).toBe(true);
    expect(again.size).toBe(set.size);
  });
});
