/**
 * Setup file of every project: records in the test file's meta the CPU time its worker and the
 * children it waited for spent on it (from /proc/self/stat, Linux only), and when it started and
 * ended, for the per-file table of file-times.ts. Costs two small reads per file.
 */
import { readFileSync } from "node:fs";
import { afterEach } from "vitest";

declare module "vitest" {
  interface TaskMeta {
    /** CPU time of the worker and its reaped children from the file's setup to its last test, in ms (Linux) */
    cpuMs?: number;
    /** wall clock at the file's setup and after its last test, in ms since the epoch */
    startedAtMs?: number;
    endedAtMs?: number;
  }
}

/** clock ticks per second of /proc's times: 100 on every Linux vitest runs on */
const TICKS_PER_SECOND = 100;

/** utime + stime + cutime + cstime of this process, in ms; undefined off Linux */
function cpuMsSoFar(): number | undefined {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // the fields after the command name, which is in parentheses and may hold spaces
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime, stime, cutime, cstime are fields 14-17 of proc(5); here 0-based after the name: 11-14
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

const startedAtMs = Date.now();
const cpuAtStart = cpuMsSoFar();

// after each test, so that the last one leaves the file's figures (its afterAll hooks are not counted)
afterEach(({ task }) => {
  const cpuNow = cpuMsSoFar();
  task.file.meta.startedAtMs = startedAtMs;
  task.file.meta.endedAtMs = Date.now();
  if (cpuAtStart !== undefined && cpuNow !== undefined) task.file.meta.cpuMs = cpuNow - cpuAtStart;
});
