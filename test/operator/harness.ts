/**
 * What the operator tests share: a desired-state source over a memory store (status writes land
 * in the store unless told otherwise), the objects of one manager, and `operatorHarness`, which
 * starts simulators and operators and stops them after each test.
 */
import { afterEach } from "vitest";
import type { ObjectRef } from "../../src/api/refs.ts";
import type { EdgeTenant, NSXManager, NsxvObject, Secret } from "../../src/api/types.ts";
import { MemoryEventSink, SinkEventRecorder } from "../../src/controller/events.ts";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import { Operator, type OperatorOptions } from "../../src/operator/operator.ts";
import { memoryStore, type MemoryStore } from "../../src/reconcile/store.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import {
  ChangeListeners,
  type ChangeListener,
  type DesiredStateSource,
  type Status,
  type StatusWriteOutcome,
} from "../../src/source/source.ts";

export const NS = "ops";

/** A source over a memory store; status writes land in the store unless `answers` says otherwise. */
export class FakeSource implements DesiredStateSource {
  readonly store: MemoryStore;
  readonly sink = new MemoryEventSink();
  readonly events = new SinkEventRecorder({ sink: this.sink, host: "test" });
  readonly writes: { ref: ObjectRef; status: Status }[] = [];
  readonly answers: StatusWriteOutcome[] = [];
  ready: string | undefined = undefined;
  readonly #listeners = new ChangeListeners();

  constructor(objects: NsxvObject[], secrets: Secret[]) {
    this.store = memoryStore({ objects, secrets });
  }

  start(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }
  synced(): Promise<boolean> {
    return Promise.resolve(true);
  }
  notReady(): string | undefined {
    return this.ready;
  }
  subscribe(listener: ChangeListener): () => void {
    return this.#listeners.subscribe(listener);
  }
  /** what a watch event would do */
  change(object: NsxvObject): void {
    const before = this.store.list(object.kind).find((o) => o.metadata.name === object.metadata.name);
    this.store.put(object);
    this.#listeners.emit({ type: "object", before, after: object });
  }
  writeStatus(ref: ObjectRef, status: Status): Promise<StatusWriteOutcome> {
    this.writes.push({ ref, status });
    const answer = this.answers.shift() ?? "written";
    const object = this.store.get(ref) as NsxvObject | undefined;
    if (answer === "written" && object !== undefined) this.store.put({ ...object, status } as NsxvObject);
    return Promise.resolve(answer);
  }
  setFinalizer(ref: ObjectRef, finalizer: string, present: boolean): Promise<StatusWriteOutcome> {
    const object = this.store.get(ref) as NsxvObject | undefined;
    if (object === undefined) return Promise.resolve("gone");
    const others = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    const metadata = { ...object.metadata, finalizers: present ? [...others, finalizer] : others };
    this.store.put({ ...object, metadata } as NsxvObject);
    return Promise.resolve("written");
  }
  statusOf(name: string): Status | undefined {
    return (this.store.get({ kind: "EdgeTenant", namespace: NS, name }) as NsxvObject | undefined)?.status;
  }
}

export function objects(
  url: string,
  tenants: Record<string, string>,
): { objects: NsxvObject[]; secrets: Secret[] } {
  const manager: NSXManager = {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "NSXManager",
    metadata: { name: "nsx", namespace: NS, generation: 1 },
    spec: { url, credentialsSecretRef: { name: "creds" } },
  };
  const edges = Object.entries(tenants).map(([edgeId, tenant]): EdgeTenant => ({
    apiVersion: "nsxv.io/v1alpha1",
    kind: "EdgeTenant",
    metadata: { name: edgeId, namespace: NS, generation: 1, creationTimestamp: "2025-01-01T00:00:00Z" },
    spec: { managerRef: { name: "nsx" }, edgeId, tenant, syncInterval: "1h" },
  }));
  const secret: Secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "creds", namespace: NS },
    stringData: { username: "admin", password: "default" },
  };
  return { objects: [manager, ...edges], secrets: [secret] };
}

export const ready = (status: Status | undefined) =>
  status?.conditions?.find((c) => c.type === "Ready")?.status;

/**
 * Call once inside a describe: `simulator` starts one and `run` starts an operator on a source
 * (no HTTP endpoints, an hour between resyncs), both stopped after each test, newest first.
 */
export function operatorHarness() {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function simulator(tenants: string[], latencyMs = 0): Promise<RunningSimulator> {
    const sim = await startSimulator({
      state: { edges: tenants.map((tenant, i) => ({ generate: { count: 1, idStart: i + 1, tenant } })) },
      settings: { latencyMs },
    });
    cleanup.push(() => sim.close());
    return sim;
  }

  function run(source: FakeSource, options: Partial<OperatorOptions> = {}) {
    const bundle = createOperatorMetrics({ processMetrics: false });
    const operator = new Operator({
      source,
      metrics: bundle,
      metricsBindAddress: "0",
      healthProbeBindAddress: "0",
      syncIntervalMs: 3_600_000,
      ...options,
    });
    const stop = new AbortController();
    const exit = operator.start(stop.signal);
    cleanup.push(() => {
      stop.abort();
      return exit;
    });
    return { operator, exit, stop, registry: bundle.registry };
  }

  return { run, simulator };
}
