/**
 * The desired state from a Kubernetes cluster: hardened watches (kube-watch.ts) on NSXManager,
 * EdgeTenant, IPPoolAllocations (optionally one namespace, optionally a label selector) and on
 * Secrets, of which only those an NSXManager references are kept in memory. Status goes to the
 * `/status` subresource as a JSON merge patch guarded by resourceVersion (409 → "conflict"); the
 * patched status is served from memory until the watch delivers it, so the next pass never reads
 * an older status. Events go to core/v1 Events. A status write never enqueues anything: only
 * changes of generation, annotations, labels or deletion do (see source.ts).
 */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from "@kubernetes/client-node";
import { namespacedName, refOf, type ObjectRef } from "../api/refs.ts";
import {
  GROUP,
  KINDS,
  PLURALS,
  VERSION,
  type Kind,
  type NSXManager,
  type NsxvObject,
  type Secret,
} from "../api/types.ts";
import { nopLogger, type Logger } from "../controller/controller.ts";
import { KubernetesEventSink, SinkEventRecorder, type EventRecorder } from "../controller/events.ts";
import {
  kubeListWatchApi,
  ResourceWatch,
  type KubeObject,
  type ListWatchApi,
  type ResourceWatchOptions,
  type WatchHandler,
} from "../controller/kube-watch.ts";
import type { DesiredStateStore } from "../reconcile/store.ts";
import { realClock, type Clock } from "../util/clock.ts";
import {
  conflictHeldOn,
  dependentsOf,
  failedLastPass,
  KeyListeners,
  managerReadinessChanged,
  managersUsingSecret,
  needsReconcile,
  secretNamesOf,
  type DesiredStateSource,
  type KeyListener,
  type Status,
  type StatusWriteOutcome,
} from "./source.ts";

export type StatusApi = Pick<CustomObjectsApi, "patchNamespacedCustomObjectStatus">;
export type SecretApi = Pick<CoreV1Api, "readNamespacedSecret">;

export interface KubernetesSourceOptions {
  kubeConfig: KubeConfig;
  /** watch this namespace only; default every namespace */
  namespace?: string;
  /** label selector of the custom resources (not of Secrets) */
  labelSelector?: string;
  /** default kubeListWatchApi(kubeConfig) */
  listWatch?: ListWatchApi;
  /** backoff, relist interval, page size of every watch */
  watch?: Pick<
    ResourceWatchOptions,
    "minBackoffMs" | "maxBackoffMs" | "relistIntervalMs" | "watchTimeoutSeconds" | "pageSize" | "random"
  >;
  /** default Events through the kubeconfig's CoreV1Api */
  events?: EventRecorder;
  statusApi?: StatusApi;
  secretApi?: SecretApi;
  /** the field manager of status patches; default "nsxv-operator" */
  fieldManager?: string;
  clock?: Clock;
  logger?: Logger;
}

/**
 * RFC 7386 merge patch that turns `from` into `to`: changed members, `null` for removed ones;
 * arrays and scalars are replaced whole.
 */
export function mergePatch(from: unknown, to: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObject(from) || !isObject(to)) return to;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(from)) {
    if (from[key] !== undefined && to[key] === undefined) patch[key] = null;
  }
  for (const [key, value] of Object.entries(to)) {
    if (value === undefined) continue;
    const before = from[key];
    if (isObject(before) && isObject(value)) {
      const inner = mergePatch(before, value) as Record<string, unknown>;
      if (Object.keys(inner).length > 0) patch[key] = inner;
    } else if (JSON.stringify(before) !== JSON.stringify(value)) {
      patch[key] = value;
    }
  }
  return patch;
}

/** A status we wrote, served over the cached object until the watch delivers that version. */
interface Overlay {
  resourceVersion: string;
  status: Status;
}

const RECENT_VERSIONS = 8;

/** The cached objects of one kind; tells `onChange` what changed. */
class ObjectCache implements WatchHandler {
  readonly objects = new Map<string, NsxvObject>();
  /** the last resourceVersions delivered per key: a status write already delivered needs no overlay */
  readonly recent = new Map<string, string[]>();
  readonly #kind: Kind;
  readonly #onChange: (before: NsxvObject | undefined, after: NsxvObject | undefined) => void;
  readonly #onRelist: () => void;

