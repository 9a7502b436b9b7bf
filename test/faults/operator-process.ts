/**
 * The operator as a child process (`node src/cli/main.ts run --manifests DIR --status-file F`),
 * for tests that kill it with SIGKILL at a chosen moment and start it again: its JSON log lines
 * are kept, and `kill()` resolves once the process is gone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

export interface OperatorProcess {
  child: ChildProcess;
  /** every JSON log line so far */
  logs: Record<string, unknown>[];
  /** stderr, for the message of a test that fails */
  stderr(): string;
  /** resolves with the exit code, or the signal that ended it */
  exited: Promise<number | NodeJS.Signals>;
  /** sends the signal (default SIGKILL) and resolves once the process has exited */
  kill(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals>;
}

export function spawnOperator(options: { manifests: string; statusFile: string }): OperatorProcess {
  const child = spawn(
    process.execPath,
    [
      "src/cli/main.ts",
      "run",
      "--manifests",
      options.manifests,
      "--status-file",
      options.statusFile,
      "--metrics-bind-address",
      "0",
      "--health-probe-bind-address",
      "0",
      "--log-level",
      "debug",
    ],
    { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] },
  );
  const logs: Record<string, unknown>[] = [];
  let pending = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ msg: line });
      }
    }
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | NodeJS.Signals>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ?? code ?? -1));
  });
  return {
    child,
    logs,
    stderr: () => stderr,
    exited,
    kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
