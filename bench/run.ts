/**
 * `npm run bench [-- --quick] [-- --only a,b [--merge]] [-- --with-apiserver]`: runs the benchmarks,
 * prints one aligned markdown table, and writes bench/results/latest.json; a full run (no --quick,
 * no --only) also writes bench/results/RESULTS.md with the machine it ran on. `--only a,b --merge`
 * runs those at full size and puts their results in place of theirs in the last full run's
 * latest.json, then writes RESULTS.md from that, saying which were run again and when. scale-apiserver (2000
 * objects) needs test/controlplane's binaries; --with-apiserver adds its 10 000-object variant
 * (minutes). Benchmarks are not
 * tests: a missed target is reported in the table, not as a failure; a benchmark that throws
 * makes the exit status 1.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  benchClientThroughput,
  CLIENT_THROUGHPUT_FULL,
  CLIENT_THROUGHPUT_QUICK,
} from "./client-throughput.ts";
import {
  benchCeiling,
  benchCeilingApiServer,
  CEILING_APISERVER_FULL,
  CEILING_APISERVER_QUICK,
  CEILING_FULL,
  CEILING_QUICK,
} from "./ceiling.ts";
import { benchCliCost, CLI_COST_FULL, CLI_COST_QUICK } from "./cli-cost.ts";
import { benchCliFootprint, CLI_FOOTPRINT_FULL, CLI_FOOTPRINT_QUICK } from "./cli-footprint.ts";
import { benchConvergence, CONVERGENCE_FULL, CONVERGENCE_QUICK } from "./convergence.ts";
import { benchEdgeDocument, EDGE_DOCUMENT_FULL, EDGE_DOCUMENT_QUICK } from "./edge-document.ts";
import { benchFleetCli, FLEET_CLI_FULL, FLEET_CLI_QUICK } from "./fleet-cli.ts";
import { benchFleetInterval, FLEET_INTERVAL_FULL, FLEET_INTERVAL_QUICK } from "./fleet-interval.ts";
import { machineInfo, type MachineInfo } from "./lib/machine.ts";
import { benchHungManager, HUNG_MANAGER_FULL, HUNG_MANAGER_QUICK } from "./hung-manager.ts";
import {
  benchHostileEdgeList,
  HOSTILE_EDGE_LIST_FULL,
  HOSTILE_EDGE_LIST_QUICK,
} from "./hostile-edge-list.ts";
import { benchManifestInput, MANIFEST_INPUT_FULL, MANIFEST_INPUT_QUICK } from "./manifest-input.ts";
import type { BenchResult } from "./lib/result.ts";
import { formatTable, resultRows } from "./lib/table.ts";
import { benchScale, SCALE_FULL, SCALE_QUICK } from "./scale.ts";
import {
  benchScaleApiServer,
  SCALE_APISERVER_10K,
  SCALE_APISERVER_FULL,
  SCALE_APISERVER_QUICK,
} from "./scale-apiserver.ts";
import { benchSteadyState, STEADY_STATE_FULL, STEADY_STATE_QUICK } from "./steady-state.ts";

interface Benchmark {
  name: string;
  /** run without --only; false: only when named, or with its flag (--with-apiserver) */
  byDefault: boolean;
  run(quick: boolean): Promise<BenchResult>;
  /** the whole benchmark is abandoned after this long (its own steps have tighter bounds) */
  limitMs: { quick: number; full: number };
}

const MINUTE = 60_000;

