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

/** A top-level leaf's text as childText reads it: the first child of that name, undefined when absent or not a leaf. */
export type LeafText = (name: string) => string | undefined;

/**
 * What the summary and the list take from an edge's sections (vnics, appliances, a router's
 * interfaces) rather than from its top-level leaves: a write that changes only leaves' texts
 * leaves it as it was, so the store keeps it instead of reading the sections again.
 */
export interface SectionFacts {
  readonly connectedVnics: number;
  /** undefined when the edge has no `<appliances>` */
  readonly appliances:
    | {
        readonly size: string | undefined;
        readonly deployAppliances: string | undefined;
        /** appliances with a VM (not `deployed` false) */
        readonly deployed: number;
        /** the active one's highAvailabilityIndex and ACTIVE_VSE_FIELDS' appliance fields; undefined when none is deployed */
        readonly active:
          | { readonly haIndex: string | undefined; readonly fields: readonly (string | undefined)[] }
          | undefined;
      }
    | undefined;
  /** port groups its interfaces are on (vnics' portgroupId, a router's connectedToId), for `pg` */
  readonly portgroups: readonly string[];
}

export function sectionFacts(config: EdgeModel): SectionFacts {
  const vnics = child(config, "vnics")?.children ?? [];
  return {
    connectedVnics: vnics.filter((v) => childText(v, "isConnected") === "true").length,
    appliances: appliancesFacts(child(config, "appliances")),
    portgroups: portgroupsOf(config),
  };
}

/** the active appliance is the first deployed one with HA index 0, else the first deployed */
function appliancesFacts(appliances: EdgeModel | undefined): SectionFacts["appliances"] {
  if (appliances === undefined) return undefined;
  // an appliance configured with deployAppliances false has no VM: it is not counted, nor active
  const list = appliances.children.filter(
    (c) => c.name === "appliance" && childText(c, "deployed") !== "false",
  );
  const active = list.find((a) => childText(a, "highAvailabilityIndex") === "0") ?? list[0];
  return {
    size: childText(appliances, "applianceSize"),
    deployAppliances: childText(appliances, "deployAppliances"),
    deployed: list.length,
    active:
      active === undefined
        ? undefined
        : {
            haIndex: childText(active, "highAvailabilityIndex"),
            fields: ACTIVE_VSE_FIELDS.map(([, from]) => childText(active, from)),
          },
  };
}

/** The summary of a configuration with these leaves and sections; `previous` supplies the manager-owned fields it had. */
export function summaryOf(
  field: LeafText,
  facts: SectionFacts,
  { manager, previous }: { manager: ManagerIdentity; previous: EdgeModel | undefined },
): EdgeModel {
  const computed = computedSummary(field, facts, manager);
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

function computedSummary(field: LeafText, facts: SectionFacts, manager: ManagerIdentity): EdgeModel {
  const id = field("id") ?? "";
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
    leaf("numberOfConnectedVnics", String(facts.connectedVnics)),
    appliancesSummary(field, facts, manager),
    leaf("hypervisorAssist", field("hypervisorAssist") ?? "false"),
    node(
      "allowedActions",
      ALLOWED_ACTIONS.map((action) => leaf("string", action)),
    ),
    leaf("localEgressEnabled", field("localEgressEnabled") ?? "false"),
  ]);
}

/** the appliances as the summary shows them */
function appliancesSummary(field: LeafText, facts: SectionFacts, manager: ManagerIdentity): EdgeModel {
  const appliances = facts.appliances;
  const active = appliances?.active;
  return node("appliancesSummary", [
    active !== undefined ? leaf("vmVersion", releaseText(manager.release)) : undefined,
    active !== undefined
      ? leaf("vmBuildInfo", `${releaseText(manager.release)}-${manager.release.build}`)
      : undefined,
    optLeaf("applianceSize", appliances?.size),
    optLeaf("fqdn", field("fqdn")),
    leaf("numberOfDeployedVms", String(appliances?.deployed ?? 0)),
    active !== undefined ? leaf("activeVseHaIndex", active.haIndex ?? "0") : undefined,
    ...ACTIVE_VSE_FIELDS.map(([name], i) => optLeaf(name, active?.fields[i])),
    active !== undefined ? leaf("communicationChannel", "msgbus") : undefined,
    optLeaf("deployAppliances", appliances?.deployAppliances),
    leaf("enableFips", field("enableFips") ?? "false"),
  ]);
}

/** What the list shows of a configuration with these leaves and port groups. */
export function listingFrom(field: LeafText, portgroups: readonly string[], summary: EdgeModel): EdgeListing {
  return {
    id: field("id") ?? "",
    summary,
    description: field("description") ?? "",
    enableFips: field("enableFips") ?? "",
    portgroups,
  };
}

function portgroupsOf(config: EdgeModel): string[] {
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
  return [...portgroups];
}

function node(name: string, children: readonly (EdgeModel | undefined)[]): EdgeModel {
  return { name, attributes: [], children: children.filter((c) => c !== undefined), text: undefined };
}

function optLeaf(name: string, text: string | undefined): EdgeModel | undefined {
  return text === undefined ? undefined : leaf(name, text);
}
