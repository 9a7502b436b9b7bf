/**
 * IP pools as the simulator holds them: inclusive ranges, allocations keyed by address value (so
 * `2001:db8::1` and `2001:0db8:0:0:0:0:0:1` are one address), next-free allocation, reservation,
 * release, and the counts a manager reports, always computed from the allocations themselves.
 */
import { formatIp, tryParseIp, type IpAddress, type IpFamily } from "../util/ip.ts";
import type { ManagerIdentity } from "./manager.ts";
import { el, opt, type XmlNode } from "./xml.ts";

export interface ScopeInfo {
  id: string;
  objectTypeName: string;
  name: string;
}

/** The parent of all managed objects (spec 2.4). */
export const GLOBAL_SCOPE: ScopeInfo = { id: "globalroot-0", objectTypeName: "GlobalRoot", name: "Global" };

/** `prefixed`: `<id>allocatedipaddress-4</id>`, as real managers write them; `integer`: `<id>4</id>`, as the spec shows. */
export type AllocationIdStyle = "integer" | "prefixed";

export interface PoolRange {
  /** as written in the state file */
  startAddress: string;
  endAddress: string;
  start: IpAddress;
  end: IpAddress;
}

export interface PoolConfig {
  id: string;
  name: string;
  scope: ScopeInfo;
  ipPoolType: "ipv4" | "ipv6";
  prefixLength?: number;
  gateway?: string;
  dnsSuffix?: string;
  dnsServer1?: string;
  dnsServer2?: string;
  subnetId: string;
  allocationIds: AllocationIdStyle;
  revision: number;
  /** validated: same family as ipPoolType, start <= end, no overlaps */
  ranges: PoolRange[];
}

export interface AllocationRecord {
  id: string;
  /** canonical text */
  ipAddress: string;
  note?: string;
}

export type AllocateResult =
  { ok: true; allocation: AllocationRecord } | { ok: false; reason: "exhausted" | "taken" | "outside" };

export class Pool {
  #config: PoolConfig;
  #totalAddressCount: number;
  readonly #allocations = new Map<bigint, AllocationRecord>();
  #nextId = 1;

  constructor(config: PoolConfig) {
    this.#config = config;
    this.#totalAddressCount = totalOf(config);
  }

  get config(): PoolConfig {
    return this.#config;
  }

  get family(): IpFamily {
    return this.#config.ipPoolType === "ipv6" ? 6 : 4;
  }

  get totalAddressCount(): number {
    return this.#totalAddressCount;
  }

  get id(): string {
    return this.#config.id;
  }

