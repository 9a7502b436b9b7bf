import type { V1Lease } from "@kubernetes/client-node";
import { ApiException, V1MicroTime } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../src/util/clock.ts";
import type { LeaseRecord, LeaseSpec, LeaseStore } from "../../src/controller/leader-election.ts";
import type { LeaseApi } from "../../src/kube/lease-store.ts";
import {
  InMemoryLeaseStore,
  LeaderElectionError,
  LeaderElector,
  LeaseConflictError,
  LeaseUnusableError,
} from "../../src/controller/leader-election.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import { KubernetesLeaseStore } from "../../src/kube/lease-store.ts";
import { deferred, recordingMetrics } from "./helpers.ts";

/** A view of a shared store that can be cut off, as a partitioned replica would be. */
class FlakyStore implements LeaseStore {
  mode: "ok" | "reject" | "hang" = "ok";
  readonly #inner: LeaseStore;
  constructor(inner: LeaseStore) {
    this.#inner = inner;
  }
  get(): Promise<LeaseRecord | undefined> {
    return this.#gate(() => this.#inner.get());
  }
  create(spec: LeaseSpec): Promise<LeaseRecord> {
    return this.#gate(() => this.#inner.create(spec));
  }
  update(resourceVersion: string, spec: LeaseSpec): Promise<LeaseRecord> {
    return this.#gate(() => this.#inner.update(resourceVersion, spec));
  }
  #gate<T>(call: () => Promise<T>): Promise<T> {
    if (this.mode === "reject") return Promise.reject(new Error("apiserver unreachable"));
    if (this.mode === "hang") return new Promise<T>(() => {});
    return call();
  }
}

function run(store: LeaseStore, identity: string, clock: FakeClock, work?: () => Promise<void>) {
  const { metrics, recorded } = recordingMetrics();
  const elector = new LeaderElector({ store, identity, clock, metrics, jitterFactor: 0 });
  const events: string[] = [];
  let leadingSignal: AbortSignal | undefined;
  const stop = new AbortController();
  let finished = false;
  const done = elector
    .start(stop.signal, {
      onStartedLeading: (signal) => {
        events.push(`started@${clock.now()}`);
        leadingSignal = signal;
        return work?.();
      },
      onStoppedLeading: () => void events.push(`stopped@${clock.now()}`),
    })
    .then(() => {
      finished = true;
    });
  return {
    elector,
    events,
    stop,
    done,
    recorded,
    leadingSignal: () => leadingSignal,
    finished: () => finished,
  };
}

