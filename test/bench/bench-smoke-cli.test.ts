/**
 * The benchmarks of bench/ that run the built CLI (dist/, built once for the three), at a tiny size (smoke.ts says what is checked).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { benchCliCost, CLI_COST_QUICK } from "../../bench/cli-cost.ts";
import { benchCliFootprint } from "../../bench/cli-footprint.ts";
import { benchFleetCli, FLEET_CLI_QUICK } from "../../bench/fleet-cli.ts";
import { benchHostileEdgeList } from "../../bench/hostile-edge-list.ts";
import { buildCli } from "../../bench/lib/cli-process.ts";
import { HOSTILE_TEXTS } from "../../bench/lib/hostile-manifests.ts";
import { referenceBuild } from "../../bench/lib/reference-build.ts";
import { benchManifestInput } from "../../bench/manifest-input.ts";
import { smokeTest } from "./smoke.ts";

describe("the build the benchmarks run (npm run build)", () => {
  const dir = "dist/cli";
  const leftOver = join(dir, "bundle-chunk-LEFTOVER.js");
  // before the file's first build: the build must remove it
  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(leftOver, "// a split file of a former build\n");
  });

  it(
    "bundles the command's program: it and its split files import no other file of dist, and a former build's split files are removed",
    { timeout: 90_000 },
    async () => {
      await buildCli();
      const split = readdirSync(dir).filter((name) => name.startsWith("bundle-") && name.endsWith(".js"));
      const imported = ["program.js", ...split].flatMap((name) =>
        [
          ...readFileSync(join(dir, name), "utf8").matchAll(/\b(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g),
        ].map((m) => m[1] as string),
      );
      expect(split.length, "the commands' own parts are split off").toBeGreaterThan(1);
      expect(imported.filter((specifier) => !/^\.\/bundle-[\w-]+\.js$/.test(specifier))).toEqual([]);
      for (const specifier of imported) expect(existsSync(join(dir, specifier)), specifier).toBe(true);
      expect(existsSync(leftOver)).toBe(false);
    },
  );
});

smokeTest([
  {
    name: "CliFootprint",
    reason: "the built CLI corrects a drifted edge in a child process whose peak RSS and wall time are read",
    run: () => benchCliFootprint({ cases: [{ label: "1 edge", edges: 1 }], runs: 1 }),
    metrics: ["peak RSS", "wall", "edges corrected", "lost-content PUTs"],
    exact: { "edges corrected": 1, "lost-content PUTs": 0 },
  },
  {
    name: "CliCost",
    reason:
      "plan and apply of the built CLI, each run checked (plan finds nothing, apply corrects every edge), with CPU and wall time; the reference build is left out here (its npm ci takes a minute)",
    run: () =>
      benchCliCost({
        ...CLI_COST_QUICK,
        reference: undefined,
        plan: { edges: 6, runs: 1 },
        apply: { edges: 4 },
        cpu: { runs: 1 },
        efficiency: { runs: 1, latencyMs: 5, concurrency: 4 },
      }),
    metrics: (label) =>
      label.startsWith("plan")
        ? ["wall, this build (median)", "CPU, this build (median)", "load average (1 min) before"]
        : label.includes("no added latency")
          ? [
              "CPU, this build (median)",
              "CPU, this build / reference",
              "wall, this build (median)",
              "simulator CPU, this build (median)",
            ]
          : [
              "manager calls",
              "ideal bound (2N+1 calls x L / C)",
              "wall, this build (median)",
              "efficiency, this build",
              "simulator CPU, this build (median)",
            ],
  },
  {
    name: "FleetCli",
    reason:
      "plan of a converged fleet reads the list, plan names exactly the edges drifted out of band, apply corrects them",
    run: () => benchFleetCli({ ...FLEET_CLI_QUICK, edges: 12, drifted: [2, 12] }),
    metrics: (label) =>
      label.startsWith("plan")
        ? ["manager calls", "getEdge calls", "wall (median)", "CPU, user + system (median)"]
        : [
            "plan names exactly the drifted edges",
            "apply: manager calls",
            "apply: edges corrected (PUTs)",
            "edges left drifted after apply",
            "lost-content PUTs",
          ],
    exact: {
      // the fewest: the list's one page answers the manager's check; apply adds a GET and a PUT per drifted edge
      "manager calls": 1,
      "apply: manager calls": 1 + 2 * 2,
      "getEdge calls": 0,
      "plan names exactly the drifted edges": 1,
      "apply: edges corrected (PUTs)": 2,
      "edges left drifted after apply": 0,
      "lost-content PUTs": 0,
    },
  },
  {
    name: "HostileEdgeList",
    reason:
      "apply against a manager whose list counts more edges than one may hold: one page asked, then refused",
    run: () =>
      benchHostileEdgeList({
        cases: [
          {
            label: "apply",
            command: "apply",
            managers: 1,
            list: { totalCount: 1_000_000_000, summaryBytes: 500 },
          },
        ],
      }),
    metrics: ["peak RSS", "list pages asked (all managers)", "exit code"],
    exact: { "list pages asked (all managers)": 1, "exit code": 0 },
  },
  {
    name: "ManifestInput",
    reason:
      "plan of the built CLI refuses a hostile file unparsed and reads a mapping, each with peak RSS and wall time",
    run: () =>
      benchManifestInput({
        hostile: HOSTILE_TEXTS.filter((h) => h.name === "CompactSequences"),
        mappingKeys: [100],
        refusedRssOverBaselineMiB: 100,
        ordinaryObjects: 5,
        // over the 16Mi bound on one read, each file within the 4 MiB cap
        overBound: { files: 5, fileBytes: 3_500_000 },
      }),
    metrics: (label) =>
      label.startsWith("baseline")
        ? ["peak RSS", "wall"]
        : label.startsWith("ConfigMap")
          ? ["read", "peak RSS", "wall"]
          : label.includes("EdgeTenants")
            ? ["read", "CPU per object over baseline", "wall", "peak RSS"]
            : label.includes("files of")
              ? ["refused unread, the bound named", "peak RSS over baseline", "wall"]
              : ["refused before parsing", "peak RSS", "peak RSS over baseline", "wall"],
  },
]);

describe("a reference build that cannot be made", () => {
  it("is said so, with the reason, instead of failing the benchmark", { timeout: 60_000 }, async () => {
    const missing = "0".repeat(40);
    const reference = await referenceBuild(missing);
    expect(reference).toMatchObject({ commit: missing, available: false });
    expect(reference.available === false ? reference.reason : "").toMatch(/git worktree add/);
  });
});
