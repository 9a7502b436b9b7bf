/**
 * `POST /api/4.0/edges` as a manager takes it: the sent `<edge>` (PowerNSX's New-NsxEdge, govnsx's
 * Edge.Post, the RAML's example) checked as the RAML's parameter table says, then completed into
 * the edge a GET shows: the id the manager assigns, version 1, status deployed, the datacenter,
 * the defaults of the table (name and fqdn `NSX-<edgeId>`, tenant `default`, applianceSize
 * compact, ...), ten vnics on a services gateway (the sent ones by index, the others unconnected
 * as `vnic<i>`), each appliance deployed (a VM, a host, ...), the CLI password dropped, and the
 * feature sections a new edge has (firewall with its internal rule, routing, high availability,
 * syslog, NAT, DHCP), the sent ones merged over them.
 */
import { NsxResponseError } from "../nsx/errors.ts";
import { parseXmlDocument } from "../nsx/xml.ts";
import { assignRuleIds, fillSettingDefaults, normalizeVnicBooleans, SETTING_DEFAULTS } from "./edge-fill.ts";
import { EdgeModelError, child, childText, leaf, modelOfElement, type EdgeModel } from "./edge-model.ts";
import { withoutCliPassword } from "./edge-put.ts";
import { ERROR_CODES, type ErrorCode } from "./error-codes.ts";

export const EDGE_TYPES = ["gatewayServices", "distributedRouter"] as const;
/** RAML: applianceSize, default compact */
export const APPLIANCE_SIZES = ["compact", "large", "quadlarge", "xlarge"] as const;
/** RAML: a services gateway has vnics 0 to 9 */
export const ESG_VNICS = 10;
/** RAML: at most two appliances (an HA pair) */
const MAX_APPLIANCES = 2;

/** Where a new edge goes when the document names no datacenter (what the simulator knows of vCenter). */
export interface Placement {
  datacenterMoid: string;
  datacenterName: string;
}

/** where an edge goes when nothing tells: the datacenter of the RAML's examples */
const FALLBACK_PLACEMENT: Placement = { datacenterMoid: "datacenter-2", datacenterName: "Datacenter" };

/** what placementOf needs of an edge the manager holds */
export interface Neighbour {
  readonly datacenterMoid: string | undefined;
  readonly datacenterName: string | undefined;
  /** the edge's stored text */
  readonly text: string;
}

/**
 * The datacenter a new edge lands in, as a manager finds it in vCenter, here among the edges it
 * holds: the one the document names by id (its name from an edge there) or by name (govnsx sends
 * `datacenterName`), else that of an edge whose appliance is in the same resource pool (PowerNSX
 * sends no datacenter), else the first edge's.
 */
export function placementOf(sent: EdgeModel, edges: readonly Neighbour[]): Placement {
  const moid = childText(sent, "datacenterMoid")?.trim();
  if (moid) {
    const there = edges.find((e) => e.datacenterMoid === moid);
    return { datacenterMoid: moid, datacenterName: there?.datacenterName ?? moid };
  }
  const neighbour = neighbourOf(sent, edges);
  if (neighbour?.datacenterMoid === undefined) return FALLBACK_PLACEMENT;
  return {
    datacenterMoid: neighbour.datacenterMoid,
    datacenterName: neighbour.datacenterName ?? neighbour.datacenterMoid,
  };
}

function neighbourOf(sent: EdgeModel, edges: readonly Neighbour[]): Neighbour | undefined {
  const name = childText(sent, "datacenterName")?.trim();
  const byName = name ? edges.find((e) => e.datacenterName === name) : undefined;
  if (byName !== undefined) return byName;
  const appliances = child(sent, "appliances");
  const appliance = appliances === undefined ? undefined : child(appliances, "appliance");
  const pool = appliance === undefined ? undefined : childText(appliance, "resourcePoolId")?.trim();
  const tag = `<resourcePoolId>${pool}</resourcePoolId>`;
  return (pool ? edges.find((e) => e.text.includes(tag)) : undefined) ?? edges[0];
}

