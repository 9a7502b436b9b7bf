/**
 * The Kubernetes desired-state source (src/controller/kube-source.ts) over scripted watches and
 * fake status and Secret APIs: which changes enqueue which objects (never a status write), which
 * Secrets are kept, how status is patched, and the rules of source.ts both sources share.
 */
import { KINDS } from "../../src/api/types.ts";
import { concernedBy } from "../../src/reconcile/routing.ts";
import type { DesiredStateChange } from "../../src/reconcile/store.ts";
import { StatusRefusedError, type DesiredStateSource } from "../../src/source/source.ts";
import { ApiException, KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import type { EdgeTenant, NSXManager, NsxvObject } from "../../src/api/types.ts";
import { nopRecorder } from "../../src/controller/events.ts";
import {
  KubernetesSource,
  mergePatch,
  type ObjectApi,
  type SecretApi,
  type StatusApi,
} from "../../src/source/kubernetes.ts";
import type { KubeObject, ListPage, ListWatchApi, Query } from "../../src/controller/kube-watch.ts";
import { needsReconcile } from "../../src/reconcile/routing.ts";
import { objectKey, parseObjectKey } from "../../src/api/refs.ts";
import type { ObjectRef } from "../../src/api/refs.ts";

const NS = "team-a";

function manager(name: string, secret: string, extra: Partial<NSXManager> = {}): NSXManager {
  return {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "NSXManager",
    metadata: { name, namespace: NS, generation: 1, resourceVersion: "1" },
    spec: { url: "https://nsx.example", credentialsSecretRef: { name: secret } },
    ...extra,
  };
}

function tenant(name: string, managerName: string, meta: Partial<EdgeTenant["metadata"]> = {}): EdgeTenant {
  return {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "EdgeTenant",
    metadata: { name, namespace: NS, generation: 1, resourceVersion: "1", ...meta },
    spec: { managerRef: { name: managerName }, edgeId: "edge-1", tenant: "blue" },
  };
}

function secret(name: string, password: string, resourceVersion = "1"): KubeObject {
  return {
    metadata: { name, namespace: NS, resourceVersion },
    data: { username: btoa("admin"), password: btoa(password) },
  } as KubeObject;
}

/** Lists from `collections` (by the last path segment), watches driven by the test. */
class FakeCluster implements ListWatchApi {
  readonly collections: Record<string, KubeObject[]> = {};
  readonly emitters: Record<string, (type: string, object: unknown) => void> = {};
  /** the collections listed, in order */
  readonly listed: string[] = [];

  list(path: string, _query: Query): Promise<ListPage> {
    this.listed.push(last(path));
    return Promise.resolve({
      items: structuredClone(this.collections[last(path)] ?? []),
      resourceVersion: "100",
    });
  }

  watch(path: string, _query: Query, onEvent: (type: string, object: unknown) => void, signal: AbortSignal) {
    this.emitters[last(path)] = (type, object) => onEvent(type, structuredClone(object));
    const ended = new Promise<void>((resolve) =>
      signal.addEventListener("abort", () => resolve(), { once: true }),
    );
    return Promise.resolve({ ended });
  }

  emit(collection: string, type: string, object: unknown): void {
    this.emitters[collection]?.(type, object);
  }
}

const last = (path: string) => path.split("/").at(-1)!;

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: "https://127.0.0.1:1" }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}

/** The keys the operator queues for a change a source reports (routing.ts). */
function routed(source: DesiredStateSource, change: DesiredStateChange): string[] {
  const everything = () => KINDS.flatMap((kind) => source.store.list(kind));
  return concernedBy(change, everything).map(objectKey);
}

