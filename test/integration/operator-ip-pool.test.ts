/**
 * The operator against a real kube-apiserver and the simulator, for IPPoolAllocations: strays are
 * released only after minStrayAge, at most maxPerSync per pass, never an allowed address; the
 * grace period is kept in status, so an operator restarted in its middle releases at
 * firstSeen + minStrayAge; a second object for the same pool is Stalled with reason Conflict.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { IPPoolAllocations } from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { createTestNamespace, describeWithControlPlane, installCrds } from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";
import { kstatus } from "./kstatus.ts";
import { CRDS_DIR, Resources, condition, startTestOperator, type TestOperator } from "./operator-harness.ts";

const strays = (prefix: string, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ ip: `${prefix}.${from + i}`, note: `vm-${from + i}` }));

describeWithControlPlane("operator: IPPoolAllocations", (cp) => {
  const kc = cp.makeKubeConfig();
  let namespace = "";
  let k8s: Resources;
  let sim: RunningSimulator;
  let operator: TestOperator;

  const releases = (poolId: string) => sim.state.audit.snapshot().releases.filter((r) => r.poolId === poolId);
  const allocated = (poolId: string) => (sim.state.pool(poolId)?.allocations() ?? []).map((a) => a.ipAddress);

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    namespace = await createTestNamespace(kc, "nsxv-op-pool");
    k8s = new Resources(kc, namespace);
    sim = await startSimulator({
      state: {
        pools: [
          {
            id: "ipaddresspool-1",
            name: "apps",
            ranges: [{ start: "10.0.0.1", end: "10.0.0.50" }],
            allocations: [{ ip: "10.0.0.1" }, { ip: "10.0.0.2" }, ...strays("10.0.0", 10, 5)],
          },
          {
            id: "ipaddresspool-2",
            name: "infra",
            ranges: [{ start: "10.1.0.1", end: "10.1.0.50" }],
            allocations: [{ ip: "10.1.0.1" }, ...strays("10.1.0", 10, 1)],
          },
        ],
      },
    });
    await k8s.manager("nsx", sim.url);
    operator = await startTestOperator(kc, namespace);
  });

  afterAll(async () => {
    await operator?.stop();
    await sim?.close();
  });

  it("releases strays only after minStrayAge, at most maxPerSync per pass, never an allowed address", async () => {
    await k8s.create<IPPoolAllocations>({
      kind: "IPPoolAllocations",
      metadata: { name: "apps" },
      spec: {
        managerRef: { name: "nsx" },
        pool: { id: "ipaddresspool-1" },
        allowed: ["10.0.0.1-10.0.0.3"],
        release: { minStrayAge: "3s", maxPerSync: 2 },
      },
    });
    const pending = await k8s.waitFor<IPPoolAllocations>(
      "IPPoolAllocations",
      "apps",
      "strays reported",
      (o) => o.status?.stray?.length === 5,
    );
    expect(condition(pending, "Ready")?.reason).toBe("ReleasesPending");
    const firstSeen = new Map(pending.status!.stray!.map((s) => [s.ip, Date.parse(s.firstSeen)]));
    // an allowed address allocated meanwhile, as a deployment would
    const reserved = await fetch(`${sim.url}/_simulator/pools/ipaddresspool-1/allocations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ mode: "RESERVE", ip: "10.0.0.3" }),
    });
    expect(reserved.status).toBe(201);

    await waitFor(
      "five releases",
      async () => (releases("ipaddresspool-1").length === 5 ? true : undefined),
      {
        timeoutMs: 20_000,
      },
    );
    const done = releases("ipaddresspool-1");
    for (const r of done) {
      expect(Date.parse(r.time), `${r.ip} released after its grace period`).toBeGreaterThanOrEqual(
        firstSeen.get(r.ip)! + 3_000,
      );
    }
    // passes are a sync interval apart; the releases of one pass come within milliseconds
    const times = done.map((r) => Date.parse(r.time)).sort((a, b) => a - b);
    const passes: number[][] = [];
    for (const t of times) {
      const last = passes.at(-1);
      if (last !== undefined && t - last.at(-1)! < 500) last.push(t);
      else passes.push([t]);
    }
    expect(passes.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(allocated("ipaddresspool-1").sort()).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.3"]);

    const settled = await k8s.waitFor<IPPoolAllocations>(
      "IPPoolAllocations",
      "apps",
      "in sync",
      (o) => condition(o, "Ready")?.reason === "InSync",
    );
    expect(settled.status?.released?.map((r) => r.ip).sort()).toEqual(
      strays("10.0.0", 10, 5).map((s) => s.ip),
    );
    expect(settled.status?.usedAddressCount).toBe(3);
    expect(kstatus(settled).status).toBe("Current");
  });

  it("a second object for the same pool is Stalled with reason Conflict and releases nothing", async () => {
    await fetch(`${sim.url}/_simulator/pools/ipaddresspool-1/allocations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ mode: "RESERVE", ip: "10.0.0.40" }),
    });
    await k8s.create<IPPoolAllocations>({
      kind: "IPPoolAllocations",
      metadata: { name: "apps-by-name" },
      spec: {
        managerRef: { name: "nsx" },
        pool: { name: "apps" },
        allowed: ["10.0.0.40"],
        release: { minStrayAge: "0s" },
      },
    });
    const copy = await k8s.waitFor(
      "IPPoolAllocations",
      "apps-by-name",
      "Stalled",
      (o) => condition(o, "Stalled")?.status === "True",
    );
    expect(condition(copy, "Stalled")?.reason).toBe("Conflict");
    expect(kstatus(copy).status).toBe("Failed");
    // the older object owns the pool: it releases 10.0.0.40 (a stray to it), the younger released nothing
    await waitFor("10.0.0.40 released by apps", async () =>
      releases("ipaddresspool-1").some((r) => r.ip === "10.0.0.40") ? true : undefined,
    );
    await k8s.waitFor<IPPoolAllocations>("IPPoolAllocations", "apps", "10.0.0.40 in released", (o) =>
      (o.status?.released ?? []).some((r) => r.ip === "10.0.0.40"),
    );
    expect(allocated("ipaddresspool-1").sort()).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
  });

  it("an operator restarted in the middle of a grace period keeps firstSeen", async () => {
    await k8s.create<IPPoolAllocations>({
      kind: "IPPoolAllocations",
      metadata: { name: "infra" },
      spec: {
        managerRef: { name: "nsx" },
        pool: { id: "ipaddresspool-2" },
        allowed: ["10.1.0.1"],
        release: { minStrayAge: "5s" },
      },
    });
    const pending = await k8s.waitFor<IPPoolAllocations>(
      "IPPoolAllocations",
      "infra",
      "stray reported",
      (o) => o.status?.stray?.length === 1,
    );
    const firstSeenMs = Date.parse(pending.status!.stray![0]!.firstSeen);

    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await operator.stop()).toBe("stopped");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(allocated("ipaddresspool-2")).toContain("10.1.0.10");
    const restartedMs = Date.now();
    operator = await startTestOperator(kc, namespace);

    await waitFor(
      "10.1.0.10 released",
      async () => (releases("ipaddresspool-2").length === 1 ? true : undefined),
      {
        timeoutMs: 15_000,
        intervalMs: 50,
      },
    );
    const releasedMs = Date.parse(releases("ipaddresspool-2")[0]!.time);
    expect(releasedMs).toBeGreaterThanOrEqual(firstSeenMs + 5_000);
    // a grace period restarted with the operator would end at restartedMs + 5 s at the earliest
    expect(releasedMs).toBeLessThan(restartedMs + 5_000 - 500);
    const after = await k8s.waitFor<IPPoolAllocations>(
      "IPPoolAllocations",
      "infra",
      "released",
      (o) => (o.status?.released?.length ?? 0) === 1,
    );
    expect(after.status?.released?.[0]?.ip).toBe("10.1.0.10");
  });
});
