/**
 * docs/adding-a-kind.md kept true: a third kind, declared in this folder only (its actions, its
 * handler) plus its registry entry, carries out its action through the shared pass against the
 * simulator, and the report, its events, the operator's metrics, `plan` and `apply`'s output and
 * the simulator's audit handle that action from its declaration, with no other edit: not as a
 * tenant correction, not as a release.
 */
import { afterEach, describe, expect, it } from "vitest";
import { refOf } from "../../../src/api/refs.ts";
import type { OneShotResult } from "../../../src/cli/oneshot.ts";
import { viewOf } from "../../../src/cli/output.ts";
import { renderText } from "../../../src/cli/output-text.ts";
import type { EventRecorder } from "../../../src/controller/events.ts";
import { ManagerClient } from "../../../src/nsx/client.ts";
import { createOperatorMetrics } from "../../../src/operator/metrics.ts";
import { ReportRecorder } from "../../../src/operator/record.ts";
import { EFFECTS } from "../../../src/reconcile/actions.ts";
import { sanctionedEdgeFields } from "../../../src/reconcile/effects.ts";
import type { PassContext } from "../../../src/reconcile/kind.ts";
import { runPass } from "../../../src/reconcile/pass.ts";
import type { PlannedAction } from "../../../src/reconcile/plan.ts";
import { changeEvent, changesOf, toReport, type ReconcileReport } from "../../../src/reconcile/report.ts";
import type { ReconcilerState } from "../../../src/reconcile/state.ts";
import {
  DEFAULT_SANCTIONED_EDGE_FIELDS,
  generateEdgeXml,
  startSimulator,
  type RunningSimulator,
} from "../../../src/simulator/index.ts";
import { FakeClock } from "../../../src/util/clock.ts";
import { edgeTenant } from "../edge-tenant/fixtures.ts";
import { T0 } from "../fixtures.ts";
import { firewallDefaultPass } from "./handler.ts";
import { WITH_FIREWALL_DEFAULT } from "./registry.ts";

const EDGE = "edge-1";
let simulator: RunningSimulator | undefined;
let client: ManagerClient | undefined;

afterEach(async () => {
  await client?.close();
  await simulator?.close();
  simulator = client = undefined;
});

/** One pass of the firewall-default kind against a simulator that sanctions `sanctioned`. */
async function pass(mode: "plan" | "apply", sanctioned: readonly string[]) {
  simulator = await startSimulator({
    credentials: { username: "admin", password: "s3cret" },
    state: { edges: [{ xml: generateEdgeXml({ edgeNumber: 1, tenant: "default" }) }] },
    sanctionedEdgeFields: sanctioned,
  });
  client = new ManagerClient({ url: simulator.url, username: "admin", password: "s3cret", maxRetries: 0 });
  const object = edgeTenant({ edgeId: EDGE });
  const clock = new FakeClock(T0.getTime());
  const ctx: PassContext<typeof object> = {
    object,
    now: T0,
    generation: 1,
    signal: undefined,
    writesBlockedBy: undefined,
    statusLost: undefined,
    state: { mode, maxAttempts: 3, clock } as unknown as ReconcilerState,
  };
  const run = await runPass(firewallDefaultPass(client, "accept"), ctx);
  // what the reconciler's compose does with a pass, with the registry that has the kind
  const report = toReport(refOf(object), object, {
    events: run.results.done.map((action) => changeEvent(action, WITH_FIREWALL_DEFAULT)),
    changes: changesOf(run.results.done, WITH_FIREWALL_DEFAULT),
    // the report's types name the Action union, which a kind in src/ joins (plan.ts); this one cannot
    planned: run.planned as unknown as PlannedAction[],
    outcome: { type: "done" },
  });
  return { run, report, object, audit: simulator.state.audit.snapshot() };
}

function oneShot(mode: "plan" | "apply", report: ReconcileReport): Extract<OneShotResult, { type: "ran" }> {
  const object = report.object ?? edgeTenant();
  return {
    type: "ran",
    mode,
    releaseStrays: false,
    fullRead: false,
    startedAtMs: T0.getTime(),
    objects: [{ object, source: { file: "firewall.yaml", line: 1, documentIndex: 0 }, report }],
    skipped: [],
    skippedFiles: [],
  };
}

