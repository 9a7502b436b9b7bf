/**
 * Readers for the simulator's untrusted inputs (the state file, control API bodies): each check
 * names the field it refuses, e.g. `pools[1].ranges[0].start: not an IP address`.
 */
import { invalidXmlChar } from "../nsx/xml.ts";
import { CodedError } from "../util/errors.ts";
import { tryParseIp, type IpAddress } from "../util/ip.ts";

/** A state file or control request the simulator cannot use; `path` names the field. */
export class SimulatorInputError extends CodedError {
  readonly path: string;
  constructor(path: string, reason: string, options?: { cause?: unknown }) {
    super("SIMULATOR_BAD_INPUT", path === "" ? reason : `${path}: ${reason}`, options);
    this.path = path;
  }
}

export type JsonObject = Record<string, unknown>;

export function fieldPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

/** `shape` names the fields expected (`{start, end}`), for a message that says what to write. */
export function asObject(value: unknown, path: string, shape?: string): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const want = shape === undefined ? "an object" : `an object ${shape}`;
    throw new SimulatorInputError(path, `must be ${want}, not ${describeValue(value)}`);
  }
  return value as JsonObject;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return `the text ${JSON.stringify(value.slice(0, 60))}`;
  return `${typeof value === "number" ? "the number" : `a ${typeof value}`} ${String(value)}`;
}

export function asArray(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw new SimulatorInputError(path, "must be a list");
  return value;
}

/** Typos in a hand-written file are caught instead of silently ignored. */
export function rejectUnknownKeys(obj: JsonObject, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      throw new SimulatorInputError(fieldPath(path, key), `unknown field (allowed: ${allowed.join(", ")})`);
    }
  }
}

export function optString(obj: JsonObject, key: string, path: string): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new SimulatorInputError(fieldPath(path, key), "must be a string");
  // every text given to the simulator ends up in an XML answer: one it cannot carry would break them all
  const bad = invalidXmlChar(value);
  if (bad !== undefined) {
    throw new SimulatorInputError(
      fieldPath(path, key),
      `has a character XML cannot carry (${bad.codePoint} at offset ${bad.index})`,
    );
  }
  return value;
}

export function reqString(obj: JsonObject, key: string, path: string): string {
  const value = optString(obj, key, path);
  if (value === undefined || value === "") throw new SimulatorInputError(fieldPath(path, key), "is required");
  return value;
}

export function optNumber(
  obj: JsonObject,
  key: string,
  path: string,
  limits: { min: number; max: number; integer: boolean },
): number | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  const where = fieldPath(path, key);
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new SimulatorInputError(where, "must be a number");
  if (limits.integer && !Number.isInteger(value)) throw new SimulatorInputError(where, "must be an integer");
  if (value < limits.min || value > limits.max) {
    throw new SimulatorInputError(where, `must be between ${limits.min} and ${limits.max}`);
  }
  return value;
}

export function optInt(
  obj: JsonObject,
  key: string,
  path: string,
  { min = 0, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
) {
  return optNumber(obj, key, path, { min, max, integer: true });
}

export function optBoolean(obj: JsonObject, key: string, path: string): boolean | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean")
    throw new SimulatorInputError(fieldPath(path, key), "must be true or false");
  return value;
}

export function optEnum<T extends string | number>(
  obj: JsonObject,
  key: string,
  path: string,
  values: readonly T[],
): T | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (!values.includes(value as T)) {
    throw new SimulatorInputError(fieldPath(path, key), `must be one of ${values.join(", ")}`);
  }
  return value as T;
}

export function optIp(obj: JsonObject, key: string, path: string): IpAddress | undefined {
  const text = optString(obj, key, path);
  if (text === undefined) return undefined;
  const ip = tryParseIp(text.trim());
  if (ip === undefined) throw new SimulatorInputError(fieldPath(path, key), "not an IP address");
  return ip;
}

export function reqIp(obj: JsonObject, key: string, path: string): IpAddress {
  const ip = optIp(obj, key, path);
  if (ip === undefined) throw new SimulatorInputError(fieldPath(path, key), "is required");
  return ip;
}

/** A string map (e.g. edge fields), every value a string. */
export function asStringMap(value: unknown, path: string): Record<string, string> {
  const obj = asObject(value, path);
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(obj)) {
    if (typeof v !== "string") throw new SimulatorInputError(fieldPath(path, key), "must be a string");
    out[key] = v;
  }
  return out;
}
