/**
 * Edge answers that lost content, through the real client and reconciler: a proxy in front of the
 * simulator cuts `<vnics>`, one `<vnic>`, the `<firewall>` of `<features>` or the firewall rules
 * out of the edge document, or serves an older version of it. None of them is ever PUT back (on
 * NSX-v that PUT would remove interfaces or firewall rules): the pass fails with a reason naming
 * the edge and what is missing, the simulator sees no PUT, and the next pass reads the edge again
 * and corrects it once the answers are whole. On a first read (`apply`, nothing remembered) the
 * rules of what every edge of its type carries and the edge list's version decide; after a
 * restart, the shape remembered in status does too.
 */
import { afterEach, describe, expect, it } from "vitest";
import { refOf } from "../../src/api/refs.ts";
import type { EdgeTenant, EdgeTenantStatus, NsxvObject, Secret } from "../../src/api/types.ts";
import { ManagerClient } from "../../src/nsx/client.ts";
import { ManagerConnections } from "../../src/reconcile/connections.ts";
import { createReconciler, type ReconcilerDeps } from "../../src/reconcile/reconciler.ts";
import type { ReconcileReport } from "../../src/reconcile/report.ts";
import { memoryStore, type MemoryStore } from "../../src/reconcile/store.ts";
import { edgeModelOf } from "../../src/simulator/edge-model.ts";
import { generateEdgeXml, startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { assertNoLostContent, assertNoWrites } from "../faults/invariants.ts";
import { callsTo } from "../support/calls.ts";
import { startRewritingProxy, type RewritingProxy } from "../faults/rewriting-proxy.ts";
import { CREDENTIALS, DESIRED_TENANT, EDGE_ID, rigManifests } from "../faults/rig.ts";

const EDGE = /^\/api\/4\.0\/edges\/edge-1$/;
const RULES = 12;

/** Cuts what `pattern` matches out of the answer, failing loudly when it is not there. */
function cut(pattern: RegExp): (text: string) => string {
  return (text) => {
    if (!pattern.test(text)) throw new Error(`rewrite: ${String(pattern)} not in the answer`);
    return text.replace(pattern, "");
  };
}

interface Setup {
  sim: RunningSimulator;
  proxy: RewritingProxy;
  connections: ManagerConnections;
  store: MemoryStore;
  /** the rewrite applies while this is true */
  rewriting: { on: boolean };
}
let setup: Setup | undefined;
afterEach(async () => {
  await setup?.connections.close();
  await setup?.proxy.close();
  await setup?.sim.close();
  setup = undefined;
});

/** The simulator with a drifted edge-1 of RULES firewall rules, behind a proxy that rewrites its GETs while `rewriting.on`. */
async function start(rewrite: (text: string) => string): Promise<Setup> {
  const sim = await startSimulator({
    state: {
      credentials: CREDENTIALS,
      edges: [{ xml: generateEdgeXml({ edgeNumber: 1, tenant: "default", firewallRules: RULES }) }],
    },
  });
  const rewriting = { on: false };
  const proxy = await startRewritingProxy(sim.url, [
    { method: "GET", path: EDGE, body: (text) => (rewriting.on ? rewrite(text) : text) },
  ]);
  const connections = new ManagerConnections({
    createClient: (options) => new ManagerClient({ ...options, maxRetries: 0 }),
  });
  const documents = rigManifests(proxy.url, { requestTimeoutSeconds: 10 }) as unknown as (
    NsxvObject | Secret
  )[];
  const store = memoryStore({
    objects: documents.filter((d): d is NsxvObject => d.kind === "NSXManager" || d.kind === "EdgeTenant"),
    secrets: documents.filter((d): d is Secret => d.kind === "Secret"),
  });
  setup = { sim, proxy, connections, store, rewriting };
  return setup;
}

/** One pass of the manager (its check reads the edge list) and one of the EdgeTenant; statuses kept, as a source keeps them. */
async function pass(s: Setup, deps: Partial<ReconcilerDeps>): Promise<ReconcileReport> {
  const reconcile = createReconciler({ store: s.store, connections: s.connections, ...deps });
  let report: ReconcileReport | undefined;
  for (const kind of ["NSXManager", "EdgeTenant"] as const) {
    const object = s.store.list(kind)[0] as NsxvObject;
    report = await reconcile(refOf(object));
    if (report.status !== undefined) s.store.put({ ...object, status: report.status } as NsxvObject);
  }
  return report as ReconcileReport;
}

const synced = (report: ReconcileReport) => report.status?.conditions?.find((c) => c.type === "Synced");
const APPLY = { oneShot: { releaseStrays: false } } as const;

describe("an edge read that lost content is never written back (apply: a first read, nothing remembered)", () => {
  it.each([
    {
      name: "LostVnics",
      reason: "an ESG without its interfaces: the PUT would remove all ten",
      rewrite: cut(/<vnics>[\s\S]*<\/vnics>/),
      failure: "IncompleteEdge",
      says: ["edge edge-1", "it lacks <vnics>, which every ESG (gatewayServices) carries"],
    },
    {
      name: "LostOneVnic",
      reason: "a deployed ESG lists all ten vNICs: one missing would be one removed",
      rewrite: cut(/<vnic>(?:(?!<\/vnic>)[\s\S])*<index>3<\/index>(?:(?!<\/vnic>)[\s\S])*<\/vnic>/),
      failure: "IncompleteEdge",
      says: ["edge edge-1", "it lacks <vnic> with index 3 in <vnics>"],
    },
    {
      name: "LostFirewall",
      reason: "the firewall section of features, and every rule with it",
      rewrite: cut(/<firewall>[\s\S]*?<\/firewall>/),
      failure: "IncompleteEdge",
      says: ["edge edge-1", "it lacks <firewall> in <features>"],
    },
    {
      name: "OlderVersion",
      reason: "a cache serving the document as it was: older than the edge list says the edge is",
      rewrite: (text: string) => text.replace(/<version>1<\/version>/g, "<version>0</version>"),
      failure: "StaleRead",
      says: ["edge edge-1: read twice", "the read has version 0, the edge list showed version 1"],
    },
  ])("$name: $reason", async (c) => {
    const s = await start(c.rewrite);
    s.rewriting.on = true;
    const report = await pass(s, APPLY);
    expect(report.outcome.type, c.reason).toBe("failed");
    expect(synced(report), c.reason).toMatchObject({ status: "False", reason: c.failure });
    for (const part of c.says) expect(synced(report)?.message, c.reason).toContain(part);
    expect(s.proxy.rewritten(), "the rewritten answer was served").toBeGreaterThan(0);
    assertNoWrites(s.sim);

    // the answers are whole again: the next pass reads again and corrects
    s.rewriting.on = false;
    const reads = callsTo(s.sim, "getEdge");
    const next = await pass(s, APPLY);
    expect(callsTo(s.sim, "getEdge"), "the next pass reads the edge again").toBeGreaterThan(reads);
    expect(next.changes.tenantCorrections).toHaveLength(1);
    expect(s.sim.state.edge(EDGE_ID)?.doc.tenant).toBe(DESIRED_TENANT);
    assertNoLostContent(s.sim);
  });
});

describe("after a restart, the shape remembered in status guards the first read", () => {
  it("a read of the same version that lost firewall rules: read again, refused, nothing written", async () => {
    // every rule cut, the section kept: what every ESG carries is there, the rules are not
    const s = await start((text) => text.replace(/<firewallRule>[\s\S]*?<\/firewallRule>/g, ""));
    // the operator's first pass reads the whole edge and records the original tenant (no write yet)
    await pass(s, {});
    const status = (s.store.list("EdgeTenant")[0] as EdgeTenant).status as EdgeTenantStatus;
    expect(status.edgeShape, "what the read showed is remembered").toMatchObject({
      edgeId: EDGE_ID,
      version: 1,
      lists: expect.arrayContaining([
        { path: "features/firewall/firewallRules/firewallRule", count: RULES + 1 },
        { path: "vnics/vnic", count: 10 },
      ]),
    });
    // a new reconciler: nothing in memory, only the status
    s.rewriting.on = true;
    const reads = callsTo(s.sim, "getEdge");
    const report = await pass(s, {});
    expect(callsTo(s.sim, "getEdge") - reads, "read twice").toBe(2);
    expect(synced(report)).toMatchObject({ status: "False", reason: "IncompleteEdge" });
    expect(synced(report)?.message).toContain(
      `edge edge-1: read twice at version 1, and it lacks ${RULES + 1} of ${RULES + 1} <firewallRule> in <firewallRules> in <firewall> in <features> that its last full read, of version 1, had`,
    );
    assertNoWrites(s.sim);
    expect(
      ((s.store.list("EdgeTenant")[0] as EdgeTenant).status as EdgeTenantStatus).edgeShape?.lists,
      "the refused read is not remembered",
    ).toEqual(status.edgeShape?.lists);

    s.rewriting.on = false;
    const next = await pass(s, {});
    expect(next.changes.tenantCorrections).toHaveLength(1);
    assertNoLostContent(s.sim);
  });

  it("an edge that really lost rules (its version rose) is corrected once two reads agree", async () => {
    const s = await start((text) => text);
    await pass(s, {});
    // another client removes every rule: the manager raises the version
    const stored = s.sim.state.edge(EDGE_ID)!.doc.serialize();
    s.sim.state.upsertEdge(edgeModelOf(stored.replace(/<firewallRule>[\s\S]*?<\/firewallRule>/g, "")));
    const reads = callsTo(s.sim, "getEdge");
    const report = await pass(s, {});
    expect(callsTo(s.sim, "getEdge") - reads, "doubted, read again, and the reads agree").toBe(2);
    expect(report.changes.tenantCorrections).toHaveLength(1);
  });
});
