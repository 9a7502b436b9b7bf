/**
 * The desired-state source: what the operator reads objects from and writes their status to.
 * Two implementations share this interface: the Kubernetes API (kubernetes.ts: watches, `/status`
 * merge patches, Events) and a directory of manifests (directory.ts: files, status in memory and
 * a status file). The operator (src/operator/operator.ts) only sees this interface. Also the
 * rules both sources use to decide which objects a change concerns, so that they enqueue the
 * same keys for the same change.
 */
import { refOf, type ObjectRef } from "../api/refs.ts";
import type { NSXManager, NsxvObject, ObjectMeta } from "../api/types.ts";
import type { EventRecorder } from "../controller/events.ts";
import type { DesiredStateStore } from "../reconcile/store.ts";

export type Status = NonNullable<NsxvObject["status"]>;

/** How a status write ended; any other failure is thrown. */
export type StatusWriteOutcome =
  /** stored */
  | "written"
  /** the object changed since it was read (HTTP 409): read it again and retry, quietly */
  | "conflict"
  /** the object no longer exists: nothing to do */
  | "gone";

export interface StatusSink {
  /** Writes the object's status; `status` is the complete new status (the sink computes any patch). */
  writeStatus(ref: ObjectRef, status: Status): Promise<StatusWriteOutcome>;
  /**
   * Adds (`present`) or removes a finalizer of the object: what holds its deletion until the
   * operator has acted on it. Removing the last one of an object being deleted lets it go.
   */
  setFinalizer(ref: ObjectRef, finalizer: string, present: boolean): Promise<StatusWriteOutcome>;
}

/** Called with each object that needs a reconcile: added, changed (spec, annotations, labels), deleted. */
export type KeyListener = (ref: ObjectRef) => void;

export interface DesiredStateSource extends StatusSink {
  /** the objects and Secrets as last seen, each object with its latest status */
  readonly store: DesiredStateStore;
  /** where the reconcile's events go (Kubernetes Events, or the log) */
  readonly events: EventRecorder;
  /** Loads and follows the desired state until `signal` aborts; never rejects for a passing failure. */
  start(signal: AbortSignal): Promise<void>;
  /** Resolves true once every object has been loaded once, false if `signal` aborts first. */
  synced(signal: AbortSignal): Promise<boolean>;
  /** undefined while the source is complete and following changes; otherwise why not (`/readyz`). */
  notReady(): string | undefined;
  /** Listens for keys to reconcile; returns the function that stops listening. */
  subscribe(listener: KeyListener): () => void;
}

/** The fields a change of which needs a reconcile: not status, not resourceVersion. */
function intent(meta: ObjectMeta): unknown[] {
  return [meta.generation, meta.deletionTimestamp, sorted(meta.annotations), sorted(meta.labels)];
}

