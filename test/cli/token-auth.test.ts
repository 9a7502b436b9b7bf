/**
 * `spec.auth: Token` end to end: against a simulated 6.4 manager whose basic authentication is
 * disabled, `apply` authenticates with a token (one token request, then AUTHTOKEN on every
 * call) and converges; with Basic it is refused. The token's renewal (before expiry, and once
 * after a 401) is the client's: test/nsx/client-auth.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { runOneShotCommand } from "../../src/cli/plan-apply.ts";
import { loadStateFile, startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { captureIo, DEMO_STATE, edgeTenant, manager, ManifestDirs, secret } from "./helpers.ts";

const dirs = new ManifestDirs();
let sim: RunningSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(tokenTtlMs: number): Promise<RunningSimulator> {
  const state = await loadStateFile(DEMO_STATE);
  sim = await startSimulator({
    state: { ...state, settings: { ...state.settings, basicAuthEnabled: false, tokenTtlMs } },
  });
  return sim;
}

function manifests(url: string, auth: "Basic" | "Token"): string {
  return dirs.write({
    "all.yaml": [
      manager(url, { auth }),
      secret(),
      edgeTenant("web", "edge-1", "tenant-blue"),
      edgeTenant("app", "edge-2", "tenant-green"),
    ],
  });
}

describe("spec.auth: Token", () => {
  it("converges against a manager that refuses Basic: one token, then AUTHTOKEN", async () => {
    const s = await start(90 * 60_000);
    const io = captureIo();
    expect(await runOneShotCommand("apply", { filename: [manifests(s.url, "Token")] }, io)).toBe(0);
    expect(s.state.edge("edge-1")?.doc.tenant).toBe("tenant-blue");
    const counters = s.state.counters.snapshot();
    expect(counters["token"], "one token for the whole pass").toEqual({ 200: 1 });
    expect(
      Object.values(counters).some((byStatus) => "401" in byStatus),
      "no call refused",
    ).toBe(false);
  });

  it("is refused with Basic when the manager has basic authentication disabled", async () => {
    const s = await start(90 * 60_000);
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [manifests(s.url, "Basic")] }, io)).toBe(1);
    expect(io.out()).toContain("Unauthorized");
  });
});
