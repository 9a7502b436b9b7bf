/**
 * The simulator's initial state: its input type (a YAML or JSON file, or an object given in code)
 * and the validation that turns it into pool configurations and edge texts, naming the field of
 * every error (`pools[1].ranges[0].start: not an IP address`).
 */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { IpAddress } from "../util/ip.ts";
import { parseEdgeEntry, type EdgeInput, type ValidatedEdge } from "./edge-input.ts";
import {
  SimulatorInputError,
  asArray,
  asObject,
  fieldPath,
  optEnum,
  optInt,
  optIp,
  optString,
  rejectUnknownKeys,
  reqIp,
  reqString,
  type JsonObject,
} from "./input.ts";
import { DEFAULT_RELEASE, parseRelease, releaseText, type ManagerRelease } from "./manager.ts";
import { GLOBAL_SCOPE, type PoolConfig, type PoolRange, type ScopeInfo } from "./pools.ts";
import { parseSettings, type SimulatorSettings } from "./settings.ts";

export interface CredentialsInput {
  username: string;
  password: string;
}

/** the vCenter the manager is registered with (`GET /api/2.0/services/vcconfig`) */
export interface VcenterInput {
  /** FQDN or address of the vCenter server */
  ipAddress: string;
  userName: string;
  /** colon-delimited hexadecimal */
  certificateThumbprint?: string;
}

export interface ScopeInput {
  id: string;
  name?: string;
  objectTypeName?: string;
}

export interface PoolInput {
  /** `ipaddresspool-<n>` */
  id: string;
  name: string;
  /** a scope id (default `globalroot-0`) or a scope */
  scope?: string | ScopeInput;
  /** default: the family of the first range */
  ipPoolType?: "ipv4" | "ipv6";
  prefixLength?: number;
  gateway?: string;
  dnsSuffix?: string;
  dnsServer1?: string;
  dnsServer2?: string;
  /** default `subnet-<n>` with n from the pool id */
  subnetId?: string;
  /** `prefixed` (default: `allocatedipaddress-<n>`, as real managers write them) or `integer` (as the spec shows) */
  allocationIds?: "integer" | "prefixed";
  /** default 1 */
  revision?: number;
  /** inclusive at both ends */
  ranges: { start: string; end: string }[];
  allocations?: { ip: string; note?: string }[];
}

export interface SimulatorStateInput {
  /** default admin / default */
  credentials?: CredentialsInput;
  /** a second account with NSX's Auditor role: it may read; writes are answered 403 */
  auditor?: CredentialsInput;
  /** the manager's UUID, shown in pool documents */
  vsmUuid?: string;
  /** `major.minor.patch` the manager reports (global/info) and whose calls it offers; default 6.4.6 */
  managerVersion?: string;
  /** its build number; default 15177041 */
  managerBuild?: number;
  /** the registered vCenter; default none (vcconfig answers an empty <vcInfo/>) */
  vcenter?: VcenterInput;
  settings?: Partial<SimulatorSettings>;
  /** scopes known beyond `globalroot-0` and those of the pools (listing them gives an empty list) */
  scopes?: ScopeInput[];
  edges?: EdgeInput[];
  pools?: PoolInput[];
}

/** What the state is built from: every field checked, edge texts not yet parsed. */
export interface ValidatedState {
  credentials?: CredentialsInput;
  auditor?: CredentialsInput;
  vsmUuid?: string;
  release?: ManagerRelease;
  vcenter?: VcenterInput;
  settings: Partial<SimulatorSettings>;
  scopes: ScopeInfo[];
  /** edge texts are produced when the state is built: generating megabytes twice would be waste */
  edges: ValidatedEdge[];
  pools: ValidatedPool[];
}

export interface ValidatedPool {
  path: string;
  config: PoolConfig;
  allocations: { path: string; ip: string; note?: string }[];
}

/** Reads a state file (YAML or JSON, YAML being a superset), inlines its `xmlFile`s, and validates it. */
export async function loadStateFile(path: string): Promise<SimulatorStateInput> {
  let raw: unknown;
  try {
    raw = parseYaml(await readFile(path, "utf8"));
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new SimulatorInputError("", `state file ${path}: ${reason}`, { cause });
  }
  const baseDir = dirname(resolve(path));
  const input = asObject(raw ?? {}, "");
  if (Array.isArray(input.edges)) {
    // inline the files now, so that the result does not depend on the working directory
    input.edges = await Promise.all(
      input.edges.map(async (edge: unknown, i) => {
        const file = (edge as { xmlFile?: unknown } | null)?.xmlFile;
        return typeof file === "string"
          ? { xml: await readEdgeFile(baseDir, file, `edges[${i}].xmlFile`) }
          : edge;
      }),
    );
  }
  validateStateInput(input, { baseDir });
  return input as SimulatorStateInput;
}

async function readEdgeFile(baseDir: string, file: string, where: string): Promise<string> {
  try {
    return await readFile(resolve(baseDir, file), "utf8");
  } catch (cause) {
    throw new SimulatorInputError(where, `cannot read ${file}: ${(cause as Error).message}`, { cause });
  }
}

