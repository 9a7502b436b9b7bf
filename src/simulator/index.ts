/**
 * A simulator of an NSX-v manager, for tests and benchmarks of the operator and for third-party
 * clients: a real HTTP(S) server with the five calls of the spec (plus the edge list, edge and
 * pool creation, update and deletion, allocation, PowerNSX's connection calls and the 6.4
 * authentication calls), XML in one format of the manager's own, a control API under
 * `/_simulator/` (documented in control.ts), fault injection, counters and an audit of what each
 * edge PUT lost, changed or added.
 */
import type { Credentials } from "./auth.ts";
import { listen } from "./server.ts";
import type { SimulatorSettings } from "./settings.ts";
import type { SimulatorStateInput } from "./state-file.ts";
import { SimulatorState } from "./state.ts";
import { withDefaults } from "../util/options.ts";

export { loadStateFile, validateStateInput } from "./state-file.ts";
export type { SimulatorStateInput, PoolInput, ScopeInput } from "./state-file.ts";
export type { EdgeInput, GenerateEdgesInput } from "./edge-input.ts";
export { DEFAULT_SANCTIONED_EDGE_FIELDS, SimulatorState, type StateDump, type StoredEdge } from "./state.ts";
export { SETTINGS_DEFAULTS, type SimulatorSettings } from "./settings.ts";
export { SimulatorInputError } from "./input.ts";
export { generateEdgeXml, type GenerateEdgeOptions } from "./generate.ts";
export { API_ROUTES, type ApiRoute, type FaultSpec, type FaultView } from "./faults.ts";
export type { AuditSnapshot, CounterSnapshot, PutViolation, ReleaseRecord } from "./audit.ts";

export interface SimulatorOptions {
  /** default 127.0.0.1 */
  host?: string;
  /** default 0: a free port */
  port?: number;
  /** parsed state file contents (loadStateFile); default: no edges, no pools */
  state?: SimulatorStateInput;
  /** default: the state file's, else admin / default */
  credentials?: { username: string; password: string };
  /** PEM texts; serve HTTPS when given */
  tls?: { key: string; cert: string };
  /** override the state file's settings, e.g. { latencyMs } for benchmarks */
  settings?: Partial<SimulatorSettings>;
  /** the control API answers only `Authorization: Bearer <controlToken>`; default: open */
  controlToken?: string;
  /**
   * the wall clock of what the simulator records and expires (audit times, tokens, stale lists),
   * e.g. a test's FakeClock shared with the operator; default Date.now
   */
  nowMs?: () => number;
  /**
   * children of `<edge>` a PUT may change without an audit violation (the operator's kinds declare
   * theirs: `simulate` and `demo` pass reconcile's sanctionedEdgeFields(EFFECTS)); default `tenant`
   */
  sanctionedEdgeFields?: readonly string[];
}

export interface RunningSimulator {
  /** http(s)://host:port, without a trailing slash */
  url: string;
  port: number;
  state: SimulatorState;
  close(): Promise<void>;
}

const SERVER_DEFAULTS = { host: "127.0.0.1", port: 0 } as const;

/** Builds the state (throws SimulatorInputError naming the field) and starts serving it. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const o = withDefaults(SERVER_DEFAULTS, options);
  const credentials: Credentials | undefined = o.credentials;
  const state = new SimulatorState(o.state, {
    ...(credentials !== undefined ? { credentials } : {}),
    ...(o.settings !== undefined ? { settings: o.settings } : {}),
    ...(o.nowMs !== undefined ? { nowMs: o.nowMs } : {}),
    ...(o.sanctionedEdgeFields !== undefined ? { sanctionedEdgeFields: o.sanctionedEdgeFields } : {}),
  });
  const server = await listen(state, {
    host: o.host,
    port: o.port,
    ...(o.tls !== undefined ? { tls: o.tls } : {}),
    ...(o.controlToken !== undefined ? { controlToken: o.controlToken } : {}),
  });
  return { url: server.url, port: server.port, state, close: server.close };
}
