/**
 * A vitest reporter that says where a run's time went, per test file: wall time (import and
 * setup included), the CPU time its worker and that worker's children spent (cpu-meter.ts), and
 * when it started. Prints the slowest files and the totals; with NSXV_FILE_TIMES=path also
 * writes every row as JSON there. Use beside the default reporter:
 *
 *   npm test -- --reporter=default --reporter=./test/support/file-times.ts
 */
import { writeFileSync } from "node:fs";
import type { Reporter, TestModule } from "vitest/node";

interface FileTime {
  file: string;
  project: string;
  state: string;
  /** import, setup and tests, as the worker saw them */
  wallMs: number;
  cpuMs: number | undefined;
  /** since the first file started */
  startMs: number | undefined;
}

const SHOWN = 25;

export default class FileTimesReporter implements Reporter {
  #startedAtMs = Date.now();

  onTestRunStart(): void {
    this.#startedAtMs = Date.now();
  }

  onTestRunEnd(testModules: readonly TestModule[]): void {
    const rows = testModules.map((module) => rowOf(module));
    const firstStart = Math.min(...rows.map((r) => r.startMs ?? Number.POSITIVE_INFINITY));
    for (const row of rows) if (row.startMs !== undefined) row.startMs -= firstStart;
    rows.sort((a, b) => b.wallMs - a.wallMs);
    const seconds = (ms: number | undefined) =>
      ms === undefined ? "    -" : (ms / 1000).toFixed(1).padStart(5);
    const lines = rows
      .slice(0, SHOWN)
      .map(
        (r) =>
          `${seconds(r.wallMs)} ${seconds(r.cpuMs)} ${seconds(r.startMs)}  ${r.project.padEnd(11)} ${r.file}`,
      );
    const sum = (pick: (r: FileTime) => number | undefined) => rows.reduce((s, r) => s + (pick(r) ?? 0), 0);
    console.log(
      [
        "",
        `file times: the ${Math.min(SHOWN, rows.length)} slowest of ${rows.length} files`,
        " wall   cpu start  project     file",
        ...lines,
        `sum of file wall times ${seconds(sum((r) => r.wallMs))} s, of file CPU times ${seconds(sum((r) => r.cpuMs))} s, ` +
          `run ${seconds(Date.now() - this.#startedAtMs)} s`,
      ].join("\n"),
    );
    const out = process.env.NSXV_FILE_TIMES;
    if (out !== undefined && out !== "") writeFileSync(out, JSON.stringify(rows, null, 2));
  }
}

function rowOf(module: TestModule): FileTime {
  const diagnostic = module.diagnostic();
  const meta = module.meta();
  return {
    file: module.relativeModuleId,
    project: module.project.name,
    state: module.state(),
    wallMs:
      diagnostic.environmentSetupDuration +
      diagnostic.prepareDuration +
      diagnostic.setupDuration +
      diagnostic.collectDuration +
      diagnostic.duration,
    cpuMs: meta.cpuMs,
    startMs: meta.startedAtMs,
  };
}
