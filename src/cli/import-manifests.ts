/**
 * What `import` writes, decided from what it read (pure): an NSXManager, an EdgeTenant per edge
 * that carries its current tenant, an IPPoolAllocations per pool whose `allowed` is exactly its
 * current allocations. A `plan` over the result against the same manager has nothing to change.
 */
import { Document, isScalar, isSeq } from "yaml";
import { AddressSet } from "../api/address-set.ts";
import { normalizeManagerUrl } from "../api/manager-url.ts";
import {
  API_VERSION,
  SECRET_BINDING_ANNOTATION,
  SPEC_DEFAULTS,
  type Kind,
  type ManagementPolicy,
} from "../api/types.ts";
import type { Allocation, EdgeSummary, IpPool } from "../nsx/types.ts";
import { normalizeIp, tryParseIp } from "../util/ip.ts";

export const EDGE_ID_LABEL = "nsxv.io/edge-id";
export const EDGE_NAME_ANNOTATION = "nsxv.io/edge-name";
export const POOL_NAME_ANNOTATION = "nsxv.io/pool-name";
/** as the CRDs bound them (crds/): what does not fit cannot be declared, so it is skipped and said */
const TENANT_MAX_LENGTH = 256;
const ALLOWED_MAX_ITEMS = 5000;
/** a Kubernetes object name that is also a DNS label, so it fits every tool */
const NAME_MAX_LENGTH = 63;
/** notes written per `allowed` entry; the rest are counted */
const NOTES_PER_ENTRY = 10;

export interface ImportedEdge {
  summary: EdgeSummary;
  /** the edge document's `<tenant>`; undefined when it has none */
  tenant: string | undefined;
}

export interface ImportedPool {
  pool: IpPool;
  allocations: Allocation[];
}

export interface ImportManifestOptions {
  managerName: string;
  namespace: string;
  url: string;
  scope: string;
  managementPolicy: ManagementPolicy;
}

export interface ImportedObject {
  kind: Kind;
  name: string;
  /** one YAML document, comments included */
  text: string;
}

export interface ImportManifests {
  objects: ImportedObject[];
  /** one line per edge or pool that could not be declared, and why */
  skipped: string[];
}

export function importManifests(
  edges: readonly ImportedEdge[],
  pools: readonly ImportedPool[],
  o: ImportManifestOptions,
): ImportManifests {
  const skipped: string[] = [];
  const objects: ImportedObject[] = [managerObject(o)];
  const edgeNames = new Set<string>();
  for (const edge of edges) {
    const problem = tenantProblem(edge.tenant);
    if (problem !== undefined) {
      skipped.push(`edge ${edge.summary.id} (${JSON.stringify(edge.summary.name ?? "")}): ${problem}`);
      continue;
    }
    const name = uniqueName(edge.summary.name ?? "", edge.summary.id, edgeNames);
    objects.push(edgeObject(edge, edge.tenant as string, name, o));
  }
  const poolNames = new Set<string>();
  for (const pool of pools) {
    const addresses = pool.allocations.map((a) => canonical(a.ipAddress));
    const allowed = AddressSet.parse(addresses).entries();
    if (allowed.length > ALLOWED_MAX_ITEMS) {
      skipped.push(
        `pool ${pool.pool.objectId} (${JSON.stringify(pool.pool.name)}): its allocations need ${allowed.length} allowed entries, more than the ${ALLOWED_MAX_ITEMS} an IPPoolAllocations takes`,
      );
      continue;
    }
    const name = uniqueName(pool.pool.name, pool.pool.objectId, poolNames);
    objects.push(poolObject(pool, allowed, name, o));
  }
  return { objects, skipped };
}

function tenantProblem(tenant: string | undefined): string | undefined {
  if (tenant === undefined || tenant === "") return "it has no tenant (an EdgeTenant needs one)";
  if (tenant.length > TENANT_MAX_LENGTH) return `its tenant is longer than ${TENANT_MAX_LENGTH} characters`;
  if ([...tenant].some((c) => c < " " || c === "\x7F")) {
    return "its tenant holds control characters, which spec.tenant refuses";
  }
  return undefined;
}

/** an IPv4-mapped address is its IPv4 address, as the operator reads it */
function canonical(ip: string): string {
  const parsed = tryParseIp(ip);
  if (parsed !== undefined && parsed.family === 6 && parsed.value >> 32n === 0xffffn) {
    return normalizeIp(ip.slice(ip.lastIndexOf(":") + 1));
  }
  return normalizeIp(ip);
}

/**
 * A DNS label from a manager's free-text name (`Web Edge #1` → `web-edge-1`); the id when nothing
 * is left; the id appended when another object already has the name.
 */
