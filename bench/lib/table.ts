/** The results as an aligned markdown table: one row per measurement. */
import type { BenchResult } from "./result.ts";
import { round } from "./stats.ts";

const HEADERS = ["benchmark", "case", "metric", "value", "unit", "target", "met"];

export function resultRows(results: readonly BenchResult[]): string[][] {
  return results.flatMap((r) =>
    r.measurements.map((m) => [
      r.name,
      m.case,
      m.metric,
      String(round(m.value)),
      m.unit,
      m.target?.text ?? "",
      m.target === undefined ? "" : m.target.met ? "yes" : "NO",
    ]),
  );
}

/** Markdown table whose columns are padded to the same width, readable as plain text too. */
export function formatTable(rows: readonly string[][], headers: readonly string[] = HEADERS): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const isNumber = (text: string): boolean => /^-?[\d.]+(e[-+]\d+)?$|^NaN$/.test(text);
  // right-aligned: columns of numbers (empty cells allowed, but not only empty cells)
  const numeric = headers.map(
    (_, i) =>
      rows.some((r) => (r[i] ?? "") !== "") && rows.every((r) => (r[i] ?? "") === "" || isNumber(r[i] ?? "")),
  );
  const cell = (text: string, i: number): string =>
    numeric[i] ? text.padStart(widths[i] ?? 0) : text.padEnd(widths[i] ?? 0);
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => cell(c, i)).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (numeric[i] ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`;
  return [line(headers), rule, ...rows.map((r) => line(headers.map((_, i) => r[i] ?? "")))].join("\n");
}