const TOP_KEYS = [
  "credentials",
  "auditor",
  "vsmUuid",
  "managerVersion",
  "managerBuild",
  "vcenter",
  "settings",
  "scopes",
  "edges",
  "pools",
];

/** Checks every field; `xmlFile`s are read relative to baseDir (default: the working directory). */
export function validateStateInput(value: unknown, options: { baseDir?: string } = {}): ValidatedState {
  const obj = asObject(value ?? {}, "");
  rejectUnknownKeys(obj, TOP_KEYS, "");
  const scopes = asArray(obj.scopes ?? [], "scopes").map((s, i) => parseScope(s, fieldPath("scopes", i)));
  const out: ValidatedState = {
    settings: obj.settings === undefined ? {} : parseSettings(obj.settings, "settings"),
    scopes,
    edges: asArray(obj.edges ?? [], "edges").flatMap((e, i) =>
      parseEdgeEntry(e, fieldPath("edges", i), options.baseDir ?? process.cwd()),
    ),
    pools: [],
  };
  if (obj.credentials !== undefined) out.credentials = parseCredentials(obj.credentials, "credentials");
  if (obj.auditor !== undefined) out.auditor = parseCredentials(obj.auditor, "auditor");
  const vsmUuid = optString(obj, "vsmUuid", "");
  if (vsmUuid !== undefined) out.vsmUuid = vsmUuid;
  const release = parseManagerRelease(obj);
  if (release !== undefined) out.release = release;
  if (obj.vcenter !== undefined) out.vcenter = parseVcenter(obj.vcenter, "vcenter");
  const ids = new Map<string, number>();
  asArray(obj.pools ?? [], "pools").forEach((p, i) => {
    const pool = parsePool(p, fieldPath("pools", i), scopes);
    const previous = ids.get(pool.config.id);
    if (previous !== undefined)
      throw new SimulatorInputError(`${pool.path}.id`, `same id as pools[${previous}]`);
    ids.set(pool.config.id, i);
    out.pools.push(pool);
  });
  return out;
}

function parseManagerRelease(obj: JsonObject): ManagerRelease | undefined {
  const version = optString(obj, "managerVersion", "");
  const build = optInt(obj, "managerBuild", "", { min: 0, max: 999_999_999 });
  if (version === undefined && build === undefined) return undefined;
  const release = parseRelease(version ?? releaseText(DEFAULT_RELEASE), build ?? DEFAULT_RELEASE.build);
  if (release === undefined)
    throw new SimulatorInputError("managerVersion", "must be major.minor.patch, e.g. 6.4.6");
  return release;
}

function parseVcenter(value: unknown, path: string): VcenterInput {
  const obj = asObject(value, path);
  rejectUnknownKeys(obj, ["ipAddress", "userName", "certificateThumbprint"], path);
  const thumbprint = optString(obj, "certificateThumbprint", path);
  if (thumbprint !== undefined && !/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2})+$/.test(thumbprint)) {
    throw new SimulatorInputError(
      `${path}.certificateThumbprint`,
      "must be colon-delimited hexadecimal (AB:CD:...)",
    );
  }
  return {
    ipAddress: reqString(obj, "ipAddress", path),
    userName: reqString(obj, "userName", path),
    ...(thumbprint !== undefined ? { certificateThumbprint: thumbprint } : {}),
  };
}

export function parseCredentials(value: unknown, path: string): CredentialsInput {
  const obj = asObject(value, path);
  rejectUnknownKeys(obj, ["username", "password"], path);
  return { username: reqString(obj, "username", path), password: reqString(obj, "password", path) };
}

function parseScope(value: unknown, path: string): ScopeInfo {
  const obj = asObject(value, path);
  rejectUnknownKeys(obj, ["id", "name", "objectTypeName"], path);
  const id = reqString(obj, "id", path);
  const known = scopeFromId(id);
  return {
    id,
    name: optString(obj, "name", path) ?? known.name,
    objectTypeName: optString(obj, "objectTypeName", path) ?? known.objectTypeName,
  };
}

/** A scope named only by id: its type from the id's form (spec 2.5). */
function scopeFromId(id: string): ScopeInfo {
  if (id === GLOBAL_SCOPE.id) return GLOBAL_SCOPE;
  const objectTypeName = id.startsWith("vdnscope-")
    ? "VdnScope"
    : id.startsWith("datacenter-")
      ? "Datacenter"
      : "Scope";
  return { id, objectTypeName, name: id };
}

const POOL_KEYS = [
  "id",
  "name",
  "scope",
  "ipPoolType",
  "prefixLength",
  "gateway",
  "dnsSuffix",
  "dnsServer1",
  "dnsServer2",
  "subnetId",
  "allocationIds",
  "revision",
  "ranges",
  "allocations",
];

