/**
 * SIGTERM with a hung manager, on a real API server: `nsxv-operator run --leader-elect` as a child
 * process, its reconciles waiting on a manager that accepts connections and never answers (60 s
 * request timeout, far beyond the shutdown timeout). The process must release its Lease and exit
 * within --shutdown-timeout, whatever the manager does: before, the lease went at the timeout and
 * the process waited for the hung requests for as long again (released at 30 s, exited at 59 s,
 * with a 30 s grace period), so the kubelet killed the pod before it let go.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { CoordinationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { EdgeTenant, NSXManager } from "../../src/api/types.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { createTestNamespace, describeWithControlPlane, installCrds } from "../controlplane/testing.ts";
import { waitFor } from "../support/wait.ts";
import { CRDS_DIR, Resources } from "./operator-harness.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const LEASE = "nsxv-operator-shutdown";
const SHUTDOWN_TIMEOUT_S = 8;
/** starting Node and the process's own exit, on a busy machine */
const PROCESS_SLACK_MS = 1_500;

describeWithControlPlane("SIGTERM with a hung manager", (cp) => {
  const kc = cp.makeKubeConfig();
  let k8s: Resources;
  let frozen: RunningSimulator;

  beforeAll(async () => {
    await installCrds(kc, CRDS_DIR);
    k8s = new Resources(kc, await createTestNamespace(kc, "nsxv-shutdown"));
    frozen = await startSimulator({ state: { edges: [{ generate: { count: 4, tenant: "old" } }] } });
    frozen.state.faults.add({ route: "*", kind: "latency", latencyMs: 600_000 });
  });

  afterAll(async () => {
    await frozen?.close();
  });

  it("releases the Lease and exits within --shutdown-timeout", async () => {
    await k8s.secret("frozen-credentials", { username: "admin", password: "default" }, frozen.url);
    await k8s.create<NSXManager>({
      kind: "NSXManager",
      metadata: { name: "frozen" },
      spec: {
        url: frozen.url,
        credentialsSecretRef: { name: "frozen-credentials" },
        requestTimeoutSeconds: 60,
      },
    });
    for (let i = 1; i <= 4; i++) {
      await k8s.create<EdgeTenant>({
        kind: "EdgeTenant",
        metadata: { name: `edge-${i}` },
        spec: { managerRef: { name: "frozen" }, edgeId: `edge-${i}`, tenant: "new" },
      });
    }
    const child = spawn(
      process.execPath,
      [
        "src/cli/main.ts",
        "run",
        `--kubeconfig=${cp.kubeconfigPath}`,
        `--namespace=${k8s.namespace}`,
        "--leader-elect",
        `--leader-election-id=${LEASE}`,
        `--leader-election-namespace=${k8s.namespace}`,
        `--shutdown-timeout=${SHUTDOWN_TIMEOUT_S}s`,
        "--metrics-bind-address=0",
        "--health-probe-bind-address=0",
      ],
      { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const leases = kc.makeApiClient(CoordinationV1Api);
    const holder = async () =>
      (await leases.readNamespacedLease({ name: LEASE, namespace: k8s.namespace })).spec?.holderIdentity ??
      "";
    try {
      await waitFor("the lease to be held", async () =>
        (await holder().catch(() => "")) !== "" ? true : undefined,
      );
      await waitFor("the controller to start", async () =>
        output.includes('"msg":"controller started"') ? true : undefined,
      );
      // the manager's check and the EdgeTenants' reads are in flight now, waiting on the manager
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const termMs = Date.now();
      child.kill("SIGTERM");
      const bound = SHUTDOWN_TIMEOUT_S * 1000 + PROCESS_SLACK_MS;
      const code = await Promise.race([
        exited,
        new Promise<"killed">((resolve) => setTimeout(() => resolve("killed"), bound + 30_000)),
      ]);
      const exitedAfterMs = Date.now() - termMs;
      expect(code, output.slice(-3000)).toBe(0);
      expect(exitedAfterMs, "exited within the shutdown timeout").toBeLessThan(bound);
      expect(await holder(), "the Lease is released").toBe("");
      const lines = output
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { msg?: string; time?: number });
      const released = lines.findIndex((line) => line.msg === "released lease");
      const stopped = lines.findIndex((line) => line.msg === "operator stopped");
      expect(released, output.slice(-3000)).toBeGreaterThanOrEqual(0);
      expect(released, "the lease goes first").toBeLessThan(stopped);
      expect(lines[released]!.time! - termMs, "released within the shutdown timeout").toBeLessThan(
        SHUTDOWN_TIMEOUT_S * 1000,
      );
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    }
  }, 120_000);
});
