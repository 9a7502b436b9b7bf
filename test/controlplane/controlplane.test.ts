/**
 * Start-up failures of the control plane, with fake binaries (shell scripts): the error carries
 * the server's log tail, and nothing is left behind. The real servers are exercised by
 * test/integration/controlplane-smoke.test.ts.
 */
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneError, makeKubeConfig, startControlPlane, tokenFor } from "./controlplane.ts";

const cases = [
  {
    name: "EtcdExitsAtOnce",
    reason: "a server that dies on start fails the start early, with what it printed",
    etcd: 'echo "etcd: bad flag --frobnicate" >&2; exit 2',
    startTimeoutMs: 30_000,
    message: /etcd exited \(exit code 2\)[\s\S]*etcd: bad flag --frobnicate/,
    maxMs: 10_000,
  },
  {
    name: "EtcdNeverReady",
    reason: "a server that never answers its health check fails the start after the timeout",
    etcd: 'echo "etcd: waiting for nothing"; exec sleep 60',
    startTimeoutMs: 1_000,
    message: /etcd not ready after 1000 ms[\s\S]*etcd: waiting for nothing/,
    maxMs: 10_000,
  },
];

describe("startControlPlane failures", () => {
  let parent = "";
  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), "nsxv-controlplane-test-"));
  });
  afterAll(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  it.each(cases)("$name", async ({ etcd, startTimeoutMs, message, maxMs, reason }) => {
    const binDir = await mkdtemp(join(parent, "bin-"));
    await writeFile(join(binDir, "etcd"), `#!/bin/sh\n${etcd}\n`);
    await chmod(join(binDir, "etcd"), 0o755);
    const started = Date.now();
    const error: unknown = await startControlPlane({ binDir, startTimeoutMs, tempDirParent: parent }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, reason).toBeInstanceOf(ControlPlaneError);
    expect((error as ControlPlaneError).code).toBe("CONTROLPLANE_START_FAILED");
    expect((error as Error).message, reason).toMatch(message);
    expect(Date.now() - started).toBeLessThan(maxMs);
    const dir = /(\S+nsxv-controlplane-[^/\s]+)\/etcd\.log/.exec((error as Error).message)?.[1];
    expect(dir, "the message names the log file").toBeDefined();
    expect(existsSync(dir!), "the temporary directory is removed").toBe(false);
  });
});

describe("connection helpers", () => {
  const info = { url: "https://127.0.0.1:6443", caData: "Q0E=", tokens: { alice: "t-alice" } };

  it("makeKubeConfig points at the server, trusts the CA and sends the token", () => {
    const kc = makeKubeConfig(info, "t-alice");
    expect(kc.getCurrentCluster()).toMatchObject({ server: info.url, caData: "Q0E=", skipTLSVerify: false });
    expect(kc.getCurrentUser()?.token).toBe("t-alice");
  });

  it("tokenFor names the known users when asked for an unknown one", () => {
    expect(tokenFor(info, "alice")).toBe("t-alice");
    expect(() => tokenFor(info, "bob")).toThrow(/no token for user bob; known users: alice/);
  });
});