  constructor(
    kind: Kind,
    onChange: (before: NsxvObject | undefined, after: NsxvObject | undefined) => void,
    onRelist: () => void,
  ) {
    this.#kind = kind;
    this.#onChange = onChange;
    this.#onRelist = onRelist;
  }

  replace(items: KubeObject[]): void {
    this.#onRelist();
    const listed = new Set<string>();
    for (const item of items) listed.add(this.#put(item));
    for (const [key, before] of [...this.objects]) {
      if (listed.has(key)) continue;
      this.objects.delete(key);
      this.recent.delete(key);
      this.#onChange(before, undefined);
    }
  }

  upsert(item: KubeObject): void {
    this.#put(item);
  }

  remove(item: KubeObject): void {
    const key = namespacedName(item.metadata);
    const before = this.objects.get(key) ?? this.#normalize(item);
    this.objects.delete(key);
    this.recent.delete(key);
    this.#onChange(before, undefined);
  }

  #put(item: KubeObject): string {
    const after = this.#normalize(item);
    const key = namespacedName(after.metadata);
    const before = this.objects.get(key);
    this.objects.set(key, after);
    const versions = this.recent.get(key) ?? [];
    versions.push(after.metadata.resourceVersion ?? "");
    this.recent.set(key, versions.slice(-RECENT_VERSIONS));
    if (before?.metadata.resourceVersion !== after.metadata.resourceVersion) this.#onChange(before, after);
    return key;
  }

  #normalize(item: KubeObject): NsxvObject {
    const object = item as NsxvObject & { metadata: { managedFields?: unknown } };
    // managedFields can outweigh the object and nothing here reads them
    delete object.metadata.managedFields;
    (object as { kind: Kind }).kind = this.#kind;
    return object;
  }
}

/** The Secrets that some NSXManager references; null: known not to exist; undefined: not read yet. */
class SecretCache implements WatchHandler {
  readonly #values = new Map<string, Secret | null | undefined>();
  /** Secret key → the managers (keys) that reference it */
  readonly #users = new Map<string, Set<string>>();
  readonly #onChange: (namespace: string, name: string) => void;

  constructor(onChange: (namespace: string, name: string) => void) {
    this.#onChange = onChange;
  }

  isReferenced(key: string): boolean {
    return this.#users.has(key);
  }

  get(key: string): Secret | null | undefined {
    return this.#values.get(key);
  }

  /** a read on demand; kept unless the watch delivered something meanwhile or nobody needs it */
  fill(key: string, secret: Secret | null): void {
    if (this.#users.has(key) && this.#values.get(key) === undefined) this.#values.set(key, secret);
  }

  /** the manager (namespace/name) now references these Secret names */
  reference(manager: string, namespace: string, names: readonly string[]): void {
    const wanted = new Set(names.map((n) => `${namespace}/${n}`));
    for (const [key, users] of this.#users) {
      if (wanted.has(key) || !users.delete(manager) || users.size > 0) continue;
      this.#users.delete(key);
      this.#values.delete(key);
    }
    for (const key of wanted) {
      const users = this.#users.get(key) ?? new Set();
      users.add(manager);
      this.#users.set(key, users);
      if (!this.#values.has(key)) this.#values.set(key, undefined);
    }
  }

  replace(items: KubeObject[]): void {
    const listed = new Map(items.map((s) => [namespacedName(s.metadata), s]));
    for (const key of this.#users.keys()) {
      const item = listed.get(key);
      if (item !== undefined) this.upsert(item);
      else this.#set(key, null);
    }
  }

  upsert(item: KubeObject): void {
    const key = namespacedName(item.metadata);
    if (!this.#users.has(key)) return;
    const raw = item as KubeObject & Partial<Secret>;
    const { name, namespace, resourceVersion } = raw.metadata;
    this.#set(key, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace, resourceVersion },
      ...(raw.data != null ? { data: raw.data } : {}),
    });
  }

  remove(item: KubeObject): void {
    const key = namespacedName(item.metadata);
    if (this.#users.has(key)) this.#set(key, null);
  }

  #set(key: string, secret: Secret | null): void {
    const before = this.#values.get(key);
    this.#values.set(key, secret);
    const same = JSON.stringify(before?.data ?? before) === JSON.stringify(secret?.data ?? secret);
    if (before !== undefined && !same) {
      const [namespace = "", name = ""] = key.split("/");
      this.#onChange(namespace, name);
    }
  }
}

function asSecret(secret: {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
}): Secret {
  const { name = "", namespace, resourceVersion } = secret.metadata ?? {};
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace, resourceVersion },
    ...(secret.data !== undefined ? { data: secret.data } : {}),
  };
}

