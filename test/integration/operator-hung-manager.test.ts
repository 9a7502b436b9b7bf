/**
 * A hung manager stalls only itself (issue 21), on a real API server: one manager is frozen (the
 * simulator holds every answer for ten minutes), EdgeTenants use it, and a new EdgeTenant on a
 * healthy manager converges at once, not after the frozen manager's timeouts (the operator's
 * bulkhead). The frozen manager's timeouts open its client's circuit, its NSXManager turns
 * Ready=False (Unreachable) after two rounds of timeouts rather than after every retry, and the
 * real kstatus judge reads none of its objects Current afterwards.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EdgeTenant, NSXManager, NsxvObject } from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { createTestNamespace, describeWithControlPlane, installCrds } from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";
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

/** spec.requestTimeoutSeconds of the frozen manager: each of its requests hangs this long */
const TIMEOUT_S = 10;
/** the client's default: four attempts of each read, 40 s for a call to the frozen manager */
const MAX_RETRIES = 3;
/** "at once": far below one timeout, with room for a busy machine */
const AT_ONCE_MS = 5_000;
const FROZEN_TENANTS = 3;

describeWithControlPlane("a hung manager stalls only itself", (cp) => {
  const kc = cp.makeKubeConfig();
  let k8s: Resources;
  let operator: TestOperator;
  let frozen: RunningSimulator;
  let healthy: RunningSimulator;

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    k8s = new Resources(kc, await createTestNamespace(kc, "nsxv-hung"));
    frozen = await startSimulator({
      state: { edges: [{ generate: { count: FROZEN_TENANTS, tenant: "old" } }] },
    });
    frozen.state.faults.add({ route: "*", kind: "latency", latencyMs: 600_000 });
    healthy = await startSimulator({ state: { edges: [{ generate: { count: 1, tenant: "old" } }] } });
    operator = await startTestOperator(kc, k8s.namespace, {
      // the default share of four workers: two per manager
      concurrency: 4,
      clientOptions: { maxRetries: MAX_RETRIES, baseDelayMs: 20, maxDelayMs: 100 },
    });
  });

  afterAll(async () => {
    await operator?.stop();
    await Promise.all([frozen?.close(), healthy?.close()]);
  });

  it("a new EdgeTenant on a healthy manager converges at once; the frozen manager turns Unreachable after two timeouts", async () => {
    const startedMs = Date.now();
    await k8s.secret("frozen-credentials", { username: "admin", password: "default" }, frozen.url);
    await k8s.create<NSXManager>({
      kind: "NSXManager",
      metadata: { name: "frozen" },
      spec: {
        url: frozen.url,
        credentialsSecretRef: { name: "frozen-credentials" },
        requestTimeoutSeconds: TIMEOUT_S,
      },
    });
    await k8s.manager("healthy", healthy.url);
    for (let i = 1; i <= FROZEN_TENANTS; i++) {
      await k8s.create<EdgeTenant>({
        kind: "EdgeTenant",
        metadata: { name: `frozen-${i}` },
        spec: { managerRef: { name: "frozen" }, edgeId: `edge-${i}`, tenant: "new", syncInterval: "1h" },
      });
    }
    await k8s.waitFor("NSXManager", "healthy", "Ready", (o) => condition(o, "Ready")?.status === "True");
    // the frozen manager's share of the workers (two of four) waits out its timeouts
    await waitFor("two calls held by the frozen manager", () => frozen.state.faults.list()[0]!.fired >= 2);

    const addedMs = Date.now();
    await k8s.create<EdgeTenant>({
      kind: "EdgeTenant",
      metadata: { name: "late" },
      spec: { managerRef: { name: "healthy" }, edgeId: "edge-1", tenant: "new", syncInterval: "1h" },
    });
    await k8s.waitFor(
      "EdgeTenant",
      "late",
      "kstatus Current",
      (o) => o.status?.observedGeneration === o.metadata.generation && kstatus(o).status === "Current",
      { timeoutMs: AT_ONCE_MS },
    );
    expect(Date.now() - addedMs, "not after the frozen manager's timeouts").toBeLessThan(AT_ONCE_MS);
    expect(tenantOn(healthy, "edge-1")).toBe("new");

    // two rounds of timeouts (two requests in flight, three failures open the circuit), not the
    // four attempts of every call: the breaker fails the rest of them at once
    const unreachable = await k8s.waitFor<NSXManager>(
      "NSXManager",
      "frozen",
      "Ready=False Unreachable",
      (o) => condition(o, "Ready")?.status === "False",
      { timeoutMs: (2 * TIMEOUT_S + 5) * 1000 },
    );
    expect(Date.now() - startedMs).toBeLessThan((MAX_RETRIES + 1) * TIMEOUT_S * 1000);
    expect(condition(unreachable, "Ready")).toMatchObject({ reason: "Unreachable" });
    expect(unreachable.status?.reachable).toBe(false);

    // from then on kstatus reads none of the frozen manager's objects Current
    const names: [string, string][] = [
      ["NSXManager", "frozen"],
      ...Array.from({ length: FROZEN_TENANTS }, (_, i): [string, string] => [
        "EdgeTenant",
        `frozen-${i + 1}`,
      ]),
    ];
    const until = Date.now() + SYNC_INTERVAL_MS * 2;
    do {
      for (const [kind, name] of names) {
        const object: NsxvObject = await k8s.get(kind as NsxvObject["kind"], name);
        const verdict = kstatus(object);
        expect(
          verdict.status,
          `${kind} ${name}: ${JSON.stringify(verdict)}; ${JSON.stringify(object.status)}`,
        ).not.toBe("Current");
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    } while (Date.now() < until);
    for (let i = 1; i <= FROZEN_TENANTS; i++) expect(tenantOn(frozen, `edge-${i}`)).toBe("old");
  });
});
