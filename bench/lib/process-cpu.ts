/**
 * CPU time of another process (the simulator's child) from /proc/<pid>/stat, and the event-loop
 * utilisation of this one: when a target is missed they say whether the client's event loop or
 * the simulator was saturated. Linux only; elsewhere the CPU time is undefined.
 */
import { readFileSync } from "node:fs";
import { performance, type EventLoopUtilization } from "node:perf_hooks";

const CLOCK_TICKS_PER_SECOND = 100;

/** user + system CPU seconds of the process so far, or undefined when /proc cannot tell */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // fields after the command name in parentheses: state is field 3, utime 14, stime 15
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
    return (utime + stime) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

export interface LoadProbe {
  /** what happened since the probe started: this process's event-loop utilisation (0..1), the other's CPU */
  stop(): { eventLoopUtilization: number; otherCpuSeconds: number | undefined; ownCpuSeconds: number };
}

/** Starts measuring this process's event loop and CPU, and another process's CPU. */
export function startLoadProbe(otherPid: number): LoadProbe {
  const elu: EventLoopUtilization = performance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const other = processCpuSeconds(otherPid);
  return {
    stop: () => {
      const used = process.cpuUsage(cpu);
      const otherNow = processCpuSeconds(otherPid);
      return {
        eventLoopUtilization: performance.eventLoopUtilization(elu).utilization,
        otherCpuSeconds: other === undefined || otherNow === undefined ? undefined : otherNow - other,
        ownCpuSeconds: (used.user + used.system) / 1e6,
      };
    },
  };
}