  /**
   * An update of the pool's settings and ranges (PUT of the pool), its revision one higher; refused
   * with the allocations it would leave outside every range, or when the family changes.
   */
  reconfigure(config: PoolConfig): { ok: true } | { ok: false; outside: AllocationRecord[] } {
    const family = config.ipPoolType === "ipv6" ? 6 : 4;
    const inside = (v: bigint) =>
      family === this.family && config.ranges.some((r) => v >= r.start.value && v <= r.end.value);
    const outside = [...this.#allocations].filter(([v]) => !inside(v)).map(([, record]) => record);
    if (outside.length > 0 || (family !== this.family && this.#allocations.size > 0)) {
      return { ok: false, outside: outside.length > 0 ? outside : this.allocations() };
    }
    this.#config = {
      ...config,
      id: this.#config.id,
      scope: this.#config.scope,
      revision: this.#config.revision + 1,
    };
    this.#totalAddressCount = totalOf(this.#config);
    return { ok: true };
  }

  get usedAddressCount(): number {
    return this.#allocations.size;
  }

  /** integer percentage, rounded down */
  get usedPercentage(): number {
    return this.totalAddressCount === 0
      ? 0
      : Math.floor((this.#allocations.size * 100) / this.totalAddressCount);
  }

  allocations(): AllocationRecord[] {
    return [...this.#allocations.values()];
  }

  /** Drops every allocation (a forced delete of the pool); what was allocated. */
  clear(): AllocationRecord[] {
    const dropped = this.allocations();
    this.#allocations.clear();
    return dropped;
  }

  /** ALLOCATE: the lowest free address of the first range that has one. */
  allocateNext(note: string | undefined): AllocateResult {
    for (const range of this.#config.ranges) {
      // each step skips one allocated address, so this ends after at most #allocations + 1 steps per range
      for (let v = range.start.value; v <= range.end.value; v++) {
        if (!this.#allocations.has(v)) return { ok: true, allocation: this.#add(v, note) };
      }
    }
    return { ok: false, reason: "exhausted" };
  }

  /** RESERVE: one chosen address, which must be inside a range and free. */
  reserve(ipText: string, note: string | undefined): AllocateResult {
    const ip = this.#own(ipText);
    if (ip === undefined || !this.contains(ip)) return { ok: false, reason: "outside" };
    if (this.#allocations.has(ip.value)) return { ok: false, reason: "taken" };
    return { ok: true, allocation: this.#add(ip.value, note) };
  }

  /** the removed allocation, or undefined when the address is not allocated from this pool */
  release(ipText: string): AllocationRecord | undefined {
    const ip = this.#own(ipText);
    if (ip === undefined) return undefined;
    const record = this.#allocations.get(ip.value);
    if (record !== undefined) this.#allocations.delete(ip.value);
    return record;
  }

  contains(ip: IpAddress): boolean {
    return (
      ip.family === this.family &&
      this.#config.ranges.some((r) => ip.value >= r.start.value && ip.value <= r.end.value)
    );
  }

  /** the address when it parses and is of this pool's family */
  #own(ipText: string): IpAddress | undefined {
    const ip = tryParseIp(ipText.trim());
    return ip !== undefined && ip.family === this.family ? ip : undefined;
  }

  #add(value: bigint, note: string | undefined): AllocationRecord {
    const n = this.#nextId++;
    const record: AllocationRecord = {
      id: this.#config.allocationIds === "prefixed" ? `allocatedipaddress-${n}` : String(n),
      ipAddress: formatIp({ family: this.family, value }),
      ...(note !== undefined && note !== "" ? { note } : {}),
    };
    this.#allocations.set(value, record);
    return record;
  }

  /** `<ipamAddressPool>` in the element order of a real manager (spec 2.2). */
  toXml(manager: ManagerIdentity): XmlNode {
    const c = this.#config;
    return el("ipamAddressPool", [
      el("objectId", c.id),
      el("objectTypeName", "IpAddressPool"),
      el("vsmUuid", manager.vsmUuid),
      el("nodeId", manager.nodeId),
      el("revision", c.revision),
      el("type", [el("typeName", "IpAddressPool")]),
      el("name", c.name),
      el("scope", [
        el("id", c.scope.id),
        el("objectTypeName", c.scope.objectTypeName),
        el("name", c.scope.name),
      ]),
      el("clientHandle"),
      el("extendedAttributes"),
      el("isUniversal", false),
      el("universalRevision", 0),
      el("totalAddressCount", this.totalAddressCount),
      el("usedAddressCount", this.usedAddressCount),
      el("usedPercentage", this.usedPercentage),
      opt("prefixLength", c.prefixLength),
      opt("gateway", c.gateway),
      opt("dnsSuffix", c.dnsSuffix),
      opt("dnsServer1", c.dnsServer1),
      opt("dnsServer2", c.dnsServer2),
      el("ipPoolType", c.ipPoolType),
      el(
        "ipRanges",
        c.ranges.map((r, i) =>
          el("ipRangeDto", [
            el("id", `iprange-${this.#rangeNumber(i)}`),
            el("startAddress", r.startAddress),
            el("endAddress", r.endAddress),
          ]),
        ),
      ),
      el("subnetId", c.subnetId),
    ]);
  }

  /** range ids are unique across the manager on a real one; derive them from the pool number */
  #rangeNumber(index: number): number {
    const n = /(\d+)$/.exec(this.#config.id)?.[1];
    return (n === undefined ? 0 : Number(n)) * 100 + index + 1;
  }

  allocationXml(record: AllocationRecord): XmlNode {
    const c = this.#config;
    return el("allocatedIpAddress", [
      el("id", record.id),
      el("ipAddress", record.ipAddress),
      opt("gateway", c.gateway),
      opt("prefixLength", c.prefixLength),
      opt("dnsServer1", c.dnsServer1),
      opt("dnsServer2", c.dnsServer2),
      opt("dnsSuffix", c.dnsSuffix),
      el("subnetId", c.subnetId),
      opt("allocationNote", record.note),
    ]);
  }
}

function totalOf(config: PoolConfig): number {
  let total = 0n;
  for (const range of config.ranges) total += range.end.value - range.start.value + 1n;
  return Number(total);
}
