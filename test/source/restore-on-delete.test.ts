/**
 * deletionPolicy Restore in `run --manifests`: removing an EdgeTenant from the files writes back
 * the tenant the edge had before the operator's first correction, using the status file's memory,
 * also when the object was removed while the operator was down. The operator, the directory
 * source and the simulator, end to end.
 */
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

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 8_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

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

  function start(): { source: DirectorySource; stop: () => Promise<unknown> } {
    const source = new DirectorySource({
      dir: join(dir, "manifests"),
      statusFile: join(dir, "status.json"),
      debounceMs: 20,
      logger: nopLogger,
    });
    const operator = new Operator({ source, metricsBindAddress: "0", healthProbeBindAddress: "0" });
    const stop = new AbortController();
    const entry = { stop, exit: operator.start(stop.signal) };
    running.push(entry);
    return {
      source,
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
    await until("corrected, with its finalizer", async () => {
      const object = await web(source);
      return object?.status?.originalTenant === "legacy" && (object.metadata.finalizers ?? []).length === 1;
    });
    expect(sim.state.edge("edge-1")?.doc.tenant).toBe("blue");

    await writeFile(join(dir, "manifests", "edge.yaml"), "");
    await until("restored", () => sim.state.edge("edge-1")?.doc.tenant === "legacy");
    await until("gone", async () => (await web(source)) === undefined);
    assertNoLostContent(sim);
  });

  it("restores after a restart when the object was removed while the operator was down", async () => {
    const first = start();
    await until("corrected", async () => (await web(first.source))?.status?.originalTenant === "legacy");
    await first.stop();
    await writeFile(join(dir, "manifests", "edge.yaml"), "");

    const second = start();
    await until("restored", () => sim.state.edge("edge-1")?.doc.tenant === "legacy");
    await until("gone", async () => (await web(second.source)) === undefined);
  });
});
