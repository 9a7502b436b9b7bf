/**
 * What the operator integration tests share: an operator started in-process through the
 * operator.ts wiring (short intervals, ports picked by the OS, JSON logs captured), typed calls
 * on the custom resources of a test namespace, the manager objects for a simulator, and small
 * probes of the operator's HTTP endpoints.
 */
import { fileURLToPath } from "node:url";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from "@kubernetes/client-node";
import { pino } from "pino";
import {
  GROUP,
  SECRET_BINDING_ANNOTATION,
  VERSION,
  type EdgeTenant,
  type Kind,
  type NsxvObject,
} from "../../src/api/types.ts";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import { KubernetesSource } from "../../src/source/kubernetes.ts";
import { PLURALS } from "../../src/api/types.ts";
import { Operator, type OperatorExit, type OperatorOptions } from "../../src/operator/operator.ts";
import type { BoundAddress } from "../../src/controller/probes.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { waitFor, type WaitOptions } from "../support/wait.ts";

export const CRDS_DIR = fileURLToPath(new URL("../../crds", import.meta.url));
export const EXAMPLES_DIR = fileURLToPath(new URL("../../examples", import.meta.url));

/** The sync interval of test operators: drift is corrected within it. */
export const SYNC_INTERVAL_MS = 2_000;

export interface TestOperator {
  operator: Operator;
  source: KubernetesSource;
  /** every log line, parsed */
  logs: Record<string, unknown>[];
  probes: BoundAddress;
  metrics: BoundAddress;
  /** settles when the operator stops by itself or after stop() */
  exit: Promise<OperatorExit>;
  /** SIGTERM, in effect: resolves with how it ended */
  stop(): Promise<OperatorExit>;
}

export interface TestOperatorOptions extends Partial<Omit<OperatorOptions, "source">> {
  /** default the admin's */
  kubeConfig?: KubeConfig;
  /** only the objects with these labels (`--selector`) */
  labelSelector?: string;
}

/** Starts an operator on `namespace` (undefined: every namespace) with test-sized intervals; stop it in afterAll/afterEach. */
export async function startTestOperator(
  kc: KubeConfig,
  namespace: string | undefined,
  options: TestOperatorOptions = {},
): Promise<TestOperator> {
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const { kubeConfig = kc, labelSelector, ...rest } = options;
  const source = new KubernetesSource({
    kubeConfig,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(labelSelector !== undefined ? { labelSelector } : {}),
    watch: { minBackoffMs: 200, maxBackoffMs: 1_000 },
    logger,
  });
  const operator = new Operator({
    source,
    syncIntervalMs: SYNC_INTERVAL_MS,
    shutdownTimeoutMs: 5_000,
    metricsBindAddress: "127.0.0.1:0",
    healthProbeBindAddress: "127.0.0.1:0",
    metrics: createOperatorMetrics({ processMetrics: false }),
    clientOptions: { maxRetries: 1, baseDelayMs: 20, maxDelayMs: 100 },
    reconciler: { kinds: { IPPoolAllocations: { poolListTtlMs: 500 } } },
    logger,
    ...rest,
  });
  const stopper = new AbortController();
  const exit = operator.start(stopper.signal);
  exit.catch(() => {});
  const { probes, metrics } = await operator.listening;
  return {
    operator,
    source,
    logs,
    probes: probes!,
    metrics: metrics!,
    exit,
    stop: () => {
      stopper.abort();
      return exit;
    },
  };
}

/** Typed calls on the custom resources of one namespace. */
export class Resources {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  readonly namespace: string;
  /** Secret name → the manager URL its credentials are bound to */
  readonly #bindings = new Map<string, string>();

