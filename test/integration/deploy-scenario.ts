/**
 * The full-reconcile proof of the deploy RBAC: `nsxv-operator run` started as a child process
 * the way the installed Deployment starts it (its container args as applied, `$(POD_NAMESPACE)`
 * expanded and POD_NAMESPACE set as the downward API would, only the bind addresses moved to
 * free loopback ports), authenticated only by a ServiceAccount token from a kubeconfig file,
 * against the manager simulator. One drifted edge tenant and one stray address must converge:
 * tenant corrected, stray released after its grace period, status written, Events created, the
 * Lease acquired and released on SIGTERM, and not one request refused.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { AppsV1Api, CoordinationV1Api, CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { expect } from "vitest";
import type { EdgeTenant, IPPoolAllocations, NSXManager } from "../../src/api/types.ts";
import { generateEdgeXml, startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { waitFor } from "../support/wait.ts";
import { REPO_ROOT, INSTALL } from "./deploy-support.ts";
import { Resources, condition } from "./operator-harness.ts";

export interface ScenarioOptions {
  admin: KubeConfig;
  /** where the install runs: its Deployment, ServiceAccount and Lease */
  installNamespace: string;
  /** where the custom resources and their Secret go */
  objectsNamespace: string;
  /** the ServiceAccount's kubeconfig file (a TokenRequest token, nothing else) */
  kubeconfigPath: string;
  /** bound on convergence; default 45 s */
  timeoutMs?: number;
  /** the Deployment whose args the operator runs with, and its Lease; default deploy/'s names */
  deployment?: string;
  lease?: string;
}

const POOL = "ipaddresspool-1";
const STRAY = "10.20.0.15";
const ALLOWED = ["10.20.0.10", "10.20.0.11"];

/** A running `nsxv-operator run` child and everything it printed. */
interface OperatorProcess {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

/** The container args of the installed Deployment, as the kubelet would pass them. */
async function deploymentArgs(admin: KubeConfig, namespace: string, name: string): Promise<string[]> {
  const deployment = await admin.makeApiClient(AppsV1Api).readNamespacedDeployment({ name, namespace });
  const args = deployment.spec?.template.spec?.containers[0]?.args ?? [];
  expect(args[0]).toBe("run");
  return args.map((arg) =>
    arg
      .replaceAll("$(POD_NAMESPACE)", namespace)
      .replace(/^(--(metrics|health-probe)-bind-address)=.*$/, "$1=127.0.0.1:0"),
  );
}

function startOperator(args: string[], kubeconfigPath: string, podNamespace: string): OperatorProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, POD_NAMESPACE: podNamespace };
  delete env.KUBECONFIG;
  const child = spawn(
    process.execPath,
    [join(REPO_ROOT, "src/cli/main.ts"), ...args, `--kubeconfig=${kubeconfigPath}`],
    { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  const chunks: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk.toString("utf8")));
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => chunks.join(""), exit };
}

/** SIGTERM, then the exit code; SIGKILL and null when it does not stop within `graceMs`. */
async function stopOperator(operator: OperatorProcess, graceMs = 20_000): Promise<number | null> {
  if (operator.child.exitCode !== null) return operator.child.exitCode;
  operator.child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">(
    (resolve) => (timer = setTimeout(() => resolve("timeout"), graceMs)),
  );
  const code = await Promise.race([operator.exit, timeout]);
  clearTimeout(timer);
  if (code !== "timeout") return code;
  operator.child.kill("SIGKILL");
  await operator.exit;
  return null;
}

async function declareObjects(k8s: Resources, simulatorUrl: string): Promise<void> {
  await k8s.secret("nsx-credentials", { username: "admin", password: "default" }, simulatorUrl);
  await k8s.create<NSXManager>({
    kind: "NSXManager",
    metadata: { name: "lab" },
    spec: { url: simulatorUrl, credentialsSecretRef: { name: "nsx-credentials" } },
  });
  await k8s.create<EdgeTenant>({
    kind: "EdgeTenant",
    metadata: { name: "edge-1" },
    spec: { managerRef: { name: "lab" }, edgeId: "edge-1", tenant: "blue" },
  });
  await k8s.create<IPPoolAllocations>({
    kind: "IPPoolAllocations",
    metadata: { name: "apps" },
    spec: {
      managerRef: { name: "lab" },
      pool: { id: POOL },
      allowed: ALLOWED,
      release: { minStrayAge: "2s", maxPerSync: 10 },
    },
  });
}

/** The last lines the operator printed, each cut short: enough to say why a wait failed. */
function tail(output: string, lines = 25, width = 600): string {
  return output
    .trimEnd()
    .split("\n")
    .slice(-lines)
    .map((line) => (line.length > width ? `${line.slice(0, width)}...` : line))
    .join("\n");
}

/** the RBAC authorizer's denial: `User "system:serviceaccount:..." cannot create resource "events" ...` */
const REFUSED = /cannot \w+ resource/;

/**
 * Error lines (pino level 50 and up) about the scenario's namespace or about no object at all.
 * A cluster-wide operator also sees what earlier test files left in the shared control plane,
 * whose simulators are gone: their Unreachable errors are expected and not counted.
 */
