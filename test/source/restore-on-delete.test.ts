/**
 * deletionPolicy Restore in `run --manifests`: removing an EdgeTenant from the files writes back
 * the tenant the edge had before the operator's first correction, using the status file's memory,
 * also when the object was removed while the operator was down. The operator, the directory
 * source and the simulator, end to end.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ObjectRef } from "../../src/api/refs.ts";
import type { EdgeTenant } from "../../src/api/types.ts";
import { nopLogger } from "../../src/controller/controller.ts";
import { Operator } from "../../src/operator/operator.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { DirectorySource } from "../../src/source/directory.ts";
import { assertNoLostContent } from "../faults/invariants.ts";
import { recordingEvents, type RecordedEvent } from "../faults/rig.ts";
import type { Registry } from "prom-client";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import { settle } from "../support/operator-time.ts";
import { waitFor } from "../support/wait.ts";

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

const EDGE = `
apiVersion: nsxv.io/v1alpha1
kind: EdgeTenant
metadata: { name: web }
spec: { managerRef: { name: nsx }, edgeId: edge-1, tenant: blue, deletionPolicy: Restore }
`;

const WEB: ObjectRef = { kind: "EdgeTenant", namespace: "default", name: "web" };

describe("deletionPolicy Restore in run --manifests", () => {
  let dir = "";
  let sim: RunningSimulator;
  const running: { stop: AbortController; exit: Promise<unknown> }[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "nsxv-restore-"));
    await mkdir(join(dir, "manifests"));
    sim = await startSimulator({
      state: { edges: [{ generate: { count: 1, idStart: 1, tenant: "legacy" } }] },
    });
    await writeFile(join(dir, "manifests", "manager.yaml"), MANAGER(sim.url));
    await writeFile(join(dir, "manifests", "edge.yaml"), EDGE);
  });
  afterEach(async () => {
    for (const r of running.splice(0)) {
      r.stop.abort();
      await r.exit;
    }
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  function start(): {
    source: DirectorySource;
    events: RecordedEvent[];
    registry: Registry;
    stop: () => Promise<unknown>;
  } {
    const events: RecordedEvent[] = [];
    const source = new DirectorySource({
      dir: join(dir, "manifests"),
      statusFile: join(dir, "status.json"),
      debounceMs: 20,
      removalQuietMs: 300,
      logger: nopLogger,
      events: recordingEvents(events),
    });
    const metrics = createOperatorMetrics({ processMetrics: false });
    const operator = new Operator({ source, metrics, metricsBindAddress: "0", healthProbeBindAddress: "0" });
    const stop = new AbortController();
    const entry = { stop, exit: operator.start(stop.signal) };
    running.push(entry);
    return {
      source,
      events,
      registry: metrics.registry,
      stop: async () => {
        stop.abort();
        running.splice(running.indexOf(entry), 1);
        return entry.exit;
      },
    };
  }

  const web = async (source: DirectorySource) => (await source.store.get(WEB)) as EdgeTenant | undefined;

  it("writes the original tenant back when the object leaves the files", async () => {
    const { source } = start();
    await waitFor("corrected, with its finalizer", async () => {
      const object = await web(source);
      return (
        object?.status?.originalTenant === "legacy" &&
        (object.metadata.finalizers ?? []).length === 1 &&
        sim.state.edge("edge-1")?.doc.tenant === "blue"
      );
    });

    await writeFile(join(dir, "manifests", "edge.yaml"), "");
    await waitFor("restored", () => sim.state.edge("edge-1")?.doc.tenant === "legacy");
    await waitFor("gone", async () => (await web(source)) === undefined);
    assertNoLostContent(sim);
  });

  it("restores after a restart when the object was removed while the operator was down", async () => {
    const first = start();
    await waitFor(
      "corrected",
      async () =>
        (await web(first.source))?.status?.originalTenant === "legacy" &&
        sim.state.edge("edge-1")?.doc.tenant === "blue",
    );
    await first.stop();
    await writeFile(join(dir, "manifests", "edge.yaml"), "");

    const second = start();
    await waitFor("restored", () => sim.state.edge("edge-1")?.doc.tenant === "legacy");
    await waitFor("gone", async () => (await web(second.source)) === undefined);
  });

  it("honours a pause on delete: a paused object removed from its file writes nothing", async () => {
    const { source, events } = start();
    await waitFor("corrected", () => sim.state.edge("edge-1")?.doc.tenant === "blue");
    const paused = EDGE.replace(
      "metadata: { name: web }",
      'metadata: { name: web, annotations: { nsxv.io/paused: "true" } }',
    );
    await writeFile(join(dir, "manifests", "edge.yaml"), paused);
    await waitFor(
      "the pause is seen",
      async () =>
        (await web(source))?.status?.conditions?.some((c) => c.reason === "ReconcilePaused") === true,
    );
    const puts = sim.state.counters.snapshot().putEdge?.["204"] ?? 0;
    await writeFile(join(dir, "manifests", "edge.yaml"), "");
    await waitFor("gone", async () => (await web(source)) === undefined);
    expect(sim.state.edge("edge-1")?.doc.tenant, "not restored: it was paused").toBe("blue");
    expect(sim.state.counters.snapshot().putEdge?.["204"] ?? 0, "no PUT after the pause").toBe(puts);
    expect(
      events.filter((e) => e.reason === "RestoreAbandoned" && e.type === "Warning").map((e) => e.message),
      "says why nothing was restored",
    ).toEqual([expect.stringContaining("nsxv.io/paused")]);
  });

  it("stalls an edit that moves the object to another edge, and restores the first edge when it goes", async () => {
    await sim.close();
    sim = await startSimulator({
      state: { edges: [{ generate: { count: 2, idStart: 1, tenant: "legacy" } }] },
    });
    await writeFile(join(dir, "manifests", "manager.yaml"), MANAGER(sim.url));
    const { source, events } = start();
    await waitFor("corrected", () => sim.state.edge("edge-1")?.doc.tenant === "blue");
    await writeFile(join(dir, "manifests", "edge.yaml"), EDGE.replace("edgeId: edge-1", "edgeId: edge-2"));
    await waitFor(
      "stalled",
      async () =>
        (await web(source))?.status?.conditions?.some(
          (c) => c.type === "Stalled" && c.reason === "EdgeMoved",
        ) === true,
    );
    expect(sim.state.edge("edge-2")?.doc.tenant, "the new edge is not written").toBe("legacy");
    expect(events.some((e) => e.reason === "EdgeMoved" && e.message.includes("delete this object"))).toBe(
      true,
    );
    await writeFile(join(dir, "manifests", "edge.yaml"), "");
    await waitFor("the first edge restored", () => sim.state.edge("edge-1")?.doc.tenant === "legacy");
    await waitFor("gone", async () => (await web(source)) === undefined);
    expect(sim.state.edge("edge-2")?.doc.tenant, "the other edge never touched").toBe("legacy");
  });

  it("writes nothing when the original tenant cannot be recorded", async () => {
    // a manager slow enough that the status file can be broken before the first correction
    await sim.close();
    sim = await startSimulator({
      state: { edges: [{ generate: { count: 1, idStart: 1, tenant: "legacy" } }] },
      settings: { latencyMs: 300 },
    });
    await writeFile(join(dir, "manifests", "manager.yaml"), MANAGER(sim.url));
    const { registry } = start();
    // once the first read is recorded, the status file becomes a directory: every write fails
    const statusFile = join(dir, "status.json");
    await waitFor("the first read recorded", () => existsSync(statusFile));
    await rm(statusFile);
    await mkdir(join(statusFile, "in-the-way"), { recursive: true });
    await waitFor("the edge was read", () => (sim.state.counters.snapshot().getEdge?.["200"] ?? 0) >= 2);
    await settle(registry);
    expect(sim.state.counters.snapshot().putEdge, "no PUT without a durable record").toBeUndefined();
    expect(sim.state.edge("edge-1")?.doc.tenant).toBe("legacy");
  });

  it("says so when the remembered original was lost with an unreadable status file, and restores nothing", async () => {
    const first = start();
    await waitFor("corrected", () => sim.state.edge("edge-1")?.doc.tenant === "blue");
    await first.stop();
    await writeFile(join(dir, "status.json"), "{ not json");
    const second = start();
    await waitFor(
      "the loss is on the object",
      async () =>
        (await web(second.source))?.status?.conditions?.some(
          (c) => c.type === "OriginalTenantLost" && c.status === "True",
        ) === true,
    );
    expect(second.events.filter((e) => e.reason === "StatusLost" && e.type === "Warning")).toHaveLength(1);
    await writeFile(join(dir, "manifests", "edge.yaml"), "");
    await waitFor("gone", async () => (await web(second.source)) === undefined);
    expect(sim.state.edge("edge-1")?.doc.tenant, "no original known: nothing written").toBe("blue");
  });
});
