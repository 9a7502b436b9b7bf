/** The machine a run happened on, for RESULTS.md: cores, CPU model, memory, Node version, date, load. */
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";

export interface MachineInfo {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
  date: string;
  /** 1-minute load average when the run started: other work on the machine skews the figures */
  loadAverage1m: number;
}

export function machineInfo(now: Date = new Date()): MachineInfo {
  return {
    nproc: availableParallelism(),
    cpuModel: cpuModel(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    date: now.toISOString(),
    loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

/** "model name" of /proc/cpuinfo, else what os.cpus() says */
function cpuModel(): string {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    const model = line?.split(":").slice(1).join(":").trim();
    if (model) return model;
  } catch {
    // not Linux: fall through
  }
  return cpus()[0]?.model ?? "unknown";
}
