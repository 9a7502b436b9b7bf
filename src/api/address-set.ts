/**
 * The addresses an IPPoolAllocations object allows (`spec.allowed`), as merged, sorted
 * intervals per family: `has()` is a binary search and `countIn()` one sweep, so lists of ten
 * thousand entries cost milliseconds.
 *
 * Entries are single addresses (`10.0.0.5`), inclusive ranges (`10.0.0.10-10.0.0.20`, both ends
 * of one family, start <= end) and CIDRs (`10.0.0.0/24`). A CIDR with host bits set
 * (`10.0.0.7/24`) is accepted and means its whole network, as Go's `netip.ParsePrefix` and the
 * API server's CEL `isCIDR` accept it. IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) are
 * rejected, as CEL `isIP` rejects them: an IPv4 pool's addresses are written as IPv4.
 */
import { CodedError } from "../util/errors.ts";
import { formatIp, IP_BITS, isIpv4Mapped, tryParseIp, type IpAddress, type IpFamily } from "../util/ip.ts";

/** An inclusive interval of addresses of one family. */
export interface AddressInterval {
  family: IpFamily;
  start: bigint;
  end: bigint;
}

/** One `spec.allowed` entry is not an address, a range or a CIDR. */
export class AddressSetError extends CodedError {
  /** position in `spec.allowed` */
  readonly index: number;
  readonly entry: string;
  /** what is wrong, without the field path: `is not an IP address, ...` */
  readonly reason: string;
  constructor(init: { index: number; entry: string; reason: string }) {
    super(
      "INVALID_ADDRESS_ENTRY",
      `spec.allowed[${init.index}]: ${JSON.stringify(init.entry)} ${init.reason}`,
    );
    this.index = init.index;
    this.entry = init.entry;
    this.reason = init.reason;
  }
}

const PREFIX_LENGTH = /^(?:0|[1-9][0-9]{0,2})$/;
const SHAPES = "is not an IP address, a range a-b or a CIDR a/n";
/** the counterpart of a CEL rule of its own (cel-rules.ts) */
export const RANGE_REVERSED = "is a range whose start is above its end";

/** One entry as an interval; throws AddressSetError naming `spec.allowed[index]`. */
export function parseAddressEntry(entry: string, index = 0): AddressInterval {
  const fail = (reason: string): never => {
    throw new AddressSetError({ index, entry: String(entry), reason });
  };
  if (typeof entry !== "string") return fail("is not a string");
  if (/\s/.test(entry)) fail("contains white space");
  if (entry.includes("%")) fail("has a zone id (%...): zones are not allowed");
  const address = (text: string, role: string): IpAddress => {
    const ip =
      tryParseIp(text) ?? fail(role === "" ? SHAPES : `has ${role} ${JSON.stringify(text)}: ${SHAPES}`);
    if (isIpv4Mapped(ip)) fail("is an IPv4-mapped IPv6 address: write the IPv4 address instead");
    return ip;
  };
  const slash = entry.indexOf("/");
  if (slash !== -1) {
    const ip = address(entry.slice(0, slash), "the network");
    const text = entry.slice(slash + 1);
    const bits = IP_BITS[ip.family];
    if (!PREFIX_LENGTH.test(text) || Number(text) > bits) {
      fail(`has prefix length ${JSON.stringify(text)}: want 0 to ${bits} for IPv${ip.family}`);
    }
    const hostBits = BigInt(bits - Number(text));
    const start = (ip.value >> hostBits) << hostBits;
    return { family: ip.family, start, end: start | ((1n << hostBits) - 1n) };
  }
  const dash = entry.indexOf("-");
  if (dash !== -1) {
    const start = address(entry.slice(0, dash), "the start");
    const end = address(entry.slice(dash + 1), "the end");
    if (start.family !== end.family) fail("mixes IPv4 and IPv6: both ends of a range must be of one family");
    if (start.value > end.value) fail(RANGE_REVERSED);
    return { family: start.family, start: start.value, end: end.value };
  }
  const ip = address(entry, "");
  return { family: ip.family, start: ip.value, end: ip.value };
}

export class AddressSet {
  /** merged intervals, sorted by start, per family; no two touch or overlap */
  readonly #intervals: Record<IpFamily, AddressInterval[]>;

