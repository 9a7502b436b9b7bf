/**
 * A real etcd and kube-apiserver for integration tests, started the way controller-runtime's
 * envtest starts them: loopback ports, a throwaway data dir, RBAC on, static bearer tokens (an
 * admin in system:masters plus ordinary users), and the API server's self-signed serving
 * certificate, trusted by clients through `caData`. No controller-manager, so namespaces are
 * never finalized and nothing is garbage-collected.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { Agent, request } from "undici";
import { onExitSync, startProcess, tailFile, type ManagedProcess } from "./processes.ts";

/** A user with a static bearer token; `groups` are added to system:authenticated. */
export interface ControlPlaneUser {
  name: string;
  groups?: readonly string[];
}

export interface ControlPlaneOptions {
  /** directory holding the `etcd`, `kube-apiserver` and `kubectl` binaries */
  binDir: string;
  /** users besides the admin, each with its own token; default: one plain user, `nsxv-test-user` */
  users?: readonly ControlPlaneUser[];
  /** bound on starting (or restarting) each server; default 60 s */
  startTimeoutMs?: number;
  /**
   * SIGTERM to SIGKILL delay when stopping; default 2 s. kube-apiserver stops listening at once on
   * SIGTERM but then waits for open watches to end, which clients never do on their own.
   */
  stopGraceMs?: number;
  /** parent of the temporary directory (data, certificates, logs); default os.tmpdir() */
  tempDirParent?: string;
}

const CONTROL_PLANE_DEFAULTS = {
  users: [{ name: "nsxv-test-user" }] as readonly ControlPlaneUser[],
  startTimeoutMs: 60_000,
  stopGraceMs: 2_000,
  pollIntervalMs: 100,
  logTailLines: 30,
};

type Resolved = typeof CONTROL_PLANE_DEFAULTS & { binDir: string };

/** How kube-apiserver is launched; the same on a restart. */
interface ApiServerLaunch {
  args: string[];
  port: number;
  certPath: string;
  logPath: string;
  adminToken: string;
}

export const ADMIN_USER = "nsxv-test-admin";

/** What a client needs to connect; plain data, so it can cross process boundaries. */
export interface ControlPlaneInfo {
  /** https://127.0.0.1:<port> */
  url: string;
  /** base64 of the PEM CA bundle that signed the serving certificate (kubeconfig's certificate-authority-data) */
  caData: string;
  /** bearer token of a member of system:masters */
  adminToken: string;
  /** kubeconfig with the admin token, for KubeConfig.loadFromFile and kubectl */
  kubeconfigPath: string;
  /** the kubectl built with the servers (the machine's may be too old for them) */
  kubectlPath: string;
  /** bearer token by user name, the admin included */
  tokens: Record<string, string>;
  /** the temporary directory: data, certificates, and the logs etcd.log and kube-apiserver.log */
  dir: string;
}

export interface ControlPlane extends ControlPlaneInfo {
  /** a KubeConfig for the given bearer token; default the admin's */
  makeKubeConfig(token?: string): KubeConfig;
  /** the bearer token of a configured user; throws for an unknown one */
  tokenFor(user: string): string;
  /**
   * stops kube-apiserver and starts it again on the same port against the same etcd, `downMs`
   * after it stopped (default at once); resolves once it is ready
   */
  restartApiServer(options?: { downMs?: number }): Promise<void>;
  /** stops both servers and removes the temporary directory */
  stop(): Promise<void>;
}

export type ControlPlaneErrorCode = "CONTROLPLANE_BINARIES_MISSING" | "CONTROLPLANE_START_FAILED";

export class ControlPlaneError extends Error {
  readonly code: ControlPlaneErrorCode;
  constructor(code: ControlPlaneErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The plain-data part of a control plane, e.g. to hand it to test workers. */
export function infoOf(cp: ControlPlaneInfo): ControlPlaneInfo {
  const { url, caData, adminToken, kubeconfigPath, kubectlPath, tokens, dir } = cp;
  return { url, caData, adminToken, kubeconfigPath, kubectlPath, tokens, dir };
}

export function makeKubeConfig(info: Pick<ControlPlaneInfo, "url" | "caData">, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "nsxv-test", server: info.url, caData: info.caData, skipTLSVerify: false }],
    users: [{ name: "nsxv-test-token", token }],
    contexts: [{ name: "nsxv-test", cluster: "nsxv-test", user: "nsxv-test-token" }],
    currentContext: "nsxv-test",
  });
  return kc;
}

