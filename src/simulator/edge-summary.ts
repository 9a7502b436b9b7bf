/**
 * An edge's `<edgeSummary>` as a manager computes it (the RAML's 6.4 example, field for field but
 * featureCapabilities, recentJobInfo and statusFromVseUpdatedOn), and what the edge list sorts and
 * filters on. Fields that follow from the edge (id, name, tenantId, revision, datacenter, type,
 * connected vnics, the appliances and the active one's VM, host, resource pool and datastore,
 * hypervisorAssist, localEgressEnabled) are always recomputed from the stored configuration, so a
 * PUT that removes vnics leaves no stale count behind. The manager's own data about the edge
 * (state, edgeStatus, recent jobs, allowed actions, communication channel...) starts with
 * defaults and is taken from a summary the seeded document carried, then kept across PUTs.
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

/** the summary's field and the active appliance's field it shows */
const ACTIVE_VSE_FIELDS: readonly (readonly [summary: string, appliance: string])[] = [
  ["vmMoidOfActiveVse", "vmId"],
  ["vmNameOfActiveVse", "vmName"],
  ["hostMoidOfActiveVse", "hostId"],
  ["hostNameOfActiveVse", "hostName"],
  ["resourcePoolMoidOfActiveVse", "resourcePoolId"],
  ["resourcePoolNameOfActiveVse", "resourcePoolName"],
  ["dataStoreMoidOfActiveVse", "datastoreId"],
  ["dataStoreNameOfActiveVse", "datastoreName"],
];

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
  "hypervisorAssist",
  "localEgressEnabled",
]);
const DERIVED_APPLIANCE_FIELDS: ReadonlySet<string> = new Set([
  "vmVersion",
  "vmBuildInfo",
  "applianceSize",
  "fqdn",
  "numberOfDeployedVms",
  ...ACTIVE_VSE_FIELDS.map(([name]) => name),
  "deployAppliances",
  "enableFips",
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

/**
 * what the Edge module's actions are on a services gateway (the RAML's 6.4 summary example); a
 * manager narrows them by the caller's rights and the edge's state, which the simulator does not
 */
export const ALLOWED_ACTIONS: readonly string[] = [
  "Change Log Level",
  "Add Edge Appliance",
  "Delete Edge Appliance",
  "Edit Edge Appliance",
  "Edit CLI Credentials",
  "Change edge appliance size",
  "Force Sync",
  "Redeploy Edge",
  "Change Edge Appliance Core Dump Configuration",
  "Enable hypervisorAssist",
  "Edit Highavailability",
  "Edit Dns",
  "Edit Syslog",
  "Edit Automatic Rule Generation Settings",
  "Disable SSH",
  "Download Edge TechSupport Logs",
];

function computedSummary(config: EdgeModel, manager: ManagerIdentity): EdgeModel {
  const field = (name: string) => childText(config, name);
  const id = field("id") ?? "";
  const vnics = child(config, "vnics")?.children ?? [];
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
    appliancesSummary(config, manager),
    leaf("hypervisorAssist", field("hypervisorAssist") ?? "false"),
    node(
      "allowedActions",
      ALLOWED_ACTIONS.map((action) => leaf("string", action)),
    ),
    leaf("localEgressEnabled", field("localEgressEnabled") ?? "false"),
  ]);
}

/** the appliances as the summary shows them; the active one is the first deployed (HA index 0) */
function appliancesSummary(config: EdgeModel, manager: ManagerIdentity): EdgeModel {
  const appliances = child(config, "appliances");
  // an appliance configured with deployAppliances false has no VM: it is not counted, nor active
  const list = (appliances?.children ?? []).filter(
    (c) => c.name === "appliance" && childText(c, "deployed") !== "false",
  );
  const active = list.find((a) => childText(a, "highAvailabilityIndex") === "0") ?? list[0];
  const size = appliances === undefined ? undefined : childText(appliances, "applianceSize");
  const deployAppliances = appliances === undefined ? undefined : childText(appliances, "deployAppliances");
  return node("appliancesSummary", [
    active !== undefined ? leaf("vmVersion", releaseText(manager.release)) : undefined,
    active !== undefined
      ? leaf("vmBuildInfo", `${releaseText(manager.release)}-${manager.release.build}`)
      : undefined,
    optLeaf("applianceSize", size),
    optLeaf("fqdn", childText(config, "fqdn")),
    leaf("numberOfDeployedVms", String(list.length)),
    active !== undefined
      ? leaf("activeVseHaIndex", childText(active, "highAvailabilityIndex") ?? "0")
      : undefined,
    ...ACTIVE_VSE_FIELDS.map(([name, from]) =>
      optLeaf(name, active === undefined ? undefined : childText(active, from)),
    ),
    active !== undefined ? leaf("communicationChannel", "msgbus") : undefined,
    optLeaf("deployAppliances", deployAppliances),
    leaf("enableFips", childText(config, "enableFips") ?? "false"),
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
