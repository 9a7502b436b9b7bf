/**
 * `run --manifests` while a file does not load: the last good version of its objects is observed
 * and reported, nothing is released or written for them however long it lasts, and once the file
 * loads again the real strays are released as usual. The operator, the directory source and the
 * simulator, end to end, on a fake clock (grace periods and resyncs pass without waiting for them;
 * the test reads the directory again itself after each write instead of waiting for the watch).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ObjectRef } from "../../src/api/refs.ts";
import type { IPPoolAllocations } from "../../src/api/types.ts";
import { nopLogger } from "../../src/controller/controller.ts";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import { Operator } from "../../src/operator/operator.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { DirectorySource } from "../../src/source/directory.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { advance, advanceUntil } from "../support/operator-time.ts";

const MANAGER = (url: string) => `
apiVersion: nsxv.io/v1alpha1
kind: NSXManager
metadata: { name: nsx }
spec: { url: "${url}", credentialsSecretRef: { name: creds } }
---
apiVersion: v1
kind: Secret
metadata: { name: creds }
stringData: { username: admin, password: default }
`;

/** The pool object; `extra` lands inside spec (a typo there makes the file invalid). */
const POOL = (allowed: string[], extra = "") => `
apiVersion: nsxv.io/v1alpha1
kind: IPPoolAllocations
metadata: { name: apps }
spec:
  managerRef: { name: nsx }
  pool: { id: ipaddresspool-1 }
  allowed: [${allowed.join(", ")}]
  release: { minStrayAge: 2s }
  syncInterval: 10s
${extra}`;

const APPS: ObjectRef = { kind: "IPPoolAllocations", namespace: "default", name: "apps" };

describe("run --manifests while a file does not load", () => {
  let dir = "";
  let sim: RunningSimulator | undefined;
  const stop = new AbortController();

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "nsxv-invalid-"));
    await mkdir(join(dir, "manifests"));
  });
  afterEach(async () => {
    stop.abort();
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("never releases what a broken edit adds to allowed, and releases the real strays once it is fixed", async () => {
    const clock = new FakeClock();
    sim = await startSimulator({
      state: {
        pools: [
          {
            id: "ipaddresspool-1",
            name: "apps",
            ranges: [{ start: "10.0.0.1", end: "10.0.0.20" }],
            // a-c allowed; d, e, f deployed and about to be declared; g a real stray
            allocations: [
              "10.0.0.1",
              "10.0.0.2",
              "10.0.0.3",
              "10.0.0.4",
              "10.0.0.5",
              "10.0.0.6",
              "10.0.0.7",
            ].map((ip) => ({ ip })),
          },
        ],
      },
      nowMs: () => clock.now(),
    });
    const source = new DirectorySource({ dir: join(dir, "manifests"), clock, logger: nopLogger });
    const write = async (name: string, text: string) => {
      await writeFile(join(dir, "manifests", name), text);
      await source.reload();
    };
    await writeFile(join(dir, "manifests", "manager.yaml"), MANAGER(sim.url));
    await writeFile(join(dir, "manifests", "pool.yaml"), POOL(["10.0.0.1-10.0.0.3"]));
    const metrics = createOperatorMetrics({ processMetrics: false });
    const operator = new Operator({
      source,
      clock,
      metrics,
      metricsBindAddress: "0",
      healthProbeBindAddress: "0",
    });
    const exit = operator.start(stop.signal);
    const until = (what: string, check: () => boolean | undefined) =>
      advanceUntil(what, clock, metrics.registry, check, { stepMs: 100, limitMs: 30_000 });
    const status = () => (source.store.get(APPS) as IPPoolAllocations | undefined)?.status;
    const condition = (type: string) => status()?.conditions?.find((c) => c.type === type);
    await until("the strays to be seen", () => (status()?.stray?.length ?? 0) === 4);

    // the edit declares d and e-f, with a typo elsewhere in the same object, within the grace period
    await write(
      "pool.yaml",
      POOL(["10.0.0.1-10.0.0.3", "10.0.0.4", "10.0.0.5-10.0.0.6"], "  syncIntervall: 10s\n"),
    );
    await until("the blocked writes to show", () => condition("Synced")?.reason === "SourceInvalid");
    expect(condition("Stalled")).toMatchObject({ status: "True", reason: "SourceInvalid" });
    expect(condition("Synced")?.message).toContain(join(dir, "manifests", "pool.yaml"));
    // well past every stray's grace period, and a resync: nothing is released, not even g
    await advance(clock, metrics.registry, 12_000, 100);
    expect(sim.state.audit.snapshot().releases, "nothing released while the file does not load").toEqual([]);
    expect(
      status()?.stray?.map((s) => s.ip),
      "still observed and reported",
    ).toEqual(["10.0.0.4", "10.0.0.5", "10.0.0.6", "10.0.0.7"]);

    await write("pool.yaml", POOL(["10.0.0.1-10.0.0.3", "10.0.0.4", "10.0.0.5-10.0.0.6"]));
    await until("the real stray released", () => sim?.state.audit.snapshot().releases.length === 1);
    expect(sim.state.audit.snapshot().releases.map((r) => r.ip)).toEqual(["10.0.0.7"]);
    await until("in sync", () => condition("Ready")?.status === "True");
    expect(condition("Synced")).toMatchObject({ status: "True" });
    stop.abort();
    expect(await exit).toBe("stopped");
  });
});