describe("LeaderElector", () => {
  it("acquires a missing lease and renews it every retry period", async () => {
    const clock = new FakeClock(0);
    const store = new InMemoryLeaseStore();
    const a = run(store, "a", clock);
    await clock.flush();
    expect(a.events).toEqual(["started@0"]);
    expect(a.elector.isLeader).toBe(true);
    expect(await store.get()).toMatchObject({
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      acquireTimeMs: 0,
      renewTimeMs: 0,
      leaseTransitions: 0,
    });
    await clock.advance(4000);
    expect(await store.get()).toMatchObject({ holderIdentity: "a", acquireTimeMs: 0, renewTimeMs: 4000 });
    expect(a.recorded.leader).toEqual([false, true]);
    a.stop.abort();
    await a.done;
  });

  it("a standby does not take a lease that is being renewed", async () => {
    const clock = new FakeClock(0);
    const store = new InMemoryLeaseStore();
    const a = run(store, "a", clock);
    await clock.flush();
    const b = run(store, "b", clock);
    await clock.advance(60_000);
    expect(b.events).toEqual([]);
    expect(b.elector.isLeader).toBe(false);
    expect((await store.get())?.holderIdentity).toBe("a");
    b.stop.abort();
    await b.done;
    expect(b.events).toEqual([]);
    a.stop.abort();
    await a.done;
  });

  it("of two replicas starting together exactly one wins (optimistic concurrency)", async () => {
    const clock = new FakeClock(0);
    const store = new InMemoryLeaseStore();
    const a = run(store, "a", clock);
    const b = run(store, "b", clock);
    await clock.advance(10_000);
    expect([a.elector.isLeader, b.elector.isLeader].filter(Boolean)).toHaveLength(1);
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.done, b.done]);
  });

  const failures: {
    name: string;
    reason: string;
    fail: (flaky: FlakyStore, store: InMemoryLeaseStore) => Promise<void>;
  }[] = [
    {
      name: "RenewalRejected",
      reason: "An API server that answers with errors must not keep a leader leading.",
      fail: async (flaky) => void (flaky.mode = "reject"),
    },
    {
      name: "RenewalHangs",
      reason: "A call that never answers counts as failed when the renew deadline comes.",
      fail: async (flaky) => void (flaky.mode = "hang"),
    },
    {
      name: "LeaseTakenByAnother",
      reason: "A lease that someone else holds (say, after a forced write) cannot be renewed.",
      fail: async (_flaky, store) => {
        const current = (await store.get()) as LeaseRecord;
        await store.update(current.resourceVersion, { ...current, holderIdentity: "intruder" });
      },
    },
  ];

  it.each(failures)("stops leading at the renew deadline: $name", async ({ reason, fail }) => {
    const clock = new FakeClock(0);
    const store = new InMemoryLeaseStore();
    const flaky = new FlakyStore(store);
    const a = run(flaky, "a", clock);
    await clock.flush();
    await fail(flaky, store);
    await clock.advance(9999);
    expect(a.events, reason).toEqual(["started@0"]);
    expect(a.leadingSignal()?.aborted, reason).toBe(false);
    await clock.advance(1);
    expect(a.events, reason).toEqual(["started@0", "stopped@10000"]);
    expect(a.leadingSignal()?.aborted, reason).toBe(true);
    expect(a.elector.isLeader, reason).toBe(false);
    expect(a.finished(), `${reason} (start resolves after losing)`).toBe(true);
    expect(a.recorded.leader, reason).toEqual([false, true, false]);
  });

  it("a standby takes over only after the lease expires, counting a transition", async () => {
    const clock = new FakeClock(0);
    const store = new InMemoryLeaseStore();
    const flakyA = new FlakyStore(store);
    const a = run(flakyA, "a", clock);
    await clock.flush();
    flakyA.mode = "reject";
    const b = run(store, "b", clock);
    await clock.advance(14_000);
    expect(b.events).toEqual([]);
    expect(a.events).toEqual(["started@0", "stopped@10000"]);
    await clock.advance(2000);
    expect(b.events).toEqual(["started@16000"]);
    expect(await store.get()).toMatchObject({
      holderIdentity: "b",
      acquireTimeMs: 16_000,
      leaseTransitions: 1,
    });
    b.stop.abort();
    await b.done;
  });

  it("releases the lease on shutdown so a standby takes over at its next retry", async () => {
    const clock = new FakeClock(0);
    const store = new InMemoryLeaseStore();
    const a = run(store, "a", clock);
    await clock.flush();
    const b = run(store, "b", clock);
    await clock.advance(3000);
    a.stop.abort();
    await a.done;
    expect(a.events).toEqual(["started@0", "stopped@3000"]);
    expect(await store.get()).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
    await clock.advance(2000);
    expect(b.events).toEqual(["started@4000"]);
    expect((await store.get())?.leaseTransitions).toBe(1);
    b.stop.abort();
    await b.done;
  });

  it("keeps renewing while the leader's work winds down, and releases after", async () => {
    const clock = new FakeClock(0);
    const store = new InMemoryLeaseStore();
    const work = deferred();
    const a = run(store, "a", clock, () => work.promise);
    await clock.advance(1000);
    a.stop.abort();
    await clock.advance(5000);
    expect(a.leadingSignal()?.aborted).toBe(true);
    expect(await store.get()).toMatchObject({ holderIdentity: "a", renewTimeMs: 5000 });
    expect(a.events).toEqual(["started@0"]);
    work.resolve();
    await clock.flush();
    expect(a.finished()).toBe(true);
    expect(a.events).toEqual(["started@0", "stopped@6000"]);
    expect((await store.get())?.holderIdentity).toBe("");
  });

  it("hands the lease back when it wins while being stopped", async () => {
    const clock = new FakeClock(0);
    const store = new InMemoryLeaseStore();
    const gate = deferred();
    const slow: LeaseStore = {
      get: async () => {
        await gate.promise;
        return store.get();
      },
      create: (spec) => store.create(spec),
      update: (rv, spec) => store.update(rv, spec),
    };
    const a = run(slow, "a", clock);
    await clock.flush();
    a.stop.abort();
    gate.resolve();
    await a.done;
    expect(a.events).toEqual([]);
    expect(await store.get()).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
  });

  it("a replica that never led resolves on abort without onStoppedLeading", async () => {
    const clock = new FakeClock(0);
    const store = new InMemoryLeaseStore();
    await store.create({
      holderIdentity: "x",
      leaseDurationSeconds: 15,
      acquireTimeMs: 0,
      renewTimeMs: 0,
      leaseTransitions: 0,
    });
    const a = run(store, "a", clock);
    await clock.advance(4000);
    a.stop.abort();
    await a.done;
    expect(a.events).toEqual([]);
    expect((await store.get())?.holderIdentity).toBe("x");
  });

  const invalid = [
    {
      name: "LeaseNotLongerThanRenew",
      reason: "Others must not take over before the leader gives up.",
      options: { leaseDurationMs: 10_000 },
    },
    {
      name: "RenewTooShortForRetries",
      reason: "The renew deadline must leave room for a jittered retry.",
      options: { renewDeadlineMs: 4000 },
    },
    { name: "EmptyIdentity", reason: "An empty holder means a free lease.", options: { identity: "" } },
  ];
  it.each(invalid)("rejects options: $name", ({ reason, options }) => {
    const make = () => new LeaderElector({ store: new InMemoryLeaseStore(), ...options });
    expect(make, reason).toThrow(LeaderElectionError);
    try {
      make();
    } catch (err) {
      expect((err as LeaderElectionError).code, reason).toBe("LEASE_INVALID_OPTIONS");
    }
  });

  it("stops at once when the Lease cannot be used at all, instead of retrying", async () => {
    const clock = new FakeClock(0);
    let reads = 0;
    const store: LeaseStore = {
      get: async () => {
        reads++;
        throw new LeaseUnusableError("read lease default/nsxv: HTTP 403 Forbidden: ...; grant ...");
      },
      create: async () => Promise.reject(new Error("unexpected")),
      update: async () => Promise.reject(new Error("unexpected")),
    };
    const { done, events } = run(store, "a", clock);
    await expect(done).rejects.toBeInstanceOf(LeaseUnusableError);
    expect(reads, "no retry").toBe(1);
    expect(events, "never led").toEqual([]);
  });

  it("defaults its identity to the hostname with a unique suffix", () => {
    const store = new InMemoryLeaseStore();
    const one = new LeaderElector({ store }).identity;
    const two = new LeaderElector({ store }).identity;
    expect(one).not.toBe(two);
    expect(one).toMatch(/_[0-9a-f-]{36}$/);
  });
});

