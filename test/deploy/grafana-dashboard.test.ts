/**
 * The Grafana dashboard (deploy/optional/monitoring/grafana-dashboard.json): a dashboard Grafana
 * can import (datasource chosen at import, unique panel ids, panels on the grid), every query
 * about a metric the operator serves, every query parsed by Prometheus' own parser (promtool
 * check rules) and the main ones evaluated on known series (promtool test rules).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import { lookupTool, readRepoFile } from "./tools.ts";

interface Target {
  refId: string;
  expr: string;
  legendFormat: string;
  datasource: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
  datasource?: { type: string; uid: string };
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown }[] };
}

const dashboard = JSON.parse(readRepoFile("deploy/optional/monitoring/grafana-dashboard.json")) as Dashboard;
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, ...t })));
/** a query as Prometheus sees it once Grafana filled in its variables */
const promql = (expr: string) => expr.replaceAll("$__rate_interval", "5m").replaceAll("$namespace", ".*");
const expr = (panel: string, refId = "A") =>
  promql(queries.find((q) => q.panel === panel && q.refId === refId)?.expr ?? `missing ${panel} ${refId}`);

describe("the Grafana dashboard", () => {
  it("answers what docs/metrics.md says it answers", () => {
    expect(dashboard.panels.filter((p) => p.type !== "row").map((p) => p.title)).toEqual([
      "Pool usage",
      "Stray addresses",
      "Releases and corrections",
      "Drift detected",
      "Manager latency",
      "Manager errors",
      "Queue depth",
      "Reconciles",
      "Leader",
    ]);
  });

  it("imports anywhere: the datasource is a variable, ids are unique, panels fit the 24-column grid", () => {
    expect(dashboard.uid).toBe("nsxv-operator");
    const variables = dashboard.templating.list;
    expect(variables.find((v) => v.name === "datasource")).toMatchObject({
      type: "datasource",
      query: "prometheus",
    });
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels) {
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      if (panel.type === "row") continue;
      expect(panel.description?.length, panel.title).toBeGreaterThan(20);
      expect(panel.datasource?.uid, panel.title).toBe("${datasource}");
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(target.datasource.uid).toBe("${datasource}");
    }
  });

  it("queries only metrics the operator serves", async () => {
    const { registry, metrics } = createOperatorMetrics();
    metrics.pool({ namespace: "nsx", name: "p", pool: "ipaddresspool-1" }, { usedRatio: 0.5, strays: 1 });
    metrics.managerRequest("nsx/lab", { method: "GET", route: "getEdge", status: 200, durationMs: 5 });
    metrics.driftDetected("EdgeTenant");
    metrics.leaderStatus("nsxv-operator", true);
    metrics.queue("edgetenant").depth(1);
    const served = new Set(
      (await registry.metrics()).split("\n").flatMap((line) => /^# TYPE (\S+) /.exec(line)?.[1] ?? []),
    );
    const used = new Set(
      queries.flatMap((q) => q.expr.match(/\b(?:nsxv|workqueue|controller_runtime|leader)_\w+/g) ?? []),
    );
    for (const name of used) expect(served.has(name.replace(/_bucket$/, "")), name).toBe(true);
    expect(used.size).toBeGreaterThan(8);
  });
});

const promtool = lookupTool("promtool", "apt-get install -y prometheus (Debian's package carries promtool)");
const dir = mkdtempSync(join(tmpdir(), "nsxv-dashboard-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function promtoolRun(args: string[]): { code: number; output: string } {
  try {
    return {
      code: 0,
      output: execFileSync(promtool.path!, args, { cwd: dir, encoding: "utf8", stdio: "pipe" }),
    };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { code: e.status, output: `${e.stdout}${e.stderr}` };
  }
}

// Without promtool these cannot run; promtool.test.ts fails in CI when it is missing.
describe.skipIf(promtool.path === undefined)("the dashboard's queries, by promtool", () => {
  it("every query parses as PromQL", () => {
    const rules = queries.map((q, i) => ({ record: `dashboard:query:${i}`, expr: promql(q.expr) }));
    writeFileSync(join(dir, "queries.yaml"), JSON.stringify({ groups: [{ name: "dashboard", rules }] }));
    const result = promtoolRun(["check", "rules", "queries.yaml"]);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain(`SUCCESS: ${queries.length} rules found`);
  });

  it("the main queries give the expected series on known input", () => {
    const pool = 'namespace="nsx",name="controllers",pool="ipaddresspool-1"';
    const tests = {
      rule_files: [],
      evaluation_interval: "1m",
      tests: [
        {
          interval: "1m",
          input_series: [
            { series: `nsxv_pool_used_ratio{${pool}}`, values: "0.5x10" },
            { series: `nsxv_pool_stray_addresses{${pool}}`, values: "3x10" },
            {
              series: 'nsxv_manager_requests_total{manager="nsx/lab",route="getEdge",status="503"}',
              values: "0+1x10",
            },
            {
              series: 'nsxv_manager_requests_total{manager="nsx/lab",route="getEdge",status="200"}',
              values: "0+2x10",
            },
            { series: 'nsxv_drift_detected_total{kind="EdgeTenant"}', values: "0 0 0 0 0 1 1 1 1 1 1" },
            { series: 'workqueue_depth{controller="edgetenant",name="edgetenant"}', values: "4x10" },
          ],
          promql_expr_test: [
            {
              expr: expr("Pool usage"),
              eval_time: "5m",
              exp_samples: [{ labels: `nsxv_pool_used_ratio{${pool}}`, value: 0.5 }],
            },
            {
              expr: expr("Stray addresses"),
              eval_time: "5m",
              exp_samples: [{ labels: `nsxv_pool_stray_addresses{${pool}}`, value: 3 }],
            },
            {
              expr: expr("Manager errors", "B"),
              eval_time: "10m",
              exp_samples: [{ labels: '{manager="nsx/lab"}', value: 1 / 3 }],
            },
            {
              expr: expr("Drift detected"),
              // (3m, 8m] holds the step from 0 to 1: one drift found in the interval
              eval_time: "8m",
              exp_samples: [{ labels: '{kind="EdgeTenant"}', value: 1 }],
            },
            {
              expr: expr("Queue depth"),
              eval_time: "5m",
              exp_samples: [{ labels: '{controller="edgetenant"}', value: 4 }],
            },
          ],
        },
      ],
    };
    writeFileSync(join(dir, "tests.yaml"), JSON.stringify(tests));
    const result = promtoolRun(["test", "rules", "tests.yaml"]);
    expect(result.code, result.output).toBe(0);
  });
});
