/**
 * Realistic edge documents for the simulator: every element of spec 2.1 in order, 10 vnics,
 * appliances, cliSettings without a password, features (firewall, routing with static routes,
 * OSPF and BGP, high availability, syslog, IPsec and DHCP switched off, NAT, stray empty
 * `featureConfig`s: what every ESG carries, nsx/edge-shape.ts), the elements real
 * managers add beyond the spec (`edgeAssistId`, `queryDaemon`) and, unless asked not to, an
 * edgeSummary as a manager computes it (edge-summary.ts). With `targetBytes` the firewall rule set
 * grows until the document has about that size. The same options and seed always give the same
 * text. The simulator generates in its own format (settings prettyXml and edgeSummaryInEdge), so
 * a generated edge is served as generated.
 */
import { ALLOWED_ACTIONS } from "./edge-summary.ts";
import { DEFAULT_RELEASE, DEFAULT_VSM_UUID, managerIdentity, releaseText } from "./manager.ts";
import { createRandom, type Random } from "./random.ts";
import { el, renderDocument, renderElement, type XmlNode } from "./xml.ts";
import { withDefaults } from "../util/options.ts";

export interface GenerateEdgeOptions {
  /** n of `edge-<n>` */
  edgeNumber: number;
  /** default "default", as a freshly deployed edge has */
  tenant?: string;
  /** user firewall rules (default 20); with targetBytes, the minimum */
  firewallRules?: number;
  /** grow the firewall rules until the document has at least this many bytes (within one rule) */
  targetBytes?: number;
  /** default: the edge number */
  seed?: number;
  /** default 1 */
  version?: number;
  /** default true: two-space indentation; false gives one line, as managers usually send */
  pretty?: boolean;
  /** default true: an `<edgeSummary>` inside `<edge>`, as the API guide's example shows */
  edgeSummary?: boolean;
}

const GENERATE_DEFAULTS = {
  tenant: "default",
  firewallRules: 20,
  version: 1,
  pretty: true,
  edgeSummary: true,
} as const;
/** the summary's manager: the simulator's default one */
const MANAGER = managerIdentity(DEFAULT_VSM_UUID, DEFAULT_RELEASE);
/** edge > features > firewall > firewallRules > firewallRule */
const RULE_DEPTH = 4;
const RULES_PLACEHOLDER = "\u0000rules\u0000";

const TIERS = ["web", "app", "db", "mgmt", "backup", "dns", "ntp", "ldap", "mail", "proxy", "monitoring"];
const SERVICES: readonly [protocol: string, port: string][] = [
  ["tcp", "443"],
  ["tcp", "80"],
  ["tcp", "22"],
  ["tcp", "3306"],
  ["tcp", "5432"],
  ["udp", "53"],
  ["udp", "123"],
  ["tcp", "389"],
  ["tcp", "636"],
  ["tcp", "8443"],
  ["icmp", "any"],
];
const ACTIONS = ["accept", "accept", "accept", "deny", "reject"];

export function generateEdgeXml(options: GenerateEdgeOptions): string {
  const o = withDefaults(GENERATE_DEFAULTS, options);
  const random = createRandom(o.seed ?? o.edgeNumber);
  const n = o.edgeNumber;
  const ruleCount = Math.max(0, o.firewallRules);
  const root = edgeElement({ n, tenant: o.tenant, version: o.version, summary: o.edgeSummary }, random);
  const skeleton = renderDocument(root, { pretty: o.pretty });
  const indent = o.pretty ? "\n" + "  ".repeat(RULE_DEPTH) : "";
  const rules: string[] = [renderElement(internalRule(), { pretty: o.pretty, depth: RULE_DEPTH })];
  let size = skeleton.length - RULES_PLACEHOLDER.length + indent.length + rules[0]!.length;
  // bounded: at most ruleCount rules, or as many as the target size needs
  for (let i = 1; i <= ruleCount || (o.targetBytes !== undefined && size < o.targetBytes); i++) {
    const rule = renderElement(userRule(i, random), { pretty: o.pretty, depth: RULE_DEPTH });
    rules.push(rule);
    size += indent.length + rule.length;
  }
  const closing = o.pretty ? "\n" + "  ".repeat(RULE_DEPTH - 1) : "";
  return skeleton.replace(RULES_PLACEHOLDER, indent + rules.join(indent) + closing);
}

interface EdgeIdentity {
  n: number;
  tenant: string;
  version: number;
  summary: boolean;
}