export type ReadCreateResult =
  { ok: true; sent: EdgeModel } | { ok: false; code: ErrorCode; message: string };

/** Reads and checks a create body; the error says which element is wrong. */
export function readEdgeToCreate(text: string): ReadCreateResult {
  let model: EdgeModel;
  try {
    model = modelOfElement(parseXmlDocument(text, "edge document").root);
  } catch (error) {
    if (error instanceof NsxResponseError || error instanceof EdgeModelError) return invalid(error.message);
    throw error;
  }
  if (model.name !== "edge")
    return invalid(`edge document: root element is <${model.name}>, expected <edge>`);
  const problem = createProblem(model);
  return problem === undefined ? { ok: true, sent: model } : invalid(problem);
}

function invalid(message: string): ReadCreateResult {
  return { ok: false, code: ERROR_CODES.invalidEdgeDocument, message };
}

/** what the RAML's parameter table requires of a new edge, or undefined when it is met */
function createProblem(model: EdgeModel): string | undefined {
  const type = childText(model, "type")?.trim() ?? "gatewayServices";
  if (!(EDGE_TYPES as readonly string[]).includes(type))
    return `<type> must be one of ${EDGE_TYPES.join(", ")}, not ${type}`;
  return (
    applianceProblem(child(model, "appliances")) ??
    (type === "gatewayServices" ? vnicProblem(model) : undefined)
  );
}

function applianceProblem(appliances: EdgeModel | undefined): string | undefined {
  const size = appliances === undefined ? undefined : childText(appliances, "applianceSize")?.trim();
  if (size !== undefined && !(APPLIANCE_SIZES as readonly string[]).includes(size))
    return `<appliances><applianceSize> must be one of ${APPLIANCE_SIZES.join(", ")}, not ${size}`;
  const list = appliances?.children.filter((c) => c.name === "appliance") ?? [];
  if (list.length > MAX_APPLIANCES)
    return `at most ${MAX_APPLIANCES} <appliance> elements, not ${list.length}`;
  for (const [i, appliance] of list.entries()) {
    for (const required of ["resourcePoolId", "datastoreId"]) {
      if ((childText(appliance, required)?.trim() ?? "") === "")
        return `<appliance> ${i + 1} needs a <${required}>`;
    }
  }
  return undefined;
}

function vnicProblem(model: EdgeModel): string | undefined {
  const seen = new Set<number>();
  for (const vnic of child(model, "vnics")?.children.filter((c) => c.name === "vnic") ?? []) {
    const text = childText(vnic, "index")?.trim() ?? "";
    const index = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!(index >= 0 && index < ESG_VNICS))
      return `<vnic><index> must be 0 to ${ESG_VNICS - 1}, not ${JSON.stringify(text)}`;
    if (seen.has(index)) return `<vnic><index> ${index} appears twice`;
    seen.add(index);
  }
  return undefined;
}