describe("KubernetesLeaseStore", () => {
  function fakeApi(handlers: Partial<Record<keyof LeaseApi, (param: never) => Promise<V1Lease>>>) {
    const calls: { method: string; param: unknown }[] = [];
    const wrap =
      (method: keyof LeaseApi) =>
      (param: never): Promise<V1Lease> => {
        calls.push({ method, param });
        const handler = handlers[method];
        return handler === undefined ? Promise.reject(new Error(`unexpected ${method}`)) : handler(param);
      };
    const api = {
      readNamespacedLease: wrap("readNamespacedLease"),
      createNamespacedLease: wrap("createNamespacedLease"),
      replaceNamespacedLease: wrap("replaceNamespacedLease"),
    } as LeaseApi;
    return { api, calls };
  }

  const served: V1Lease = {
    metadata: { name: "nsxv", namespace: "ops", resourceVersion: "41", labels: { team: "net" } },
    // what the server sends and client-node 2.x hands back unparsed: strings, not Dates
    spec: {
      holderIdentity: "pod-1",
      leaseDurationSeconds: 15,
      acquireTime: "2025-01-01T00:00:00.000000Z" as unknown as V1MicroTime,
      renewTime: "2025-01-01T00:00:10.500000Z" as unknown as V1MicroTime,
      leaseTransitions: 2,
    },
  };
  const spec: LeaseSpec = {
    holderIdentity: "pod-2",
    leaseDurationSeconds: 15,
    acquireTimeMs: Date.UTC(2025, 0, 1, 0, 1),
    renewTimeMs: Date.UTC(2025, 0, 1, 0, 1),
    leaseTransitions: 3,
  };

  it("reads a lease, with times as strings, into a record", async () => {
    const { api, calls } = fakeApi({ readNamespacedLease: async () => served });
    const store = new KubernetesLeaseStore({ api, namespace: "ops", name: "nsxv" });
    expect(await store.get()).toEqual({
      holderIdentity: "pod-1",
      leaseDurationSeconds: 15,
      acquireTimeMs: Date.UTC(2025, 0, 1),
      renewTimeMs: Date.UTC(2025, 0, 1, 0, 0, 10, 500),
      leaseTransitions: 2,
      resourceVersion: "41",
    });
    expect(calls).toEqual([{ method: "readNamespacedLease", param: { name: "nsxv", namespace: "ops" } }]);
  });

  it("maps 404 on read to no lease", async () => {
    const { api } = fakeApi({
      readNamespacedLease: async () => Promise.reject(new ApiException(404, "not found", {}, {})),
    });
    expect(await new KubernetesLeaseStore({ api, namespace: "ops", name: "nsxv" }).get()).toBeUndefined();
  });

  const status = (code: number, reason: string, message: string, details?: object) =>
    JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", message, reason, code, details });

  it("passes other read errors on, decoded into one line", async () => {
    const { api } = fakeApi({
      readNamespacedLease: async () =>
        Promise.reject(new ApiException(500, "Unknown", status(500, "InternalError", "etcd is down"), {})),
    });
    const error = await new KubernetesLeaseStore({ api, namespace: "ops", name: "nsxv" })
      .get()
      .catch((e) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as Error).message).toBe("read lease ops/nsxv: HTTP 500 InternalError: etcd is down");
  });

  it.each([
    {
      name: "Forbidden",
      reason: "no rights on leases there: retrying cannot help",
      error: new ApiException(
        403,
        "Forbidden",
        status(
          403,
          "Forbidden",
          'leases.coordination.k8s.io "nsxv" is forbidden: User "dev" cannot get resource',
        ),
        {},
      ),
      call: "get" as const,
      want: /read lease ops\/nsxv: HTTP 403 Forbidden: .*forbidden.*; grant get, create and update on leases/,
    },
    {
      name: "NoNamespace",
      reason: "the namespace does not exist: retrying cannot help",
      error: new ApiException(
        404,
        "Not Found",
        status(404, "NotFound", 'namespaces "ops" not found', { name: "ops", kind: "namespaces" }),
        {},
      ),
      call: "create" as const,
      want: /create lease ops\/nsxv: HTTP 404 NotFound: namespaces "ops" not found; create the namespace/,
    },
  ])("maps an unusable Lease to LeaseUnusableError: $name ($reason)", async ({ error, call, want }) => {
    const { api } = fakeApi({
      readNamespacedLease: async () => Promise.reject(error),
      createNamespacedLease: async () => Promise.reject(error),
    });
    const store = new KubernetesLeaseStore({ api, namespace: "ops", name: "nsxv" });
    const failed = await (call === "get" ? store.get() : store.create(spec)).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(LeaseUnusableError);
    expect((failed as Error).message).toMatch(want);
    expect((failed as Error).message, "no escaped JSON").not.toContain('\\"');
  });

  it("creates with MicroTime timestamps and maps 409 to LeaseConflictError", async () => {
    const { api, calls } = fakeApi({
      createNamespacedLease: async () => Promise.reject(new ApiException(409, "AlreadyExists", {}, {})),
    });
    const store = new KubernetesLeaseStore({ api, namespace: "ops", name: "nsxv" });
    await expect(store.create(spec)).rejects.toBeInstanceOf(LeaseConflictError);
    const body = (calls[0]?.param as { body: V1Lease }).body;
    expect(body.metadata).toEqual({ name: "nsxv", namespace: "ops" });
    expect(body.spec?.renewTime).toBeInstanceOf(V1MicroTime);
    expect(JSON.parse(JSON.stringify(body.spec?.renewTime))).toBe("2025-01-01T00:01:00.000000Z");
  });

  it("replaces with the given resourceVersion, keeping the lease's labels", async () => {
    const { api, calls } = fakeApi({
      readNamespacedLease: async () => served,
      replaceNamespacedLease: async (param: { body: V1Lease }) => ({
        ...param.body,
        metadata: { ...param.body.metadata, resourceVersion: "42" },
      }),
    });
    const store = new KubernetesLeaseStore({ api, namespace: "ops", name: "nsxv" });
    await store.get();
    const written = await store.update("41", spec);
    expect(written).toMatchObject({ holderIdentity: "pod-2", leaseTransitions: 3, resourceVersion: "42" });
    const param = calls[1]?.param as { name: string; namespace: string; body: V1Lease };
    expect([param.name, param.namespace]).toEqual(["nsxv", "ops"]);
    expect(param.body.metadata).toMatchObject({ resourceVersion: "41", labels: { team: "net" } });
  });

  it("maps 409 on replace to LeaseConflictError", async () => {
    const { api } = fakeApi({
      replaceNamespacedLease: async () => Promise.reject(new ApiException(409, "Conflict", {}, {})),
    });
    const store = new KubernetesLeaseStore({ api, namespace: "ops", name: "nsxv" });
    const err = await store.update("1", spec).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseConflictError);
    expect((err as LeaseConflictError).code).toBe("LEASE_CONFLICT");
  });
});