describe("KubernetesSource", () => {
  const running = new Set<AbortController>();
  afterEach(() => {
    for (const c of running) c.abort();
    running.clear();
  });

  async function setup(
    init: { managers?: NsxvObject[]; tenants?: NsxvObject[]; secrets?: KubeObject[] } = {},
  ) {
    const cluster = new FakeCluster();
    cluster.collections.nsxmanagers = (init.managers ?? []) as KubeObject[];
    cluster.collections.edgetenants = (init.tenants ?? []) as KubeObject[];
    cluster.collections.secrets = init.secrets ?? [];
    const patches: { name: string; body: unknown }[] = [];
    const statusAnswers: (Error | undefined)[] = [];
    let version = 500;
    const statusApi: StatusApi = {
      patchNamespacedCustomObjectStatus: async (param) => {
        patches.push({ name: param.name, body: param.body });
        const error = statusAnswers.shift();
        if (error !== undefined) throw error;
        const current = (await source.store.get({ kind: "EdgeTenant", namespace: NS, name: param.name }))!;
        const body = param.body as { status: Record<string, unknown> };
        return {
          ...current,
          metadata: { ...current.metadata, resourceVersion: String(++version) },
          status: { ...current.status, ...body.status },
        };
      },
    };
    const objectApi: ObjectApi = {
      patchNamespacedCustomObject: async (param) => {
        patches.push({ name: param.name, body: param.body });
        const current = (await source.store.get({ kind: "EdgeTenant", namespace: NS, name: param.name }))!;
        const body = param.body as { metadata: { finalizers: string[] } };
        return {
          ...current,
          metadata: {
            ...current.metadata,
            finalizers: body.metadata.finalizers,
            resourceVersion: String(++version),
          },
        };
      },
    };
    const reads: string[] = [];
    const secretPatches: { name: string; body: unknown }[] = [];
    const secretApi: SecretApi = {
      readNamespacedSecret: async ({ name }) => {
        reads.push(name);
        const found = cluster.collections.secrets?.find((s) => s.metadata.name === name);
        if (found === undefined) throw new ApiException(404, "not found", {}, {});
        return found as never;
      },
      // the API server's merge patch of metadata, guarded by resourceVersion
      patchNamespacedSecret: async ({ name, body }) => {
        secretPatches.push({ name, body });
        const secrets = cluster.collections.secrets ?? [];
        const index = secrets.findIndex((s) => s.metadata.name === name);
        if (index < 0) throw new ApiException(404, "not found", {}, {});
        const found = secrets[index]!;
        const patch = body as { metadata: { resourceVersion: string; finalizers: string[] } };
        if (patch.metadata.resourceVersion !== found.metadata.resourceVersion)
          throw new ApiException(409, "conflict", {}, {});
        const updated = {
          ...found,
          metadata: {
            ...found.metadata,
            finalizers: patch.metadata.finalizers,
            resourceVersion: String(++version),
          },
        };
        secrets[index] = updated;
        return updated as never;
      },
    };
    const source = new KubernetesSource({
      kubeConfig: kubeConfig(),
      namespace: NS,
      listWatch: cluster,
      statusApi,
      objectApi,
      secretApi,
      events: nopRecorder,
    });
    const enqueued: string[] = [];
    // what the operator queues for the changes the source reports (the queue holds a key once)
    source.subscribe((change) => {
      for (const key of routed(source, change)) if (!enqueued.includes(key)) enqueued.push(key);
    });
    const controller = new AbortController();
    running.add(controller);
    void source.start(controller.signal);
    expect(await source.synced(controller.signal)).toBe(true);
    enqueued.length = 0;
    return { cluster, source, enqueued, patches, statusAnswers, reads, secretPatches };
  }

  const web = tenant("web", "nsx");
  const updates: {
    name: string;
    reason: string;
    change: (o: EdgeTenant) => EdgeTenant;
    enqueued: boolean;
    /** the store's EdgeTenant revision moves (what the conflict index is rebuilt on) */
    revised: boolean;
  }[] = [
    {
      name: "StatusOnly",
      reason: "a status write (the operator's own, or anyone's) changes nothing the operator acts on",
      change: (o) => ({
        ...o,
        metadata: { ...o.metadata, resourceVersion: "2" },
        status: { observedTenant: "x" },
      }),
      enqueued: false,
      revised: false,
    },
    {
      name: "Generation",
      reason: "a spec change raises metadata.generation",
      change: (o) => ({ ...o, metadata: { ...o.metadata, resourceVersion: "2", generation: 2 } }),
      enqueued: true,
      revised: true,
    },
    {
      name: "PausedAnnotation",
      reason: "pausing or resuming is an annotation, not a generation",
      change: (o) => ({
        ...o,
        metadata: { ...o.metadata, resourceVersion: "2", annotations: { "nsxv.io/paused": "true" } },
      }),
      enqueued: true,
      revised: true,
    },
    {
      name: "Labels",
      reason: "labels decide the selector's shard",
      change: (o) => ({ ...o, metadata: { ...o.metadata, resourceVersion: "2", labels: { shard: "b" } } }),
      enqueued: true,
      revised: true,
    },
    {
      name: "Deleting",
      reason: "a deletion mark is acted on (orphan: nothing on the manager is deleted)",
      change: (o) => ({
        ...o,
        metadata: { ...o.metadata, resourceVersion: "2", deletionTimestamp: "2025-01-01T00:00:00Z" },
      }),
      enqueued: true,
      revised: true,
    },
    {
      name: "SameVersion",
      reason: "a relist delivers objects unchanged: same resourceVersion, nothing happened",
      change: (o) => o,
      enqueued: false,
      revised: false,
    },
    {
      name: "SpecWithoutGeneration",
      reason: "a spec that changed without a new generation is not reconciled, but is listed anew",
      change: (o) => ({
        ...o,
        metadata: { ...o.metadata, resourceVersion: "2" },
        spec: { ...o.spec, edgeId: "edge-9" },
      }),
      enqueued: false,
      revised: true,
    },
  ];
  it.each(updates)("an EdgeTenant update: $name", async ({ change, enqueued: expected, revised, reason }) => {
    const { cluster, enqueued, source } = await setup({
      managers: [manager("nsx", "creds")],
      tenants: [web],
    });
    const revision = source.store.revision?.("EdgeTenant");
    cluster.emit("edgetenants", "MODIFIED", change(web));
    expect(enqueued, reason).toEqual(expected ? ["EdgeTenant/team-a/web"] : []);
    expect(needsReconcile(web, change(web))).toBe(expected);
    expect(source.store.revision?.("EdgeTenant") !== revision, `revision: ${reason}`).toBe(revised);
  });

  it("a manager's spec change enqueues it and its dependents; its readiness the dependents whose last pass failed", async () => {
    const failed = (name: string, reason: string) =>
      ({
        ...tenant(name, "nsx"),
        status: {
          conditions: [{ type: "Synced", status: "False", reason, message: "", lastTransitionTime: "" }],
        },
      }) as EdgeTenant;
    const waiting = failed("waiting", "ManagerNotReady");
    // failed on its own call before the manager's check noticed: it waits for the manager as much
    const refused = failed("refused", "Unreachable");
    const { cluster, enqueued } = await setup({
      managers: [manager("nsx", "creds"), manager("other", "creds")],
      tenants: [web, waiting, refused, tenant("elsewhere", "other")],
    });
    const nsx = manager("nsx", "creds", { metadata: { name: "nsx", namespace: NS, generation: 2 } });
    cluster.emit("nsxmanagers", "MODIFIED", { ...nsx, metadata: { ...nsx.metadata, resourceVersion: "2" } });
    expect(enqueued.sort()).toEqual([
      "EdgeTenant/team-a/refused",
      "EdgeTenant/team-a/waiting",
      "EdgeTenant/team-a/web",
      "NSXManager/team-a/nsx",
    ]);

    enqueued.length = 0;
    cluster.emit("nsxmanagers", "MODIFIED", {
      ...nsx,
      metadata: { ...nsx.metadata, resourceVersion: "3" },
      status: { authenticated: true },
    });
    expect(enqueued.sort()).toEqual(["EdgeTenant/team-a/refused", "EdgeTenant/team-a/waiting"]);

    enqueued.length = 0;
    const checked = { authenticated: true, observedGeneration: 2 };
    cluster.emit("nsxmanagers", "MODIFIED", {
      ...nsx,
      metadata: { ...nsx.metadata, resourceVersion: "4" },
      status: checked,
    });
    expect(enqueued, "a status change that dependents do not read").toEqual([]);

    cluster.emit("nsxmanagers", "DELETED", { ...nsx, metadata: { ...nsx.metadata, resourceVersion: "5" } });
    expect(enqueued.sort()).toEqual([
      "EdgeTenant/team-a/refused",
      "EdgeTenant/team-a/waiting",
      "EdgeTenant/team-a/web",
      "NSXManager/team-a/nsx",
    ]);
  });

  it("reads Secrets by name, never lists or watches them; a fresh read that finds new data enqueues the manager and its dependents", async () => {
    const { cluster, source, enqueued, reads } = await setup({
      managers: [manager("nsx", "creds")],
      tenants: [web],
      secrets: [secret("creds", "one"), secret("unrelated", "x")],
    });
    expect(cluster.listed, "no list or watch of Secrets").not.toContain("secrets");
    const creds = await source.store.getSecret(NS, "creds");
    expect(atob(creds?.data?.password ?? "")).toBe("one");
    await source.store.getSecret(NS, "creds");
    expect(reads, "read once by name, then served from memory").toEqual(["creds"]);

    cluster.collections.secrets = [secret("creds", "two", "2"), secret("unrelated", "x")];
    expect(enqueued, "nothing watches it").toEqual([]);
    // the manager's own check reads it fresh
    expect(atob((await source.store.getSecret(NS, "creds", { fresh: true }))?.data?.password ?? "")).toBe(
      "two",
    );
    expect(enqueued.sort(), "a rotation concerns the manager and its dependents").toEqual([
      "EdgeTenant/team-a/web",
      "NSXManager/team-a/nsx",
    ]);

    enqueued.length = 0;
    cluster.collections.secrets = [secret("unrelated", "x")];
    expect(await source.store.getSecret(NS, "creds", { fresh: true }), "gone").toBeUndefined();
    expect(enqueued.sort()).toEqual(["EdgeTenant/team-a/web", "NSXManager/team-a/nsx"]);
    expect(reads).toEqual(["creds", "creds", "creds"]);
  });

  it("holds a Secret with a finalizer by a merge patch guarded by resourceVersion, and serves it from memory", async () => {
    const { cluster, source, secretPatches, reads } = await setup({
      managers: [manager("nsx", "creds")],
      secrets: [secret("creds", "one", "7")],
    });
    expect(source.store.secretsHoldable).toBe(true);
    expect(await source.setSecretFinalizer(NS, "creds", "nsxv.io/in-use", true)).toBe("written");
    expect(secretPatches).toEqual([
      { name: "creds", body: { metadata: { resourceVersion: "7", finalizers: ["nsxv.io/in-use"] } } },
    ]);
    const held = await source.store.getSecret(NS, "creds");
    expect(held?.metadata.finalizers, "served as the patch returned it").toEqual(["nsxv.io/in-use"]);
    expect(reads).toEqual(["creds"]);
    expect(await source.setSecretFinalizer(NS, "creds", "nsxv.io/in-use", true), "already held").toBe(
      "written",
    );
    expect(secretPatches).toHaveLength(1);
    // someone else wrote it since: the guard refuses, the next pass reads it again
    const stale = cluster.collections.secrets![0]!;
    cluster.collections.secrets = [{ ...stale, metadata: { ...stale.metadata, resourceVersion: "900" } }];
    expect(await source.setSecretFinalizer(NS, "creds", "nsxv.io/in-use", false)).toBe("conflict");
    expect(await source.setSecretFinalizer(NS, "gone", "nsxv.io/in-use", false)).toBe("gone");
  });

  it("serves a status and then a finalizer it wrote, each guarded by the resourceVersion of the write before", async () => {
    const { source, patches } = await setup({ tenants: [web] });
    const ref: ObjectRef = { kind: "EdgeTenant", namespace: NS, name: "web" };
    // what a pass that records an original before its first write does: status, then the finalizer
    expect(await source.writeStatus(ref, { originalTenant: "legacy" })).toBe("written");
    expect(await source.setFinalizer(ref, "nsxv.io/restore-tenant", true)).toBe("written");
    expect(
      patches.map((p) => (p.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion),
    ).toEqual(["1", "501"]);
    const served = await source.store.get(ref);
    expect(served?.metadata.finalizers, "the next pass sees its finalizer at once").toEqual([
      "nsxv.io/restore-tenant",
    ]);
    expect(served?.status, "and its status").toMatchObject({ originalTenant: "legacy" });
    expect(served?.metadata.resourceVersion).toBe("502");
    expect(await source.writeStatus(ref, { originalTenant: "legacy", observedTenant: "blue" })).toBe(
      "written",
    );
    expect((patches[2]?.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toBe(
      "502",
    );
  });

  it("writes status as a merge patch guarded by resourceVersion, and serves it until the watch delivers it", async () => {
    const withStatus = {
      ...web,
      status: { observedTenant: "red", lastCorrectionTime: "2025-01-01T00:00:00Z" },
    };
    const { cluster, source, patches, statusAnswers } = await setup({ tenants: [withStatus] });
    const ref: ObjectRef = { kind: "EdgeTenant", namespace: NS, name: "web" };
    expect(await source.writeStatus(ref, { observedTenant: "blue", observedGeneration: 1 })).toBe("written");
    expect(patches[0]).toEqual({
      name: "web",
      body: {
        metadata: { resourceVersion: "1" },
        status: { observedTenant: "blue", lastCorrectionTime: null, observedGeneration: 1 },
      },
    });
    const served = await source.store.get(ref);
    expect(served?.status).toMatchObject({ observedTenant: "blue" });
    expect(served?.metadata.resourceVersion).toBe("501");

    // an older event (someone's change before our write, which our write's answer already holds)
    // does not hide the object our write returned
    cluster.emit("edgetenants", "MODIFIED", {
      ...withStatus,
      metadata: { ...web.metadata, resourceVersion: "400", labels: { a: "b" } },
    });
    expect((await source.store.get(ref))?.status).toMatchObject({ observedTenant: "blue" });
    expect((await source.store.get(ref))?.metadata.resourceVersion).toBe("501");
    // our write arrives: from now on the cache is the truth
    cluster.emit("edgetenants", "MODIFIED", {
      ...withStatus,
      metadata: { ...web.metadata, resourceVersion: "501" },
      status: { observedTenant: "blue" },
    });
    cluster.emit("edgetenants", "MODIFIED", {
      ...withStatus,
      metadata: { ...web.metadata, resourceVersion: "502" },
      status: { observedTenant: "green" },
    });
    expect((await source.store.get(ref))?.status).toEqual({ observedTenant: "green" });

    statusAnswers.push(new ApiException(409, "conflict", {}, {}), new ApiException(404, "gone", {}, {}));
    expect(await source.writeStatus(ref, {})).toBe("conflict");
    expect(await source.writeStatus(ref, {})).toBe("gone");
    const body = JSON.stringify({
      kind: "Status",
      reason: "InternalError",
      message: "etcdserver: request timed out",
    });
    statusAnswers.push(new ApiException(500, "boom", body, {}));
    // decoded: one line with the API server's words, no escaped JSON
    await expect(source.writeStatus(ref, {})).rejects.toThrow(
      "write status of EdgeTenant team-a/web: HTTP 500 InternalError: etcdserver: request timed out",
    );
    expect(await source.writeStatus({ ...ref, name: "missing" }, {})).toBe("gone");
    // invalid or too large: writing it again would be refused again, whatever the version
    for (const [code, reason] of [
      [422, "Invalid"],
      [413, "RequestEntityTooLarge"],
    ] as const) {
      const refused = JSON.stringify({ kind: "Status", reason, message: `${reason}: status too long` });
      statusAnswers.push(new ApiException(code, "refused", refused, {}));
      const error = await source.writeStatus(ref, {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StatusRefusedError);
      expect((error as Error).message).toContain(`HTTP ${code} ${reason}`);
    }
  });

  it("a relist replaces a status it served from memory", async () => {
    const { cluster, source } = await setup({ tenants: [web] });
    const ref: ObjectRef = { kind: "EdgeTenant", namespace: NS, name: "web" };
    await source.writeStatus(ref, { observedTenant: "blue" });
    expect((await source.store.get(ref))?.metadata.resourceVersion).toBe("501");
    // the watch expires; the list is newer than our write, which the watch never delivered
    const relisted: EdgeTenant = {
      ...web,
      metadata: { ...web.metadata, resourceVersion: "600" },
      status: { observedTenant: "red" },
    };
    cluster.collections.edgetenants = [relisted];
    cluster.emit("edgetenants", "ERROR", { kind: "Status", code: 410, reason: "Expired" });
    for (let i = 0; i < 10 && (await source.store.get(ref))?.metadata.resourceVersion !== "600"; i++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await source.store.get(ref)).toMatchObject({
      metadata: { resourceVersion: "600" },
      status: { observedTenant: "red" },
    });
  });

  it("is ready once every watch has listed", async () => {
    const { source } = await setup();
    expect(source.notReady()).toBeUndefined();
    const fresh = new KubernetesSource({
      kubeConfig: kubeConfig(),
      listWatch: new FakeCluster(),
      events: nopRecorder,
    });
    expect(fresh.notReady()).toMatch(/NSXManager: not listed yet.*EdgeTenant.*IPPoolAllocations/);
  });
});

describe("mergePatch", () => {
  const cases = [
    { name: "Unchanged", from: { a: 1 }, to: { a: 1 }, patch: {}, reason: "nothing to send" },
    {
      name: "Removed",
      from: { a: 1, b: 2 },
      to: { a: 1 },
      patch: { b: null },
      reason: "null deletes a member",
    },
    {
      name: "Nested",
      from: { o: { x: 1, y: 2 } },
      to: { o: { x: 1, y: 3 } },
      patch: { o: { y: 3 } },
      reason: "objects merge member by member",
    },
    {
      name: "Array",
      from: { l: [1, 2] },
      to: { l: [1] },
      patch: { l: [1] },
      reason: "arrays (conditions) are replaced whole",
    },
    {
      name: "Added",
      from: {},
      to: { s: [{ ip: "10.0.0.1" }] },
      patch: { s: [{ ip: "10.0.0.1" }] },
      reason: "new members are sent",
    },
    {
      name: "UndefinedIgnored",
      from: { a: 1 },
      to: { a: 1, b: undefined },
      patch: {},
      reason: "undefined is absent",
    },
  ];
  it.each(cases)("$name", ({ from, to, patch, reason }) => {
    expect(mergePatch(from, to), reason).toEqual(patch);
  });
});

describe("object keys", () => {
  it("round-trip, and refuse what is not a key", () => {
    const ref: ObjectRef = { kind: "IPPoolAllocations", namespace: "ns", name: "pool" };
    expect(parseObjectKey(objectKey(ref))).toEqual(ref);
    for (const bad of ["Pod/ns/x", "EdgeTenant/ns", "EdgeTenant/ns/a/b", ""])
      expect(parseObjectKey(bad), bad).toBeUndefined();
  });
});

describe("KubernetesSource: namespaces' labels (whom an NSXManager shares itself with)", () => {
  const running = new Set<AbortController>();
  afterEach(() => {
    for (const c of running) c.abort();
    running.clear();
  });

  async function start(namespace: string | undefined) {
    const cluster = new FakeCluster();
    const app: EdgeTenant = {
      ...tenant("app", "nsx", { namespace: "team-b" }),
      spec: { managerRef: { name: "nsx", namespace: NS }, edgeId: "edge-1", tenant: "blue" },
    };
    cluster.collections.nsxmanagers = [manager("nsx", "creds")] as KubeObject[];
    cluster.collections.edgetenants = [app] as KubeObject[];
    cluster.collections.namespaces = [
      { metadata: { name: "team-b", resourceVersion: "1", labels: { team: "b" } } } as KubeObject,
    ];
    const source = new KubernetesSource({
      kubeConfig: kubeConfig(),
      ...(namespace === undefined ? {} : { namespace }),
      listWatch: cluster,
      events: nopRecorder,
    });
    const enqueued: string[] = [];
    source.subscribe((change) => enqueued.push(...routed(source, change)));
    const controller = new AbortController();
    running.add(controller);
    void source.start(controller.signal);
    expect(await source.synced(controller.signal)).toBe(true);
    enqueued.length = 0;
    return { cluster, source, enqueued };
  }

  it("watching every namespace, it knows their labels, and a change of them queues the namespace's objects naming a manager elsewhere", async () => {
    const { cluster, source, enqueued } = await start(undefined);
    expect(cluster.listed).toContain("namespaces");
    expect(source.store.namespaceLabels?.("team-b")).toEqual({ team: "b" });
    const revision = source.store.namespacesRevision?.();
    cluster.emit("namespaces", "MODIFIED", {
      metadata: { name: "team-b", resourceVersion: "2", labels: { team: "b" } },
    });
    expect(enqueued, "the same labels again: nothing").toEqual([]);
    cluster.emit("namespaces", "MODIFIED", {
      metadata: { name: "team-b", resourceVersion: "3", labels: { team: "a" } },
    });
    expect(source.store.namespaceLabels?.("team-b")).toEqual({ team: "a" });
    expect(source.store.namespacesRevision?.()).not.toBe(revision);
    expect(enqueued).toEqual(["EdgeTenant/team-b/app"]);
  });

  it("watching one namespace, it never lists namespaces (a Role cannot grant them; nothing is shared within one)", async () => {
    const { cluster, source } = await start(NS);
    expect(cluster.listed).not.toContain("namespaces");
    expect(source.store.namespaceLabels).toBeUndefined();
  });
});