function errorsAbout(output: string, namespace: string): string[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .filter((line) => {
      const entry = JSON.parse(line) as { level?: number; namespace?: string };
      return (entry.level ?? 0) >= 50 && (entry.namespace === undefined || entry.namespace === namespace);
    });
}

/**
 * Waits for `check` while the operator runs, and gives up at once when the operator has printed
 * a refused call (a missing grant): that is the failure this scenario exists to find.
 */
async function converge<T>(
  operator: OperatorProcess,
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  type Outcome = { value: T } | { refused: string } | { exited: number };
  const outcome = await waitFor<Outcome>(
    what,
    async () => {
      const refused = operator
        .output()
        .split("\n")
        .find((line) => REFUSED.test(line));
      if (refused !== undefined) return { refused };
      if (operator.child.exitCode !== null) return { exited: operator.child.exitCode };
      const value = await check();
      return value === undefined ? undefined : { value: value as T };
    },
    { timeoutMs, intervalMs: 200 },
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; operator output:\n${tail(operator.output())}`, {
      cause: error,
    });
  });
  if ("value" in outcome) return outcome.value;
  const why =
    "refused" in outcome
      ? `a call was refused: ${outcome.refused}`
      : `the operator exited (${outcome.exited})`;
  throw new Error(`waiting for ${what}, ${why}\noperator output:\n${tail(operator.output())}`);
}

/**
 * Runs the scenario; a failure carries the operator's last lines. Stops the child and the
 * simulator whatever happens.
 */
export async function reconcileAsServiceAccount(options: ScenarioOptions): Promise<void> {
  const { admin, installNamespace, objectsNamespace, kubeconfigPath, timeoutMs = 45_000 } = options;
  const { deployment = "nsxv-operator", lease: leaseName = INSTALL.lease } = options;
  const k8s = new Resources(admin, objectsNamespace);
  const leases = admin.makeApiClient(CoordinationV1Api);
  const readLease = () => leases.readNamespacedLease({ name: leaseName, namespace: installNamespace });
  let simulator: RunningSimulator | undefined;
  let operator: OperatorProcess | undefined;
  try {
    simulator = await startSimulator({
      state: {
        edges: [{ xml: generateEdgeXml({ edgeNumber: 1, tenant: "drifted", firewallRules: 5 }) }],
        pools: [
          {
            id: POOL,
            name: "apps",
            ranges: [{ start: "10.20.0.10", end: "10.20.0.30" }],
            allocations: [...ALLOWED.map((ip) => ({ ip })), { ip: STRAY, note: "removed-vm" }],
          },
        ],
      },
    });
    const sim = simulator;
    await declareObjects(k8s, sim.url);
    const args = await deploymentArgs(admin, installNamespace, deployment);
    const running = startOperator(args, kubeconfigPath, installNamespace);
    operator = running;
    const until = <T>(what: string, check: () => Promise<T | undefined>) =>
      converge(running, what, check, timeoutMs);

    const lease = await until("the Lease held", async () => {
      const found = await readLease();
      return found.spec?.holderIdentity ? found : undefined;
    });
    expect(lease.spec?.leaseDurationSeconds).toBe(15);

    const edge = await until("the EdgeTenant Ready", async () => {
      const object = await k8s.get<EdgeTenant>("EdgeTenant", "edge-1");
      return condition(object, "Ready")?.status === "True" ? object : undefined;
    });
    expect(sim.state.edge("edge-1")?.doc.tenant).toBe("blue");
    expect(edge.status?.observedTenant).toBe("blue");
    expect(edge.status?.lastCorrectionTime).toBeDefined();

    const pool = await until("the stray released and the pool in sync", async () => {
      const object = await k8s.get<IPPoolAllocations>("IPPoolAllocations", "apps");
      const inSync = condition(object, "Ready")?.reason === "InSync";
      return inSync && (object.status?.released?.length ?? 0) > 0 ? object : undefined;
    });
    expect(pool.status?.released?.map((r) => r.ip)).toEqual([STRAY]);
    expect(sim.state.audit.snapshot().releases.map((r) => r.ip)).toEqual([STRAY]);
    const remaining = sim.state
      .pool(POOL)
      ?.allocations()
      .map((a) => a.ipAddress)
      .sort();
    expect(remaining).toEqual(ALLOWED);

    const manager = await k8s.get<NSXManager>("NSXManager", "lab");
    expect(condition(manager, "Ready")?.status).toBe("True");

    const wanted = ["EdgeTenant/edge-1 UpdatedEdgeTenant", "IPPoolAllocations/apps ReleasedAddress"];
    await until("the Events of the correction and the release", async () => {
      const list = await admin.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: objectsNamespace });
      const reasons = list.items.map((e) => `${e.involvedObject.kind}/${e.involvedObject.name} ${e.reason}`);
      return wanted.every((w) => reasons.includes(w)) ? reasons : undefined;
    });

    expect(await stopOperator(running), tail(running.output())).toBe(0);
    const released = await readLease();
    expect(released.spec?.holderIdentity ?? "", "the Lease released on SIGTERM").toBe("");
    // not one call refused, no error logged: a missing grant the operator survives shows up here
    expect(running.output()).not.toMatch(REFUSED);
    expect(errorsAbout(running.output(), objectsNamespace)).toEqual([]);
  } finally {
    if (operator !== undefined) await stopOperator(operator, 5_000);
    await simulator?.close();
  }
}
