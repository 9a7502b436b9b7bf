/**
 * `GET /api/4.0/edges`: the paged list of edge summaries, with the query parameters of the 6.4
 * RAML: `startIndex`, `pageSize` (default 256, 1 to 1024), `sortBy` (id, name, description,
 * tenantId, size, enableFips; default id), `sortOrderAscending`, and the filters `datacenter`
 * (a datacenterMoid), `tenant` and `pg` (a port group one of the edge's interfaces is on).
 */
import { childText, child } from "./edge-model.ts";
import type { EdgeListing } from "./edge-summary.ts";
import { el, type XmlNode } from "./xml.ts";

export const DEFAULT_PAGE_SIZE = 256;
export const MAX_PAGE_SIZE = 1024;

/** what each sortBy value sorts on */
const SORT_KEYS = {
  id: (e: EdgeListing) => e.id,
  name: (e: EdgeListing) => childText(e.summary, "name") ?? "",
  description: (e: EdgeListing) => e.description,
  tenantId: (e: EdgeListing) => childText(e.summary, "tenantId") ?? "",
  // compact, large, quadlarge, xlarge: the names sort in the order of the sizes
  size: (e: EdgeListing) => {
    const appliances = child(e.summary, "appliancesSummary");
    return (appliances && childText(appliances, "applianceSize")) ?? "";
  },
  enableFips: (e: EdgeListing) => e.enableFips,
} as const satisfies Record<string, (e: EdgeListing) => string>;

export type EdgeSortBy = keyof typeof SORT_KEYS;
export const EDGE_SORT_BY = Object.keys(SORT_KEYS) as EdgeSortBy[];

export interface EdgeListQuery {
  startIndex: number;
  pageSize: number;
  sortBy: EdgeSortBy;
  ascending: boolean;
  /** datacenterMoid to match */
  datacenter?: string;
  /** tenant to match */
  tenant?: string;
  /** port group MoId one of the edge's interfaces must be on */
  pg?: string;
}

/** Why a query parameter cannot be used, naming it. */
export class EdgeListQueryError extends Error {
  override readonly name = "EdgeListQueryError";
}

export function parseEdgeListQuery(query: URLSearchParams): EdgeListQuery {
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const text = query.get(name);
    if (text === null) return fallback;
    const value = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!(value >= min && value <= max)) {
      throw new EdgeListQueryError(
        `${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(text)}.`,
      );
    }
    return value;
  };
  const sortBy = query.get("sortBy") ?? "id";
  if (!isSortBy(sortBy)) {
    throw new EdgeListQueryError(
      `sortBy must be one of ${EDGE_SORT_BY.join(", ")}, not ${JSON.stringify(sortBy)}.`,
    );
  }
  const order = query.get("sortOrderAscending") ?? "true";
  if (order !== "true" && order !== "false") {
    throw new EdgeListQueryError(`sortOrderAscending must be true or false, not ${JSON.stringify(order)}.`);
  }
  const filters: Pick<EdgeListQuery, "datacenter" | "tenant" | "pg"> = {};
  for (const name of ["datacenter", "tenant", "pg"] as const) {
    const value = query.get(name);
    if (value !== null) filters[name] = value;
  }
  return {
    startIndex: int("startIndex", 0, 0, Number.MAX_SAFE_INTEGER),
    pageSize: int("pageSize", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE),
    sortBy,
    ascending: order === "true",
    ...filters,
  };
}

function isSortBy(value: string): value is EdgeSortBy {
  return Object.hasOwn(SORT_KEYS, value);
}

/** `<pagedEdgeList>`: the page of the filtered, sorted summaries that the query asks for. */
export function pagedEdgeList(listings: readonly EdgeListing[], query: EdgeListQuery): XmlNode {
  const matching = listings.filter(
    (e) =>
      (query.datacenter === undefined || childText(e.summary, "datacenterMoid") === query.datacenter) &&
      (query.tenant === undefined || childText(e.summary, "tenantId") === query.tenant) &&
      (query.pg === undefined || e.portgroups.includes(query.pg)),
  );
  const key = SORT_KEYS[query.sortBy];
  const direction = query.ascending ? 1 : -1;
  // equal keys in id order, so that pages stay stable whatever the sort
  matching.sort((a, b) => (compareNatural(key(a), key(b)) || compareNatural(a.id, b.id)) * direction);
  const page = matching.slice(query.startIndex, query.startIndex + query.pageSize);
  return el("pagedEdgeList", [
    el("edgePage", [
      el("pagingInfo", [
        el("pageSize", query.pageSize),
        el("startIndex", query.startIndex),
        el("totalCount", matching.length),
        el("sortOrderAscending", query.ascending),
        el("sortBy", query.sortBy),
      ]),
      ...page.map((e) => e.summary),
    ]),
  ]);
}

/**
 * edge-2 before edge-10: numbers inside ids and names compare as numbers. One collator for every
 * comparison: `localeCompare` with options builds one per call, most of what a page of 1000 cost.
 */
const compareNatural = new Intl.Collator("en", { numeric: true }).compare;
