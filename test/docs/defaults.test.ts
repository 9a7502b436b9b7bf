/**
 * Defaults that prose restates (the chart's values, docs/cli.md) are the values of the one
 * constant that holds them; the CRDs' defaults are checked in test/api/crd-types.test.ts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatDuration } from "../../src/api/duration.ts";
import { SPEC_DEFAULTS } from "../../src/api/types.ts";
import { OPERATOR_DEFAULTS } from "../../src/operator/operator.ts";

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

describe("defaults said in prose", () => {
  it.each([
    {
      name: "ChartSyncInterval",
      reason: "the chart's syncInterval comment names the operator's default",
      file: "deploy/helm/nsxv-operator/values.yaml",
      said: /"" keeps the operator's default \(([^)]+)\)\nsyncInterval:/,
      want: formatDuration(OPERATOR_DEFAULTS.syncIntervalMs),
    },
    {
      name: "ChartConcurrency",
      reason: "the chart's concurrency comment names the operator's default",
      file: "deploy/helm/nsxv-operator/values.yaml",
      said: /null keeps the operator's default \((\d+)\)\nconcurrency:/,
      want: String(OPERATOR_DEFAULTS.concurrency),
    },
    {
      name: "ImportScope",
      reason: "the import section of docs/cli.md names the pool scope a spec defaults to",
      file: "docs/cli.md",
      said: /`--scope` \(default\s+`([^`]+)`\)/,
      want: SPEC_DEFAULTS.poolScope,
    },
  ])("$name: $reason", ({ file, said, want }) => {
    const match = said.exec(read(file));
    expect(match, `${file} no longer says it the way this test looks for`).not.toBeNull();
    expect(match?.[1]).toBe(want);
  });
});
