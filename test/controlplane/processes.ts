/**
 * Child processes of the test control plane (etcd, kube-apiserver): started with their output
 * in a log file, stopped with SIGTERM then SIGKILL, and killed when this process exits or is
 * interrupted, so a crashed or aborted test run leaves no servers behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";

export interface ProcessSpec {
  /** short name for messages: "etcd", "kube-apiserver" */
  name: string;
  command: string;
  args: readonly string[];
  /** stdout and stderr are appended here */
  logPath: string;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** the exit code, or the signal name, once the process has exited; undefined while it runs */
  exitStatus(): string | undefined;
  /** SIGTERM, then SIGKILL after graceMs; resolves once the process has exited */
  stop(graceMs: number): Promise<void>;
}

const running = new Set<ChildProcess>();
const exitCleanups = new Set<() => void>();
let hooksInstalled = false;

function killAllNow(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
  for (const cleanup of exitCleanups) {
    try {
      cleanup();
    } catch {
      // best effort: the process is going away
    }
  }
  exitCleanups.clear();
}

/**
 * Runs `cleanup` (synchronous: nothing async runs on exit) after the children are killed, if this
 * process exits or is interrupted before the returned function is called.
 */
export function onExitSync(cleanup: () => void): () => void {
  installExitHooks();
  exitCleanups.add(cleanup);
  return () => exitCleanups.delete(cleanup);
}

/** Kills every child synchronously, then lets the signal do what it would have done without us. */
function onSignal(signal: NodeJS.Signals): void {
  killAllNow();
  process.off(signal, onSignal);
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on("exit", killAllNow);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}

export function startProcess(spec: ProcessSpec): ManagedProcess {
  installExitHooks();
  const log = openSync(spec.logPath, "a");
  let child: ChildProcess;
  try {
    // detached:false keeps the child in our process group, so a terminal's Ctrl-C reaches it too
    child = spawn(spec.command, spec.args, { stdio: ["ignore", log, log], detached: false });
  } finally {
    closeSync(log);
  }
  let status: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      status = code !== null ? `exit code ${code}` : `signal ${signal ?? "unknown"}`;
      running.delete(child);
      resolve();
    });
    child.once("error", (error) => {
      status = `spawn error: ${error.message}`;
      running.delete(child);
      resolve();
    });
  });
  running.add(child);
  return {
    name: spec.name,
    pid: child.pid ?? -1,
    logPath: spec.logPath,
    exitStatus: () => status,
    async stop(graceMs) {
      if (status !== undefined) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      try {
        await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** The last lines of a log file, for error messages; empty when the file cannot be read. */
export function tailFile(path: string, lines: number): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}
