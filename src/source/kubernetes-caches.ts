/**
 * What the Kubernetes source keeps: the watched objects of each kind (with the last
 * resourceVersions delivered, so that a status write the watch already delivered needs no
 * overlay), and the Secrets NSXManagers name, read by name (a cluster's other Secrets are never
 * listed, watched or held). Each tells its owner what changed.
 */
import { namespacedName } from "../api/refs.ts";
import type { Kind, NsxvObject, Secret } from "../api/types.ts";
import type { Clock } from "../util/clock.ts";
import type { KubeObject, WatchHandler } from "../controller/kube-watch.ts";

const RECENT_VERSIONS = 8;

/** The cached objects of one kind; tells `onChange` what changed. */
export class ObjectCache implements WatchHandler {
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
    const before = this.objects.get(key) ?? this.normalize(item);
    this.objects.delete(key);
    this.recent.delete(key);
    this.#onChange(before, undefined);
  }

  #put(item: KubeObject): string {
    const after = this.normalize(item);
    const key = namespacedName(after.metadata);
    const before = this.objects.get(key);
    this.objects.set(key, after);
    const versions = this.recent.get(key) ?? [];
    versions.push(after.metadata.resourceVersion ?? "");
    this.recent.set(key, versions.slice(-RECENT_VERSIONS));
    if (before?.metadata.resourceVersion !== after.metadata.resourceVersion) this.#onChange(before, after);
    return key;
  }

  /** The object as the cache keeps it: its kind set, managedFields dropped (in place). */
  normalize(item: KubeObject): NsxvObject {
    const object = item as NsxvObject & { metadata: { managedFields?: unknown } };
    // managedFields can outweigh the object and nothing here reads them
    delete object.metadata.managedFields;
    (object as { kind: Kind }).kind = this.#kind;
    return object;
  }
}

/**
 * The Secrets NSXManagers name, read one by one with GET by name (the operator may not list or
 * watch Secrets: it reads only those it is pointed at) and served from memory for `maxAgeMs`.
 * Concurrent reads of one Secret share one GET. A read that finds other data than the last one
 * (a rotated password, a new binding, a Secret gone) tells `onChange`.
 */
export class SecretReader {
  readonly #read: (namespace: string, name: string) => Promise<Secret | null>;
  readonly #maxAgeMs: number;
  readonly #clock: Pick<Clock, "now">;
  readonly #onChange: (namespace: string, name: string) => void;
  readonly #entries = new Map<string, { value: Secret | null; readAtMs: number }>();
  readonly #reading = new Map<string, Promise<Secret | null>>();

  constructor(options: {
    read: (namespace: string, name: string) => Promise<Secret | null>;
    maxAgeMs: number;
    clock: Pick<Clock, "now">;
    onChange: (namespace: string, name: string) => void;
  }) {
    this.#read = options.read;
    this.#maxAgeMs = options.maxAgeMs;
    this.#clock = options.clock;
    this.#onChange = options.onChange;
  }

  /** What a write of the Secret returned (a finalizer patch): served from memory as a read is. */
  put(namespace: string, name: string, secret: Secret): void {
    this.#entries.set(`${namespace}/${name}`, { value: secret, readAtMs: this.#clock.now() });
  }

  /** The Secret (null: it does not exist), from memory unless older than maxAgeMs or `fresh`. */
  async get(namespace: string, name: string, fresh = false): Promise<Secret | null> {
    const key = `${namespace}/${name}`;
    const entry = this.#entries.get(key);
    if (!fresh && entry !== undefined && this.#clock.now() - entry.readAtMs < this.#maxAgeMs)
      return entry.value;
    let reading = this.#reading.get(key);
    if (reading === undefined) {
      reading = this.#read(namespace, name).finally(() => this.#reading.delete(key));
      this.#reading.set(key, reading);
    }
    const value = await reading;
    const before = this.#entries.get(key);
    this.#entries.set(key, { value, readAtMs: this.#clock.now() });
    if (before !== undefined && secretText(before.value) !== secretText(value))
      this.#onChange(namespace, name);
    return value;
  }
}

/** What of a Secret counts as a change: its data and its annotations (the binding). */
function secretText(secret: Secret | null): string {
  return JSON.stringify(secret === null ? null : [secret.data, secret.metadata.annotations]);
}

/**
 * The parts of a Secret the operator reads: name, its annotations (the binding), its finalizers
 * and deletion mark (whether it is held), and its data.
 */
export function asSecret(secret: {
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: Date | string;
  };
  data?: Record<string, string>;
}): Secret {
  const { name = "", namespace, resourceVersion, annotations, finalizers } = secret.metadata ?? {};
  const deleting = secret.metadata?.deletionTimestamp;
  const deletionTimestamp = deleting instanceof Date ? deleting.toISOString() : deleting;
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace,
      resourceVersion,
      ...(annotations !== undefined ? { annotations } : {}),
      ...(finalizers !== undefined && finalizers.length > 0 ? { finalizers } : {}),
      ...(deletionTimestamp !== undefined ? { deletionTimestamp } : {}),
    },
    ...(secret.data !== undefined ? { data: secret.data } : {}),
  };
}

/**
 * The labels of every namespace (nothing else of them): what an NSXManager's
 * spec.allowedNamespaces.selector is matched against. Tells `onChange` the name of a namespace
 * that came, went or changed its labels.
 */
export class NamespaceCache implements WatchHandler {
  readonly labels = new Map<string, Readonly<Record<string, string>>>();
  /** moves whenever a namespace comes, goes or changes its labels */
  revision = 0;
  readonly #onChange: (name: string) => void;

  constructor(onChange: (name: string) => void) {
    this.#onChange = onChange;
  }

  replace(items: KubeObject[]): void {
    const listed = new Set<string>();
    for (const item of items) listed.add(this.#put(item));
    for (const name of [...this.labels.keys()]) if (!listed.has(name)) this.#remove(name);
  }

  upsert(item: KubeObject): void {
    this.#put(item);
  }

  remove(item: KubeObject): void {
    this.#remove(item.metadata.name);
  }

  #put(item: KubeObject): string {
    const { name } = item.metadata;
    const labels = (item.metadata as { labels?: Record<string, string> }).labels ?? {};
    const before = this.labels.get(name);
    this.labels.set(name, labels);
    if (
      before === undefined ||
      JSON.stringify(sortedEntries(before)) !== JSON.stringify(sortedEntries(labels))
    ) {
      this.revision += 1;
      this.#onChange(name);
    }
    return name;
  }

  #remove(name: string): void {
    if (!this.labels.delete(name)) return;
    this.revision += 1;
    this.#onChange(name);
  }
}

function sortedEntries(record: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
