/**
 * Readers for the small manager documents: the pool list (spec 2.2), the allocation list (2.3),
 * the release answer (4.5), the error bodies (field notes, "Errors") and the 6.4 auth token.
 * Liberal in what they accept, as the field notes ask: unknown elements are ignored, optional
 * fields may be missing, one child and many children read the same. What the operator decides on
 * (ids, counts, addresses) is checked, and a bad value is an NsxResponseError naming the item and
 * the field, never a silently wrong number.
 */
import type { NsxErrorDetails } from "./errors.ts";
import { NsxResponseError } from "./errors.ts";
import { tryParseIp } from "../util/ip.ts";
import type { Allocation, EdgePage, EdgeSummary, IpPool, IpRange, ReleaseAnswer } from "./types.ts";
import { parseXmlObject } from "./xml.ts";
import { isEdgeId } from "./ids.ts";

/** What parseXmlObject gives for one element: its text, or its children by name. */
type XmlObject = Record<string, unknown>;

function isObject(value: unknown): value is XmlObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** the elements of this name under `parent`, whether there are none, one or many */
function elements(parent: unknown, name: string): unknown[] {
  if (!isObject(parent)) return [];
  const value = parent[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** the text of the first child of this name; undefined when absent or when it has child elements */
function childText(parent: unknown, name: string): string | undefined {
  const first = elements(parent, name)[0];
  if (typeof first === "string") return first;
  if (isObject(first) && typeof first["#text"] === "string") return first["#text"];
  return undefined;
}

/** Parses `text` and returns the content of its root, refusing any other root element. */
function readRoot(
  text: string,
  what: string,
  rootName: string,
  options: { arrays: readonly string[]; only?: Record<string, readonly string[]> },
): unknown {
  const parsed = parseXmlObject(text, what, options);
  const roots = Object.keys(parsed);
  if (roots.length !== 1 || roots[0] !== rootName) {
    throw new NsxResponseError(`${what}: root element is <${roots.join("><")}>, expected <${rootName}>`);
  }
  return parsed[rootName];
}

/** Reads fields of one item, naming the item in every complaint. */
class FieldReader {
  readonly #element: unknown;
  readonly #label: string;
  constructor(element: unknown, label: string) {
    this.#element = element;
    this.#label = label;
  }

  fail(field: string, problem: string): never {
    throw new NsxResponseError(`${this.#label}: ${field} ${problem}`);
  }

  /** the field's text; a field given twice is refused: which one the manager means is a guess */
  optionalString(field: string): string | undefined {
    const count = elements(this.#element, field).length;
    if (count > 1) this.fail(field, `appears ${count} times`);
    return childText(this.#element, field);
  }

  requiredString(field: string): string {
    const value = this.optionalString(field);
    if (value === undefined || value === "") this.fail(field, "is missing");
    return value;
  }

  /** a non-negative integer, as every count and length in these documents is */
  optionalNumber(field: string): number | undefined {
    const text = this.optionalString(field);
    if (text === undefined || text === "") return undefined;
    const value = Number(text);
    if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(value)) {
      this.fail(field, `is not a number: ${JSON.stringify(text.slice(0, 40))}`);
    }
    return value;
  }

  requiredNumber(field: string): number {
    const value = this.optionalNumber(field);
    if (value === undefined) this.fail(field, "is missing");
    return value;
  }

  /** an IP address as the manager wrote it, checked to be one */
  requiredIp(field: string): string {
    const value = this.requiredString(field);
    if (tryParseIp(value) === undefined)
      this.fail(field, `is not an IP address: ${JSON.stringify(value.slice(0, 60))}`);
    return value;
  }
}

const POOLS_WHAT = "pool list";

function parseRange(element: unknown, label: string): IpRange {
  const fields = new FieldReader(element, label);
  const startAddress = fields.requiredIp("startAddress");
  const endAddress = fields.requiredIp("endAddress");
  const start = tryParseIp(startAddress);
  const end = tryParseIp(endAddress);
  if (start === undefined || end === undefined || start.family !== end.family || start.value > end.value) {
    fields.fail("endAddress", `${endAddress} does not end a range that starts at ${startAddress}`);
  }
  const id = fields.optionalString("id");
  return id === undefined ? { startAddress, endAddress } : { id, startAddress, endAddress };
}

function parsePool(element: unknown, index: number): IpPool {
  const objectId = childText(element, "objectId");
  const label = `${POOLS_WHAT}: pool ${objectId ? JSON.stringify(objectId) : `#${index + 1}`}`;
  const fields = new FieldReader(element, label);
  fields.requiredString("objectId");
  const totalAddressCount = fields.requiredNumber("totalAddressCount");
  const usedAddressCount = fields.requiredNumber("usedAddressCount");
  const ranges = elements(isObject(element) ? element["ipRanges"] : undefined, "ipRangeDto").map((range, i) =>
    parseRange(range, `${label}: ipRanges[${i}]`),
  );
  const pool: IpPool = {
    objectId: objectId as string,
    name: fields.optionalString("name") ?? "",
    totalAddressCount,
    usedAddressCount,
    // derived when absent, as the manager computes it
    usedPercentage:
      fields.optionalNumber("usedPercentage") ??
      (totalAddressCount === 0 ? 0 : Math.floor((usedAddressCount * 100) / totalAddressCount)),
    ranges,
  };
  const scopeId = childText(isObject(element) ? element["scope"] : undefined, "id");
  const prefixLength = fields.optionalNumber("prefixLength");
  const gateway = fields.optionalString("gateway");
  const ipPoolType = fields.optionalString("ipPoolType");
  const vsmUuid = fields.optionalString("vsmUuid");
  if (scopeId !== undefined) pool.scopeId = scopeId;
  if (vsmUuid !== undefined && vsmUuid !== "") pool.vsmUuid = vsmUuid;
  if (prefixLength !== undefined) pool.prefixLength = prefixLength;
  if (gateway !== undefined && gateway !== "") pool.gateway = gateway;
  if (ipPoolType !== undefined && ipPoolType !== "") pool.ipPoolType = ipPoolType;
  return pool;
}

/** `<ipamAddressPools>` with zero, one or many `<ipamAddressPool>` children. */
export function parsePoolList(xml: string): IpPool[] {
  const root = readRoot(xml, POOLS_WHAT, "ipamAddressPools", { arrays: ["ipamAddressPool", "ipRangeDto"] });
  return elements(root, "ipamAddressPool").map(parsePool);
}

const EDGES_WHAT = "edge list";

/** the EdgeSummary fields read as text, by the `<edgeSummary>` child each comes from */
const SUMMARY_TEXT_FIELDS = {
  name: "name",
  tenant: "tenantId",
  datacenterMoid: "datacenterMoid",
  datacenterName: "datacenterName",
  edgeType: "edgeType",
  vsmUuid: "vsmUuid",
} as const;

/** every child of `<edgeSummary>` readEdgeSummary reads: only these are built (a summary has a hundred) */
const SUMMARY_ELEMENTS = ["objectId", "id", "revision", ...Object.values(SUMMARY_TEXT_FIELDS)];

function readEdgeSummary(element: unknown, label: string): EdgeSummary {
  const fields = new FieldReader(element, label);
  const id = fields.optionalString("objectId") ?? fields.requiredString("id");
  if (!isEdgeId(id)) fields.fail("objectId", `is not edge-<n>: ${JSON.stringify(id.slice(0, 60))}`);
  const summary: EdgeSummary = { id };
  for (const [key, name] of Object.entries(SUMMARY_TEXT_FIELDS)) {
    const value = fields.optionalString(name);
    if (value !== undefined) summary[key as keyof typeof SUMMARY_TEXT_FIELDS] = value;
  }
  const revision = fields.optionalNumber("revision");
  if (revision !== undefined) summary.revision = revision;
  return summary;
}

/** One edge's `<edgeSummary>` (GET /api/4.0/edges/{id}/summary). */
export function parseEdgeSummary(xml: string): EdgeSummary {
  const root = readRoot(xml, "edge summary", "edgeSummary", {
    arrays: [],
    only: { edgeSummary: SUMMARY_ELEMENTS },
  });
  return readEdgeSummary(root, "edge summary");
}

/** `<pagedEdgeList><edgePage><pagingInfo/>` and zero, one or many `<edgeSummary>`. */
export function parseEdgePage(xml: string): EdgePage {
  const root = readRoot(xml, EDGES_WHAT, "pagedEdgeList", {
    arrays: ["edgeSummary"],
    only: { edgeSummary: SUMMARY_ELEMENTS },
  });
  const page = isObject(root) ? root["edgePage"] : undefined;
  const paging = new FieldReader(
    isObject(page) ? page["pagingInfo"] : undefined,
    `${EDGES_WHAT}: pagingInfo`,
  );
  const edges = elements(page, "edgeSummary").map((e, i) =>
    readEdgeSummary(e, `${EDGES_WHAT}: edgeSummary #${i + 1}`),
  );
  return {
    edges,
    startIndex: paging.requiredNumber("startIndex"),
    pageSize: paging.requiredNumber("pageSize"),
    totalCount: paging.requiredNumber("totalCount"),
  };
}

const ALLOCATIONS_WHAT = "allocation list";

function parseAllocation(element: unknown, index: number): Allocation {
  const ipText = childText(element, "ipAddress");
  const label = `${ALLOCATIONS_WHAT}: allocation ${ipText ? JSON.stringify(ipText) : `#${index + 1}`}`;
  const fields = new FieldReader(element, label);
  // an integer on some managers, `allocatedipaddress-<n>` on others: kept as text either way
  const allocation: Allocation = {
    id: fields.requiredString("id"),
    ipAddress: fields.requiredIp("ipAddress"),
  };
  const allocationNote = fields.optionalString("allocationNote");
  const gateway = fields.optionalString("gateway");
  const prefixLength = fields.optionalNumber("prefixLength");
  const subnetId = fields.optionalString("subnetId");
  if (allocationNote !== undefined) allocation.allocationNote = allocationNote;
  if (gateway !== undefined && gateway !== "") allocation.gateway = gateway;
  if (prefixLength !== undefined) allocation.prefixLength = prefixLength;
  if (subnetId !== undefined && subnetId !== "") allocation.subnetId = subnetId;
  return allocation;
}

/** `<allocatedIpAddresses>` with zero, one or many `<allocatedIpAddress>` children. */
export function parseAllocationList(xml: string): Allocation[] {
  const root = readRoot(xml, ALLOCATIONS_WHAT, "allocatedIpAddresses", { arrays: ["allocatedIpAddress"] });
  return elements(root, "allocatedIpAddress").map(parseAllocation);
}

/**
 * The answer to a release (a 2xx): released only for `true` or `<boolean>true</boolean>`
 * (declaration and whitespace allowed). Any other text is not a release, and the answer says
 * what it was; XML that is not well-formed or declares a DOCTYPE is refused with an
 * NsxResponseError, as every success body is.
 */
export function parseReleaseBody(body: string, status = 200): ReleaseAnswer {
  const trimmed = body.trim();
  if (trimmed === "") return { released: false, answer: `nothing (an empty ${status})` };
  const refused = { released: false, answer: JSON.stringify(trimmed.replace(/\s+/g, " ").slice(0, 80)) };
  if (trimmed === "true") return { released: true, answer: "true" };
  if (!trimmed.startsWith("<")) return refused;
  const parsed = parseXmlObject(trimmed, "release response");
  const released = Object.keys(parsed).length === 1 && parsed["boolean"] === "true";
  return released ? { released, answer: "<boolean>true</boolean>" } : refused;
}

const SNIPPET_CHARS = 300;

function parseErrorElement(element: unknown): NsxErrorDetails {
  const out: NsxErrorDetails = {};
  const details = childText(element, "details");
  const errorCode = childText(element, "errorCode");
  const moduleName = childText(element, "moduleName");
  if (details !== undefined && details !== "") out.details = details;
  if (errorCode !== undefined && errorCode !== "") out.errorCode = errorCode;
  if (moduleName !== undefined && moduleName !== "") out.moduleName = moduleName;
  const errorData = elements(element, "errorData")[0];
  // `<errorData><data><key/><value/></data>...</errorData>`, or key/value pairs right inside it
  const entries = elements(errorData, "data");
  const data: Record<string, string> = {};
  for (const entry of entries.length > 0 ? entries : [errorData]) {
    const keys = elements(entry, "key");
    const values = elements(entry, "value");
    keys.forEach((key, i) => {
      const value = values[i];
      if (typeof key === "string" && key !== "") data[key] = typeof value === "string" ? value : "";
    });
  }
  if (Object.keys(data).length > 0) out.data = data;
  return out;
}

/**
 * What the manager said in an error body: `<error>`, `<errors>` with several `<error>`, either
 * with `<errorData>`, fields in any order. A body that is not XML gives its first few hundred
 * characters as `details` (proxies answer in plain text); empty or other XML gives nothing, and
 * the caller's message still carries the status. Never throws.
 */
export function parseErrorBody(body: string): NsxErrorDetails[] {
  const trimmed = body.trim();
  if (trimmed === "") return [];
  if (!trimmed.startsWith("<")) {
    const snippet = trimmed.replace(/\s+/g, " ").slice(0, SNIPPET_CHARS);
    return [{ details: snippet }];
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = parseXmlObject(trimmed, "error body", { arrays: ["error", "data", "key", "value"] });
  } catch {
    return [];
  }
  const errors = isObject(parsed["errors"]) ? elements(parsed["errors"], "error") : elements(parsed, "error");
  return errors.map(parseErrorElement).filter((e) => Object.keys(e).length > 0);
}

export interface AuthToken {
  value: string;
  /** epoch milliseconds, when the manager said (`expiresOn`) or the token's `exp` claim does */
  expiresAtMs?: number;
}

/** The `exp` claim of a JWT in epoch ms, if it has one; the token is not verified, only read. */
function jwtExpiryMs(jwt: string): number | undefined {
  const payload = jwt.split(".")[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    const exp = isObject(claims) ? claims["exp"] : undefined;
    return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

const EXPIRY_ELEMENTS = ["expiresOn", "validTo", "expiry"];

/** `<authToken><value>JWT</value><expiresOn>epoch ms</expiresOn></authToken>` (NSX 6.4). */
export function parseAuthToken(xml: string): AuthToken {
  const root = readRoot(xml, "auth token", "authToken", { arrays: [] });
  const value = childText(root, "value");
  if (value === undefined || value === "") throw new NsxResponseError("auth token: <value> is missing");
  // the element's name differs between sources (expiresOn, validTo); any of them, in epoch ms
  const expiresOn = EXPIRY_ELEMENTS.map((name) => childText(root, name)).find((t) => t !== undefined);
  let expiresAtMs = expiresOn !== undefined && /^[0-9]+$/.test(expiresOn) ? Number(expiresOn) : undefined;
  // a value this small is seconds, not milliseconds (before 1973 in ms)
  if (expiresAtMs !== undefined && expiresAtMs < 1e11) expiresAtMs *= 1000;
  expiresAtMs ??= jwtExpiryMs(value);
  return expiresAtMs === undefined ? { value } : { value, expiresAtMs };
}