const BENCHMARKS: readonly Benchmark[] = [
  {
    name: "edge-document",
    byDefault: true,
    run: (quick) => benchEdgeDocument(quick ? EDGE_DOCUMENT_QUICK : EDGE_DOCUMENT_FULL),
    limitMs: { quick: 2 * MINUTE, full: 5 * MINUTE },
  },
  {
    name: "client-throughput",
    byDefault: true,
    run: (quick) => benchClientThroughput(quick ? CLIENT_THROUGHPUT_QUICK : CLIENT_THROUGHPUT_FULL),
    limitMs: { quick: 2 * MINUTE, full: 5 * MINUTE },
  },
  {
    name: "convergence",
    byDefault: true,
    run: (quick) => benchConvergence(quick ? CONVERGENCE_QUICK : CONVERGENCE_FULL),
    limitMs: { quick: 5 * MINUTE, full: 15 * MINUTE },
  },
  {
    name: "steady-state",
    byDefault: true,
    run: (quick) => benchSteadyState(quick ? STEADY_STATE_QUICK : STEADY_STATE_FULL),
    limitMs: { quick: 3 * MINUTE, full: 10 * MINUTE },
  },
  {
    name: "hung-manager",
    byDefault: true,
    run: (quick) => benchHungManager(quick ? HUNG_MANAGER_QUICK : HUNG_MANAGER_FULL),
    limitMs: { quick: 3 * MINUTE, full: 12 * MINUTE },
  },
  {
    name: "hostile-edge-list",
    byDefault: true,
    run: (quick) => benchHostileEdgeList(quick ? HOSTILE_EDGE_LIST_QUICK : HOSTILE_EDGE_LIST_FULL),
    limitMs: { quick: 3 * MINUTE, full: 10 * MINUTE },
  },
  {
    name: "cli-footprint",
    byDefault: true,
    run: (quick) => benchCliFootprint(quick ? CLI_FOOTPRINT_QUICK : CLI_FOOTPRINT_FULL),
    limitMs: { quick: 3 * MINUTE, full: 10 * MINUTE },
  },
  {
    name: "fleet-cli",
    byDefault: true,
    run: (quick) => benchFleetCli(quick ? FLEET_CLI_QUICK : FLEET_CLI_FULL),
    limitMs: { quick: 3 * MINUTE, full: 10 * MINUTE },
  },
  {
    name: "cli-cost",
    byDefault: true,
    run: (quick) => benchCliCost(quick ? CLI_COST_QUICK : CLI_COST_FULL),
    // the first run also checks out and builds the reference (npm ci, tsc: a minute or two)
    limitMs: { quick: 8 * MINUTE, full: 15 * MINUTE },
  },
  {
    name: "fleet-interval",
    byDefault: true,
    run: (quick) => benchFleetInterval(quick ? FLEET_INTERVAL_QUICK : FLEET_INTERVAL_FULL),
    limitMs: { quick: 5 * MINUTE, full: 20 * MINUTE },
  },
  {
    name: "ceiling",
    byDefault: true,
    run: (quick) => benchCeiling(quick ? CEILING_QUICK : CEILING_FULL),
    limitMs: { quick: 5 * MINUTE, full: 25 * MINUTE },
  },
  {
    name: "ceiling-apiserver",
    byDefault: true,
    run: (quick) => benchCeilingApiServer(quick ? CEILING_APISERVER_QUICK : CEILING_APISERVER_FULL),
    limitMs: { quick: 8 * MINUTE, full: 20 * MINUTE },
  },
  {
    name: "manifest-input",
    byDefault: true,
    run: (quick) => benchManifestInput(quick ? MANIFEST_INPUT_QUICK : MANIFEST_INPUT_FULL),
    limitMs: { quick: 3 * MINUTE, full: 10 * MINUTE },
  },
  {
    name: "scale",
    byDefault: true,
    run: (quick) => benchScale(quick ? SCALE_QUICK : SCALE_FULL),
    limitMs: { quick: 10 * MINUTE, full: 40 * MINUTE },
  },
  {
    name: "scale-apiserver",
    byDefault: true,
    run: (quick) => benchScaleApiServer(quick ? SCALE_APISERVER_QUICK : SCALE_APISERVER_FULL),
    limitMs: { quick: 10 * MINUTE, full: 20 * MINUTE },
  },
  {
    name: "scale-apiserver-10k",
    byDefault: false,
    run: (quick) => benchScaleApiServer(quick ? SCALE_APISERVER_QUICK : SCALE_APISERVER_10K),
    limitMs: { quick: 10 * MINUTE, full: 45 * MINUTE },
  },
];

const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

interface RunReport {
  options: { quick: boolean; only: string[] | undefined; withApiserver: boolean };
  machine: MachineInfo;
  /** benchmarks run again after the full run (--merge), with the machine's state then */
  rerun?: { names: string[]; machine: MachineInfo; loadAverage1mAtEnd: number }[];
  loadAverage1mAtEnd: number;
  results: BenchResult[];
  failures: { name: string; error: string }[];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      "with-apiserver": { type: "boolean", default: false },
      merge: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(
      `usage: npm run bench -- [--quick] [--only ${BENCHMARKS.map((b) => b.name).join(",")} [--merge]] [--with-apiserver]`,
    );
    return 0;
  }
  const only = values.only
    ?.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const unknown = only?.filter((n) => !BENCHMARKS.some((b) => b.name === n)) ?? [];
  if (unknown.length > 0) {
    console.error(
      `unknown benchmark(s): ${unknown.join(", ")}; known: ${BENCHMARKS.map((b) => b.name).join(", ")}`,
    );
    return 2;
  }
  if (values.merge && (values.quick || only === undefined)) {
    console.error(
      "--merge puts full-size results of --only benchmarks into the last full run's: not with --quick, only with --only",
    );
    return 2;
  }
  const wanted = (b: Benchmark): boolean =>
    only === undefined
      ? b.byDefault || (b.name === "scale-apiserver-10k" && values["with-apiserver"])
      : only.includes(b.name);
  const selected = BENCHMARKS.filter(wanted);
  const report: RunReport = {
    options: { quick: values.quick, only, withApiserver: values["with-apiserver"] },
    machine: machineInfo(),
    loadAverage1mAtEnd: 0,
    results: [],
    failures: [],
  };
  for (const bench of selected) {
    console.error(`[bench] ${bench.name}${values.quick ? " (quick)" : ""} ...`);
    try {
      const result = await withLimit(
        bench.run(values.quick),
        values.quick ? bench.limitMs.quick : bench.limitMs.full,
      );
      report.results.push(result);
      console.error(`[bench] ${bench.name} done in ${(result.durationMs / 1000).toFixed(1)} s`);
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      report.failures.push({ name: bench.name, error: message });
      console.error(`[bench] ${bench.name} FAILED: ${message}`);
    }
  }
  report.loadAverage1mAtEnd = Math.round((loadavg()[0] ?? 0) * 100) / 100;
  const table = formatTable(resultRows(report.results));
  console.log(table);
  await mkdir(RESULTS_DIR, { recursive: true });
  if (values.merge) {
    const merged = mergeInto(
      JSON.parse(await readFile(join(RESULTS_DIR, "latest.json"), "utf8")) as RunReport,
      report,
    );
    await writeFile(join(RESULTS_DIR, "latest.json"), `${JSON.stringify(merged, finiteOrNull, 2)}\n`);
    const mergedTable = formatTable(resultRows(merged.results));
    await writeFile(join(RESULTS_DIR, "RESULTS.md"), resultsMarkdown(merged, mergedTable));
    console.error(
      `[bench] merged ${selected.map((b) => b.name).join(", ")} into bench/results/latest.json and RESULTS.md`,
    );
    return report.failures.length > 0 ? 1 : 0;
  }
  await writeFile(join(RESULTS_DIR, "latest.json"), `${JSON.stringify(report, finiteOrNull, 2)}\n`);
  if (!values.quick && only === undefined) {
    await writeFile(join(RESULTS_DIR, "RESULTS.md"), resultsMarkdown(report, table));
    console.error(`[bench] wrote bench/results/latest.json and bench/results/RESULTS.md`);
  } else {
    console.error(`[bench] wrote bench/results/latest.json (RESULTS.md is written by a full run only)`);
  }
  return report.failures.length > 0 ? 1 : 0;
}

