/**
 * What the reconciler reads the desired state from: the Kubernetes informer caches in the
 * operator, the manifest files in the CLI. `memoryStore` is the small in-memory implementation
 * beside the interface, for tests and for a directory of manifests already read.
 */
import { namespacedName, refOf, type ObjectRef } from "../api/refs.ts";
import { perKind, type Kind, type NsxvObject, type Secret } from "../api/types.ts";
import type { Failure } from "./conditions.ts";

export type Awaitable<T> = T | Promise<T>;

export interface DesiredStateStore {
  get(ref: ObjectRef): Awaitable<NsxvObject | undefined>;
  /** every object of the kind this operator serves, all namespaces, from memory (the conflict index, routing) */
  list(kind: Kind): readonly NsxvObject[];
  /**
   * Secrets here are readable by the operator but not by everyone who may write an NSXManager (a
   * cluster): a Secret's credentials go only to the manager URLs the Secret itself names
   * (SECRET_BINDING_ANNOTATION), or anyone allowed to create an NSXManager could have the
   * operator send them to a server of their own. Unset for manifest files, whose author holds
   * the Secrets anyway.
   */
  readonly secretBindingRequired?: boolean;
  /**
   * A Secret here can be held against deletion with a finalizer (a cluster): the manager's
   * Secrets are, while a restore may need them (NSXManagerStatus.heldSecrets). Unset for manifest
   * files: their Secrets go when the files do.
   */
  readonly secretsHoldable?: boolean;
  /** `fresh`: read it from where it lives now, not from a cache (the manager's own check) */
  getSecret(namespace: string, name: string, options?: { fresh?: boolean }): Awaitable<Secret | undefined>;
  /**
   * A number that changes whenever an object of the kind is added or removed or its metadata or
   * spec changes (a status-only change may leave it as it is): what callers derive from
   * `list(kind)` (the conflict index) is kept while it stays the same. Without it, callers list
   * on every use.
   */
  revision?(kind: Kind): number;
  /**
   * A namespace's labels (what an NSXManager's spec.allowedNamespaces.selector is matched
   * against); undefined for a namespace the source does not know. Absent: the source knows no
   * labels (a directory of manifests), and every namespace has none.
   */
  namespaceLabels?(namespace: string): Readonly<Record<string, string>> | undefined;
  /** A number that changes whenever a namespace comes, goes or changes its labels. */
  namespacesRevision?(): number;
  /**
   * Why every write for this object is blocked right now: its desired state is uncertain (its
   * manifest file does not load, ...), as a failure reason and a message naming file and line;
   * undefined when it is what the user declared. The reconcile observes and reports such an
   * object but writes nothing for it: no tenant, no release.
   */
  writesBlockedBy?(ref: ObjectRef): Failure | undefined;
  /**
   * Why the status this object had may have been lost (a status file that could not be read and
   * was set aside), naming what was lost and when; undefined when its status is what the
   * operator last wrote. What only status remembered (an EdgeTenant's original tenant) is then
   * reported as lost rather than silently absent.
   */
  statusLost?(ref: ObjectRef): string | undefined;
}

/**
 * What a source says changed, as it saw it; routing.ts decides which objects that concerns.
 * `object`: an object came (`before` undefined), went (`after` undefined) or changed, both as the
 * reconciler reads them (status included); `always` when the source knows it needs a pass
 * whatever changed (its file started or stopped loading, it is being deleted from a directory).
 * `secret`: a Secret was read with other data than before. `namespace`: a namespace came, went or
 * changed its labels.
 */
export type DesiredStateChange =
  | { type: "object"; before: NsxvObject | undefined; after: NsxvObject | undefined; always?: boolean }
  | { type: "secret"; namespace: string; name: string }
  | { type: "namespace"; name: string };

export interface MemoryStore extends DesiredStateStore {
  /** adds or replaces (by kind, namespace and name), e.g. with the status a pass returned */
  put(object: NsxvObject): void;
  putSecret(secret: Secret): void;
  removeSecret(namespace: string, name: string): void;
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
  const objects = perKind(() => new Map<string, NsxvObject>());
  const revisions = perKind(() => 0);
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
    putSecret: (secret) => void secrets.set(namespacedName(secret.metadata), secret),
    removeSecret: (namespace, name) => void secrets.delete(`${namespace}/${name}`),
  };
  for (const object of init.objects ?? []) store.put(object);
  for (const secret of init.secrets ?? []) store.putSecret(secret);
  return store;
}