/** The edge a manager stores for a checked create body, with the id it assigned. */
export function newEdgeConfig(sent: EdgeModel, id: string, placement: Placement): EdgeModel {
  const type = childText(sent, "type")?.trim() ?? "gatewayServices";
  const name = childText(sent, "name") ?? `NSX-${id}`;
  const text = (field: string, fallback: string) => leaf(field, childText(sent, field) ?? fallback);
  const given = (field: string) => child(sent, field);
  const settings = { ...sent, children: [...sent.children] };
  fillSettingDefaults(settings);
  const children: (EdgeModel | undefined)[] = [
    leaf("id", id),
    leaf("version", "1"),
    leaf("status", "deployed"),
    leaf("datacenterMoid", placement.datacenterMoid),
    leaf("datacenterName", placement.datacenterName),
    text("tenant", "default"),
    leaf("name", name),
    text("fqdn", `NSX-${id}`),
    ...SETTING_DEFAULTS.map(([name]) => child(settings, name)),
    type === "gatewayServices" ? vnics(given("vnics")) : undefined,
    appliances(given("appliances"), { id, name }),
    cliSettings(given("cliSettings")),
    features(given("features")),
    given("autoConfiguration") ??
      node("autoConfiguration", [leaf("enabled", "true"), leaf("rulePriority", "high")]),
    leaf("type", type),
    leaf("isUniversal", "false"),
    leaf("hypervisorAssist", "false"),
    given("description"),
    ...sent.children.filter((c) => !HANDLED.has(c.name)),
    given("queryDaemon") ?? node("queryDaemon", [leaf("enabled", "false"), leaf("port", "5666")]),
  ];
  const config = node("edge", children);
  if (type === "distributedRouter")
    for (const field of ["mgmtInterface", "interfaces"]) moveToEnd(config, sent, field);
  assignRuleIds(config, undefined);
  normalizeVnicBooleans(config);
  return config;
}

/** top-level elements newEdgeConfig places itself; any other sent element is kept as sent */
const HANDLED: ReadonlySet<string> = new Set([
  "id",
  "version",
  "status",
  "datacenterMoid",
  "datacenterName",
  "tenant",
  "name",
  "fqdn",
  ...SETTING_DEFAULTS.map(([name]) => name),
  "vnics",
  "appliances",
  "cliSettings",
  "features",
  "autoConfiguration",
  "type",
  "isUniversal",
  "hypervisorAssist",
  "description",
  "queryDaemon",
  "edgeSummary",
  "mgmtInterface",
  "interfaces",
]);

function moveToEnd(config: EdgeModel, sent: EdgeModel, name: string): void {
  const element = child(sent, name);
  if (element !== undefined) config.children.push(element);
}

/** ten vnics: the sent one of each index, else an unconnected one as a manager lists it */
function vnics(sent: EdgeModel | undefined): EdgeModel {
  const byIndex = new Map(
    (sent?.children ?? [])
      .filter((c) => c.name === "vnic")
      .map((v) => [Number(childText(v, "index")), v] as const),
  );
  return node(
    "vnics",
    Array.from({ length: ESG_VNICS }, (_, index) => byIndex.get(index) ?? unconnectedVnic(index)),
  );
}

function unconnectedVnic(index: number): EdgeModel {
  return node("vnic", [
    leaf("label", `vNic_${index}`),
    leaf("name", `vnic${index}`),
    node("addressGroups", []),
    leaf("mtu", "1500"),
    leaf("type", "internal"),
    leaf("isConnected", "false"),
    leaf("index", String(index)),
    leaf("enableProxyArp", "false"),
    leaf("enableSendRedirects", "true"),
  ]);
}

/**
 * the sent appliances, each deployed (a VM the manager created for it, named `<name>-<haIndex>`),
 * unless the document says `<deployAppliances>false</deployAppliances>`: then configured only
 */
function appliances(sent: EdgeModel | undefined, edge: { id: string; name: string }): EdgeModel {
  const n = Number(edge.id.slice("edge-".length));
  const given = sent?.children ?? [];
  const size = (sent === undefined ? undefined : childText(sent, "applianceSize")) ?? "compact";
  const deploy = (sent === undefined ? undefined : childText(sent, "deployAppliances")?.trim()) !== "false";
  const deployed = given
    .filter((c) => c.name === "appliance")
    .map((appliance, haIndex) =>
      node("appliance", [
        leaf("highAvailabilityIndex", String(haIndex)),
        ...appliance.children.filter((c) => !DEPLOYMENT_FIELDS.has(c.name)),
        deploy ? leaf("vmId", `vm-${9000 + n * 2 + haIndex}`) : undefined,
        deploy ? leaf("vmName", `${edge.name}-${haIndex}`) : undefined,
        leaf("deployed", String(deploy)),
        leaf("edgeId", edge.id),
      ]),
    );
  const rest = given.filter((c) => !["applianceSize", "appliance", "deployAppliances"].includes(c.name));
  return node("appliances", [
    leaf("applianceSize", size),
    ...deployed,
    ...rest,
    leaf("deployAppliances", String(deploy)),
  ]);
}

