/**
 * The alerts and metrics, checked by Prometheus' own tool: the PrometheusRule's groups pass
 * `promtool check rules` and its unit tests (`promtool test rules`: each alert fires when it
 * should, with the labels and text people get, and not before), and what the operator serves on
 * /metrics passes `promtool check metrics`. Debian's `prometheus` package carries promtool.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import { IN_CI, lookupTool, readRepoFile } from "./tools.ts";

const promtool = lookupTool("promtool", "apt-get install -y prometheus (Debian's package carries promtool)");

interface Rule {
  alert: string;
  annotations: Record<string, string>;
  labels: Record<string, string>;
}
const groups = (
  parse(readRepoFile("deploy/optional/monitoring/prometheusrule.yaml")) as {
    spec: { groups: { name: string; rules: Rule[] }[] };
  }
).spec.groups;
const rule = (alert: string): Rule => groups.flatMap((g) => g.rules).find((r) => r.alert === alert)!;

/** the rule's annotations with `{{ $labels.x }}` and `{{ $value | humanizePercentage }}` filled in */
function annotationsOf(
  alert: string,
  labels: Record<string, string>,
  percentage?: string,
): Record<string, string> {
  const fill = (text: string) =>
    text
      .replace(/\{\{ \$labels\.(\w+) \}\}/g, (_m, name: string) => labels[name] ?? "")
      .replace(/\{\{ \$value \| humanizePercentage \}\}/g, percentage ?? "");
  return Object.fromEntries(Object.entries(rule(alert).annotations).map(([k, v]) => [k, fill(v)]));
}

const POOL = { namespace: "nsx", name: "controllers", pool: "ipaddresspool-1" };

/** `promtool test rules` cases: series, and which alerts fire when */
const ruleTests = [
  {
    name: "an exhausted pool alerts after 5 minutes, with the pool and the object named",
    interval: "1m",
    input_series: [{ series: 'nsxv_pool_used_ratio{namespace="nsx",name="controllers",pool="ipaddresspool-1"}', values: "1x20" }],
    alert_rule_test: [
      { eval_time: "4m", alertname: "NsxvPoolExhausted", exp_alerts: [] },
      {
        eval_time: "6m",
        alertname: "NsxvPoolExhausted",
        exp_alerts: [{ exp_labels: { severity: "critical", ...POOL }, exp_annotations: annotationsOf("NsxvPoolExhausted", POOL) }],
      },
    ],
  },
  {
    name: "a pool at 95% alerts as near exhaustion after 15 minutes, and not as exhausted",
    interval: "1m",
    input_series: [{ series: 'nsxv_pool_used_ratio{namespace="nsx",name="controllers",pool="ipaddresspool-1"}', values: "0.95x30" }],
    alert_rule_test: [
      { eval_time: "14m", alertname: "NsxvPoolNearExhaustion", exp_alerts: [] },
      {
        eval_time: "16m",
        alertname: "NsxvPoolNearExhaustion",
        exp_alerts: [
          { exp_labels: { severity: "warning", ...POOL }, exp_annotations: annotationsOf("NsxvPoolNearExhaustion", POOL, "95%") },
        ],
      },
      { eval_time: "16m", alertname: "NsxvPoolExhausted", exp_alerts: [] },
    ],
  },
  {
    name: "a manager failing a third of the requests alerts after 15 minutes; one failing none does not",
    interval: "1m",
    input_series: [
      { series: 'nsxv_manager_requests_total{manager="nsx/lab",route="getEdge",status="500"}', values: "0+30x40" },
      { series: 'nsxv_manager_requests_total{manager="nsx/lab",route="getEdge",status="200"}', values: "0+60x40" },
      { series: 'nsxv_manager_requests_total{manager="nsx/ok",route="getEdge",status="200"}', values: "0+60x40" },
    ],
    alert_rule_test: [
      {
        eval_time: "25m",
        alertname: "NsxvManagerRequestErrors",
        exp_alerts: [
          {
            exp_labels: { severity: "warning", manager: "nsx/lab" },
            exp_annotations: annotationsOf("NsxvManagerRequestErrors", { manager: "nsx/lab" }, "33.33%"),
          },
        ],
      },
    ],
  },
]; // prettier-ignore

const dir = mkdtempSync(join(tmpdir(), "nsxv-promtool-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function promtoolRun(args: string[], input?: string): { code: number; output: string } {
  try {
    const output = execFileSync(promtool.path!, args, { cwd: dir, input, encoding: "utf8", stdio: "pipe" });
    return { code: 0, output };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { code: e.status, output: `${e.stdout}${e.stderr}` };
  }
}

// Without promtool these cannot run; outside CI they are skipped (lookupTool says why), in CI
// the test below fails instead.
describe.skipIf(promtool.path === undefined)("promtool", () => {
  writeFileSync(join(dir, "rules.yaml"), JSON.stringify({ groups }));
  writeFileSync(
    join(dir, "tests.yaml"),
    JSON.stringify({
      rule_files: ["rules.yaml"],
      evaluation_interval: "1m",
      tests: ruleTests.map(({ name: _name, ...t }) => t),
    }),
  );

  it("checks the PrometheusRule's rules", () => {
    const result = promtoolRun(["check", "rules", "rules.yaml"]);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/SUCCESS: \d+ rules found/);
  });

  it("passes the rules' unit tests: each alert fires when it should, named and explained", () => {
    const result = promtoolRun(["test", "rules", "tests.yaml"]);
    expect(result.code, `${ruleTests.map((t) => t.name).join("; ")}\n${result.output}`).toBe(0);
    expect(result.output).toContain("SUCCESS");
  });

  it("finds no lint problem in what /metrics serves, with every metric recorded", async () => {
    const { registry, metrics } = createOperatorMetrics();
    metrics.pool(POOL, { usedRatio: 0.9, strays: 2 });
    metrics.managerRequest("nsx/lab", { method: "GET", route: "getEdge", status: 200, durationMs: 12 });
    metrics.changed("tenantCorrections", 1);
    metrics.changed("releases", 2);
    metrics.driftDetected("EdgeTenant");
    metrics.leaderStatus("nsxv-operator", true);
    const queue = metrics.queue("edgetenant");
    queue.added();
    queue.depth(1);
    queue.retried();
    const text = await registry.metrics();
    expect(text).toContain("nsxv_pool_used_ratio");
    expect(text).toContain("process_cpu_seconds_total");
    const result = promtoolRun(["check", "metrics"], text);
    expect(result.code, result.output).toBe(0);
  });
});

it("promtool is on PATH where the rules must be checked (CI)", () => {
  expect(promtool.path !== undefined || !IN_CI, promtool.missingReason).toBe(true);
});
