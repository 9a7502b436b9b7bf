/**
 * `GET /api/4.0/edges` and `GET /api/4.0/edges/{id}/summary`: a manager's edge summaries and the
 * paged list of them. A summary's fields that derive from the edge (id, name, tenantId, revision,
 * datacenter, type) are read from the edge; the others (appliances, status, allowed actions) are
 * the ones of the `<edgeSummary>` the edge document carries, where it has them.
 */
import type { StoredEdge } from "./state.ts";
import type { ManagerIdentity } from "./pools.ts";
import { childText, edgeModelOf, modelToXmlNode, type EdgeModel } from "./edge-model.ts";
import { el, opt, type XmlNode } from "./xml.ts";

export const DEFAULT_PAGE_SIZE = 256;
export const MAX_PAGE_SIZE = 1024;

export interface EdgeListQuery {
  startIndex: number;
  pageSize: number;
  sortBy: "id" | "name";
  ascending: boolean;
  /** datacenterMoid to match */
  datacenter?: string;
  /** tenant to match */
  tenant?: string;
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
  if (sortBy !== "id" && sortBy !== "name") {
    throw new EdgeListQueryError(`sortBy must be id or name, not ${JSON.stringify(sortBy)}.`);
  }
  const order = query.get("sortOrderAscending") ?? "true";
  if (order !== "true" && order !== "false") {
    throw new EdgeListQueryError(`sortOrderAscending must be true or false, not ${JSON.stringify(order)}.`);
  }
  const datacenter = query.get("datacenter");
  const tenant = query.get("tenant");
  return {
    startIndex: int("startIndex", 0, 0, Number.MAX_SAFE_INTEGER),
    pageSize: int("pageSize", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE),
    sortBy,
    ascending: order === "true",
    ...(datacenter !== null ? { datacenter } : {}),
    ...(tenant !== null ? { tenant } : {}),
  };
}

/** A summary per stored edge, built once per stored version (StoredEdge is replaced on change). */
const summaries = new WeakMap<StoredEdge, EdgeModel>();

export function summaryOf(edge: StoredEdge, manager: ManagerIdentity): EdgeModel {
  let summary = summaries.get(edge);
  if (summary === undefined) {
    const model = edgeModelOf(edge.text);
    summary = fromXmlNode(builtSummary(model, manager));
    const embedded = model.children.find((c) => c.name === "edgeSummary")?.children ?? [];
    for (const child of embedded) {
      if (FROM_EDGE.has(child.name)) continue;
      const index = summary.children.findIndex((c) => c.name === child.name);
      if (index === -1) summary.children.push(child);
      else summary.children[index] = child;
    }
    summaries.set(edge, summary);
  }
  return summary;
}

/** summary fields read from the edge itself, whatever its embedded summary says */
const FROM_EDGE: ReadonlySet<string> = new Set([
  "objectId",
  "id",
  "name",
  "tenantId",
  "revision",
  "datacenterMoid",
  "datacenterName",
  "edgeType",
]);

/** `<pagedEdgeList>`: the page of the filtered, sorted summaries that the query asks for. */
export function pagedEdgeList(
  edges: readonly StoredEdge[],
  manager: ManagerIdentity,
  query: EdgeListQuery,
): XmlNode {
  const matching = edges
    .map((edge) => ({ edge, summary: summaryOf(edge, manager) }))
    .filter(
      ({ summary }) =>
        (query.datacenter === undefined || childText(summary, "datacenterMoid") === query.datacenter) &&
        (query.tenant === undefined || childText(summary, "tenantId") === query.tenant),
    );
  const key = (s: { edge: StoredEdge; summary: EdgeModel }) =>
    query.sortBy === "name" ? (childText(s.summary, "name") ?? "") : s.edge.id;
  matching.sort((a, b) => compareNatural(key(a), key(b)) * (query.ascending ? 1 : -1));
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
      ...page.map(({ summary }) => modelToXmlNode(summary)),
    ]),
  ]);
}

function fromXmlNode(node: XmlNode): EdgeModel {
  if (typeof node.content === "string" || node.content === undefined) {
    return { name: node.name, attributes: [], children: [], text: node.content ?? "" };
  }
  return { name: node.name, attributes: [], children: node.content.map(fromXmlNode), text: undefined };
}

/** edge-2 before edge-10: numbers inside ids and names compare as numbers */
function compareNatural(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

function builtSummary(edge: EdgeModel, manager: ManagerIdentity): XmlNode {
  const field = (name: string) => childText(edge, name);
  const vnics = edge.children.find((c) => c.name === "vnics")?.children ?? [];
  const appliances = edge.children.find((c) => c.name === "appliances");
  const id = field("id") ?? "";
  return el("edgeSummary", [
    el("objectId", id),
    el("objectTypeName", "Edge"),
    el("vsmUuid", manager.vsmUuid),
    el("nodeId", manager.nodeId),
    el("revision", field("version") ?? "1"),
    el("type", [el("typeName", "Edge")]),
    opt("name", field("name")),
    el("clientHandle"),
    el("extendedAttributes"),
    el("isUniversal", field("isUniversal") ?? "false"),
    el("universalRevision", 0),
    el("id", id),
    el("state", "deployed"),
    el("edgeType", field("type") ?? "gatewayServices"),
    opt("datacenterMoid", field("datacenterMoid")),
    opt("datacenterName", field("datacenterName")),
    opt("tenantId", field("tenant")),
    el("apiVersion", "4.0"),
    el("edgeStatus", "GREEN"),
    el("numberOfConnectedVnics", vnics.filter((v) => childText(v, "isConnected") === "true").length),
    el("appliancesSummary", [
      opt("applianceSize", appliances === undefined ? undefined : childText(appliances, "applianceSize")),
      el("numberOfDeployedVms", appliances?.children.filter((c) => c.name === "appliance").length ?? 0),
    ]),
  ]);
}
