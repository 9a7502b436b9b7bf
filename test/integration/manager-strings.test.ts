/**
 * A manager's strings on a real kube-apiserver: an edge whose tenant is over 32 KB, and an
 * allocation whose note is, got every status write refused (HTTP 422, a condition message too
 * long), so the record before the first write never landed: the Enforce EdgeTenant was never
 * corrected, and releases never reached status. Bounded where they land, both objects converge,
 * with the values cut and marked in status and the original tenant kept whole for a restore.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EdgeTenant, IPPoolAllocations } from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { createTestNamespace, describeWithControlPlane, installCrds } from "../controlplane/testing.ts";
import {
  CRDS_DIR,
  Resources,
  condition,
  startTestOperator,
  tenantOn,
  type TestOperator,
} from "./operator-harness.ts";

const HUGE = 40_000;
const MARKER = /\.\.\.\[cut: \d+ more characters, sha256 [0-9a-f]{8}\]/;

describeWithControlPlane("a manager's strings are bounded where they land", (cp) => {
  const kc = cp.makeKubeConfig();
  let k8s: Resources;
  let sim: RunningSimulator;
  let operator: TestOperator;
  const tenant = "t".repeat(HUGE);
  const note = "n".repeat(HUGE);

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    k8s = new Resources(kc, await createTestNamespace(kc, "nsxv-strings"));
    sim = await startSimulator({
      state: {
        edges: [{ generate: { count: 1, idStart: 1, tenant } }],
        pools: [
          {
            id: "ipaddresspool-1",
            name: "apps",
            ranges: [{ start: "10.0.0.1", end: "10.0.0.50" }],
            allocations: [{ ip: "10.0.0.1" }, { ip: "10.0.0.9", note }],
          },
        ],
      },
    });
    await k8s.manager("nsx", sim.url);
    operator = await startTestOperator(kc, k8s.namespace);
  });

  afterAll(async () => {
    await operator?.stop();
    await sim?.close();
  });

  it("an edge whose tenant is over 32 KB is corrected; its original is kept whole", async () => {
    await k8s.create<EdgeTenant>({
      kind: "EdgeTenant",
      metadata: { name: "edge-1" },
      spec: { managerRef: { name: "nsx" }, edgeId: "edge-1", tenant: "blue" },
    });
    const done = await k8s.waitFor<EdgeTenant>(
      "EdgeTenant",
      "edge-1",
      "corrected",
      (o) => condition(o, "Ready")?.status === "True",
    );
    expect(tenantOn(sim, "edge-1")).toBe("blue");
    expect(done.status?.originalTenant).toBe(tenant);
  });

  it("an allocation whose note is over 32 KB keeps its grace period, is released, and its release reaches status", async () => {
    await k8s.create<IPPoolAllocations>({
      kind: "IPPoolAllocations",
      metadata: { name: "apps" },
      spec: {
        managerRef: { name: "nsx" },
        pool: { id: "ipaddresspool-1" },
        allowed: ["10.0.0.1"],
        release: { minStrayAge: "3s" },
      },
    });
    const pending = await k8s.waitFor<IPPoolAllocations>(
      "IPPoolAllocations",
      "apps",
      "the stray recorded",
      (o) => o.status?.stray?.length === 1,
    );
    expect(pending.status?.stray?.[0]?.note).toMatch(MARKER);
    const released = await k8s.waitFor<IPPoolAllocations>(
      "IPPoolAllocations",
      "apps",
      "the release in status",
      (o) => (o.status?.released?.length ?? 0) === 1,
      { timeoutMs: 30_000 },
    );
    expect(released.status?.released?.[0]).toMatchObject({
      ip: "10.0.0.9",
      note: expect.stringMatching(MARKER),
    });
    expect(condition(released, "Ready")?.status).toBe("True");
  });
});