describe("a kind added by following docs/adding-a-kind.md (firewall default, test-only)", () => {
  it("its action goes through the shared pass, by GET and PUT of the whole edge", async () => {
    const { run } = await pass("apply", sanctionedEdgeFields(WITH_FIREWALL_DEFAULT));
    expect(run.error).toBeUndefined();
    expect(run.results.done).toEqual([
      { type: "setFirewallDefault", edgeId: EDGE, from: "deny", to: "accept" },
    ]);
    const after = await client?.getEdge(EDGE);
    expect(after?.serialize()).toMatch(/<defaultPolicy>\s*<action>accept<\/action>/);
  });

  it("the report lists it in its own change list, with its own event, and counts it as drift found", async () => {
    const { report } = await pass("apply", sanctionedEdgeFields(WITH_FIREWALL_DEFAULT));
    expect(report.changes).toEqual({
      tenantCorrections: [],
      releases: [],
      firewallDefaults: [{ edgeId: EDGE, from: "deny", to: "accept" }],
    });
    expect(report.events.map((e) => `${e.type} ${e.reason}`)).toEqual(["Normal UpdatedEdgeFirewallDefault"]);
    expect(report.driftDetected).toBe(true);
  });

  it("the operator records its event and counts it on its own counter", async () => {
    const { report } = await pass("apply", sanctionedEdgeFields(WITH_FIREWALL_DEFAULT));
    const { registry, metrics } = createOperatorMetrics({
      effects: WITH_FIREWALL_DEFAULT,
      processMetrics: false,
    });
    const events: string[] = [];
    const recorder: EventRecorder = {
      normal: (_o, reason) => events.push(`Normal ${reason}`),
      warning: (_o, reason) => events.push(`Warning ${reason}`),
    };
    new ReportRecorder(recorder, metrics).record(report);
    const text = await registry.metrics();
    expect(events).toEqual(["Normal UpdatedEdgeFirewallDefault"]);
    expect(text).toContain("nsxv_edge_firewall_default_corrections_total 1");
    expect(text).toContain("nsxv_edge_tenant_corrections_total 0");
    expect(text).toContain("nsxv_ip_releases_total 0");
  });

  it("apply prints its line and counts it in the summary", async () => {
    const { report } = await pass("apply", sanctionedEdgeFields(WITH_FIREWALL_DEFAULT));
    const view = viewOf(oneShot("apply", report), WITH_FIREWALL_DEFAULT);
    expect(view.summary).toMatchObject({ tenantCorrections: 0, releases: 0, firewallDefaults: 1 });
    expect(view.objects[0]?.changes.map((c) => c.result)).toEqual(["done"]);
    const text = renderText(view, { colour: false, effects: WITH_FIREWALL_DEFAULT });
    expect(text).toContain(`~ firewall default: "deny" → "accept"  corrected`);
    expect(text).toContain("Applied: 0 tenant corrections, 0 releases, 1 firewall default.");
    expect(view.exitCode).toBe(0);
  });

  it("plan prints it to be made and exits 2 (changes pending), writing nothing", async () => {
    const { report, audit } = await pass("plan", sanctionedEdgeFields(WITH_FIREWALL_DEFAULT));
    const view = viewOf(oneShot("plan", report), WITH_FIREWALL_DEFAULT);
    const text = renderText(view, { colour: false, effects: WITH_FIREWALL_DEFAULT });
    expect(text).toContain(`~ firewall default: "deny" → "accept"\n`);
    expect(text).toContain("Plan: 0 tenant corrections, 0 releases, 1 firewall default.");
    expect(view.exitCode).toBe(2);
    expect(audit.violations).toEqual([]);
  });

  it("the simulator's audit sanctions the field its declaration names, and only where it is declared", async () => {
    expect(sanctionedEdgeFields(WITH_FIREWALL_DEFAULT)).toEqual([
      "features.firewall.defaultPolicy.action",
      "tenant",
    ]);
    // a simulator started without the list (tests, third-party clients) sanctions the built-in kinds' fields
    expect(sanctionedEdgeFields(EFFECTS)).toEqual([...DEFAULT_SANCTIONED_EDGE_FIELDS]);
    const declared = await pass("apply", sanctionedEdgeFields(WITH_FIREWALL_DEFAULT));
    expect(declared.audit.violations).toEqual([]);
    await client?.close();
    await simulator?.close();
    // the built-in kinds declare no such field: the same PUT is a change beyond what they may make
    const builtIn = await pass("apply", sanctionedEdgeFields(EFFECTS));
    expect(builtIn.audit.violations.map((v) => [v.kind, v.changed])).toEqual([
      ["changedContent", ["edge.features.firewall.defaultPolicy.action"]],
    ]);
  });
});
