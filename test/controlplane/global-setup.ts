/**
 * Vitest global setup of the `integration` project: starts one control plane per run, provides
 * its connection info to the test files (`inject("controlPlane")`, see testing.ts), stops it at
 * teardown. Test files run in worker processes while the servers belong to this one, so a small
 * loopback endpoint lets a test ask for a kube-apiserver restart.
 *
 * Environment: missing binaries are built first when Go is installed (once, about 12 minutes on
 * 2 cores; NSXV_BUILD_CONTROLPLANE=0 turns that off), so `npm ci && npm test` passes on a fresh
 * machine. Without them the integration tests skip with the reason; NSXV_REQUIRE_CONTROLPLANE=1
 * turns that skip into a failure (CI sets it).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { TestProject } from "vitest/node";
import { findControlPlaneBinaries } from "./binaries.ts";
import { ControlPlaneError, infoOf, startControlPlane, type ControlPlane } from "./controlplane.ts";
import type { SharedControlPlane } from "./testing.ts";

function hasGo(): boolean {
  return spawnSync("go", ["version"], { stdio: "ignore" }).status === 0;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const lookup = findControlPlaneBinaries({ build: process.env.NSXV_BUILD_CONTROLPLANE !== "0" && hasGo() });
  if (!lookup.found) {
    if (process.env.NSXV_REQUIRE_CONTROLPLANE === "1") {
      throw new ControlPlaneError(
        "CONTROLPLANE_BINARIES_MISSING",
        `NSXV_REQUIRE_CONTROLPLANE=1: ${lookup.reason}`,
      );
    }
    console.warn(`\n[controlplane] integration tests will be SKIPPED: ${lookup.reason}\n`);
    project.provide("controlPlane", { available: false, reason: lookup.reason });
    return async () => {};
  }
  const startedAt = performance.now();
  const controlPlane = await startControlPlane({ binDir: lookup.binDir });
  const bridge = await startRestartBridge(controlPlane);
  console.info(
    `[controlplane] ${controlPlane.url} ready in ${Math.round(performance.now() - startedAt)} ms ` +
      `(binaries ${lookup.binDir}; kubeconfig and logs in ${controlPlane.dir})`,
  );
  project.provide("controlPlane", { available: true, info: infoOf(controlPlane), restart: bridge.endpoint });
  return async () => {
    await new Promise((resolve) => bridge.server.close(resolve));
    await controlPlane.stop();
  };
}

/**
 * POST {url} with the bearer token restarts kube-apiserver (`?downMs=N`: N ms after it stopped);
 * answers once it is ready again.
 */
async function startRestartBridge(
  controlPlane: ControlPlane,
): Promise<{ server: Server; endpoint: { url: string; token: string } }> {
  const token = randomBytes(16).toString("hex");
  let queue = Promise.resolve();
  const server = createServer((req, res) => {
    if (req.method !== "POST" || req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(403).end();
      return;
    }
    const downMs = new URL(req.url ?? "/", "http://bridge").searchParams.get("downMs");
    // one restart at a time, in arrival order
    queue = queue.then(() =>
      controlPlane.restartApiServer(downMs === null ? {} : { downMs: Number(downMs) }).then(
        () => void res.writeHead(204).end(),
        (error: unknown) => void res.writeHead(500).end(String(error)),
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("restart bridge has no TCP address");
  return { server, endpoint: { url: `http://127.0.0.1:${address.port}/restart-apiserver`, token } };
}

declare module "vitest" {
  export interface ProvidedContext {
    controlPlane: SharedControlPlane;
  }
}
