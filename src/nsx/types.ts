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
  /** the manager instance's UUID: the same on every object one manager reports */
  vsmUuid?: string;
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

/** One edge in the manager's paged edge list (`edgeSummary`); fields a summary lacks stay absent. */
export interface EdgeSummary {
  /** `edge-<n>` */
  id: string;
  name?: string;
  /** `tenantId` */
  tenant?: string;
  datacenterMoid?: string;
  datacenterName?: string;
  /** gatewayServices or distributedRouter */
  edgeType?: string;
  /** the edge's version */
  revision?: number;
  /** the manager instance's UUID */
  vsmUuid?: string;
}

/** One page of `GET /api/4.0/edges` and where it sits in the whole list. */
export interface EdgePage {
  edges: EdgeSummary[];
  startIndex: number;
  pageSize: number;
  totalCount: number;
}

/**
 * The calls the reconciler makes: an edge read and written, pools and allocations listed, an
 * address released, and the paged edge list. `ManagerClient` implements this over
 * HTTP; tests may pass a fake object literal.
 */
export interface ManagerApi {
  getEdge(edgeId: string, options?: CallOptions): Promise<EdgeDocument>;
  putEdge(edgeId: string, doc: EdgeDocument, options?: CallOptions): Promise<void>;
  listPools(scopeId: string, options?: CallOptions): Promise<IpPool[]>;
  listAllocations(poolId: string, options?: CallOptions): Promise<Allocation[]>;
  releaseAddress(poolId: string, ip: string, options?: CallOptions): Promise<ReleaseAnswer>;
  /**
   * every edge's summary, through all pages of `GET /api/4.0/edges` (pageSize 1 to 1024); `keep`
   * says what of each summary is kept while the pages come (the rest is dropped page by page)
   */
  listEdges(options?: ListEdgesOptions): Promise<EdgeSummary[]>;
}

export interface ListEdgesOptions extends CallOptions {
  /** default 256, the manager's own */
  pageSize?: number;
  /** what of each summary to keep; default all of it */
  keep?: (summary: EdgeSummary) => EdgeSummary;
}

/**
 * What the manager said to a release: released only for `true` or `<boolean>true</boolean>`;
 * `answer` says what it was otherwise ("nothing (an empty 204)", "\"false\"", ...), for the report.
 */
export interface ReleaseAnswer {
  released: boolean;
  answer: string;
}

export interface CallOptions {
  signal?: AbortSignal;
}
