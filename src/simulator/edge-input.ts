/**
 * The `edges` of a state file (and the control API's `generate`): a document inline, a file
 * relative to the state file, or generated edges, every field checked. Texts are produced when
 * the state is built, in the manager's format: generating megabytes twice would be waste.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { generateEdgeXml, type GenerateEdgeOptions } from "./generate.ts";
import {
  SimulatorInputError,
  asObject,
  fieldPath,
  optInt,
  optString,
  rejectUnknownKeys,
  reqString,
} from "./input.ts";

export interface GenerateEdgesInput {
  /** how many edges (default 1) */
  count?: number;
  /** n of the first `edge-<n>` (default 1) */
  idStart?: number;
  tenant?: string;
  firewallRules?: number;
  /** e.g. 1048576 or 5242880: grow the firewall rules until each document has about this size */
  targetBytes?: number;
  seed?: number;
}

/** One entry of `edges`: a document inline, a file (relative to the state file), or generated. */
export type EdgeInput = { xml: string } | { xmlFile: string } | { generate: GenerateEdgesInput };

export interface ValidatedEdge {
  path: string;
  /** a generated edge is written in the manager's format, so that its size is what a GET sends */
  text(format: ManagerFormat): string;
}

export interface ManagerFormat {
  pretty: boolean;
  edgeSummary: boolean;
}

export function parseEdgeEntry(value: unknown, path: string, baseDir: string): ValidatedEdge[] {
  const obj = asObject(value, path);
  const keys = Object.keys(obj);
  if (keys.length !== 1 || !["xml", "xmlFile", "generate"].includes(keys[0] ?? "")) {
    throw new SimulatorInputError(path, "must have exactly one of xml, xmlFile, generate");
  }
  if (obj.xml !== undefined) {
    const xml = reqString(obj, "xml", path);
    return [{ path: `${path}.xml`, text: () => xml }];
  }
  if (obj.xmlFile !== undefined) {
    const file = reqString(obj, "xmlFile", path);
    try {
      const xml = readFileSync(resolve(baseDir, file), "utf8");
      return [{ path: `${path}.xmlFile`, text: () => xml }];
    } catch (cause) {
      throw new SimulatorInputError(`${path}.xmlFile`, `cannot read ${file}: ${(cause as Error).message}`, {
        cause,
      });
    }
  }
  return generateEdges(obj.generate ?? {}, `${path}.generate`);
}

function generateEdges(value: unknown, path: string): ValidatedEdge[] {
  const obj = asObject(value, path);
  rejectUnknownKeys(obj, ["count", "idStart", ...GENERATE_KEYS], path);
  const count = optInt(obj, "count", path, { min: 0, max: 10_000 }) ?? 1;
  const idStart = optInt(obj, "idStart", path, { min: 0, max: 1_000_000_000 }) ?? 1;
  const { count: _count, idStart: _idStart, ...rest } = obj;
  return Array.from({ length: count }, (_, i) => {
    const options = parseGenerateOptions(rest, path, idStart + i);
    // edges after the first get their own seed, so they differ
    if (options.seed !== undefined) options.seed += i;
    return { path, text: (format) => generateEdgeXml({ ...options, ...format }) };
  });
}

const GENERATE_KEYS = ["tenant", "firewallRules", "targetBytes", "seed"];

/**
 * The options of one generated edge (`generate` without count and idStart). Its format is the
 * manager's (settings prettyXml and edgeSummaryInEdge), not an option.
 */
export function parseGenerateOptions(
  value: unknown,
  path: string,
  edgeNumber: number,
): Omit<GenerateEdgeOptions, "pretty" | "edgeSummary"> {
  const obj = asObject(value, path);
  if (obj.pretty !== undefined) {
    throw new SimulatorInputError(
      fieldPath(path, "pretty"),
      "edges are served in the manager's one format: set settings.prettyXml instead",
    );
  }
  rejectUnknownKeys(obj, GENERATE_KEYS, path);
  const options: Omit<GenerateEdgeOptions, "pretty" | "edgeSummary"> = { edgeNumber };
  const tenant = optString(obj, "tenant", path);
  if (tenant !== undefined) options.tenant = tenant;
  const firewallRules = optInt(obj, "firewallRules", path, { min: 0, max: 100_000 });
  if (firewallRules !== undefined) options.firewallRules = firewallRules;
  const targetBytes = optInt(obj, "targetBytes", path, { min: 0, max: 64 * 1024 * 1024 });
  if (targetBytes !== undefined) options.targetBytes = targetBytes;
  const seed = optInt(obj, "seed", path, { min: 0, max: 2 ** 31 });
  if (seed !== undefined) options.seed = seed;
  return options;
}
