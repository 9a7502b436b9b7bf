/**
 * An edge's `<edgeSummary>` as a manager computes it, and what the edge list sorts and filters
 * on. Fields that follow from the edge (id, name, tenantId, revision, datacenter, type, connected
 * vnics, the appliances) are always recomputed from the stored configuration, so a PUT that
 * removes vnics leaves no stale count behind. The manager's own data about the edge (state,
 * edgeStatus, recent jobs, allowed actions...) starts with defaults and is taken from a summary
 * the seeded document carried, then kept across PUTs.
 */
import { child, childText, leaf, type EdgeModel } from "./edge-model.ts";
import { releaseText, type ManagerIdentity } from "./manager.ts";

/** What the paged list knows of one edge version: its summary and its sort and filter keys. */
export interface EdgeListing {
  readonly id: string;
  readonly summary: EdgeModel;
  readonly description: string;
  readonly enableFips: string;
  /** port groups its interfaces are on (vnics' portgroupId, a router's connectedToId), for `pg` */
  readonly portgroups: readonly string[];
}

/** summary fields always computed from the edge; the others may come from a seeded summary */
const DERIVED: ReadonlySet<string> = new Set([
  "objectId",
  "vsmUuid",
  "nodeId",
  "revision",
  "name",
  "isUniversal",
  "id",
  "edgeType",
  "datacenterMoid",
  "datacenterName",
  "tenantId",
  "numberOfConnectedVnics",
]);
const DERIVED_APPLIANCE_FIELDS: ReadonlySet<string> = new Set([
  "applianceSize",
  "fqdn",
  "numberOfDeployedVms",
]);

/** The summary of this configuration; `previous` supplies the manager-owned fields it had. */
export function summarize(
  config: EdgeModel,
  manager: ManagerIdentity,
  previous: EdgeModel | undefined,
): EdgeModel {
  const computed = computedSummary(config, manager);
  if (previous === undefined) return computed;
  return mergeOwned(computed, previous, DERIVED, (name, own, prior) =>
    name === "appliancesSummary" ? mergeOwned(own, prior, DERIVED_APPLIANCE_FIELDS) : prior,
  );
}

/**
 * `computed` with the non-derived fields of `prior` in place of its own (or appended when it has
 * none of that name); `nested` decides a field both have.
 */
function mergeOwned(
  computed: EdgeModel,
  prior: EdgeModel,
  derived: ReadonlySet<string>,
  nested: (name: string, own: EdgeModel, prior: EdgeModel) => EdgeModel = (_n, _o, p) => p,
): EdgeModel {
  const children = [...computed.children];
  for (const field of prior.children) {
    if (derived.has(field.name)) continue;
    const index = children.findIndex((c) => c.name === field.name);
    if (index === -1) children.push(field);
    else children[index] = nested(field.name, children[index]!, field);
  }
  return { ...computed, children };
}

function computedSummary(config: EdgeModel, manager: ManagerIdentity): EdgeModel {
  const field = (name: string) => childText(config, name);
  const id = field("id") ?? "";
  const vnics = child(config, "vnics")?.children ?? [];
  const appliances = child(config, "appliances");
  const deployed = appliances?.children.filter((c) => c.name === "appliance").length ?? 0;
  const size = appliances === undefined ? undefined : childText(appliances, "applianceSize");
  const fqdn = field("fqdn");
  return node("edgeSummary", [
    leaf("objectId", id),
    leaf("objectTypeName", "Edge"),
    leaf("vsmUuid", manager.vsmUuid),
    leaf("nodeId", manager.nodeId),
    leaf("revision", field("version") ?? "1"),
    node("type", [leaf("typeName", "Edge")]),
    optLeaf("name", field("name")),
    leaf("clientHandle", ""),
    leaf("extendedAttributes", ""),
    leaf("isUniversal", field("isUniversal") ?? "false"),
    leaf("universalRevision", "0"),
    leaf("id", id),
    leaf("state", "deployed"),
    leaf("edgeType", field("type") ?? "gatewayServices"),
    optLeaf("datacenterMoid", field("datacenterMoid")),
    optLeaf("datacenterName", field("datacenterName")),
    optLeaf("tenantId", field("tenant")),
    leaf("apiVersion", "4.0"),
    leaf("edgeStatus", "GREEN"),
    leaf(
      "numberOfConnectedVnics",
      String(vnics.filter((v) => childText(v, "isConnected") === "true").length),
    ),
    node("appliancesSummary", [
      deployed > 0 ? leaf("vmVersion", releaseText(manager.release)) : undefined,
      optLeaf("applianceSize", size),
      optLeaf("fqdn", fqdn),
      leaf("numberOfDeployedVms", String(deployed)),
      deployed > 0 ? leaf("activeVseHaIndex", "0") : undefined,
    ]),
  ]);
}

export function listingOf(config: EdgeModel, summary: EdgeModel): EdgeListing {
  const portgroups = new Set<string>();
  for (const vnic of child(config, "vnics")?.children ?? []) {
    const id = childText(vnic, "portgroupId");
    if (id) portgroups.add(id);
  }
  // a distributed router's interfaces and management interface name their port group so
  for (const routerInterface of [
    ...(child(config, "interfaces")?.children ?? []),
    child(config, "mgmtInterface"),
  ]) {
    const id = routerInterface === undefined ? undefined : childText(routerInterface, "connectedToId");
    if (id) portgroups.add(id);
  }
  return {
    id: childText(config, "id") ?? "",
    summary,
    description: childText(config, "description") ?? "",
    enableFips: childText(config, "enableFips") ?? "",
    portgroups: [...portgroups],
  };
}

function node(name: string, children: readonly (EdgeModel | undefined)[]): EdgeModel {
  return { name, attributes: [], children: children.filter((c) => c !== undefined), text: undefined };
}

function optLeaf(name: string, text: string | undefined): EdgeModel | undefined {
  return text === undefined ? undefined : leaf(name, text);
}
