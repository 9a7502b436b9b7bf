/**
 * IP addresses as numbers: strict parsing of IPv4 and IPv6 text into bigints, canonical
 * formatting (RFC 5952 for IPv6), and comparison by value, so that `2001:db8::1` and
 * `2001:0db8:0:0:0:0:0:1` are the same address wherever the operator compares what a manager
 * wrote with what a person declared.
 *
 * Strict on purpose: IPv4 octets with leading zeros (`010.0.0.1`, octal to some parsers and
 * decimal to others), zone ids (`fe80::1%eth0`, meaningless off the host), brackets, spaces
 * and signs are rejected, as Go's `netip.ParseAddr` (and so the API server's CEL `isIP`) does.
 */

import { CodedError } from "./errors.ts";

export type IpFamily = 4 | 6;

export interface IpAddress {
  family: IpFamily;
  value: bigint;
}

/** Width of an address of each family, in bits. */
export const IP_BITS: Readonly<Record<IpFamily, number>> = { 4: 32, 6: 128 };

/** Text that is not an IP address, or a value out of range for its family. */
export class InvalidIpError extends CodedError {
  constructor(message: string) {
    super("INVALID_IP", message);
  }
}

/** The longest IP text: eight groups of which the last two written as a dotted quad. */
const MAX_TEXT_LENGTH = "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255".length;
const OCTET = /^(?:0|[1-9][0-9]{0,2})$/;
const GROUP = /^[0-9a-fA-F]{1,4}$/;
const MAPPED_PREFIX = 0xffffn;

export function tryParseIp(text: string): IpAddress | undefined {
  if (typeof text !== "string" || text.length === 0 || text.length > MAX_TEXT_LENGTH) return undefined;
  if (text.includes(":")) {
    const value = parseIpv6(text);
    return value === undefined ? undefined : { family: 6, value };
  }
  const value = parseIpv4(text);
  return value === undefined ? undefined : { family: 4, value: BigInt(value) };
}

export function parseIp(text: string): IpAddress {
  const ip = tryParseIp(text);
  if (ip === undefined) throw new InvalidIpError(`${JSON.stringify(text)} is not an IPv4 or IPv6 address`);
  return ip;
}

/** Dotted quad for IPv4; RFC 5952 for IPv6 (lowercase, longest zero run as `::`, IPv4-mapped as `::ffff:a.b.c.d`). */
export function formatIp(ip: IpAddress): string {
  const bits = IP_BITS[ip.family];
  if (bits === undefined || ip.value < 0n || ip.value >> BigInt(bits) !== 0n) {
    throw new InvalidIpError(`${String(ip.value)} is not an IPv${String(ip.family)} address value`);
  }
  if (ip.family === 4) return formatIpv4(Number(ip.value));
  if (isIpv4Mapped(ip)) return `::ffff:${formatIpv4(Number(ip.value & 0xffffffffn))}`;
  return formatIpv6(ip.value);
}

export function normalizeIp(text: string): string {
  return formatIp(parseIp(text));
}

/** Same family and same value; false when either text is not an address. */
export function ipEquals(a: string, b: string): boolean {
  const x = tryParseIp(a);
  const y = tryParseIp(b);
  return x !== undefined && y !== undefined && x.family === y.family && x.value === y.value;
}

/** The address text as one URL path segment (`:` and `%` escaped), as the manager's paths take it. */
export function encodeIpForPath(text: string): string {
  return encodeURIComponent(text);
}

/** `::ffff:a.b.c.d`: an IPv4 address written as IPv6 (RFC 4291 section 2.5.5.2). */
export function isIpv4Mapped(ip: IpAddress): boolean {
  return ip.family === 6 && ip.value >> 32n === MAPPED_PREFIX;
}

/**
 * Whether a host (a URL's hostname, IPv6 in brackets or not, or a listen address) is this machine
 * only: `localhost`, 127.0.0.0/8, `::1`, or 127.0.0.0/8 written as IPv4-mapped IPv6. Wildcards
 * (`0.0.0.0`, `::`) and every other name are not: they may be reached from elsewhere.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (bare === "localhost") return true;
  const ip = tryParseIp(bare);
  if (ip === undefined) return false;
  if (ip.family === 6 && !isIpv4Mapped(ip)) return ip.value === 1n;
  return (ip.value & 0xffffffffn) >> 24n === 127n;
}

function parseIpv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!OCTET.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

function parseIpv6(text: string): bigint | undefined {
  const gap = text.indexOf("::");
  if (gap !== -1 && text.indexOf("::", gap + 1) !== -1) return undefined;
  const head = gap === -1 ? text : text.slice(0, gap);
  const tail = gap === -1 ? "" : text.slice(gap + 2);
  const headGroups = parseGroups(head, gap === -1);
  const tailGroups = parseGroups(tail, true);
  if (headGroups === undefined || tailGroups === undefined) return undefined;
  const count = headGroups.length + tailGroups.length;
  // `::` stands for at least one group of zeros (RFC 4291 section 2.2)
  if (gap === -1 ? count !== 8 : count > 7) return undefined;
  const groups = [...headGroups, ...new Array<number>(8 - count).fill(0), ...tailGroups];
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(group);
  return value;
}

/** Colon-separated groups; the last one may be a dotted quad (two groups) when `last` is set. */
function parseGroups(text: string, last: boolean): number[] | undefined {
  if (text === "") return [];
  const parts = text.split(":");
  const groups: number[] = [];
  for (const [i, part] of parts.entries()) {
    if (GROUP.test(part)) {
      groups.push(Number.parseInt(part, 16));
    } else if (last && i === parts.length - 1 && part.includes(".")) {
      const v4 = parseIpv4(part);
      if (v4 === undefined) return undefined;
      groups.push(Math.floor(v4 / 0x10000), v4 % 0x10000);
    } else {
      return undefined;
    }
  }
  return groups;
}

function formatIpv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join(".");
}

function formatIpv6(value: bigint): string {
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  // the longest run of two or more zero groups, the first one on a tie (RFC 5952 section 4.2)
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}