export function tokenFor(info: Pick<ControlPlaneInfo, "tokens">, user: string): string {
  const token = info.tokens[user];
  if (token === undefined) {
    throw new Error(`no token for user ${user}; known users: ${Object.keys(info.tokens).join(", ")}`);
  }
  return token;
}

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const opts: Resolved = {
    ...CONTROL_PLANE_DEFAULTS,
    binDir: options.binDir,
    users: options.users ?? CONTROL_PLANE_DEFAULTS.users,
    startTimeoutMs: options.startTimeoutMs ?? CONTROL_PLANE_DEFAULTS.startTimeoutMs,
    stopGraceMs: options.stopGraceMs ?? CONTROL_PLANE_DEFAULTS.stopGraceMs,
  };
  const dir = await mkdtemp(join(options.tempDirParent ?? tmpdir(), "nsxv-controlplane-"));
  const removeDirOnExit = onExitSync(() => rmSync(dir, { recursive: true, force: true, maxRetries: 3 }));
  let etcd: ManagedProcess | undefined;
  let apiServer: ManagedProcess | undefined;
  const stopAll = async (): Promise<void> => {
    await apiServer?.stop(opts.stopGraceMs);
    await etcd?.stop(opts.stopGraceMs);
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    removeDirOnExit();
  };
  try {
    const [clientPort, peerPort, apiPort] = await freePorts(3);
    etcd = await startEtcd(opts, dir, clientPort!, peerPort!);
    const tokens = await writeAuthFiles(dir, opts.users);
    const launch: ApiServerLaunch = {
      args: apiServerArgs(dir, apiPort!, clientPort!),
      port: apiPort!,
      certPath: join(dir, "certs", "apiserver.crt"),
      logPath: join(dir, "kube-apiserver.log"),
      adminToken: tokens[ADMIN_USER]!,
    };
    apiServer = await startApiServer(opts, launch);
    const info: ControlPlaneInfo = {
      url: `https://127.0.0.1:${apiPort}`,
      // the file holds the serving certificate followed by the CA that signed it
      caData: (await readFile(launch.certPath)).toString("base64"),
      adminToken: tokens[ADMIN_USER]!,
      kubeconfigPath: join(dir, "kubeconfig"),
      kubectlPath: join(opts.binDir, "kubectl"),
      tokens,
      dir,
    };
    await writeFile(info.kubeconfigPath, makeKubeConfig(info, info.adminToken).exportConfig(), {
      mode: 0o600,
    });
    return {
      ...info,
      makeKubeConfig: (token) => makeKubeConfig(info, token ?? info.adminToken),
      tokenFor: (user) => tokenFor(info, user),
      async restartApiServer(restart = {}) {
        await apiServer?.stop(opts.stopGraceMs);
        if (restart.downMs !== undefined) await new Promise((resolve) => setTimeout(resolve, restart.downMs));
        apiServer = await startApiServer(opts, launch);
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

async function startEtcd(
  opts: Resolved,
  dir: string,
  clientPort: number,
  peerPort: number,
): Promise<ManagedProcess> {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const etcd = startProcess({
    name: "etcd",
    command: join(opts.binDir, "etcd"),
    args: [
      "--name=default",
      `--data-dir=${join(dir, "etcd")}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      "--unsafe-no-fsync",
      "--log-level=warn",
    ],
    logPath: join(dir, "etcd.log"),
  });
  await waitReady(etcd, opts, async () => {
    const res = await request(`${client}/health`, { signal: AbortSignal.timeout(2_000) });
    const text = await res.body.text();
    return res.statusCode === 200 && text.includes('"health":"true"');
  });
  return etcd;
}

function apiServerArgs(dir: string, apiPort: number, etcdPort: number): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    `--secure-port=${apiPort}`,
    `--cert-dir=${join(dir, "certs")}`,
    "--service-cluster-ip-range=10.0.0.0/24",
    "--authorization-mode=RBAC",
    "--disable-admission-plugins=ServiceAccount",
    `--service-account-issuer=https://127.0.0.1:${apiPort}/`,
    `--service-account-key-file=${join(dir, "sa.key")}`,
    `--service-account-signing-key-file=${join(dir, "sa.key")}`,
    `--token-auth-file=${join(dir, "tokens.csv")}`,
    "--allow-privileged=true",
  ];
}

async function startApiServer(opts: Resolved, launch: ApiServerLaunch): Promise<ManagedProcess> {
  const { args, port, certPath, logPath, adminToken } = launch;
  const command = join(opts.binDir, "kube-apiserver");
  const apiServer = startProcess({ name: "kube-apiserver", command, args, logPath });
  let agent: Agent | undefined;
  try {
    await waitReady(apiServer, opts, async () => {
      // the server writes its self-signed certificate on start; until then there is nothing to trust
      agent ??= new Agent({ connect: { ca: await readFile(certPath, "utf8") } });
      const get = async (path: string): Promise<{ status: number; text: string }> => {
        const res = await request(`https://127.0.0.1:${port}${path}`, {
          dispatcher: agent,
          headers: { authorization: `Bearer ${adminToken}` },
          signal: AbortSignal.timeout(2_000),
        });
        return { status: res.statusCode, text: await res.body.text() };
      };
      const health = await get("/healthz");
      if (health.status !== 200 || health.text !== "ok") return false;
      return (await get("/api/v1/namespaces/default")).status === 200;
    });
  } finally {
    await agent?.close();
  }
  return apiServer;
}

/** Polls `ready` until it returns true; fails early when the process exits, late on the timeout. */
async function waitReady(
  proc: ManagedProcess,
  opts: { startTimeoutMs: number; pollIntervalMs: number; logTailLines: number },
  ready: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + opts.startTimeoutMs;
  let lastError: unknown;
  for (;;) {
    const exit = proc.exitStatus();
    if (exit !== undefined) throw startFailed(proc, `exited (${exit})`, opts.logTailLines, lastError);
    try {
      if (await ready()) return;
      lastError = undefined;
    } catch (error) {
      lastError = error; // not listening yet, or its certificate not written yet
    }
    if (Date.now() >= deadline) {
      await proc.stop(1_000);
      throw startFailed(proc, `not ready after ${opts.startTimeoutMs} ms`, opts.logTailLines, lastError);
    }
    await new Promise((resolve) => setTimeout(resolve, opts.pollIntervalMs));
  }
}

function startFailed(proc: ManagedProcess, what: string, lines: number, cause: unknown): ControlPlaneError {
  const tail = tailFile(proc.logPath, lines);
  return new ControlPlaneError(
    "CONTROLPLANE_START_FAILED",
    `${proc.name} ${what}; last lines of ${proc.logPath}:\n${tail || "(empty)"}`,
    { cause },
  );
}

/** One RSA key for both service-account flags, and the static token file. */
async function writeAuthFiles(
  dir: string,
  users: readonly ControlPlaneUser[],
): Promise<Record<string, string>> {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  await writeFile(join(dir, "sa.key"), privateKey, { mode: 0o600 });
  const all = [{ name: ADMIN_USER, groups: ["system:masters"] }, ...users];
  const tokens: Record<string, string> = {};
  const lines = all.map((user, i) => {
    const token = randomBytes(24).toString("hex");
    tokens[user.name] = token;
    const groups = user.groups?.length ? `,"${user.groups.join(",")}"` : "";
    return `${token},${user.name},uid-${i}${groups}`;
  });
  await writeFile(join(dir, "tokens.csv"), lines.join("\n") + "\n", { mode: 0o600 });
  return tokens;
}

/** Ports the kernel just handed out; a small race remains, as in envtest. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (address === null || typeof address === "string") throw new Error("no TCP address");
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}
