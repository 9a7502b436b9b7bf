/** The simulator's tunable behaviour, with every default in one place. */
import { asObject, optBoolean, optEnum, optInt, rejectUnknownKeys } from "./input.ts";

export interface SimulatorSettings {
  /**
   * each API call's least time (not control calls'), its work included: the call acts when it
   * arrives and its answer waits for the rest (README, Latency); for benchmarks; default 0
   */
  latencyMs: number;
  /** lifetime of tokens from POST /api/2.0/services/auth/token; default 90 minutes, as a 6.4 manager */
  tokenTtlMs: number;
  /** false: API calls other than the token call need `Authorization: AUTHTOKEN` (6.4.2+); default true */
  basicAuthEnabled: boolean;
  /**
   * answer for an unknown pool id in the pool-path calls: 400 with errorCode 120054 (default, what
   * the field notes list for IP address management) or 404 with errorCode 202 (the generic
   * "requested object could not be found")
   */
  missingPoolStatus: 400 | 404;
  /** true: a PUT whose `<version>` is lower than the stored one gets 409; default false (accepted, audited) */
  rejectStaleVersion: boolean;
  /** two-space indentation in every document the manager writes, edges included; default false (one line) */
  prettyXml: boolean;
  /**
   * a GET of one edge carries its `<edgeSummary>` inside `<edge>`, as the API guide's example (our
   * spec) shows; default false: as VMware's RAML and a real manager's capture have it, the summary
   * only in the edge list and `/summary`
   */
  edgeSummaryInEdge: boolean;
  /** larger request bodies get 413; default 64 MiB (edges of several MB are normal) */
  maxRequestBytes: number;
}

export const SETTINGS_DEFAULTS: Readonly<SimulatorSettings> = Object.freeze({
  latencyMs: 0,
  tokenTtlMs: 90 * 60_000,
  basicAuthEnabled: true,
  missingPoolStatus: 400,
  rejectStaleVersion: false,
  prettyXml: false,
  edgeSummaryInEdge: false,
  maxRequestBytes: 64 * 1024 * 1024,
});

const KEYS = Object.keys(SETTINGS_DEFAULTS);

/** The settings given; absent ones stay absent so that a partial update keeps the others. */
export function parseSettings(value: unknown, path: string): Partial<SimulatorSettings> {
  const obj = asObject(value, path);
  rejectUnknownKeys(obj, KEYS, path);
  const out: Partial<SimulatorSettings> = {};
  const latencyMs = optInt(obj, "latencyMs", path, { min: 0, max: 600_000 });
  if (latencyMs !== undefined) out.latencyMs = latencyMs;
  const tokenTtlMs = optInt(obj, "tokenTtlMs", path, { min: 1, max: 365 * 86_400_000 });
  if (tokenTtlMs !== undefined) out.tokenTtlMs = tokenTtlMs;
  const basicAuthEnabled = optBoolean(obj, "basicAuthEnabled", path);
  if (basicAuthEnabled !== undefined) out.basicAuthEnabled = basicAuthEnabled;
  const missingPoolStatus = optEnum(obj, "missingPoolStatus", path, [400, 404] as const);
  if (missingPoolStatus !== undefined) out.missingPoolStatus = missingPoolStatus;
  const rejectStaleVersion = optBoolean(obj, "rejectStaleVersion", path);
  if (rejectStaleVersion !== undefined) out.rejectStaleVersion = rejectStaleVersion;
  const prettyXml = optBoolean(obj, "prettyXml", path);
  if (prettyXml !== undefined) out.prettyXml = prettyXml;
  const edgeSummaryInEdge = optBoolean(obj, "edgeSummaryInEdge", path);
  if (edgeSummaryInEdge !== undefined) out.edgeSummaryInEdge = edgeSummaryInEdge;
  const maxRequestBytes = optInt(obj, "maxRequestBytes", path, { min: 1, max: 1024 * 1024 * 1024 });
  if (maxRequestBytes !== undefined) out.maxRequestBytes = maxRequestBytes;
  return out;
}
