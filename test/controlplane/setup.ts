/**
 * Setup file of the `tools` and `integration` projects: before a test file is imported, waits
 * for what it needs from global-setup.ts's service (the binaries, being built in the background
 * on a fresh clone; for the integration project, the shared control plane too), then puts the
 * binaries first on PATH (helm, kubectl, govnsx) and hands the control plane to testing.ts.
 * Missing binaries leave the tests that need them to skip with the reason, or to fail with
 * NSXV_REQUIRE_CONTROLPLANE=1 (CI); a build or a start that failed fails the file.
 */
import { delimiter } from "node:path";
import { inject } from "vitest";
import type { ControlPlaneInfo } from "./controlplane.ts";
import { provideControlPlane } from "./testing.ts";

export interface ServiceEndpoint {
  url: string;
  token: string;
  /** the project's files use the shared control plane (the integration project) */
  controlPlane: boolean;
}

export type BinariesAnswer =
  | { found: true; binDir: string }
  /** failed: a build was tried and failed (not merely skipped) */
  | { found: false; reason: string; failed: boolean };

export type ControlPlaneAnswer =
  { available: true; info: ControlPlaneInfo } | { available: false; reason: string; failed: boolean };

/** Asks the service, again while it says "not yet" (202): a cold build takes many minutes. */
async function ask<T>(endpoint: ServiceEndpoint, path: "/binaries" | "/control-plane"): Promise<T> {
  for (;;) {
    const res = await fetch(`${endpoint.url}${path}`, {
      headers: { authorization: `Bearer ${endpoint.token}` },
    });
    if (res.status === 200) return (await res.json()) as T;
    if (res.status !== 202)
      throw new Error(`control-plane service ${path}: ${res.status} ${await res.text()}`);
  }
}

const required = process.env.NSXV_REQUIRE_CONTROLPLANE === "1";
/** the reason, as an error when the run may not skip */
function unavailable(reason: string, failed: boolean): void {
  if (failed || required) throw new Error(`${required ? "NSXV_REQUIRE_CONTROLPLANE=1: " : ""}${reason}`);
}

const endpoint = inject("controlPlaneService");
const binaries = await ask<BinariesAnswer>(endpoint, "/binaries");
if (binaries.found) process.env.PATH = `${binaries.binDir}${delimiter}${process.env.PATH ?? ""}`;
else unavailable(binaries.reason, binaries.failed);
const shared = endpoint.controlPlane ? await ask<ControlPlaneAnswer>(endpoint, "/control-plane") : undefined;
if (shared?.available === false) unavailable(shared.reason, shared.failed);
provideControlPlane({ binaries, shared });
