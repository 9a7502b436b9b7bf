/**
 * The smoke test of a benchmark of bench/ at a tiny size: it runs end to end (simulator and
 * operator child processes included) and returns results of the right shape. Not a timed test: no
 * duration is asserted, only the shape, and the correctness figures a benchmark relies on (the
 * fleet converged, a pass in sync wrote nothing). The benchmarks are spread over three files, so
 * that they run side by side: in-process, the built CLI, the operator in a child process.
 */
import { describe, expect, it } from "vitest";
import { DRIFTED_TENANT } from "../../bench/lib/fixtures.ts";
import type { BenchResult } from "../../bench/lib/result.ts";
import { formatTable, resultRows } from "../../bench/lib/table.ts";

export interface SmokeCase {
  name: string;
  reason: string;
  run: () => Promise<BenchResult>;
  /** metrics every case of the result must report (by the case's label when they differ) */
  metrics: string[] | ((caseLabel: string) => string[]);
  /** metric → value it must have in every case that reports it (correctness, never a duration) */
  exact?: Record<string, number>;
}

/** a fleet of `edges` drifted EdgeTenants and `pools` pools with strays, for the fleet benchmarks */
export const tinyFleet = (edges: number, pools: number, straysPerPool: number) => ({
  edges,
  pools,
  allowedPerPool: 2,
  straysPerPool,
  edgeTenant: DRIFTED_TENANT,
});

export function smokeTest(cases: SmokeCase[]): void {
  describe("benchmarks at a tiny size", () => {
    it.each(cases)("$name: $reason", { timeout: 90_000 }, async ({ name, run, metrics, exact = {} }) => {
      const result = await run();
      expect(result.name, name).toMatch(/^[a-z-]+$/);
      expect(result.measurements.length).toBeGreaterThan(0);
      for (const m of result.measurements) {
        expect(typeof m.value).toBe("number");
        expect(m.case).not.toBe("");
        expect(m.unit).not.toBe("");
        if (m.target !== undefined) expect(typeof m.target.met).toBe("boolean");
      }
      const labels = new Set(result.measurements.map((m) => m.case));
      for (const c of labels) {
        const here = result.measurements.filter((m) => m.case === c);
        for (const metric of typeof metrics === "function" ? metrics(c) : metrics)
          expect(
            here.map((m) => m.metric),
            `${c}: ${metric}`,
          ).toContain(metric);
        // in the cases that report the metric (the metrics above say which must)
        for (const [metric, value] of Object.entries(exact)) {
          const found = here.find((m) => m.metric === metric);
          if (found !== undefined) expect(found.value, `${c}: ${metric}`).toBe(value);
        }
      }
      // the printed table has a header, a rule and one row per measurement
      expect(formatTable(resultRows([result])).split("\n")).toHaveLength(result.measurements.length + 2);
    });
  });
}
