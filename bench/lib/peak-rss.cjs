/**
 * The peak RSS of this process image. process.resourceUsage().maxRSS is no use in a benchmark's
 * child: Linux carries the high-water mark across fork and exec, so a child forked from a 300 MB
 * parent reports at least 300 MB however little it uses. /proc/self/status' VmHWM belongs to the
 * program now running; maxRSS only where there is no /proc.
 *
 * Plain CommonJS so that a measured CLI can preload it (`--require`) without Node loading its
 * TypeScript stripper, which would weigh on the figure: with NSXV_BENCH_PEAK_RSS_FILE set, the
 * peak and the CPU time used (user + system, which other work on the machine does not inflate as
 * it does wall time) are written to that file at exit, as JSON `{ peakRssBytes, cpuMs }`.
 */
"use strict";
const { readFileSync, writeFileSync } = require("node:fs");

function peakRssBytes() {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (match !== null) return Number(match[1]) * 1024;
  } catch {
    // not Linux: below
  }
  return process.resourceUsage().maxRSS * 1024;
}

const file = process.env.NSXV_BENCH_PEAK_RSS_FILE;
if (file !== undefined)
  process.on("exit", () => {
    const { user, system } = process.cpuUsage();
    writeFileSync(file, JSON.stringify({ peakRssBytes: peakRssBytes(), cpuMs: (user + system) / 1000 }));
  });

module.exports = { peakRssBytes };
