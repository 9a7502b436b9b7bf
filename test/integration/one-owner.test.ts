/**
 * One owner per real edge, on a real kube-apiserver: two teams in two namespaces, each with an
 * NSXManager object of its own pointing at the same manager (one by its URL, the other by the same
 * URL written differently), each with an EdgeTenant for edge-1 wanting another tenant. Conflicts
 * are decided per real manager, not per NSXManager object: the older EdgeTenant owns the edge, the
 * younger is Stalled with reason Conflict naming the owner, kstatus reads it Failed, and the edge
 * is written once, not fought over.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EdgeTenant, NSXManager } from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { createTestNamespace, describeWithControlPlane, installCrds } from "../controlplane/testing.ts";
import { kstatus } from "./kstatus.ts";
import {
  CRDS_DIR,
  Resources,
  SYNC_INTERVAL_MS,
  condition,
  startTestOperator,
  tenantOn,
  type TestOperator,
} from "./operator-harness.ts";

const LABELS = { "nsxv.io/test": "one-owner" };

describeWithControlPlane("one owner per real edge, across namespaces and NSXManager objects", (cp) => {
  const kc = cp.makeKubeConfig();
  let sim: RunningSimulator;
  let teams: Resources[];
  let operator: TestOperator;

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    sim = await startSimulator({ state: { edges: [{ generate: { count: 1, idStart: 1, tenant: "old" } }] } });
    teams = [
      new Resources(kc, await createTestNamespace(kc, "nsxv-owner-a")),
      new Resources(kc, await createTestNamespace(kc, "nsxv-owner-b")),
    ];
    // every namespace, but only this file's objects
    operator = await startTestOperator(kc, undefined, { labelSelector: "nsxv.io/test=one-owner" });
  });

  afterAll(async () => {
    await operator?.stop();
    await sim?.close();
  });

  async function declare(team: Resources, url: string, tenant: string): Promise<void> {
    await team.secret("nsx-credentials", { username: "admin", password: "default" }, url);
    await team.create<NSXManager>({
      kind: "NSXManager",
      metadata: { name: "nsx", labels: LABELS },
      spec: { url, credentialsSecretRef: { name: "nsx-credentials" } },
    });
    await team.create<EdgeTenant>({
      kind: "EdgeTenant",
      metadata: { name: "edge-1", labels: LABELS },
      spec: { managerRef: { name: "nsx" }, edgeId: "edge-1", tenant },
    });
  }

  it("the younger EdgeTenant of one edge is Stalled naming the owner in the other namespace; the edge is written once", async () => {
    const [a, b] = teams as [Resources, Resources];
    await declare(a, sim.url, "team-a");
    await a.waitFor(
      "EdgeTenant",
      "edge-1",
      "team-a's tenant on the edge",
      () => tenantOn(sim, "edge-1") === "team-a",
    );
    // the same manager, its URL written another way
    await declare(b, `${sim.url.toUpperCase().replace("HTTP://", "http://")}/`, "team-b");
    const loser = await b.waitFor<EdgeTenant>(
      "EdgeTenant",
      "edge-1",
      "Conflict",
      (o) => condition(o, "Stalled")?.reason === "Conflict",
    );
    expect(condition(loser, "Stalled")?.message, "names the owner").toContain(
      `EdgeTenant ${a.namespace}/edge-1`,
    );
    expect(kstatus(loser).status, "not Current: it acts on nothing").toBe("Failed");

    // a few sync intervals: no fight
    await new Promise((resolve) => setTimeout(resolve, SYNC_INTERVAL_MS * 1.5));
    expect(tenantOn(sim, "edge-1")).toBe("team-a");
    expect(sim.state.counters.snapshot().putEdge?.["204"], "one PUT: the owner's").toBe(1);
    const owner = await a.get<EdgeTenant>("EdgeTenant", "edge-1");
    expect(condition(owner, "Ready")?.status).toBe("True");
    expect(kstatus(owner).status).toBe("Current");
  });
});