function edgeElement(e: EdgeIdentity, random: Random): XmlNode {
  const dc = 21 + (e.n % 3);
  const name = `esg-${String(e.n).padStart(2, "0")}`;
  return el("edge", [
    el("id", `edge-${e.n}`),
    el("version", e.version),
    el("status", "deployed"),
    el("datacenterMoid", `datacenter-${dc}`),
    el("datacenterName", datacenterName(dc)),
    el("tenant", e.tenant),
    el("name", name),
    el("fqdn", `${name}.net.example.org`),
    el("enableAesni", true),
    el("enableFips", false),
    el("vseLogLevel", "info"),
    el(
      "vnics",
      Array.from({ length: 10 }, (_, i) => vnic(e.n, i)),
    ),
    appliances(e.n, name, random),
    el("cliSettings", [
      el("remoteAccess", false),
      el("userName", "admin"),
      el("sshLoginBannerText", "Authorised access only. Activity may be monitored."),
      el("passwordExpiry", 99999),
    ]),
    el("features", [
      el("firewall", [
        el("version", e.version),
        el("enabled", true),
        firewallGlobalConfig(),
        el("defaultPolicy", [el("action", "deny"), el("loggingEnabled", false)]),
        el("firewallRules", RULES_PLACEHOLDER),
      ]),
      routing(e.n, e.version, random),
      el("highAvailability", [
        el("version", e.version),
        el("enabled", false),
        el("declareDeadTime", 15),
        el("logging", [el("enable", false), el("logLevel", "info")]),
        el("security", [el("enabled", false)]),
      ]),
      el("syslog", [el("version", e.version), el("enabled", false), el("protocol", "udp")]),
      el("ipsec", [
        el("version", e.version),
        el("enabled", false),
        el("logging", [el("enable", false), el("logLevel", "info")]),
        el("sites"),
        el("global", [el("caCertificates"), el("crlCertificates")]),
      ]),
      el("dhcp", [
        el("version", e.version),
        el("enabled", false),
        el("staticBindings"),
        el("ipPools"),
        el("logging", [el("enable", false), el("logLevel", "info")]),
      ]),
      el("featureConfig"),
      nat(e.n, e.version, random),
      el("featureConfig"),
    ]),
    el("autoConfiguration", [el("enabled", true), el("rulePriority", "high")]),
    el("type", "gatewayServices"),
    el("isUniversal", false),
    el("hypervisorAssist", false),
    el("tunnels"),
    e.summary ? edgeSummary(e, name, dc) : undefined,
    el("edgeAssistId", 5000 + e.n),
    el("queryDaemon", [el("enabled", false), el("port", 5666)]),
  ]);
}

function vnic(n: number, index: number): XmlNode {
  const connected = index < 3;
  const third = (n % 200) + index * 10;
  const addressGroups = connected
    ? [
        el("addressGroup", [
          el("primaryAddress", index === 0 ? `192.168.${n % 250}.1` : `10.${index}.${third}.1`),
          index === 0 ? el("secondaryAddresses", [el("ipAddress", `192.168.${n % 250}.2`)]) : undefined,
          el("subnetMask", "255.255.255.0"),
          el("subnetPrefixLength", 24),
        ]),
      ]
    : [];
  return el("vnic", [
    el("label", `vNic_${index}`),
    el("name", connected ? (index === 0 ? "uplink" : `internal-${index}`) : `vnic${index}`),
    el("addressGroups", addressGroups),
    el("mtu", 1500),
    el("type", index === 0 ? "uplink" : "internal"),
    el("isConnected", connected),
    el("index", index),
    connected ? el("portgroupId", `dvportgroup-${40 + index}`) : undefined,
    connected ? el("portgroupName", index === 0 ? "pg-uplink" : `pg-tier-${index}`) : undefined,
    el("enableProxyArp", false),
    el("enableSendRedirects", true),
  ]);
}

function appliances(n: number, name: string, random: Random): XmlNode {
  return el("appliances", [
    el("applianceSize", "large"),
    el("appliance", [
      el("highAvailabilityIndex", 0),
      el("vcUuid", uuid(random)),
      el("vmId", `vm-${1000 + n}`),
      el("resourcePoolId", "domain-c7"),
      el("resourcePoolName", "cluster-edge"),
      el("datastoreId", `datastore-${15 + (n % 4)}`),
      el("datastoreName", datastoreName(n)),
      el("hostId", `host-${19 + (n % 6)}`),
      el("hostName", hostName(n)),
      el("vmFolderId", "group-v3"),
      el("vmFolderName", "vm"),
      el("vmHostname", `${name}-0`),
      el("vmName", `${name}-0`),
      el("deployed", true),
      el("cpuReservation", [el("limit", -1), el("reservation", 1000)]),
      el("memoryReservation", [el("limit", -1), el("reservation", 512)]),
      el("edgeId", `edge-${n}`),
    ]),
    el("deployAppliances", true),
  ]);
}

