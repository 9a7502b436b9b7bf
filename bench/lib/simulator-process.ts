/**
 * The simulator in a child process (see simulator-child.ts for why), and a small client of its
 * control API: counters per route, settings, out-of-band edge changes, the audit.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type {
  AuditSnapshot,
  CounterSnapshot,
  SimulatorSettings,
  SimulatorStateInput,
} from "../../src/simulator/index.ts";
import { totalsByRoute } from "../../test/support/calls.ts";

const CHILD = fileURLToPath(new URL("./simulator-child.ts", import.meta.url));

export interface SimulatorProcessOptions {
  state: SimulatorStateInput;
  settings?: Partial<SimulatorSettings>;
  /** generating thousands of edges takes seconds; default 180000 */
  startTimeoutMs?: number;
}

export interface SimulatorProcess {
  url: string;
  pid: number;
  control: SimulatorControl;
  close(): Promise<void>;
}

export class SimulatorStartError extends Error {
  readonly code = "BENCH_SIMULATOR_START";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SimulatorStartError";
  }
}

export async function startSimulatorProcess(options: SimulatorProcessOptions): Promise<SimulatorProcess> {
  const child = fork(CHILD, [], { execArgv: [], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const timeoutMs = options.startTimeoutMs ?? 180_000;
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new SimulatorStartError(`not ready after ${timeoutMs} ms`)),
        timeoutMs,
      );
      child.once("message", (m: { url?: string; error?: string }) => {
        clearTimeout(timer);
        if (m.url !== undefined) resolve(m.url);
        else reject(new SimulatorStartError(`the simulator refused its state: ${m.error ?? "?"}`));
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(
          new SimulatorStartError(`the simulator process exited with ${String(code)} before it was ready`),
        );
      });
      child.send({ state: options.state, ...(options.settings ? { settings: options.settings } : {}) });
    });
  } catch (error) {
    child.kill();
    throw error;
  }
  return { url, pid: child.pid ?? -1, control: new SimulatorControl(url), close: () => stop(child) };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    if (child.connected) child.send("close");
    else child.kill();
  });
}

/** The control API under /_simulator/ (src/simulator/control.ts). */
export class SimulatorControl {
  readonly #base: string;

  constructor(url: string) {
    this.#base = `${url}/_simulator`;
  }

  counters(): Promise<CounterSnapshot> {
    return this.#json("GET", "counters");
  }

  async resetCounters(): Promise<void> {
    await this.#json("DELETE", "counters");
  }

  settings(patch: Partial<SimulatorSettings>): Promise<SimulatorSettings> {
    return this.#json("PUT", "settings", patch);
  }

  /** sets top-level fields of an edge out of band (drift) */
  async changeEdge(edgeId: string, fields: Record<string, string>): Promise<void> {
    await this.#json("PATCH", `edges/${edgeId}`, fields);
  }

  audit(): Promise<AuditSnapshot> {
    return this.#json("GET", "audit");
  }

  async resetAudit(): Promise<void> {
    await this.#json("DELETE", "audit");
  }

  async #json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.#base}/${path}`, {
      method,
      ...(body !== undefined
        ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } }
        : {}),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`simulator control ${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }
}

/** calls answered with a status outside 2xx, per route and status */
export function failedCalls(counters: CounterSnapshot): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [route, byStatus] of Object.entries(counters)) {
    for (const [status, n] of Object.entries(byStatus))
      if (!/^2\d\d$/.test(status)) out[`${route} ${status}`] = n;
  }
  return out;
}

export function totalCalls(counters: CounterSnapshot): number {
  return Object.values(totalsByRoute(counters)).reduce((a, b) => a + b, 0);
}
