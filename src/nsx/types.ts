/** The shapes the manager client reads: pools and allocations (spec sections 2.2 and 2.3). */
import type { EdgeDocument } from "./edge-document.ts";

export interface IpRange {
  id?: string;
  /** as the manager wrote it */
  startAddress: string;
  endAddress: string;
}

export interface IpPool {
  /** `ipaddresspool-<n>` */
  objectId: string;
  name: string;
  /** id of the owning scope, e.g. `globalroot-0` */
  scopeId?: string;
  totalAddressCount: number;
  usedAddressCount: number;
  usedPercentage: number;
  prefixLength?: number;
  gateway?: string;
  ipPoolType?: string;
  /** inclusive at both ends */
  ranges: IpRange[];
}

export interface Allocation {
  /** an integer or a string such as `allocatedipaddress-4` on real managers */
  id: string;
  ipAddress: string;
  /** free text; the only owner hint on an allocation */
  allocationNote?: string;
  gateway?: string;
  prefixLength?: number;
  subnetId?: string;
}

/**
 * The five calls, as the reconcile executor sees them. `ManagerClient` implements this over
 * HTTP; tests may pass a fake object literal.
 */
export interface ManagerApi {
  getEdge(edgeId: string, options?: CallOptions): Promise<EdgeDocument>;
  putEdge(edgeId: string, doc: EdgeDocument, options?: CallOptions): Promise<void>;
  listPools(scopeId: string, options?: CallOptions): Promise<IpPool[]>;
  listAllocations(poolId: string, options?: CallOptions): Promise<Allocation[]>;
  /** true only when the manager answered `true` or `<boolean>true</boolean>` */
  releaseAddress(poolId: string, ip: string, options?: CallOptions): Promise<boolean>;
}

export interface CallOptions {
  signal?: AbortSignal;
}