function firewallGlobalConfig(): XmlNode {
  return el("globalConfig", [
    el("tcpPickOngoingConnections", false),
    el("tcpAllowOutOfWindowPackets", false),
    el("tcpSendResetForClosedVsePorts", true),
    el("dropInvalidTraffic", true),
    el("logInvalidTraffic", false),
    el("tcpTimeoutOpen", 30),
    el("tcpTimeoutEstablished", 21600),
    el("tcpTimeoutClose", 30),
    el("udpTimeout", 60),
    el("icmpTimeout", 10),
    el("icmp6Timeout", 10),
    el("ipGenericTimeout", 120),
    el("enableSynFloodProtection", false),
  ]);
}

function internalRule(): XmlNode {
  return el("firewallRule", [
    el("id", 131073),
    el("ruleTag", 131073),
    el("name", "firewall"),
    el("ruleType", "internal_high"),
    el("enabled", true),
    el("loggingEnabled", false),
    el("description", "firewall"),
    el("action", "accept"),
    el("source", [el("exclude", false), el("vnicGroupId", "vse")]),
  ]);
}

function userRule(i: number, random: Random): XmlNode {
  const from = random.pick(TIERS);
  const to = random.pick(TIERS);
  const [protocol, port] = random.pick(SERVICES);
  const id = 131073 + i;
  return el("firewallRule", [
    el("id", id),
    el("ruleTag", id),
    el("name", `${from}-to-${to}-${i}`),
    el("ruleType", "user"),
    el("enabled", random.next() > 0.1),
    el("loggingEnabled", random.next() > 0.8),
    el("description", `Allow ${from} tier to reach ${to} tier on ${protocol}/${port}`),
    el("matchTranslated", false),
    el("action", random.pick(ACTIONS)),
    el("source", [
      el("exclude", false),
      el("ipAddress", `10.${random.int(0, 255)}.${random.int(0, 255)}.0/24`),
      random.next() > 0.5 ? el("groupingObjectId", `ipset-${random.int(1, 400)}`) : undefined,
      random.next() > 0.7 ? el("vnicGroupId", `vnic-index-${random.int(1, 2)}`) : undefined,
    ]),
    el("destination", [
      el("exclude", false),
      el("ipAddress", `172.${random.int(16, 31)}.${random.int(0, 255)}.${random.int(1, 254)}`),
      random.next() > 0.6 ? el("groupingObjectId", `securitygroup-${random.int(10, 90)}`) : undefined,
    ]),
    el("application", [
      random.next() > 0.5 ? el("applicationId", `application-${random.int(1, 350)}`) : undefined,
      el("service", [el("protocol", protocol), el("port", port), el("sourcePort", "any")]),
    ]),
  ]);
}

function routing(n: number, version: number, random: Random): XmlNode {
  return el("routing", [
    el("version", version),
    el("enabled", true),
    el("routingGlobalConfig", [
      el("routerId", `192.168.${n % 250}.1`),
      el("ecmp", false),
      el("logging", [el("enable", false), el("logLevel", "info")]),
    ]),
    staticRouting(n, random),
    el("ospf", [
      el("enabled", false),
      el("ospfAreas", [
        el("ospfArea", [el("areaId", 0), el("type", "normal"), el("authentication", [el("type", "none")])]),
      ]),
      el("ospfInterfaces"),
      el("redistribution", [el("enabled", false)]),
      el("gracefulRestart", true),
      el("defaultOriginate", false),
    ]),
    bgp(n),
  ]);
}

function staticRouting(n: number, random: Random): XmlNode {
  const routes = Array.from({ length: random.int(3, 8) }, (_, i) =>
    el("route", [
      el("description", `static route ${i + 1}`),
      el("vnic", 1 + (i % 2)),
      el("network", `10.${100 + i}.${n % 250}.0/24`),
      el("nextHop", `10.${1 + (i % 2)}.${(n % 200) + (1 + (i % 2)) * 10}.254`),
      el("mtu", 1500),
      el("adminDistance", 1),
    ]),
  );
  return el("staticRouting", [
    el("defaultRoute", [
      el("vnic", 0),
      el("mtu", 1500),
      el("gatewayAddress", `192.168.${n % 250}.254`),
      el("adminDistance", 1),
    ]),
    el("staticRoutes", routes),
  ]);
}

