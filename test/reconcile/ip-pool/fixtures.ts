/** Builders for the IPPoolAllocations tests: the object, pools, allocations, recorded strays, a planner input. */
import {
  API_VERSION,
  type IPPoolAllocations,
  type IPPoolAllocationsSpec,
  type StrayAddress,
} from "../../../src/api/types.ts";
import type { Allocation, IpPool } from "../../../src/nsx/types.ts";
import type { IpPoolPlanInput } from "../../../src/reconcile/ip-pool/plan.ts";
import { resolvePool } from "../../../src/reconcile/ip-pool/spec.ts";
import { formatIp, tryParseIp } from "../../../src/util/ip.ts";
import { meta, type Meta } from "../fixtures.ts";

export function poolAllocations(spec: Partial<IPPoolAllocationsSpec> = {}, m: Meta = {}): IPPoolAllocations {
  return {
    apiVersion: API_VERSION,
    kind: "IPPoolAllocations",
    metadata: meta({ name: "pool", ...m }),
    spec: { managerRef: { name: "nsx" }, pool: { id: "ipaddresspool-1" }, allowed: [], ...spec },
  };
}

export function pool(overrides: Partial<IpPool> = {}): IpPool {
  return {
    objectId: "ipaddresspool-1",
    name: "controllers",
    scopeId: "globalroot-0",
    totalAddressCount: 10,
    usedAddressCount: 0,
    usedPercentage: 0,
    ranges: [{ startAddress: "10.0.0.1", endAddress: "10.0.0.10" }],
    ...overrides,
  };
}

/**
 * Allocations as a manager lists them: an address, or [address, note], or [address, note, id].
 * The id defaults to one derived from the canonical address (`allocationIdOf`), so that the same
 * address listed in two passes is the same allocation unless a case says otherwise.
 */
export function allocations(
  ...ips: (string | [string, string] | [string, string | undefined, string])[]
): Allocation[] {
  return ips.map((entry) => {
    const [ipAddress, allocationNote, id] = typeof entry === "string" ? [entry, undefined, undefined] : entry;
    return {
      id: id ?? allocationIdOf(ipAddress),
      ipAddress,
      ...(allocationNote === undefined ? {} : { allocationNote }),
    };
  });
}

/** A stray as status records it: the fixtures' default allocation of the address, first seen at `firstSeen`. */
export function recordedStray(ip: string, firstSeen: string, note?: string): StrayAddress {
  return { ip, allocationId: allocationIdOf(ip), ...(note === undefined ? {} : { note }), firstSeen };
}

/** The default id of the allocation of an address in these fixtures. */
export function allocationIdOf(ip: string): string {
  const parsed = tryParseIp(ip);
  return `allocatedipaddress-${parsed === undefined ? ip : formatIp(parsed)}`;
}

/** A pool planner input from an object, as the handler builds it: the spec resolved once. */
export function poolPlanInput(
  init: Omit<IpPoolPlanInput, "config" | "generation"> & { object: IPPoolAllocations },
): IpPoolPlanInput {
  const { object, ...rest } = init;
  return { ...rest, config: resolvePool(object), generation: object.metadata.generation };
}
