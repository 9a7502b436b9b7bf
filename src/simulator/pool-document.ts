/**
 * An `<ipamAddressPool>` sent to create (POST .../pools/scope/{scopeId}) or update (PUT
 * .../pools/{poolId}) a pool, read into the state file's pool input so that one validation
 * (state-file.ts) checks both. What clients send: PowerNSX's New-NsxIpPool the fields it was given,
 * nsxansible the RAML's example with the unset ones empty (`<dnsSuffix></dnsSuffix>`), and an
 * update the whole GET document back, read-only fields (objectId, counts, vsmUuid...) included:
 * empty elements count as absent, read-only ones are ignored.
 */
import { parseXmlObject } from "../nsx/xml.ts";
import type { PoolInput } from "./state-file.ts";

/** the settable fields of a pool document, by element name */
const TEXT_FIELDS = ["name", "gateway", "dnsSuffix", "dnsServer1", "dnsServer2", "ipPoolType"] as const;

export type ReadPoolResult = { ok: true; input: Omit<PoolInput, "id"> } | { ok: false; message: string };

/** The pool fields of a body; `what` names the call in messages. */
export function readPoolDocument(text: string): ReadPoolResult {
  let root: unknown;
  try {
    root = parseXmlObject(text, "ipamAddressPool document", { arrays: ["ipRangeDto"] }).ipamAddressPool;
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  if (typeof root !== "object" || root === null) {
    return { ok: false, message: "The request body must be an <ipamAddressPool> document." };
  }
  const pool = root as Record<string, unknown>;
  const input: Record<string, unknown> = {};
  for (const name of TEXT_FIELDS) {
    const value = textOf(pool[name]);
    if (value !== undefined) input[name] = value;
  }
  const prefix = textOf(pool.prefixLength);
  if (prefix !== undefined) {
    if (!/^\d{1,3}$/.test(prefix))
      return { ok: false, message: `<prefixLength> must be an integer, not ${JSON.stringify(prefix)}.` };
    input.prefixLength = Number(prefix);
  }
  const ranges = (pool.ipRanges as { ipRangeDto?: unknown[] } | undefined)?.ipRangeDto ?? [];
  input.ranges = ranges.map((range) => {
    const r = (typeof range === "object" && range !== null ? range : {}) as Record<string, unknown>;
    return { start: textOf(r.startAddress) ?? "", end: textOf(r.endAddress) ?? "" };
  });
  return { ok: true, input: input as Omit<PoolInput, "id"> };
}

/** a leaf's trimmed text; undefined for an absent or empty element */
function textOf(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  return text === "" ? undefined : text;
}

/**
 * A state-file path (`ranges[0].start`) in the document's element names
 * (`ipRanges.ipRangeDto[0].startAddress`), for error messages of the API.
 */
export function documentPath(path: string): string {
  return path
    .replace(/^ranges/, "ipRanges.ipRangeDto")
    .replace(/\.start$/, ".startAddress")
    .replace(/\.end$/, ".endAddress");
}
