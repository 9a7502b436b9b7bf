/**
 * What the Kubernetes source keeps of the watched collections: the objects of each kind (with
 * the last resourceVersions delivered, so that a status write the watch already delivered
 * needs no overlay) and the Secrets some NSXManager references (only those: a cluster's other
 * Secrets are never held in memory). Each tells its owner what changed.
 */
import { namespacedName } from "../api/refs.ts";
import type { Kind, NsxvObject, Secret } from "../api/types.ts";
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

/** The Secrets that some NSXManager references; null: known not to exist; undefined: not read yet. */
export class SecretCache implements WatchHandler {
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

export function asSecret(secret: {
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