  constructor(kc: KubeConfig, namespace: string) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.core = kc.makeApiClient(CoreV1Api);
    this.namespace = namespace;
  }

  #params(kind: Kind) {
    return { group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURALS[kind] };
  }

  async create<T extends NsxvObject>(object: Omit<T, "apiVersion"> & { apiVersion?: string }): Promise<T> {
    const body = { apiVersion: `${GROUP}/${VERSION}`, ...object };
    return (await this.custom.createNamespacedCustomObject({ ...this.#params(object.kind), body })) as T;
  }

  async get<T extends NsxvObject = NsxvObject>(kind: Kind, name: string): Promise<T> {
    return (await this.custom.getNamespacedCustomObject({ ...this.#params(kind), name })) as T;
  }

  /** JSON merge patch of the object (spec, metadata) */
  async patch(kind: Kind, name: string, body: unknown): Promise<NsxvObject> {
    return (await this.custom.patchNamespacedCustomObject(
      { ...this.#params(kind), name, body },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    )) as NsxvObject;
  }

  /** JSON merge patch of the status subresource, as another writer would */
  async patchStatus(kind: Kind, name: string, status: unknown): Promise<NsxvObject> {
    return (await this.custom.patchNamespacedCustomObjectStatus(
      { ...this.#params(kind), name, body: { status } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    )) as NsxvObject;
  }

  async delete(kind: Kind, name: string): Promise<void> {
    await this.custom.deleteNamespacedCustomObject({ ...this.#params(kind), name });
  }

  /**
   * A Secret of credentials, bound to the manager URL `boundTo` (the annotation its owner sets, or
   * the operator sends the credentials nowhere); a replace keeps the binding.
   */
  async secret(name: string, values: Record<string, string>, boundTo?: string): Promise<void> {
    if (boundTo !== undefined) this.#bindings.set(name, boundTo);
    await this.core.createNamespacedSecret({
      namespace: this.namespace,
      body: this.#secretBody(name, values),
    });
  }

  async replaceSecret(name: string, values: Record<string, string>): Promise<void> {
    await this.core.replaceNamespacedSecret({
      name,
      namespace: this.namespace,
      body: this.#secretBody(name, values),
    });
  }

  #secretBody(name: string, values: Record<string, string>) {
    const boundTo = this.#bindings.get(name);
    const annotations = boundTo === undefined ? undefined : { [SECRET_BINDING_ANNOTATION]: boundTo };
    return { metadata: { name, ...(annotations !== undefined ? { annotations } : {}) }, stringData: values };
  }

  /** a Secret with the simulator's default credentials, bound to `url`, and an NSXManager pointing at it */
  async manager(name: string, url: string, credentials = { username: "admin", password: "default" }) {
    await this.secret(`${name}-credentials`, credentials, url);
    return this.create({
      kind: "NSXManager",
      metadata: { name },
      spec: { url, credentialsSecretRef: { name: `${name}-credentials` } },
    });
  }

  /** polls the object until `check` holds; returns it */
  async waitFor<T extends NsxvObject = NsxvObject>(
    kind: Kind,
    name: string,
    what: string,
    check: (object: T) => boolean,
    options?: WaitOptions,
  ): Promise<T> {
    let last: T | undefined;
    try {
      return await waitFor(
        `${kind} ${name}: ${what}`,
        async () => {
          last = await this.get<T>(kind, name);
          return check(last) ? last : undefined;
        },
        { intervalMs: 100, ...options },
      );
    } catch (error) {
      // the status it had says why it never got there
      (error as Error).message += `; last status: ${JSON.stringify(last?.status)}`;
      throw error;
    }
  }
}

/**
 * The scene of the watch and leader tests: a simulator with `edges` edges of tenant "red", the
 * NSXManager "nsx" for it, and the EdgeTenant "web" that wants edge-1 to carry "blue".
 */
export async function startWebScene(k8s: Resources, edges: number): Promise<RunningSimulator> {
  const sim = await startSimulator({
    state: { edges: [{ generate: { count: edges, idStart: 1, tenant: "red" } }] },
  });
  try {
    await k8s.manager("nsx", sim.url);
    await k8s.create<EdgeTenant>({
      kind: "EdgeTenant",
      metadata: { name: "web" },
      spec: { managerRef: { name: "nsx" }, edgeId: "edge-1", tenant: "blue" },
    });
    return sim;
  } catch (error) {
    await sim.close();
    throw error;
  }
}

/** the tenant an edge of the simulator carries now */
export function tenantOn(sim: RunningSimulator, edgeId: string): string | undefined {
  return sim.state.edge(edgeId)?.doc.tenant;
}

export function condition(object: NsxvObject, type: string) {
  return object.status?.conditions?.find((c) => c.type === type);
}

/** the routes the simulator answered, by route name (all statuses added up) */
export async function httpGet(
  address: BoundAddress,
  path: string,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://${address.host}:${address.port}${path}`);
  return { status: res.status, text: await res.text() };
}

/**
 * A TCP proxy in front of the API server, to cut an operator's connections without touching the
 * server: `cutConnections()` destroys every open connection and refuses new ones until `resume()`.
 */
export class TcpProxy {
  readonly #sockets = new Set<Socket>();
  readonly #server: Server;
  readonly #target: { host: string; port: number };
  #refusing = false;

  constructor(target: string) {
    const { hostname, port } = new URL(target);
    this.#target = { host: hostname, port: Number(port) };
    this.#server = createServer((client) => this.#accept(client));
  }

  /** listens on a free loopback port; returns the API server's URL through this proxy */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `https://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  cutConnections(): void {
    this.#refusing = true;
    for (const s of this.#sockets) s.destroy();
  }

  resume(): void {
    this.#refusing = false;
  }

  async close(): Promise<void> {
    this.cutConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  #accept(client: Socket): void {
    if (this.#refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(this.#target.port, this.#target.host);
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on("close", () => this.#sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  }
}
