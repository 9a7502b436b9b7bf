/**
 * What the reconciler reads the desired state from: the Kubernetes informer caches in the
 * operator, the manifest files in the CLI. `memoryStore` is the small in-memory implementation
 * beside the interface, for tests and for a directory of manifests already read.
 */
import type { Kind, NsxvObject, Secret } from "../api/types.ts";

export type Awaitable<T> = T | Promise<T>;

export interface ObjectRef {
  kind: Kind;
  namespace: string;
  name: string;
}

/** Objects without a namespace (manifest files) live in this one, as kubectl would put them. */
export const DEFAULT_NAMESPACE = "default";

export interface DesiredStateStore {
  get(ref: ObjectRef): Awaitable<NsxvObject | undefined>;
  /** every object of the kind this operator serves, all namespaces (for the conflict index) */
  list(kind: Kind): Awaitable<readonly NsxvObject[]>;
  getSecret(namespace: string, name: string): Awaitable<Secret | undefined>;
  /**
   * A number that changes whenever an object of the kind is added or removed or its metadata or
   * spec changes (a status-only change may leave it as it is): what callers derive from
   * `list(kind)` (the conflict index) is kept while it stays the same. Without it, callers list
   * on every use.
   */
  revision?(kind: Kind): number;
}

export function refOf(object: NsxvObject): ObjectRef {
  return {
    kind: object.kind,
    namespace: object.metadata.namespace ?? DEFAULT_NAMESPACE,
    name: object.metadata.name,
  };
}

export function formatRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace}/${ref.name}`;
}

export function sameRef(a: ObjectRef, b: ObjectRef): boolean {
  return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

export interface MemoryStore extends DesiredStateStore {
  /** adds or replaces (by kind, namespace and name), e.g. with the status a pass returned */
  put(object: NsxvObject): void;
  putSecret(secret: Secret): void;
  revision(kind: Kind): number;
}

/**
 * A store over maps, one per kind (a list reads only its kind); later entries with the same key
 * replace earlier ones. A put that keeps the object's metadata and spec (a status write:
 * `{ ...object, status }`) leaves the revision as it is.
 */
export function memoryStore(
  init: { objects?: readonly NsxvObject[]; secrets?: readonly Secret[] } = {},
): MemoryStore {
  const objects: Record<Kind, Map<string, NsxvObject>> = {
    NSXManager: new Map(),
    EdgeTenant: new Map(),
    IPPoolAllocations: new Map(),
  };
  const revisions: Record<Kind, number> = { NSXManager: 0, EdgeTenant: 0, IPPoolAllocations: 0 };
  const secrets = new Map<string, Secret>();
  const store: MemoryStore = {
    get: (ref) => objects[ref.kind].get(`${ref.namespace}/${ref.name}`),
    list: (kind) => [...objects[kind].values()],
    getSecret: (namespace, name) => secrets.get(`${namespace}/${name}`),
    revision: (kind) => revisions[kind],
    put: (object) => {
      const { kind, namespace, name } = refOf(object);
      const before = objects[kind].get(`${namespace}/${name}`);
      objects[kind].set(`${namespace}/${name}`, object);
      if (before?.metadata !== object.metadata || before.spec !== object.spec) revisions[kind] += 1;
    },
    putSecret: (secret) =>
      void secrets.set(`${secret.metadata.namespace ?? DEFAULT_NAMESPACE}/${secret.metadata.name}`, secret),
  };
  for (const object of init.objects ?? []) store.put(object);
  for (const secret of init.secrets ?? []) store.putSecret(secret);
  return store;
}
