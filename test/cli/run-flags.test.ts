/**
 * `nsxv-operator run`: every flag is checked with a message naming what is wrong, flags that do
 * not go together are refused, defaults come from one place; and the command itself runs the
 * loop on a directory, logs JSON lines naming their object, and exits 0 on SIGTERM.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { runCommand, runConfig, type RunFlags } from "../../src/cli/run.ts";
import { startSimulator } from "../../src/simulator/index.ts";

/** the flags commander hands to the action, or the error it reports */
async function parse(args: string[]): Promise<{ flags?: RunFlags; error?: string }> {
  const command = runCommand();
  let flags: RunFlags | undefined;
  let error = "";
  command
    .exitOverride()
    .configureOutput({ writeErr: (text) => void (error += text), writeOut: () => {} })
    .action((parsed: RunFlags) => void (flags = parsed));
  try {
    await command.parseAsync(args, { from: "user" });
  } catch {
    return { error };
  }
  return { flags: flags! };
}

describe("run flags", () => {
  it("defaults: the conventions' numbers", async () => {
    const { flags } = await parse([]);
    expect(runConfig(flags!, {})).toEqual({
      source: { type: "cluster" },
      concurrency: 4,
      concurrencyPerManager: 2,
      syncIntervalMs: 300_000,
      fullReadIntervalMs: 3_600_000,
      fullReadsPerMinute: 7,
      shutdownTimeoutMs: 30_000,
      metricsBindAddress: ":8080",
      healthProbeBindAddress: ":8081",
      logLevel: "info",
    });
  });

  it("every flag, as given", async () => {
    const { flags } = await parse([
      "--kubeconfig=/k",
      "--namespace=team-a",
      "--selector=shard in (a, b),!canary",
      "--concurrency=8",
      "--concurrency-per-manager=3",
      "--sync-interval=90s",
      "--full-read-interval=30m",
      "--full-reads-per-minute=20",
      "--leader-elect",
      "--leader-election-id=ops.nsxv",
      "--leader-election-lease-duration=30s",
      "--leader-election-renew-deadline=20s",
      "--leader-election-retry-period=4s",
      "--metrics-bind-address=127.0.0.1:9090",
      "--health-probe-bind-address=[::1]:9091",
      "--log-level=debug",
      "--shutdown-timeout=1m",
    ]);
    expect(runConfig(flags!, { POD_NAMESPACE: "ops" })).toEqual({
      source: { type: "cluster", kubeconfig: "/k", namespace: "team-a", selector: "shard in (a, b),!canary" },
      concurrency: 8,
      concurrencyPerManager: 3,
      syncIntervalMs: 90_000,
      fullReadIntervalMs: 1_800_000,
      fullReadsPerMinute: 20,
      shutdownTimeoutMs: 60_000,
      leaderElection: {
        id: "ops.nsxv",
        namespace: "ops",
        leaseDurationMs: 30_000,
        renewDeadlineMs: 20_000,
        retryPeriodMs: 4_000,
      },
      metricsBindAddress: "127.0.0.1:9090",
      healthProbeBindAddress: "[::1]:9091",
      logLevel: "debug",
    });
  });

  it("--manifests: the directory's rules, defaulted and as given", async () => {
    const defaults = await parse(["--manifests=d", "--status-file=s"]);
    expect(runConfig(defaults.flags!, {}).source).toEqual({
      type: "manifests",
      dir: "d",
      statusFile: "s",
      removalQuietMs: 5_000,
      readBounds: { maxBytes: 16 * 1024 * 1024, maxDocuments: 25_000 },
    });
    const given = await parse([
      "--manifests=d",
      "--removal-quiet-period=30s",
      "--max-manifest-bytes=64Mi",
      "--max-manifest-documents=100000",
    ]);
    expect(runConfig(given.flags!, {}).source).toEqual({
      type: "manifests",
      dir: "d",
      removalQuietMs: 30_000,
      readBounds: { maxBytes: 64 * 1024 * 1024, maxDocuments: 100_000 },
    });
  });

  const leaseNamespaces = [
    {
      name: "Flag",
      args: ["--leader-election-namespace=le"],
      env: { POD_NAMESPACE: "pod" },
      want: "le",
      reason: "the flag wins",
    },
    {
      name: "PodNamespace",
      args: ["--namespace=watched"],
      env: { POD_NAMESPACE: "pod" },
      want: "pod",
      reason: "the operator's own namespace (downward API)",
    },
    {
      name: "Watched",
      args: ["--namespace=watched"],
      env: {},
      want: "watched",
      reason: "outside a pod: the watched namespace",
    },
    { name: "Default", args: [], env: {}, want: "default", reason: "else default" },
  ];
  it.each(leaseNamespaces)("the Lease's namespace: $name", async ({ args, env, want, reason }) => {
    const { flags } = await parse(["--leader-elect", ...args]);
    expect(runConfig(flags!, env).leaderElection?.namespace, reason).toBe(want);
  });

  const bad = [
    {
      name: "ConcurrencyZero",
      args: ["--concurrency=0"],
      message: "'--concurrency <n>' argument '0' is invalid. must be an integer >= 1",
      reason: "no workers, no work",
    },
    {
      name: "ConcurrencyWord",
      args: ["--concurrency=four"],
      message: "must be an integer >= 1",
      reason: "a number",
    },
    {
      name: "ConcurrencyPerManagerZero",
      args: ["--concurrency-per-manager=0"],
      message: "'--concurrency-per-manager <n>' argument '0' is invalid. must be an integer >= 1",
      reason: "a manager with no share never gets a reconcile",
    },
    {
      name: "FullReadsPerMinuteZero",
      args: ["--full-reads-per-minute=0"],
      message: "'--full-reads-per-minute <n>' argument '0' is invalid. must be an integer >= 1",
      reason: "a safety net that never reads finds nothing",
    },
    {
      name: "SyncIntervalUnitless",
      args: ["--sync-interval=5"],
      message: '"5" is not a duration',
      reason: "Go duration syntax, as the CRDs",
    },
    {
      name: "SyncIntervalTiny",
      args: ["--sync-interval=100ms"],
      message: "must be at least 1s",
      reason: "a floor against hammering managers",
    },
    {
      name: "FullReadIntervalTiny",
      args: ["--full-read-interval=10ms"],
      message: "must be at least 1s",
      reason: "each pass would read every edge in full, as if there were no edge list, and faster",
    },
    {
      name: "Namespace",
      args: ["--namespace=Team_A"],
      message: "not a namespace name",
      reason: "RFC 1123 label",
    },
    {
      name: "SelectorSyntax",
      args: ["--selector=a in b"],
      message: 'not a label selector: "a in b"',
      reason: "in needs a parenthesised set",
    },
    {
      name: "SelectorEmpty",
      args: ["--selector="],
      message: "not a label selector",
      reason: "an empty selector selects everything: leave the flag out",
    },
    {
      name: "BindAddress",
      args: ["--metrics-bind-address=localhost"],
      message: 'invalid bind address "localhost"',
      reason: "host:port, or 0",
    },
    {
      name: "LogLevel",
      args: ["--log-level=verbose"],
      message: "must be one of trace, debug, info, warn, error, fatal, silent",
      reason: "pino's levels",
    },
    {
      name: "LeaseName",
      args: ["--leader-election-id=Ops"],
      message: "not a Lease name",
      reason: "RFC 1123 subdomain",
    },
    {
      name: "ShutdownTimeout",
      args: ["--shutdown-timeout=-1s"],
      message: "not a duration",
      reason: "no negative durations",
    },
    {
      name: "RemovalQuietPeriodUnitless",
      args: ["--removal-quiet-period=5"],
      message: '"5" is not a duration',
      reason: "Go duration syntax",
    },
    {
      name: "MaxManifestBytesUnit",
      args: ["--max-manifest-bytes=16MB"],
      message: "want a number of bytes, optionally with Ki, Mi or Gi",
      reason: "binary units, as Kubernetes quantities",
    },
    {
      name: "MaxManifestBytesZero",
      args: ["--max-manifest-bytes=0"],
      message: "want a number of bytes",
      reason: "a directory that may hold nothing",
    },
    {
      name: "MaxManifestDocumentsZero",
      args: ["--max-manifest-documents=0"],
      message: "must be an integer >= 1",
      reason: "a directory that may hold nothing",
    },
  ];
  it.each(bad)("refuses $name", async ({ args, message, reason }) => {
    const { error } = await parse(args);
    expect(error, reason).toContain(message);
  });

  const conflicts = [
    {
      name: "ManifestsAndKubeconfig",
      args: ["--manifests=d", "--kubeconfig=k"],
      message: "--kubeconfig needs a cluster: not with --manifests",
      reason: "two sources",
    },
    {
      name: "ManifestsAndLeaderElect",
      args: ["--manifests=d", "--leader-elect"],
      message: "--leader-elect needs a cluster",
      reason: "the Lease lives in a cluster",
    },
    {
      name: "StatusFileAlone",
      args: ["--status-file=s"],
      message: "--status-file goes with --manifests",
      reason: "in a cluster status is on the objects",
    },
    {
      name: "QuietPeriodAlone",
      args: ["--removal-quiet-period=10s"],
      message: "--removal-quiet-period goes with --manifests",
      reason: "in a cluster a delete is a delete",
    },
    {
      name: "BoundAlone",
      args: ["--max-manifest-documents=10"],
      message: "--max-manifest-documents goes with --manifests",
      reason: "a cluster's objects are not read from files",
    },
    {
      name: "LeaseShorterThanDeadline",
      args: ["--leader-election-lease-duration=5s"],
      message: "--leader-election-lease-duration must be longer than --leader-election-renew-deadline",
      reason: "a leader must give up before others take over",
    },
    {
      name: "ShareAboveConcurrency",
      args: ["--concurrency=2", "--concurrency-per-manager=3"],
      message: "--concurrency-per-manager (3) cannot be more than --concurrency (2)",
      reason: "a share larger than the whole means nothing; a typo, most likely",
    },
    {
      name: "DeadlineWithinRetries",
      args: ["--leader-election-retry-period=5s"],
      message: "--leader-election-renew-deadline must be longer than 2.2 x --leader-election-retry-period",
      reason: "a leader gets several tries to renew",
    },
  ];
  it.each(conflicts)("refuses $name", async ({ args, message, reason }) => {
    const { flags } = await parse(args);
    expect(() => runConfig(flags!, {}), reason).toThrow(message);
  });

  it.each([
    { concurrency: 1, want: 1, reason: "one worker: the only one" },
    { concurrency: 5, want: 3, reason: "half, rounded up" },
    { concurrency: 8, want: 4, reason: "half" },
  ])(
    "a manager's share defaults to half of --concurrency=$concurrency: $want",
    async ({ concurrency, want, reason }) => {
      const { flags } = await parse([`--concurrency=${concurrency}`]);
      expect(runConfig(flags!, {}).concurrencyPerManager, reason).toBe(want);
    },
  );

  it("accepts label selectors as kubectl writes them", async () => {
    for (const selector of [
      "tier",
      "!canary",
      "a=b,c!=d",
      "a==b",
      "app.kubernetes.io/name=nsxv",
      "env notin (dev),x",
    ]) {
      expect((await parse([`--selector=${selector}`])).flags?.selector, selector).toBe(selector);
    }
  });
});

