/**
 * The desired state from a Kubernetes cluster: hardened watches (src/controller/kube-watch.ts, over
 * src/kube/list-watch.ts) on NSXManager, EdgeTenant, IPPoolAllocations (optionally one namespace,
 * optionally a label selector), and, when watching every namespace, on Namespaces for their labels
 * (whom an NSXManager shares itself with; within one namespace nothing is shared); the Secrets
 * NSXManagers name are read by name when needed (never listed or watched: the operator needs
 * `get` on Secrets, nothing more). Status goes to the
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
  perKind,
  PLURALS,
  VERSION,
  type Kind,
  type NsxvObject,
  type Secret,
} from "../api/types.ts";
import { nopLogger, type Logger } from "../controller/controller.ts";
import { SinkEventRecorder, type EventRecorder } from "../controller/events.ts";
import { decodeApiError } from "../kube/errors.ts";
import { KubernetesEventSink } from "../kube/event-sink.ts";
import { ResourceWatch, type ListWatchApi, type ResourceWatchOptions } from "../controller/kube-watch.ts";
import { kubeListWatchApi } from "../kube/list-watch.ts";
import type { DesiredStateStore } from "../reconcile/store.ts";
import { asSecret, NamespaceCache, ObjectCache, SecretReader } from "./kubernetes-caches.ts";
import { realClock, type Clock } from "../util/clock.ts";
import {
  ChangeListeners,
  StatusRefusedError,
  type ChangeListener,
  type DesiredStateSource,
  type Status,
  type StatusWriteOutcome,
} from "./source.ts";
import { withDefaults } from "../util/options.ts";

export type StatusApi = Pick<CustomObjectsApi, "patchNamespacedCustomObjectStatus">;
/** finalizers live in metadata: a patch of the object itself, not of /status */
export type ObjectApi = Pick<CustomObjectsApi, "patchNamespacedCustomObject">;
export type SecretApi = Pick<CoreV1Api, "readNamespacedSecret" | "patchNamespacedSecret">;

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
  objectApi?: ObjectApi;
  secretApi?: SecretApi;
  /** how long a Secret read is served before it is read again (the managers' own checks always read); default 30000 */
  secretMaxAgeMs?: number;
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

export const KUBERNETES_SOURCE_DEFAULTS = { secretMaxAgeMs: 30_000 } as const;

export class KubernetesSource implements DesiredStateSource {
  readonly store: DesiredStateStore;
  readonly events: EventRecorder;
  readonly #statusApi: StatusApi;
  readonly #objectApi: ObjectApi;
  readonly #secretApi: SecretApi;
  readonly #fieldManager: string;
  readonly #logger: Logger;
  readonly #listeners = new ChangeListeners();
  readonly #caches: Record<Kind, ObjectCache>;
  /** namespaces' labels; undefined when one namespace is watched (nothing is shared within it) */
  readonly #namespaces: NamespaceCache | undefined;
  readonly #secrets: SecretReader;
  /**
   * The object as our last write (a status or finalizer patch) returned it, served instead of
   * the cached one until the watch delivers that version: the next pass never reads an older
   * status or finalizer list, nor patches with an older resourceVersion.
   */
  readonly #overlays = new Map<string, NsxvObject>();
  readonly #watches: ResourceWatch[];
  /** the store's revision per kind: moves when an object comes, goes, or changes other than in status */
  readonly #revisions: Record<Kind, number> = perKind(() => 0);