export function uniqueName(text: string, id: string, used: Set<string>): string {
  const base = text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, NAME_MAX_LENGTH)
    .replace(/-+$/, "");
  let name = base === "" ? id : base;
  if (used.has(name)) name = `${base.slice(0, NAME_MAX_LENGTH - id.length - 1).replace(/-+$/, "")}-${id}`;
  for (let n = 2; used.has(name); n++) name = `${id}-${n}`;
  used.add(name);
  return name;
}

/** The commands that create the imported manager's Secret and bind it to the manager's URL. */
export function secretCommands(
  o: Pick<ImportManifestOptions, "managerName" | "namespace" | "url">,
): string[] {
  const secret = `${o.managerName}-credentials`;
  return [
    `kubectl -n ${o.namespace} create secret generic ${secret} --from-literal=username=USER --from-literal=password=PASSWORD`,
    `kubectl -n ${o.namespace} annotate secret ${secret} ${SECRET_BINDING_ANNOTATION}=${normalizeManagerUrl(o.url) ?? o.url}`,
  ];
}

function managerObject(o: ImportManifestOptions): ImportedObject {
  const secret = `${o.managerName}-credentials`;
  const doc = new Document({
    apiVersion: API_VERSION,
    kind: "NSXManager",
    metadata: { name: o.managerName, namespace: o.namespace },
    spec: { url: o.url, credentialsSecretRef: { name: secret } },
  });
  doc.commentBefore = [
    ` Imported by nsxv-operator import. The Secret holds no password here; create it with`,
    ...secretCommands(o).map((line) => `   ${line}`),
    ` (in a cluster the operator sends the credentials only to the URLs the Secret's annotation`,
    ` names), or set NSX_USERNAME and NSX_PASSWORD for plan and apply.`,
  ].join("\n");
  return { kind: "NSXManager", name: o.managerName, text: doc.toString({ lineWidth: 0 }) };
}

function edgeObject(
  edge: ImportedEdge,
  tenant: string,
  name: string,
  o: ImportManifestOptions,
): ImportedObject {
  const annotations = edge.summary.name !== undefined ? { [EDGE_NAME_ANNOTATION]: edge.summary.name } : {};
  const doc = new Document({
    apiVersion: API_VERSION,
    kind: "EdgeTenant",
    metadata: {
      name,
      namespace: o.namespace,
      labels: { [EDGE_ID_LABEL]: edge.summary.id },
      ...(edge.summary.name !== undefined ? { annotations } : {}),
    },
    spec: {
      managerRef: { name: o.managerName },
      edgeId: edge.summary.id,
      tenant,
      managementPolicy: o.managementPolicy,
    },
  });
  return { kind: "EdgeTenant", name, text: doc.toString({ lineWidth: 0 }) };
}

function poolObject(
  pool: ImportedPool,
  allowed: string[],
  name: string,
  o: ImportManifestOptions,
): ImportedObject {
  const { objectId, name: poolName } = pool.pool;
  const doc = new Document({
    apiVersion: API_VERSION,
    kind: "IPPoolAllocations",
    metadata: { name, namespace: o.namespace, annotations: { [POOL_NAME_ANNOTATION]: poolName } },
    spec: {
      managerRef: { name: o.managerName },
      pool: { id: objectId, ...(o.scope !== SPEC_DEFAULTS.poolScope ? { scope: o.scope } : {}) },
      allowed,
      managementPolicy: o.managementPolicy,
    },
  });
  const list = doc.getIn(["spec", "allowed"], true);
  if (isSeq(list)) {
    const sets = allowed.map((entry) => AddressSet.parse([entry]));
    list.items.forEach((item, i) => {
      const notes = pool.allocations.filter(
        (a) => a.allocationNote !== undefined && a.allocationNote !== "" && sets[i]?.has(a.ipAddress),
      );
      if (isScalar(item) && notes.length > 0) item.commentBefore = notesComment(notes);
    });
  }
  return { kind: "IPPoolAllocations", name, text: doc.toString({ lineWidth: 0 }) };
}

/** the allocation notes an entry covers, quoted so that no note can end the comment or forge YAML */
function notesComment(notes: readonly Allocation[]): string {
  const lines = notes
    .slice(0, NOTES_PER_ENTRY)
    .map((a) => ` ${canonical(a.ipAddress)} ${quoted(a.allocationNote ?? "")}`);
  if (notes.length > NOTES_PER_ENTRY) lines.push(` ... and ${notes.length - NOTES_PER_ENTRY} more notes`);
  return lines.join("\n");
}

/** JSON quoting, and the line breaks YAML 1.1 readers also know (NEL, LS, PS) escaped too */
function quoted(text: string): string {
  return JSON.stringify(text).replace(
    /[\u0085\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