function sorted(record: Record<string, string> | undefined): [string, string][] {
  return Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * True when the update changed what the operator acts on: the spec (metadata.generation), the
 * annotations (pause), the labels (selector) or the deletion mark. A status write (ours or
 * anyone's) changes none of these, so it never causes a reconcile, hence no manager call.
 */
export function needsReconcile(before: NsxvObject, after: NsxvObject): boolean {
  return JSON.stringify(intent(before.metadata)) !== JSON.stringify(intent(after.metadata));
}

/**
 * What dependents read of their manager's status: a change lets them act (or stop) at once. The
 * dependents whose last pass failed are queued then (`failedLastPass`), whatever their own failure
 * was: one that failed with Unreachable on its own call waits for the manager as much as one told
 * ManagerNotReady, and neither should wait out its backoff once the manager is back.
 */
export function managerReadinessChanged(before: NSXManager, after: NSXManager): boolean {
  const facts = (m: NSXManager): unknown[] => [
    m.status?.authenticated,
    m.status?.reachable,
    m.status?.conditions?.find((c) => c.type === "Ready")?.status,
  ];
  return JSON.stringify(facts(before)) !== JSON.stringify(facts(after));
}

/** Synced=False: the object's last pass failed, and it waits in the queue's backoff. */
export function failedLastPass(object: NsxvObject): boolean {
  return (object.status?.conditions ?? []).some((c) => c.type === "Synced" && c.status === "False");
}

/** Names of the Secrets (same namespace) the manager reads: credentials, and the CA bundle if any. */
export function secretNamesOf(manager: NSXManager): string[] {
  const names = [manager.spec?.credentialsSecretRef?.name, manager.spec?.tls?.caSecretRef?.name];
  return [...new Set(names.filter((n): n is string => typeof n === "string" && n !== ""))];
}

/** The EdgeTenants and IPPoolAllocations of the manager's namespace that name it. */
export function dependentsOf(objects: Iterable<NsxvObject>, manager: ObjectRef): ObjectRef[] {
  const out: ObjectRef[] = [];
  for (const object of objects) {
    if (object.kind === "NSXManager") continue;
    const ref = refOf(object);
    if (ref.namespace === manager.namespace && object.spec?.managerRef?.name === manager.name) out.push(ref);
  }
  return out;
}

/**
 * The objects that a change of `changed` (deleted, or its spec changed) may free from a conflict:
 * those of the same kind on the same NSXManager that are held back by one (Stalled Conflict, or
 * a pool owner not decided). They are queued at once instead of at their next resync.
 */
export function conflictHeldOn(objects: Iterable<NsxvObject>, changed: NsxvObject): ObjectRef[] {
  if (changed.kind === "NSXManager") return [];
  const { namespace } = refOf(changed);
  const manager = changed.spec?.managerRef?.name;
  const out: ObjectRef[] = [];
  for (const object of objects) {
    if (object.kind !== changed.kind || object.spec?.managerRef?.name !== manager) continue;
    const ref = refOf(object);
    if (ref.namespace !== namespace || ref.name === changed.metadata.name) continue;
    const held = (object.status?.conditions ?? []).some(
      (c) =>
        (c.type === "Stalled" && c.reason === "Conflict") ||
        (c.type === "Synced" && c.reason === "ConflictUndecided"),
    );
    if (held) out.push(ref);
  }
  return out;
}

/** The managers of the namespace that read the Secret. */
export function managersUsingSecret(
  managers: Iterable<NsxvObject>,
  namespace: string,
  secretName: string,
): ObjectRef[] {
  const out: ObjectRef[] = [];
  for (const object of managers) {
    if (object.kind !== "NSXManager") continue;
    const ref = refOf(object);
    if (ref.namespace === namespace && secretNamesOf(object).includes(secretName)) out.push(ref);
  }
  return out;
}

/** Fans listeners out; what both sources use for `subscribe`. */
export class KeyListeners {
  readonly #listeners = new Set<KeyListener>();

  subscribe(listener: KeyListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  emit(ref: ObjectRef): void {
    for (const listener of this.#listeners) listener(ref);
  }
}

/**
 * The other objects a change of one object concerns (`before` undefined: it came; `after`
 * undefined: it went), the same for both sources:
 * - an NSXManager whose spec, labels, annotations or deletion changed: all its dependents; whose
 *   readiness changed: those whose last pass failed (they wait for it);
 * - a dependent that went or changed its spec: the objects a conflict holds back on its manager.
 * `objects` lists every object with its status, and is called only when needed.
 */
export function alsoConcerned(
  before: NsxvObject | undefined,
  after: NsxvObject | undefined,
  objects: () => readonly NsxvObject[],
): ObjectRef[] {
  const object = (after ?? before) as NsxvObject;
  const intentChanged = before === undefined || after === undefined || needsReconcile(before, after);
  if (object.kind === "NSXManager") {
    const ref = refOf(object);
    if (intentChanged) return dependentsOf(objects(), ref);
    const readiness = managerReadinessChanged(before as NSXManager, after as NSXManager);
    return readiness ? dependentsOf(objects().filter(failedLastPass), ref) : [];
  }
  const moved =
    after === undefined || intentChanged || JSON.stringify(before?.spec) !== JSON.stringify(after.spec);
  return moved ? conflictHeldOn(objects(), object) : [];
}

/** The managers that read the Secret, and their dependents: a new password concerns them all. */
export function concernedBySecret(
  objects: readonly NsxvObject[],
  namespace: string,
  secretName: string,
): ObjectRef[] {
  const managers = managersUsingSecret(objects, namespace, secretName);
  return [...managers, ...managers.flatMap((manager) => dependentsOf(objects, manager))];
}