  private constructor(intervals: Record<IpFamily, AddressInterval[]>) {
    this.#intervals = intervals;
  }

  /** entries: addresses, ranges `a-b`, CIDRs; throws AddressSetError for the first bad entry */
  static parse(entries: readonly string[]): AddressSet {
    return new AddressSet(mergeByFamily(entries.map((entry, index) => parseAddressEntry(entry, index))));
  }

  /**
   * false for text that is not an address. An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, as a
   * manager may write one) is the IPv4 address it carries, so it is allowed when that one is.
   */
  has(ip: string): boolean {
    const parsed = tryParseIp(ip);
    if (parsed === undefined) return false;
    if (isIpv4Mapped(parsed) && this.#contains(4, parsed.value & 0xffffffffn)) return true;
    return this.#contains(parsed.family, parsed.value);
  }

  #contains(family: IpFamily, value: bigint): boolean {
    const list = this.#intervals[family];
    let lo = 0;
    let hi = list.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const interval = list[mid] as AddressInterval;
      if (value < interval.start) hi = mid - 1;
      else if (value > interval.end) lo = mid + 1;
      else return true;
    }
    return false;
  }

  /**
   * How many addresses of the set fall inside these inclusive ranges (a pool's ranges, as the
   * manager wrote them). Overlapping ranges count once; a range whose ends are not addresses of
   * one family with start <= end counts nothing.
   */
  countIn(ranges: readonly { startAddress: string; endAddress: string }[]): bigint {
    const intervals: AddressInterval[] = [];
    for (const range of ranges) {
      const start = tryParseIp(range.startAddress);
      const end = tryParseIp(range.endAddress);
      if (start === undefined || end === undefined || start.family !== end.family) continue;
      if (start.value > end.value) continue;
      intervals.push({ family: start.family, start: start.value, end: end.value });
    }
    const other = mergeByFamily(intervals);
    return intersectionSize(this.#intervals[4], other[4]) + intersectionSize(this.#intervals[6], other[6]);
  }

  /**
   * The set as the fewest `spec.allowed` entries that say exactly it, IPv4 first: each run of
   * adjacent addresses as one address, a CIDR when the run is exactly an aligned block, or a range.
   */
  entries(): string[] {
    return [...this.#intervals[4], ...this.#intervals[6]].map(entryOf);
  }

  /** how many addresses the set holds, both families together */
  get size(): bigint {
    let total = 0n;
    for (const interval of [...this.#intervals[4], ...this.#intervals[6]]) {
      total += interval.end - interval.start + 1n;
    }
    return total;
  }
}

function entryOf({ family, start, end }: AddressInterval): string {
  const first = formatIp({ family, value: start });
  if (start === end) return first;
  const size = end - start + 1n;
  const hostBits = size.toString(2).length - 1;
  // a power of two, starting on a multiple of itself: a CIDR block
  if (size === 1n << BigInt(hostBits) && start % size === 0n) return `${first}/${IP_BITS[family] - hostBits}`;
  return `${first}-${formatIp({ family, value: end })}`;
}

function mergeByFamily(intervals: readonly AddressInterval[]): Record<IpFamily, AddressInterval[]> {
  return {
    4: merge(intervals.filter((i) => i.family === 4)),
    6: merge(intervals.filter((i) => i.family === 6)),
  };
}

function merge(intervals: AddressInterval[]): AddressInterval[] {
  const sorted = [...intervals].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const merged: AddressInterval[] = [];
  for (const next of sorted) {
    const last = merged.at(-1);
    if (last !== undefined && next.start <= last.end + 1n) {
      if (next.end > last.end) last.end = next.end;
    } else {
      merged.push({ ...next });
    }
  }
  return merged;
}

function intersectionSize(a: readonly AddressInterval[], b: readonly AddressInterval[]): bigint {
  let total = 0n;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as AddressInterval;
    const y = b[j] as AddressInterval;
    const lo = x.start > y.start ? x.start : y.start;
    const hi = x.end < y.end ? x.end : y.end;
    if (lo <= hi) total += hi - lo + 1n;
    if (x.end < y.end) i++;
    else j++;
  }
  return total;
}
