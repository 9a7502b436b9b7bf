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

/** A page's answer: the digest of its bytes, and its text (decoded when read: only for a page not known) */
export interface EdgePageAnswer {
  digest(): string;
  readonly body: string;
}

/**
 * What one edge list's pages were at its last complete read (edge-pages.ts): a page whose bytes are
 * the same is taken from there, not parsed again.
 */
export interface EdgePageMemo {
  /** the page at `startIndex` of `pageSize` whose answer is `answer`: the one remembered when the bytes are the same, else `parse(answer.body)` */
  page(
    startIndex: number,
    pageSize: number,
    answer: EdgePageAnswer,
    parse: (body: string) => EdgePage,
  ): EdgePage;
  /** the read completed: what it read is remembered, the rest forgotten */
  complete(): void;
  /** the read failed: the last complete read is kept */
  abandon(): void;
}

export interface ListEdgesOptions extends CallOptions {
  /** default 256, the manager's own */
  pageSize?: number;
  /** what of each summary to keep; default all of it */
  keep?: (summary: EdgeSummary) => EdgeSummary;
  /**
   * the list's pages as its last complete read saw them (kept as `keep` kept them): a page whose
   * bytes are the same is taken from there, not parsed again; updated when this read completes
   */
  pages?: EdgePageMemo;
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
