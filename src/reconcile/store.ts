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
}

/** A store over maps; later entries with the same key replace earlier ones. */
export function memoryStore(
  init: { objects?: readonly NsxvObject[]; secrets?: readonly Secret[] } = {},
): MemoryStore {
  const objects = new Map<string, NsxvObject>();
  const secrets = new Map<string, Secret>();
  const store: MemoryStore = {
    get: (ref) => objects.get(formatRef(ref)),
    list: (kind) => [...objects.values()].filter((o) => o.kind === kind),
    getSecret: (namespace, name) => secrets.get(`${namespace}/${name}`),
    put: (object) => void objects.set(formatRef(refOf(object)), object),
    putSecret: (secret) =>
      void secrets.set(`${secret.metadata.namespace ?? DEFAULT_NAMESPACE}/${secret.metadata.name}`, secret),
  };
  for (const object of init.objects ?? []) store.put(object);
  for (const secret of init.secrets ?? []) store.putSecret(secret);
  return store;
}
