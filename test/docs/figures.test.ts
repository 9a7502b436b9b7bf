/**
 * The figures the README quotes are bench/results/RESULTS.md's, as `npm run bench` last wrote
 * them: each row of the README's "Measured figures" table names a benchmark, a case and a metric
 * of RESULTS.md's tables and gives the same value and unit, so a new run of the benchmarks
 * cannot leave a stale figure in the README.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cells } from "./markdown.ts";

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** Every results row of RESULTS.md (benchmark, case, metric, value, unit, target, met), by its first three cells. */
function resultRows(text: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    if (!line.startsWith("|")) continue;
    const row = cells(line);
    if (row.length !== 7 || /^-+$/.test(row[0] ?? "") || row[0] === "benchmark") continue;
    rows.set(row.slice(0, 3).join(" | "), row);
  }
  return rows;
}

/** The rows (cells) of the table in the README's "Measured figures" section, without its header. */
function quotedRows(text: string): string[][] {
  const section = /^## Measured figures\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(text)?.[1] ?? "";
  return section
    .split("\n")
    .filter((line) => line.startsWith("|"))
    .slice(2)
    .map(cells);
}

describe("the README's measured figures", () => {
  const results = resultRows(read("bench/results/RESULTS.md"));
  const quoted = quotedRows(read("README.md"));

  it("link to RESULTS.md and quote some of its rows", () => {
    expect(read("README.md")).toContain("(bench/results/RESULTS.md)");
    expect(results.size).toBeGreaterThan(100);
    expect(quoted.length).toBeGreaterThan(3);
  });

  it.each(quoted.map((row) => ({ key: row.slice(0, 3).join(" | "), value: row[3] ?? "" })))(
    "$key is RESULTS.md's $value",
    ({ key, value }) => {
      const row = results.get(key);
      expect(row, `RESULTS.md has no row ${key}`).toBeDefined();
      expect(value).toBe(`${row?.[3]} ${row?.[4]}`);
    },
  );
});