export class KubernetesSource implements DesiredStateSource {
  readonly store: DesiredStateStore;
  readonly events: EventRecorder;
  readonly #statusApi: StatusApi;
  readonly #secretApi: SecretApi;
  readonly #fieldManager: string;
  readonly #logger: Logger;
  readonly #listeners = new KeyListeners();
  readonly #caches: Record<Kind, ObjectCache>;
  readonly #secrets: SecretCache;
  readonly #overlays = new Map<string, Overlay>();
  readonly #watches: ResourceWatch[];
  /** the store's revision per kind: moves when an object comes, goes, or changes other than in status */
  readonly #revisions: Record<Kind, number> = { NSXManager: 0, EdgeTenant: 0, IPPoolAllocations: 0 };

  constructor(options: KubernetesSourceOptions) {
    const kc = options.kubeConfig;
    const clock = options.clock ?? realClock;
    this.#logger = options.logger ?? nopLogger;
    this.#statusApi = options.statusApi ?? kc.makeApiClient(CustomObjectsApi);
    const core = kc.makeApiClient(CoreV1Api);
    this.#secretApi = options.secretApi ?? core;
    this.#fieldManager = options.fieldManager ?? "nsxv-operator";
    this.events =
      options.events ??
      new SinkEventRecorder({ sink: new KubernetesEventSink({ api: core }), clock, logger: this.#logger });
    const onChange = (before: NsxvObject | undefined, after: NsxvObject | undefined): void =>
      this.#objectChanged(before, after);
    // a list may skip the version a status write made: from a list on, the cache is the truth
    const cache = (kind: Kind): ObjectCache =>
      new ObjectCache(kind, onChange, () => {
        for (const key of this.#overlays.keys()) if (key.startsWith(`${kind}/`)) this.#overlays.delete(key);
      });
    this.#caches = {
      NSXManager: cache("NSXManager"),
      EdgeTenant: cache("EdgeTenant"),
      IPPoolAllocations: cache("IPPoolAllocations"),
    };
    this.#secrets = new SecretCache((namespace, name) => this.#secretChanged(namespace, name));
    const api = options.listWatch ?? kubeListWatchApi(kc);
    const ns = options.namespace;
    const common = { ...options.watch, api, clock, logger: this.#logger };
    this.#watches = [
      ...KINDS.map(
        (kind) =>
          new ResourceWatch({
            ...common,
            name: kind,
            path: `/apis/${GROUP}/${VERSION}/${ns === undefined ? "" : `namespaces/${ns}/`}${PLURALS[kind]}`,
            handler: this.#caches[kind],
            ...(options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {}),
          }),
      ),
      new ResourceWatch({
        ...common,
        name: "Secret",
        path: `/api/v1/${ns === undefined ? "" : `namespaces/${ns}/`}secrets`,
        handler: this.#secrets,
      }),
    ];
    this.store = {
      get: (ref) => this.#get(ref),
      list: (kind) => [...this.#caches[kind].objects.values()].map((o) => this.#withOverlay(o)),
      getSecret: (namespace, name) => this.#getSecret(namespace, name),
      revision: (kind) => this.#revisions[kind],
    };
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#watches.map((w) => w.start(signal)));
  }

  async synced(signal: AbortSignal): Promise<boolean> {
    const all = await Promise.all(this.#watches.map((w) => w.synced(signal)));
    return all.every(Boolean);
  }

  notReady(): string | undefined {
    const why = this.#watches.map((w) => w.notReady()).filter((w) => w !== undefined);
    return why.length === 0 ? undefined : why.join("; ");
  }

  subscribe(listener: KeyListener): () => void {
    return this.#listeners.subscribe(listener);
  }

  async writeStatus(ref: ObjectRef, status: Status): Promise<StatusWriteOutcome> {
    const current = this.#get(ref);
    if (current === undefined) return "gone";
    const body = {
      metadata: { resourceVersion: current.metadata.resourceVersion },
      status: mergePatch(current.status ?? {}, status),
    };
    let updated: NsxvObject;
    try {
      updated = (await this.#statusApi.patchNamespacedCustomObjectStatus(
        {
          group: GROUP,
          version: VERSION,
          namespace: ref.namespace,
          plural: PLURALS[ref.kind],
          name: ref.name,
          body,
          fieldManager: this.#fieldManager,
        },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      )) as NsxvObject;
    } catch (error) {
      if (error instanceof ApiException && error.code === 409) return "conflict";
      if (error instanceof ApiException && error.code === 404) return "gone";
      throw error;
    }
    const key = namespacedName(updated.metadata);
    const version = updated.metadata.resourceVersion ?? "";
    const delivered = this.#caches[ref.kind].recent.get(key)?.includes(version) ?? false;
    if (!delivered && updated.status !== undefined) {
      this.#overlays.set(`${ref.kind}/${key}`, { resourceVersion: version, status: updated.status });
    }
    return "written";
  }

  #get(ref: ObjectRef): NsxvObject | undefined {
    const object = this.#caches[ref.kind].objects.get(`${ref.namespace}/${ref.name}`);
    return object === undefined ? undefined : this.#withOverlay(object);
  }

  #withOverlay(object: NsxvObject): NsxvObject {
    const overlay = this.#overlays.get(`${object.kind}/${namespacedName(object.metadata)}`);
    if (overlay === undefined) return object;
    return {
      ...object,
      metadata: { ...object.metadata, resourceVersion: overlay.resourceVersion },
      status: overlay.status,
    } as NsxvObject;
  }

  async #getSecret(namespace: string, name: string): Promise<Secret | undefined> {
    const key = `${namespace}/${name}`;
    const cached = this.#secrets.get(key);
    if (cached !== undefined) return cached ?? undefined;
    // not delivered by the watch (it started referencing the Secret after the list): read it once
    let read: Secret | null;
    try {
      read = asSecret(await this.#secretApi.readNamespacedSecret({ name, namespace }));
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
      read = null;
    }
    this.#secrets.fill(key, read);
    return read ?? undefined;
  }

  #objectChanged(before: NsxvObject | undefined, after: NsxvObject | undefined): void {
    const object = (after ?? before) as NsxvObject;
    const ref = refOf(object);
    const overlayKey = `${ref.kind}/${ref.namespace}/${ref.name}`;
    const overlay = this.#overlays.get(overlayKey);
    if (
      overlay !== undefined &&
      (after === undefined || after.metadata.resourceVersion === overlay.resourceVersion)
    ) {
      this.#overlays.delete(overlayKey);
    }
    if (object.kind === "NSXManager") {
      const names = after === undefined ? [] : secretNamesOf(after as NSXManager);
      this.#secrets.reference(`${ref.namespace}/${ref.name}`, ref.namespace, names);
    }
    const changed = before === undefined || after === undefined || needsReconcile(before, after);
    const specChanged = changed || JSON.stringify(before.spec) !== JSON.stringify(after.spec);
    // the spec too: an object whose generation did not follow a spec change is still listed anew
    if (specChanged) this.#revisions[object.kind] += 1;
    if (changed) this.#listeners.emit(ref);
    if (object.kind !== "NSXManager") {
      if (after === undefined || specChanged) {
        const others = [...this.#caches[object.kind].objects.values()].map((o) => this.#withOverlay(o));
        for (const held of conflictHeldOn(others, object)) this.#listeners.emit(held);
      }
      return;
    }
    if (changed) this.#emitDependents(ref);
    else if (managerReadinessChanged(before as NSXManager, after as NSXManager))
      this.#emitDependents(ref, failedLastPass);
  }

  #secretChanged(namespace: string, name: string): void {
    this.#logger.info({ kind: "Secret", namespace, name }, "referenced Secret changed");
    for (const manager of managersUsingSecret(this.#caches.NSXManager.objects.values(), namespace, name)) {
      this.#listeners.emit(manager);
      this.#emitDependents(manager);
    }
  }

  #emitDependents(manager: ObjectRef, filter: (object: NsxvObject) => boolean = () => true): void {
    const objects = [
      ...this.#caches.EdgeTenant.objects.values(),
      ...this.#caches.IPPoolAllocations.objects.values(),
    ]
      .map((o) => this.#withOverlay(o))
      .filter(filter);
    for (const dependent of dependentsOf(objects, manager)) this.#listeners.emit(dependent);
  }
}
