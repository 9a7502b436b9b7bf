/**
 * Ready tells the truth, as kstatus reads it: the objects the operator writes on a real API server
 * are judged by the real kstatus library (test/kstatus/main.go) in the fault scenarios where a
 * green light would be a lie. Each scenario has a simulator, an NSXManager and an EdgeTenant of
 * its own, so that its faults touch nothing else, and the scenarios run at once (the longest waits
 * out two sync intervals of 10 s).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  UNOBSERVED_GENERATION,
  type EdgeTenant,
  type IPPoolAllocations,
  type NSXManager,
  type NsxvObject,
} from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import {
  createTestNamespace,
  describeWithControlPlane,
  installCrds,
  kubectl,
} from "../controlplane/testing.ts";
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

/** "at once": far below a resync, with room for a busy machine */
const AT_ONCE_MS = 5_000;
/** polling kstatus every 250 ms over a few objects, on a busy machine */
const POLL_SLACK_MS = 3_000;

type ObjectKind = "EdgeTenant" | "NSXManager";

describeWithControlPlane("kstatus never reads Current what the operator knows is not so", (cp) => {
  const kc = cp.makeKubeConfig();
  let k8s: Resources;
  let operator: TestOperator;
  const sims: RunningSimulator[] = [];

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    k8s = new Resources(kc, await createTestNamespace(kc, "nsxv-kstatus"));
    operator = await startTestOperator(kc, k8s.namespace);
  });

  afterAll(async () => {
    await operator?.stop();
    await Promise.all(sims.map((s) => s.close()));
  });

  /** a simulator with edge-1 carrying "old", its NSXManager, and an EdgeTenant wanting `tenant` */
  async function scene(
    name: string,
    tenant: string,
    annotations?: Record<string, string>,
    syncInterval = "1h",
  ) {
    const sim = await startSimulator({ state: { edges: [{ generate: { count: 1, tenant: "old" } }] } });
    sims.push(sim);
    await k8s.manager(name, sim.url);
    await k8s.create<EdgeTenant>({
      kind: "EdgeTenant",
      metadata: { name, ...(annotations ? { annotations } : {}) },
      spec: { managerRef: { name }, edgeId: "edge-1", tenant, syncInterval },
    });
    return sim;
  }

  // a new object reads InProgress until the operator wrote its status (the CRDs' default): Current
  // is the operator's verdict, never the absence of one
  const current = async (kind: "EdgeTenant" | "NSXManager", name: string) =>
    k8s.waitFor(kind, name, "kstatus Current", (o) => kstatus(o).status === "Current");

  /** not Current now, nor during a few sync intervals after */
  async function neverCurrent(kind: "EdgeTenant" | "NSXManager", name: string, why: string) {
    const until = Date.now() + SYNC_INTERVAL_MS * 1.5;
    let last: NsxvObject;
    do {
      last = await k8s.get(kind, name);
      const verdict = kstatus(last);
      expect(
        verdict.status,
        `${why}; kstatus: ${JSON.stringify(verdict)}; status: ${JSON.stringify(last.status)}`,
      ).toMatch(/^(InProgress|Failed)$/);
      await new Promise((resolve) => setTimeout(resolve, 200));
    } while (Date.now() < until);
    return last;
  }

  it.concurrent(
    "an object no operator has looked at reads InProgress, of every kind, until the operator writes",
    async () => {
      // a namespace no operator watches: the operator is down, or not installed
      const unwatched = new Resources(kc, await createTestNamespace(kc, "nsxv-kstatus-unwatched"));
      const created: NsxvObject[] = [
        await unwatched.manager("lab", "http://127.0.0.1:9"),
        await unwatched.create<EdgeTenant>({
          kind: "EdgeTenant",
          metadata: { name: "web" },
          spec: { managerRef: { name: "lab" }, edgeId: "edge-1", tenant: "blue" },
        }),
        await unwatched.create<IPPoolAllocations>({
          kind: "IPPoolAllocations",
          metadata: { name: "pool" },
          spec: { managerRef: { name: "lab" }, pool: { id: "ipaddresspool-1" }, allowed: [] },
        }),
      ];
      for (const object of created) {
        const read = await unwatched.get(object.kind, object.metadata.name);
        expect(read.status, `${object.kind}: the CRD's default`).toEqual({
          observedGeneration: UNOBSERVED_GENERATION,
        });
        expect(kstatus(read), `${object.kind} before any operator`).toMatchObject({ status: "InProgress" });
      }
      // and once an operator has looked, its own verdict counts
      await scene("first-look", "old");
      await current("EdgeTenant", "first-look");
      await current("NSXManager", "first-look");
    },
  );

  it.concurrent("a tenant read as drifted whose PUT keeps failing is not Ready", async () => {
    const sim = await scene("put-fails", "new");
    sim.state.faults.add({ route: "putEdge", kind: "status", status: 500, count: 1_000 });
    const failed = await k8s.waitFor(
      "EdgeTenant",
      "put-fails",
      "Synced False",
      (o) => condition(o, "Synced")?.status === "False",
    );
    expect(condition(failed, "Ready")).toMatchObject({ status: "False" });
    // kubectl get says why it is not Ready: the Ready condition's reason
    const { stdout } = await kubectl(cp, ["get", "edgetenants", "put-fails", "-n", k8s.namespace]);
    const [header = "", row = ""] = stdout.trim().split("\n");
    const columns = header.split(/\s+/);
    const cells = row.split(/\s+/);
    expect(columns).toContain("REASON");
    expect(cells[columns.indexOf("READY")]).toBe("False");
    expect(cells[columns.indexOf("REASON")]).toBe(condition(failed, "Ready")?.reason);
    await neverCurrent("EdgeTenant", "put-fails", "the edge is known to be drifted");
    expect(tenantOn(sim, "edge-1")).toBe("old");
  });

  it.concurrent("a new generation that bad credentials keep from being applied is not Ready", async () => {
    const sim = await scene("bad-creds", "first");
    await current("EdgeTenant", "bad-creds");
    expect(tenantOn(sim, "edge-1")).toBe("first");
    // the manager's password is rotated and its Secret not yet: the operator's credentials are refused
    sim.state.auth.rotate({ username: "admin", password: "rotated" }, { keepTokens: false });
    await k8s.patch("EdgeTenant", "bad-creds", { spec: { tenant: "second" } });
    await neverCurrent("EdgeTenant", "bad-creds", "generation 2 was never applied");
    await k8s.waitFor(
      "NSXManager",
      "bad-creds",
      "Unauthorized",
      (o) => condition(o, "Ready")?.reason === "Unauthorized",
    );
    await neverCurrent("NSXManager", "bad-creds", "the manager refuses the credentials");
    expect(tenantOn(sim, "edge-1")).toBe("first");
  });

  it.concurrent("a paused object whose manager state was never observed is not Ready", async () => {
    await scene("paused", "new", { "nsxv.io/paused": "true" });
    const paused = await k8s.waitFor(
      "EdgeTenant",
      "paused",
      "paused",
      (o) => condition(o, "Synced")?.reason === "ReconcilePaused",
    );
    expect(paused.status?.observedGeneration, "paused status carries observedGeneration").toBe(
      paused.metadata.generation,
    );
    await neverCurrent("EdgeTenant", "paused", "nothing is known of the edge");
  });

  it.concurrent(
    "an object whose manager refuses the credentials stops reading Current within two sync intervals",
    async () => {
      // the shortest sync interval the CRD allows: Ready is kept for two of them
      const intervalMs = 10_000;
      const sim = await scene("blind", "first", undefined, "10s");
      await current("EdgeTenant", "blind");
      // the credentials stop working; no spec changes: the object is only blind
      sim.state.auth.rotate({ username: "admin", password: "rotated" }, { keepTokens: false });
      const rotatedMs = Date.now();
      sim.state.changeEdge("edge-1", { tenant: "drifted-while-blind" });
      const stale = await k8s.waitFor(
        "EdgeTenant",
        "blind",
        "not Current",
        (o) => kstatus(o).status !== "Current",
        { timeoutMs: 5 * intervalMs },
      );
      const blindMs = Date.now() - rotatedMs;
      // the bound is two sync intervals since the last observation (at most one interval before the
      // rotation), and a retry comes at most one interval after it
      expect(blindMs, "read Current no longer than the bound").toBeLessThan(4 * intervalMs);
      expect(condition(stale, "Ready"), "Unknown, with the cause and since when").toMatchObject({
        status: "Unknown",
        message: expect.stringMatching(/no observation of the manager since/),
      });
      await neverCurrent("EdgeTenant", "blind", "the operator cannot see the manager");
      expect(tenantOn(sim, "edge-1"), "nothing written blind").toBe("drifted-while-blind");
    },
  );

  it.concurrent(
    "every object of a manager that hangs reads InProgress within 30 s (sync interval 10 s)",
    async () => {
      const sim = await startSimulator({ state: { edges: [{ generate: { count: 3, tenant: "old" } }] } });
      sims.push(sim);
      await k8s.secret("hung-credentials", { username: "admin", password: "default" }, sim.url);
      // its own timeout far beyond the bound: only the operator's staleness rule can say it in time
      await k8s.create<NSXManager>({
        kind: "NSXManager",
        metadata: { name: "hung" },
        spec: {
          url: sim.url,
          credentialsSecretRef: { name: "hung-credentials" },
          requestTimeoutSeconds: 120,
        },
      });
      const names: [ObjectKind, string][] = [["NSXManager", "hung"]];
      for (let i = 1; i <= 3; i++) {
        await k8s.create<EdgeTenant>({
          kind: "EdgeTenant",
          metadata: { name: `hung-${i}` },
          spec: { managerRef: { name: "hung" }, edgeId: `edge-${i}`, tenant: "old", syncInterval: "10s" },
        });
        names.push(["EdgeTenant", `hung-${i}`]);
      }
      for (const [kind, name] of names) await current(kind, name);
      sim.state.faults.add({ route: "*", kind: "latency", latencyMs: 600_000 });
      const frozenMs = Date.now();
      const left = new Set(names.map(([kind, name]) => `${kind}/${name}`));
      await waitFor(
        "every object of the hung manager not Current",
        async () => {
          for (const key of [...left]) {
            const [kind, name] = key.split("/") as [ObjectKind, string];
            if (kstatus(await k8s.get(kind, name)).status !== "Current") left.delete(key);
          }
          return left.size === 0 ? true : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      // the bound counts from each object's last observation, which is no later than the freeze
      expect(Date.now() - frozenMs, "within max(2 x 10 s, 30 s)").toBeLessThan(30_000 + POLL_SLACK_MS);
      for (const [kind, name] of names) await neverCurrent(kind, name, "the manager does not answer");
    },
    150_000,
  );

  it.concurrent(
    "when the manager refuses the credentials, every object of it reads InProgress at once, whatever its sync interval",
    async () => {
      const sim = await startSimulator({ state: { edges: [{ generate: { count: 3, tenant: "old" } }] } });
      sims.push(sim);
      await k8s.manager("refused", sim.url);
      const names: [ObjectKind, string][] = [["NSXManager", "refused"]];
      for (let i = 1; i <= 3; i++) {
        // the default interval of a real install: Ready would be kept for 10 min
        await k8s.create<EdgeTenant>({
          kind: "EdgeTenant",
          metadata: { name: `refused-${i}` },
          spec: { managerRef: { name: "refused" }, edgeId: `edge-${i}`, tenant: "old", syncInterval: "5m" },
        });
        names.push(["EdgeTenant", `refused-${i}`]);
      }
      for (const [kind, name] of names) await current(kind, name);
      sim.state.auth.rotate({ username: "admin", password: "rotated" }, { keepTokens: false });
      // one object changes: its read is refused, the manager is checked, and so all learn it
      await k8s.patch("EdgeTenant", "refused-1", { spec: { tenant: "new" } });
      const changedMs = Date.now();
      for (const [kind, name] of names.slice(2)) {
        await k8s.waitFor(kind, name, "not Current", (o) => kstatus(o).status !== "Current", {
          timeoutMs: 60_000,
        });
      }
      expect(Date.now() - changedMs, "at once, not after 10 min").toBeLessThan(AT_ONCE_MS);
      for (const [kind, name] of names) await neverCurrent(kind, name, "the manager refuses the credentials");
    },
  );

  it.concurrent(
    "a Secret rotated after a run of refused credentials is used within seconds, not at the next backoff",
    async () => {
      const sim = await scene("rotated", "old", undefined, "5m");
      await current("NSXManager", "rotated");
      sim.state.auth.rotate({ username: "admin", password: "rotated" }, { keepTokens: false });
      // a call refused: the manager is checked, and refused too
      await k8s.patch("EdgeTenant", "rotated", { spec: { tenant: "new" } });
      await k8s.waitFor(
        "NSXManager",
        "rotated",
        "Unauthorized",
        (o) => condition(o, "Ready")?.reason === "Unauthorized",
      );
      // a run of refusals: the checks back off (1 s doubling; 16 s by now)
      await new Promise((resolve) => setTimeout(resolve, 20_000));
      await k8s.replaceSecret("rotated-credentials", { username: "admin", password: "rotated" });
      const rotatedMs = Date.now();
      await k8s.waitFor(
        "NSXManager",
        "rotated",
        "Ready again",
        (o) => condition(o, "Ready")?.status === "True",
        {
          timeoutMs: 90_000,
        },
      );
      expect(Date.now() - rotatedMs, "the Secret is read again every 2 s while refused").toBeLessThan(
        AT_ONCE_MS,
      );
      await k8s.waitFor("EdgeTenant", "rotated", "corrected", () => tenantOn(sim, "edge-1") === "new");
    },
    150_000,
  );

  it.concurrent("an NSXManager whose dependents are refused with 403 turns not-Ready at once", async () => {
    const sim = await scene("denied", "first");
    await current("EdgeTenant", "denied");
    await current("NSXManager", "denied");
    sim.state.faults.add({ route: "*", kind: "status", status: 403, count: 1_000 });
    const startedMs = Date.now();
    // a spec change makes the dependent call at once; the manager's own check is not due
    await k8s.patch("EdgeTenant", "denied", { spec: { tenant: "second" } });
    await k8s.waitFor("NSXManager", "denied", "not Ready", (o) => condition(o, "Ready")?.status !== "True");
    expect(Date.now() - startedMs, "woken by its dependent's 403").toBeLessThan(AT_ONCE_MS);
    await neverCurrent("NSXManager", "denied", "its dependents are refused");
    await neverCurrent("EdgeTenant", "denied", "its generation was refused");
  });
});
