/**
 * The parent side of the scale benchmarks: starts the operator child (scale-child.ts) on a
 * source, waits for its first pass, then times one change until the simulator counts the PUT,
 * and reads the child's memory figures. `makeChange` does the change (write a file, patch an
 * object, or ask the child to emit it) and resolves right after.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ScaleChildReport, ScaleChildStart, ScaleSynced } from "./scale-protocol.ts";
import type { SimulatorControl } from "./simulator-process.ts";

const CHILD = fileURLToPath(new URL("./scale-child.ts", import.meta.url));

export interface ScaleRunOptions {
  start: ScaleChildStart;
  control: SimulatorControl;
  /** performs the change; `child` for a change the child makes itself */
  makeChange: (child: ChildProcess) => Promise<void>;
  /** wait for the change's PUT at most this long */
  changeTimeoutMs: number;
  /** directory source: also time one reading of every manifest */
  timeReload: boolean;
  /** the `node` that runs the child (a MemoryCgroup's wrapper); default this process's */
  execPath?: string;
}

export interface ScaleRun {
  synced: boolean;
  syncMs: number;
  /** change made → the simulator counted a PUT; undefined when none came within changeTimeoutMs */
  changeMs: number | undefined;
  /** change made → the source announced the object (its key is queued then); undefined when it did not */
  emittedMs: number | undefined;
  /** one reading of every manifest (directory source) */
  reloadMs: number | undefined;
  before: ScaleChildReport;
  after: ScaleChildReport;
}

/** Forks the operator child (the `node` of `execPath`, default this one's) and sends it `start`. */
export function forkScaleChild(start: ScaleChildStart, execPath?: string): ChildProcess {
  const child = fork(CHILD, [], {
    execArgv: [
      "--expose-gc",
      ...(start.heapLimitMiB !== undefined ? [`--max-old-space-size=${start.heapLimitMiB}`] : []),
    ],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    ...(execPath !== undefined ? { execPath } : {}),
  });
  child.send(start);
  return child;
}

/** Starts the operator child on `start` and waits for its first pass. */
export async function startScaleChild(
  start: ScaleChildStart,
  execPath?: string,
): Promise<{ child: ChildProcess; synced: ScaleSynced }> {
  const child = forkScaleChild(start, execPath);
  try {
    return { child, synced: await next<ScaleSynced>(child, "synced", start.syncTimeoutMs + 60_000) };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

export async function runScale(options: ScaleRunOptions): Promise<ScaleRun> {
  const { child, synced } = await startScaleChild(options.start, options.execPath);
  try {
    // let the last status writes settle: the queue must be idle when the change comes
    await sleep(1_000);
    await options.control.resetCounters();
    const t0 = now();
    await options.makeChange(child);
    const putAt = await waitForPut(options.control, options.changeTimeoutMs);
    let reloadMs: number | undefined;
    if (options.timeReload) {
      child.send("reload");
      reloadMs = await next<number>(child, "reloaded", 300_000);
    }
    child.send("report");
    const after = await next<ScaleChildReport>(child, "report", 60_000);
    const { ok, ms, ...before } = synced;
    const emittedAt = after.changeEmittedAtMs;
    return {
      synced: ok,
      syncMs: ms,
      changeMs: putAt === undefined ? undefined : putAt - t0,
      emittedMs: emittedAt !== undefined && emittedAt >= t0 ? emittedAt - t0 : undefined,
      reloadMs,
      before,
      after,
    };
  } finally {
    await stopChild(child);
  }
}

/** epoch ms with sub-ms precision, comparable with the child's */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * polls the simulator's counters every 5 ms until more than `since` PUTs are counted: its time, or
 * undefined after timeoutMs
 */
export async function waitForPut(
  control: SimulatorControl,
  timeoutMs: number,
  since = 0,
): Promise<number | undefined> {
  const deadline = now() + timeoutMs;
  while (now() < deadline) {
    const counters = await control.counters();
    const puts = Object.values(counters["putEdge"] ?? {}).reduce((a, b) => a + b, 0);
    if (puts > since) return now();
    await sleep(5);
  }
  return undefined;
}

/** the next message of the child that carries `key`; rejects on its { error } or after timeoutMs */
export function next<T>(child: ChildProcess, key: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`scale child: no ${key} after ${timeoutMs} ms`));
    }, timeoutMs);
    const onExit = (code: number | null): void => {
      done();
      reject(new Error(`scale child exited (${String(code)}) before ${key}`));
    };
    const onMessage = (message: Record<string, unknown>): void => {
      if (message["error"] !== undefined) {
        done();
        reject(new Error(`scale child failed: ${String(message["error"])}`));
      } else if (key in message) {
        done();
        resolve(message[key] as T);
      }
    };
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    if (child.connected) child.send("stop");
    else child.kill();
  });
}