/** The process's stdout as JSON lines, and its exit code once every line has been read. */
function jsonLines(child: ChildProcessByStdio<null, Readable, Readable>): {
  lines: Record<string, unknown>[];
  onLine: (listener: () => void) => void;
  closed: Promise<number | null>;
} {
  const lines: Record<string, unknown>[] = [];
  const listeners: (() => void)[] = [];
  let buffered = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      lines.push(JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>);
      buffered = buffered.slice(nl + 1);
      for (const listener of listeners) listener();
    }
  });
  return {
    lines,
    onLine: (listener) => void listeners.push(listener),
    // "close", not "exit": every line the child wrote has been read by then
    closed: new Promise((resolve) => child.on("close", (code) => resolve(code))),
  };
}

describe("run --manifests (the process)", () => {
  const loads = [
    { name: "Idle", preload: [], reason: "the ordinary case" },
    {
      name: "BusyThreadPool",
      preload: ["--import", "./test/cli/busy-thread-pool.ts"],
      reason: "a loaded machine: lines queued for libuv's thread pool would be overtaken at exit",
    },
  ];
  it.each(loads)(
    "reconciles a directory, logs JSON lines naming their object, and exits 0 on SIGTERM ($name)",
    async ({ preload, reason }) => {
      const sim = await startSimulator({
        state: { edges: [{ generate: { count: 1, idStart: 1, tenant: "red" } }] },
      });
      const dir = await mkdtemp(join(tmpdir(), "nsxv-run-"));
      try {
        await writeFile(
          join(dir, "all.yaml"),
          `apiVersion: nsxv.io/v1alpha1
kind: NSXManager
metadata: { name: nsx }
spec: { url: "${sim.url}", credentialsSecretRef: { name: creds } }
---
apiVersion: v1
kind: Secret
metadata: { name: creds }
stringData: { username: admin, password: default }
---
apiVersion: nsxv.io/v1alpha1
kind: EdgeTenant
metadata: { name: web }
spec: { managerRef: { name: nsx }, edgeId: edge-1, tenant: blue }
`,
        );
        const child = spawn(
          process.execPath,
          [
            ...preload,
            "src/cli/main.ts",
            "run",
            `--manifests=${dir}`,
            "--metrics-bind-address=0",
            "--health-probe-bind-address=127.0.0.1:0",
          ],
          { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, UV_THREADPOOL_SIZE: "1" } },
        );
        let stderr = "";
        child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
        const { lines, onLine, closed } = jsonLines(child);
        const converged = new Promise<void>((resolve) =>
          onLine(() => {
            // a first status may say the manager is not ready yet: wait for the write itself
            if (sim.state.edge("edge-1")?.doc.tenant === "blue" && lines.at(-1)?.kind === "EdgeTenant") {
              resolve();
            }
          }),
        );
        const timeout = setTimeout(() => child.kill("SIGKILL"), 20_000);
        await Promise.race([converged, closed]);
        expect(sim.state.edge("edge-1")?.doc.tenant, stderr).toBe("blue");
        child.kill("SIGTERM");
        expect(await closed, stderr).toBe(0);
        clearTimeout(timeout);
        expect(lines.find((l) => l.msg === "status changed" && l.kind === "EdgeTenant")).toMatchObject({
          kind: "EdgeTenant",
          namespace: "default",
          name: "web",
        });
        // every line, in the order it was logged, the last one included
        const times = lines.map((l) => l.time as number);
        expect(times, reason).toEqual(times.toSorted((a, b) => a - b));
        expect(lines.at(-1), reason).toMatchObject({ msg: "operator stopped", exit: "stopped" });
      } finally {
        await rm(dir, { recursive: true, force: true });
        await sim.close();
      }
    },
  );
});