function bgp(n: number): XmlNode {
  return el("bgp", [
    el("enabled", true),
    el("localAS", 65000 + (n % 500)),
    el("localASNumber", 65000 + (n % 500)),
    el("bgpNeighbours", [
      el("bgpNeighbour", [
        el("ipAddress", `192.168.${n % 250}.254`),
        el("remoteAS", 65500),
        el("remoteASNumber", 65500),
        el("weight", 60),
        el("holdDownTimer", 180),
        el("keepAliveTimer", 60),
        el("bgpFilters"),
      ]),
    ]),
    el("redistribution", [
      el("enabled", true),
      el("rules", [
        el("rule", [
          el("id", 0),
          el("from", [el("connected", true), el("static", true)]),
          el("action", "permit"),
        ]),
      ]),
    ]),
    el("gracefulRestart", true),
    el("defaultOriginate", false),
  ]);
}

function nat(n: number, version: number, random: Random): XmlNode {
  const rules = Array.from({ length: random.int(2, 5) }, (_, i) => {
    const id = 196609 + i;
    const snat = i === 0;
    return el("natRule", [
      el("ruleId", id),
      el("ruleTag", id),
      el("ruleType", "user"),
      el("action", snat ? "snat" : "dnat"),
      el("vnic", 0),
      el("originalAddress", snat ? "10.0.0.0/8" : `192.168.${n % 250}.2`),
      el("translatedAddress", snat ? `192.168.${n % 250}.2` : `10.1.${n % 200}.${10 + i}`),
      el("loggingEnabled", false),
      el("enabled", true),
      el("description", snat ? "outbound" : `publish service ${i}`),
      el("protocol", snat ? "any" : "tcp"),
      el("originalPort", snat ? "any" : String(8000 + i)),
      el("translatedPort", snat ? "any" : "443"),
    ]);
  });
  return el("nat", [el("version", version), el("enabled", true), el("natRules", rules)]);
}

function datacenterName(dc: number): string {
  return `dc-site-${String.fromCharCode(97 + (dc % 26))}`;
}

/** the summary the simulator computes for this edge (edge-summary.ts), field for field */
function edgeSummary(e: EdgeIdentity, name: string, dc: number): XmlNode {
  return el("edgeSummary", [
    el("objectId", `edge-${e.n}`),
    el("objectTypeName", "Edge"),
    el("vsmUuid", MANAGER.vsmUuid),
    el("nodeId", MANAGER.nodeId),
    el("revision", e.version),
    el("type", [el("typeName", "Edge")]),
    el("name", name),
    el("clientHandle"),
    el("extendedAttributes"),
    el("isUniversal", false),
    el("universalRevision", 0),
    el("id", `edge-${e.n}`),
    el("state", "deployed"),
    el("edgeType", "gatewayServices"),
    el("datacenterMoid", `datacenter-${dc}`),
    el("datacenterName", datacenterName(dc)),
    el("tenantId", e.tenant),
    el("apiVersion", "4.0"),
    el("edgeStatus", "GREEN"),
    el("numberOfConnectedVnics", 3),
    el("appliancesSummary", [
      el("vmVersion", releaseText(MANAGER.release)),
      el("vmBuildInfo", `${releaseText(MANAGER.release)}-${MANAGER.release.build}`),
      el("applianceSize", "large"),
      el("fqdn", `${name}.net.example.org`),
      el("numberOfDeployedVms", 1),
      el("activeVseHaIndex", 0),
      el("vmMoidOfActiveVse", `vm-${1000 + e.n}`),
      el("vmNameOfActiveVse", `${name}-0`),
      el("hostMoidOfActiveVse", `host-${19 + (e.n % 6)}`),
      el("hostNameOfActiveVse", hostName(e.n)),
      el("resourcePoolMoidOfActiveVse", "domain-c7"),
      el("resourcePoolNameOfActiveVse", "cluster-edge"),
      el("dataStoreMoidOfActiveVse", `datastore-${15 + (e.n % 4)}`),
      el("dataStoreNameOfActiveVse", datastoreName(e.n)),
      el("communicationChannel", "msgbus"),
      el("deployAppliances", true),
      el("enableFips", false),
    ]),
    el("hypervisorAssist", false),
    el(
      "allowedActions",
      ALLOWED_ACTIONS.map((action) => el("string", action)),
    ),
    el("localEgressEnabled", false),
  ]);
}

function hostName(n: number): string {
  return `esx-0${1 + (n % 6)}.net.example.org`;
}

function datastoreName(n: number): string {
  return `ds-edge-0${1 + (n % 4)}`;
}

function uuid(random: Random): string {
  const hex = (count: number) => Array.from({ length: count }, () => random.int(0, 15).toString(16)).join("");
  return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
}