/** The pool's address family, from its first range: its type and addresses must agree. */
function parsePoolFamily(
  obj: JsonObject,
  path: string,
  ranges: ReturnType<typeof parseRanges>,
): { family: 4 | 6; ipPoolType: "ipv4" | "ipv6" } {
  const family = ranges[0]!.start.family;
  const ipPoolType =
    optEnum(obj, "ipPoolType", path, ["ipv4", "ipv6"] as const) ?? (family === 4 ? "ipv4" : "ipv6");
  if ((ipPoolType === "ipv4") !== (family === 4)) {
    throw new SimulatorInputError(`${path}.ipPoolType`, `is ${ipPoolType} but ranges[0] is IPv${family}`);
  }
  const gateway = optIp(obj, "gateway", path);
  if (gateway !== undefined && gateway.family !== family) {
    throw new SimulatorInputError(`${path}.gateway`, `not an IPv${family} address`);
  }
  optIp(obj, "dnsServer1", path);
  optIp(obj, "dnsServer2", path);
  return { family, ipPoolType };
}

export function parsePool(value: unknown, path: string, scopes: readonly ScopeInfo[]): ValidatedPool {
  const obj = asObject(value, path);
  rejectUnknownKeys(obj, POOL_KEYS, path);
  const id = reqString(obj, "id", path);
  if (!/^[\w.-]+$/.test(id))
    throw new SimulatorInputError(`${path}.id`, "may hold only letters, digits, _ . -");
  const ranges = parseRanges(obj, path);
  const { family, ipPoolType } = parsePoolFamily(obj, path, ranges);
  const number = /(\d+)$/.exec(id)?.[1] ?? "1";
  const config: PoolConfig = {
    id,
    name: reqString(obj, "name", path),
    scope: parsePoolScope(obj.scope, `${path}.scope`, scopes),
    ipPoolType,
    subnetId: optString(obj, "subnetId", path) ?? `subnet-${number}`,
    allocationIds: optEnum(obj, "allocationIds", path, ["integer", "prefixed"] as const) ?? "prefixed",
    revision: optInt(obj, "revision", path) ?? 1,
    ranges,
  };
  const prefixLength = optInt(obj, "prefixLength", path, { min: 0, max: family === 4 ? 32 : 128 });
  if (prefixLength !== undefined) config.prefixLength = prefixLength;
  for (const key of ["gateway", "dnsSuffix", "dnsServer1", "dnsServer2"] as const) {
    const text = optString(obj, key, path)?.trim();
    if (text !== undefined) config[key] = text;
  }
  return { path, config, allocations: parseAllocations(obj, path) };
}

function parsePoolScope(value: unknown, path: string, scopes: readonly ScopeInfo[]): ScopeInfo {
  if (value === undefined) return GLOBAL_SCOPE;
  if (typeof value === "string") {
    if (value === "") throw new SimulatorInputError(path, "must not be empty");
    return scopes.find((s) => s.id === value) ?? scopeFromId(value);
  }
  return parseScope(value, path);
}

function parseRanges(obj: JsonObject, path: string): PoolRange[] {
  const where = fieldPath(path, "ranges");
  const list = asArray(obj.ranges ?? [], where);
  if (list.length === 0) throw new SimulatorInputError(where, "needs at least one range");
  const ranges = list.map((r, i) => parseRange(r, fieldPath(where, i)));
  ranges.forEach((range, i) => {
    const here = fieldPath(where, i);
    if (range.start.family !== ranges[0]!.start.family) {
      throw new SimulatorInputError(
        here,
        `IPv${range.start.family} in a pool whose ranges[0] is IPv${ranges[0]!.start.family}`,
      );
    }
    const other = ranges.findIndex((o, j) => j < i && overlaps(o, range));
    if (other !== -1) throw new SimulatorInputError(here, `overlaps ranges[${other}]`);
  });
  return ranges;
}

function parseRange(value: unknown, path: string): PoolRange {
  const obj = asObject(value, path, "{start, end}");
  rejectUnknownKeys(obj, ["start", "end"], path);
  const start: IpAddress = reqIp(obj, "start", path);
  const end: IpAddress = reqIp(obj, "end", path);
  if (start.family !== end.family)
    throw new SimulatorInputError(`${path}.end`, "not of the same family as start");
  if (end.value < start.value) throw new SimulatorInputError(`${path}.end`, "is before start");
  return { startAddress: String(obj.start).trim(), endAddress: String(obj.end).trim(), start, end };
}

function overlaps(a: PoolRange, b: PoolRange): boolean {
  return a.start.value <= b.end.value && b.start.value <= a.end.value;
}

function parseAllocations(obj: JsonObject, path: string): ValidatedPool["allocations"] {
  const where = fieldPath(path, "allocations");
  return asArray(obj.allocations ?? [], where).map((a, i) => {
    const here = fieldPath(where, i);
    const item = asObject(a, here);
    rejectUnknownKeys(item, ["ip", "note"], here);
    reqIp(item, "ip", here);
    const note = optString(item, "note", here);
    return { path: here, ip: String(item.ip).trim(), ...(note !== undefined ? { note } : {}) };
  });
}