/** what the manager sets when it deploys an appliance, whatever the document said */
const DEPLOYMENT_FIELDS: ReadonlySet<string> = new Set([
  "highAvailabilityIndex",
  "vmId",
  "vmName",
  "deployed",
  "edgeId",
]);

/** the sent CLI settings without the password (a GET never shows it); admin and no SSH by default */
function cliSettings(sent: EdgeModel | undefined): EdgeModel {
  const cli = node("cliSettings", [...(sent?.children ?? [])]);
  withoutCliPassword(node("edge", [cli]));
  if (child(cli, "userName") === undefined) cli.children.unshift(leaf("userName", "admin"));
  if (child(cli, "remoteAccess") === undefined) cli.children.unshift(leaf("remoteAccess", "false"));
  return cli;
}

/** the sections a new edge has, each replaced by the sent one of that name; other sent sections after them */
function features(sent: EdgeModel | undefined): EdgeModel {
  const given = sent?.children ?? [];
  const sections = defaultFeatures();
  const defaults = sections.map((d) =>
    mergeSection(
      d,
      given.find((c) => c.name === d.name),
    ),
  );
  const names = new Set(sections.map((d) => d.name));
  return node("features", [...defaults, ...given.filter((c) => !names.has(c.name))]);
}

/**
 * a sent section over its default: the sent children, then the default's children the sent one
 * lacks; sent firewall rules come after the firewall's internal rule, which the manager makes
 */
function mergeSection(fallback: EdgeModel, sent: EdgeModel | undefined): EdgeModel {
  if (sent === undefined) return fallback;
  const missing = fallback.children.filter((d) => child(sent, d.name) === undefined);
  const internal = child(fallback, "firewallRules");
  const rules = child(sent, "firewallRules");
  if (internal !== undefined && rules !== undefined)
    rules.children = [...internal.children, ...rules.children];
  return {
    ...sent,
    children: [
      ...missing.filter((m) => m.name === "version"),
      ...sent.children,
      ...missing.filter((m) => m.name !== "version"),
    ],
  };
}

/** the feature sections of a new edge, built anew for each (rules are numbered in place) */
function defaultFeatures(): EdgeModel[] {
  return [
    node("firewall", [
      leaf("version", "1"),
      leaf("enabled", "true"),
      node("defaultPolicy", [leaf("action", "deny"), leaf("loggingEnabled", "false")]),
      node("firewallRules", [
        node("firewallRule", [
          leaf("id", "131073"),
          leaf("ruleTag", "131073"),
          leaf("name", "firewall"),
          leaf("ruleType", "internal_high"),
          leaf("enabled", "true"),
          leaf("loggingEnabled", "false"),
          leaf("description", "firewall"),
          leaf("action", "accept"),
          node("source", [leaf("exclude", "false"), leaf("vnicGroupId", "vse")]),
        ]),
      ]),
    ]),
    node("routing", [leaf("version", "1"), leaf("enabled", "false")]),
    node("highAvailability", [leaf("version", "1"), leaf("enabled", "false"), leaf("declareDeadTime", "15")]),
    node("syslog", [leaf("version", "1"), leaf("enabled", "false"), leaf("protocol", "udp")]),
    node("ipsec", [leaf("version", "1"), leaf("enabled", "false"), node("sites", [])]),
    node("nat", [leaf("version", "1"), leaf("enabled", "true"), node("natRules", [])]),
    node("dhcp", [leaf("version", "1"), leaf("enabled", "false")]),
  ];
}

function node(name: string, children: readonly (EdgeModel | undefined)[]): EdgeModel {
  return { name, attributes: [], children: children.filter((c) => c !== undefined), text: undefined };
}
