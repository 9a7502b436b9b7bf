/**
 * values.schema.json and the chart's own checks: the schema offers what the operator accepts
 * (its log levels, its duration syntax), and wrong values are refused before anything reaches a
 * cluster, each with a message that names the value.
 */
import { describe, expect, it } from "vitest";
import { DURATION_PATTERN } from "../../src/api/duration.ts";
import { runCommand } from "../../src/cli/run.ts";
import { lookupBuiltTool, readChartSchema, renderFailure } from "./helm.ts";
import { IN_CI } from "./tools.ts";

const helm = lookupBuiltTool("helm", "helm renders the chart");

describe("the schema and the operator agree", () => {
  const schema = readChartSchema();
  it("logLevel offers exactly the operator's levels", () => {
    const help = runCommand().options.find((option) => option.long === "--log-level")?.description ?? "";
    expect(schema.properties["logLevel"]?.enum).toEqual(/one of (.*)$/.exec(help)?.[1]?.split(", "));
  });
  it("syncInterval's durations are the operator's (src/api/duration.ts)", () => {
    expect(schema.definitions["duration"]?.pattern).toBe(DURATION_PATTERN);
  });
});

/** Wrong values, each refused before anything reaches a cluster; the message names the value. */
const REFUSED = [
  { values: { scope: "cluster-wide" }, message: /at '\/scope'/, reason: "two scopes only" },
  { values: { logLevel: "verbose" }, message: /at '\/logLevel'/, reason: "the operator's levels only" },
  { values: { syncInterval: "5 minutes" }, message: /at '\/syncInterval'/, reason: "a Go duration" },
  { values: { syncInterval: "-5m" }, message: /at '\/syncInterval'/, reason: "no negative durations" },
  { values: { fullReadInterval: "hourly" }, message: /at '\/fullReadInterval'/, reason: "a Go duration" },
  {
    values: { fullReadsPerMinute: 0 },
    message: /at '\/fullReadsPerMinute'/,
    reason: "at least one full read a minute",
  },
  { values: { concurrency: 0 }, message: /at '\/concurrency'/, reason: "at least one reconcile at once" },
  { values: { concurrency: "4" }, message: /at '\/concurrency'/, reason: "a number, not text" },
  {
    values: { concurrencyPerManager: 0 },
    message: /at '\/concurrencyPerManager'/,
    reason: "at least one reconcile of a manager at once",
  },
  {
    values: { logLvel: "debug" },
    message: /additional properties 'logLvel' not allowed/,
    reason: "a misspelt key is not silently ignored",
  },
  {
    values: { image: { repository: "Registry/Op" } },
    message: /at '\/image\/repository'/,
    reason: "image references are lower case",
  },
  {
    values: { image: { digest: "sha256:abc" } },
    message: /at '\/image\/digest'/,
    reason: "a digest has 64 hex digits",
  },
  { values: { replicas: -1 }, message: /at '\/replicas'/, reason: "no negative count" },
  {
    values: { leaderElection: { id: "Bad_Lease" } },
    message: /at '\/leaderElection\/id'/,
    reason: "a Lease name is a DNS subdomain",
  },
  {
    values: { extraArgs: ["shutdown-timeout=45s"] },
    message: /at '\/extraArgs\/0'/,
    reason: "each a --flag",
  },
  {
    values: { tolerations: [{ key: "a", operator: "Maybe" }] },
    message: /at '\/tolerations\/0\/operator'/,
    reason: "Exists or Equal",
  },
  {
    values: { podLabels: { "bad key!": "x" } },
    message: /at '\/podLabels': additional properties 'bad key!' not allowed/,
    reason: "label keys as Kubernetes allows them",
  },
  { values: { podAntiAffinity: "strict" }, message: /at '\/podAntiAffinity'/, reason: "soft, hard or none" },
  {
    values: { monitoring: { serviceMonitor: { interval: "30 seconds" } } },
    message: /at '\/monitoring\/serviceMonitor\/interval'/,
    reason: "a Prometheus duration",
  },
  {
    values: { replicas: 2, leaderElection: { enabled: false } },
    message: /replicas: 2 needs leaderElection.enabled: true/,
    reason: "two replicas without a Lease would both reconcile",
  },
  {
    values: { concurrency: 2, concurrencyPerManager: 3 },
    message: /concurrencyPerManager: 3 is more than concurrency \(2\)/,
    reason: "a manager's share cannot be more than all the reconciles (the operator refuses it too)",
  },
  {
    values: { extraArgs: ["--concurrency-per-manager=2"] },
    message: /extraArgs\[0\]: --concurrency-per-manager is set by concurrencyPerManager/,
    reason: "one place per setting",
  },
  {
    values: { extraArgs: ["--namespace=other"] },
    message: /extraArgs\[0\]: --namespace is set by scope: namespace/,
    reason: "the chart sets it, with RBAC to match",
  },
  {
    values: { extraArgs: ["--leader-election-id=x"] },
    message: /extraArgs\[0\]: --leader-election-id is set by leaderElection.id/,
    reason: "the Lease grant names the chart's Lease",
  },
  {
    values: { extraArgs: ["--log-level"] },
    message: /extraArgs\[0\]: --log-level is set by logLevel/,
    reason: "one place per setting",
  },
  {
    values: { podLabels: { "app.kubernetes.io/name": "x" } },
    message: /podLabels: app.kubernetes.io\/name is set by the chart/,
    reason: "the selectors depend on it",
  },
];

describe.skipIf(helm.path === undefined)("wrong values", () => {
  it.each(REFUSED)("$values is refused: $reason", ({ values, message }) => {
    expect(renderFailure(helm.path ?? "", { values })).toMatch(message);
  });
});

// CI must run every check above: there a missing tool fails instead of skipping.
it("helm is there where wrong values must be refused (CI)", () => {
  expect(helm.path !== undefined || !IN_CI, helm.missingReason).toBe(true);
});