class BenchTimeoutError extends Error {
  readonly code = "BENCH_TIMEOUT";
  constructor(limitMs: number) {
    super(`not finished after ${limitMs / 1000} s`);
    this.name = "BenchTimeoutError";
  }
}

function withLimit<T>(work: Promise<T>, limitMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BenchTimeoutError(limitMs)), limitMs);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

/**
 * The last full run's report with `rerun`'s results in place of the same benchmarks' (a new one
 * goes where BENCHMARKS lists it) and its failures instead of theirs. Refuses a report that is
 * not a full run's: the figures of a quick run would pass for full ones.
 */
function mergeInto(full: RunReport, rerun: RunReport): RunReport {
  if (full.options.quick || full.options.only !== undefined)
    throw new Error("bench/results/latest.json is not a full run's: run `npm run bench` first, then --merge");
  const names = rerun.results.map((r) => r.name).concat(rerun.failures.map((f) => f.name));
  const order = (name: string): number => BENCHMARKS.findIndex((b) => b.name === name);
  const results = [...full.results.filter((r) => !names.includes(r.name)), ...rerun.results].sort(
    (a, b) => order(a.name) - order(b.name),
  );
  return {
    ...full,
    results,
    failures: [...full.failures.filter((f) => !names.includes(f.name)), ...rerun.failures],
    rerun: [
      ...(full.rerun ?? [])
        .map((r) => ({ ...r, names: r.names.filter((n) => !names.includes(n)) }))
        .filter((r) => r.names.length > 0),
      { names, machine: rerun.machine, loadAverage1mAtEnd: rerun.loadAverage1mAtEnd },
    ],
  };
}

/** JSON has no NaN or Infinity: a figure that was not obtained is null */
function finiteOrNull(_key: string, value: unknown): unknown {
  return typeof value === "number" && !Number.isFinite(value) ? null : value;
}

function resultsMarkdown(report: RunReport, table: string): string {
  const m = report.machine;
  const notes = report.results.flatMap((r) => r.notes.map((n) => `- **${r.name}**: ${n}`));
  const failures = report.failures.map((f) => `- **${f.name}** failed: ${f.error.split("\n")[0] ?? ""}`);
  const missed = report.results.flatMap((r) =>
    r.measurements.filter((x) => x.target?.met === false).map((x) => `- ${r.name} / ${x.case} / ${x.metric}`),
  );
  return [
    "# Benchmark results",
    "",
    "Written by `npm run bench` (a full run); the raw figures are in `latest.json`.",
    "",
    "## Machine",
    "",
    `- ${m.nproc} CPUs: ${m.cpuModel}`,
    `- memory: ${m.memoryGiB} GiB`,
    `- node ${m.node} (${m.platform})`,
    `- date: ${m.date}`,
    `- load average (1 min) at start ${m.loadAverage1m}, at end ${report.loadAverage1mAtEnd}: other work on the machine slows the figures`,
    ...(report.rerun ?? []).map(
      (r) =>
        `- run again after it (\`--only ${r.names.join(",")} --merge\`): ${r.names.join(", ")} on ${r.machine.date}, load average at start ${r.machine.loadAverage1m}, at end ${r.loadAverage1mAtEnd}`,
    ),
    "",
    "## Results",
    "",
    table,
    "",
    "## Targets missed",
    "",
    ...(missed.length > 0 ? missed : ["- none"]),
    ...(failures.length > 0 ? ["", "## Failures", "", ...failures] : []),
    "",
    "## How the figures were obtained",
    "",
    ...notes,
    "",
  ].join("\n");
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