  constructor(options: KubernetesSourceOptions) {
    const kc = options.kubeConfig;
    const clock = options.clock ?? realClock;
    this.#logger = options.logger ?? nopLogger;
    const customObjects = (): CustomObjectsApi => kc.makeApiClient(CustomObjectsApi);
    this.#statusApi = options.statusApi ?? customObjects();
    this.#objectApi = options.objectApi ?? customObjects();
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
    this.#caches = perKind(cache);
    this.#secrets = new SecretReader({
      read: (namespace, name) => this.#readSecret(namespace, name),
      maxAgeMs: withDefaults(KUBERNETES_SOURCE_DEFAULTS, options).secretMaxAgeMs,
      clock,
      onChange: (namespace, name) => this.#secretChanged(namespace, name),
    });
    const api = options.listWatch ?? kubeListWatchApi(kc);
    const ns = options.namespace;
    const common = { ...options.watch, api, clock, logger: this.#logger };
    this.#namespaces =
      ns === undefined
        ? new NamespaceCache((name) => this.#listeners.emit({ type: "namespace", name }))
        : undefined;
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
      ...(this.#namespaces === undefined
        ? []
        : [
            new ResourceWatch({
              ...common,
              name: "Namespace",
              path: "/api/v1/namespaces",
              handler: this.#namespaces,
            }),
          ]),
    ];
    const namespaces = this.#namespaces;
    this.store = {
      get: (ref) => this.#get(ref),
      list: (kind) => [...this.#caches[kind].objects.values()].map((o) => this.#withOverlay(o)),
      secretBindingRequired: true,
      secretsHoldable: true,
      getSecret: async (namespace, name, options) =>
        (await this.#secrets.get(namespace, name, options?.fresh)) ?? undefined,
      revision: (kind) => this.#revisions[kind],
      ...(namespaces === undefined
        ? {}
        : {
            namespaceLabels: (name: string) => namespaces.labels.get(name),
            namespacesRevision: () => namespaces.revision,
          }),
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

  subscribe(listener: ChangeListener): () => void {
    return this.#listeners.subscribe(listener);
  }

  /**
   * A merge patch of metadata.finalizers guarded by resourceVersion (409: "conflict"). Only the
   * operator's own finalizer is added or removed; the others of the list are kept as they are.
   */
  async setFinalizer(ref: ObjectRef, finalizer: string, present: boolean): Promise<StatusWriteOutcome> {
    const current = this.#get(ref);
    if (current === undefined) return "gone";
    const finalizers = current.metadata.finalizers ?? [];
    if (finalizers.includes(finalizer) === present) return "written";
    const next = present ? [...finalizers, finalizer] : finalizers.filter((f) => f !== finalizer);
    const body = { metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: next } };
    let updated: NsxvObject;
    try {
      updated = (await this.#objectApi.patchNamespacedCustomObject(
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
      throw decodeApiError(
        `${present ? "add" : "remove"} finalizer ${finalizer} of ${ref.kind} ${ref.namespace}/${ref.name}`,
        error,
      );
    }
    this.#overlay(ref.kind, updated);
    return "written";
  }

  /**
   * The same merge patch of metadata.finalizers on a Secret an NSXManager names (RBAC: `patch` on
   * Secrets), guarded by the resourceVersion last read; the patched Secret is what the next read
   * from memory serves.
   */
  async setSecretFinalizer(
    namespace: string,
    name: string,
    finalizer: string,
    present: boolean,
  ): Promise<StatusWriteOutcome> {
    const current = await this.#secrets.get(namespace, name);
    if (current === null) return "gone";
    const finalizers = current.metadata.finalizers ?? [];
    if (finalizers.includes(finalizer) === present) return "written";
    const next = present ? [...finalizers, finalizer] : finalizers.filter((f) => f !== finalizer);
    const body = { metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: next } };
    let updated: Secret;
    try {
      updated = asSecret(
        await this.#secretApi.patchNamespacedSecret(
          { name, namespace, body, fieldManager: this.#fieldManager },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        ),
      );
    } catch (error) {
      if (error instanceof ApiException && error.code === 409) return "conflict";
      if (error instanceof ApiException && error.code === 404) return "gone";
      throw decodeApiError(
        `${present ? "add" : "remove"} finalizer ${finalizer} of Secret ${namespace}/${name}`,
        error,
      );
    }
    this.#secrets.put(namespace, name, updated);
    return "written";
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
      const decoded = decodeApiError(`write status of ${ref.kind} ${ref.namespace}/${ref.name}`, error);
      // invalid or too large: the same status would be refused again, whatever the version
      if (error instanceof ApiException && (error.code === 422 || error.code === 413))
        throw new StatusRefusedError((decoded as Error).message, { cause: decoded });
      throw decoded;
    }
    this.#overlay(ref.kind, updated);
    return "written";
  }

  /** Serves `updated` (what a patch returned) until the watch delivers its version, unless it already did. */
  #overlay(kind: Kind, updated: NsxvObject): void {
    const key = namespacedName(updated.metadata);
    const version = updated.metadata?.resourceVersion ?? "";
    if (this.#caches[kind].recent.get(key)?.includes(version) ?? false) return;
    this.#overlays.set(`${kind}/${key}`, this.#caches[kind].normalize(updated));
  }

  #get(ref: ObjectRef): NsxvObject | undefined {
    const object = this.#caches[ref.kind].objects.get(`${ref.namespace}/${ref.name}`);
    return object === undefined ? undefined : this.#withOverlay(object);
  }

  #withOverlay(object: NsxvObject): NsxvObject {
    return this.#overlays.get(`${object.kind}/${namespacedName(object.metadata)}`) ?? object;
  }

  async #readSecret(namespace: string, name: string): Promise<Secret | null> {
    try {
      return asSecret(await this.#secretApi.readNamespacedSecret({ name, namespace }));
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return null;
      throw decodeApiError(`read Secret ${namespace}/${name}`, error);
    }
  }

  #objectChanged(before: NsxvObject | undefined, after: NsxvObject | undefined): void {
    const object = (after ?? before) as NsxvObject;
    const ref = refOf(object);
    const overlayKey = `${ref.kind}/${ref.namespace}/${ref.name}`;
    const overlay = this.#overlays.get(overlayKey);
    if (
      overlay !== undefined &&
      (after === undefined || after.metadata.resourceVersion === overlay.metadata.resourceVersion)
    ) {
      this.#overlays.delete(overlayKey);
    }
    // anything but status: what derived views (the conflict index) are built from
    if (before === undefined || after === undefined || withoutStatus(before) !== withoutStatus(after))
      this.#revisions[object.kind] += 1;
    this.#listeners.emit({ type: "object", before, after });
  }

  #secretChanged(namespace: string, name: string): void {
    this.#logger.info({ kind: "Secret", namespace, name }, "referenced Secret changed");
    this.#listeners.emit({ type: "secret", namespace, name });
  }
}

/** The object but its status and resourceVersion, as comparable text. */
function withoutStatus(object: NsxvObject): string {
  const { resourceVersion: _version, ...metadata } = object.metadata;
  return JSON.stringify([metadata, object.spec]);
}
