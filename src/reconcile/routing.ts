/**
 * Which objects a change concerns: the kind-aware mapping from what a source saw (an object came,
 * went or changed; a Secret's data changed) to the objects to reconcile now. Sources only say what
 * changed; this decides, the same for every source, beside the kinds and their reasons:
 * - the object itself, when what the operator acts on changed (spec, annotations, labels, the
 *   deletion mark), never for a status write alone, so a status write causes no manager call;
 * - an NSXManager whose intent changed: all its dependents; whose readiness changed: those
 *   whose last pass failed (they wait for it);
 * - a dependent that came, went or changed its spec: the objects of its kind a conflict holds back
 *   (the change may free them); one that came: its NSXManager when that does not hold its in-use
 *   finalizer yet; one that went: its NSXManager when that is being deleted (the finalizer may go);
 * - a Secret: the managers that read it, and their dependents;
 * - who has authority (authority.ts) decides conflicts: an NSXManager whose intent (its URL, whom
 *   it allows) or whose acceptance of its credentials changed, and a namespace whose labels
 *   changed, concern every object a conflict holds back; a namespace also concerns its objects
 *   that name a manager in another namespace (whether they are allowed may have changed).
 */
import { managerRefOf, objectKey, refOf, type ObjectRef } from "../api/refs.ts";
import { IN_USE_FINALIZER, type NSXManager, type NsxvObject, type ObjectMeta } from "../api/types.ts";
import type { ConditionType, Reason } from "./conditions.ts";
import type { DesiredStateChange } from "./store.ts";

/** The objects `change` concerns; `objects` lists every object with its status, called only when needed. */
export function concernedBy(change: DesiredStateChange, objects: () => readonly NsxvObject[]): ObjectRef[] {
  if (change.type === "secret") return concernedBySecret(objects(), change.namespace, change.name);
  if (change.type === "namespace") return concernedByNamespace(objects(), change.name);
  const { before, after } = change;
  const object = (after ?? before) as NsxvObject;
  const own =
    change.always === true || before === undefined || after === undefined || needsReconcile(before, after);
  return [...(own ? [refOf(object)] : []), ...alsoConcerned(before, after, objects)];
}

/**
 * True when the update changed what the operator acts on: the spec (metadata.generation), the
 * annotations (pause), the labels (selector) or the deletion mark. A status write (ours or
 * anyone's) changes none of these.
 */
export function needsReconcile(before: NsxvObject, after: NsxvObject): boolean {
  return JSON.stringify(intent(before.metadata)) !== JSON.stringify(intent(after.metadata));
}

/** The other objects a change of one object concerns (`before` undefined: it came; `after` undefined: it went). */
export function alsoConcerned(
  before: NsxvObject | undefined,
  after: NsxvObject | undefined,
  objects: () => readonly NsxvObject[],
): ObjectRef[] {
  const object = (after ?? before) as NsxvObject;
  const intentChanged = before === undefined || after === undefined || needsReconcile(before, after);
  if (object.kind === "NSXManager") {
    const ref = refOf(object);
    const all = objects();
    if (intentChanged) return distinct([...dependentsOf(all, ref), ...conflictHeld(all)]);
    const m = [before as NSXManager, after as NSXManager] as const;
    const readiness = managerReadinessChanged(...m);
    const authority = m[0].status?.authenticated !== m[1].status?.authenticated;
    return distinct([
      ...(readiness ? dependentsOf(all.filter(failedLastPass), ref) : []),
      ...(authority ? conflictHeld(all) : []),
    ]);
  }
  const moved =
    after === undefined || intentChanged || JSON.stringify(before?.spec) !== JSON.stringify(after.spec);
  if (!moved) return [];
  return [...conflictHeldOn(objects(), object), ...managerToUpdate(objects(), before, after)];
}

/**
 * The NSXManager whose in-use finalizer a dependent's coming or going moves: one that came names
 * a manager not holding it yet (it must, before a restore can be pending); one that went named a
 * manager being deleted (it may go now).
 */
function managerToUpdate(
  objects: readonly NsxvObject[],
  before: NsxvObject | undefined,
  after: NsxvObject | undefined,
): ObjectRef[] {
  const dependent = (after ?? before) as NsxvObject;
  if (dependent.kind === "NSXManager" || (before !== undefined && after !== undefined)) return [];
  const ref = managerRefOf(dependent);
  const key = ref === undefined ? undefined : objectKey(ref);
  const manager = objects.find((o) => o.kind === "NSXManager" && objectKey(refOf(o)) === key);
  if (manager === undefined) return [];
  const deleting = manager.metadata.deletionTimestamp !== undefined;
  const held = (manager.metadata.finalizers ?? []).includes(IN_USE_FINALIZER);
  const concerned = after === undefined ? deleting : !held && !deleting;
  return concerned ? [refOf(manager)] : [];
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

/** Names of the Secrets (same namespace) the manager reads: credentials, and the CA bundle if any. */
export function secretNamesOf(manager: NSXManager): string[] {
  const names = [manager.spec?.credentialsSecretRef?.name, manager.spec?.tls?.caSecretRef?.name];
  return [...new Set(names.filter((n): n is string => typeof n === "string" && n !== ""))];
}

/** The EdgeTenants and IPPoolAllocations that name the manager, in its namespace or another. */
export function dependentsOf(objects: Iterable<NsxvObject>, manager: ObjectRef): ObjectRef[] {
  const key = objectKey(manager);
  const out: ObjectRef[] = [];
  for (const object of objects) {
    const named = managerRefOf(object);
    if (named !== undefined && objectKey(named) === key) out.push(refOf(object));
  }
  return out;
}

/**
 * A namespace's labels changed (or it came or went): its objects that name a manager of another
 * namespace (that manager may allow or refuse them now), and every object a conflict holds back
 * (authority, and so ownership, may have moved).
 */
function concernedByNamespace(objects: readonly NsxvObject[], namespace: string): ObjectRef[] {
  const foreign = objects.filter((object) => {
    const manager = managerRefOf(object);
    const own = refOf(object).namespace;
    return own === namespace && manager !== undefined && manager.namespace !== own;
  });
  return distinct([...foreign.map(refOf), ...conflictHeld(objects)]);
}

function distinct(refs: readonly ObjectRef[]): ObjectRef[] {
  return [...new Map(refs.map((ref) => [objectKey(ref), ref])).values()];
}

/** The fields a change of which needs a reconcile: not status, not resourceVersion. */
function intent(meta: ObjectMeta): unknown[] {
  return [meta.generation, meta.deletionTimestamp, sorted(meta.annotations), sorted(meta.labels)];
}

function sorted(record: Record<string, string> | undefined): [string, string][] {
  return Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * What dependents read of their manager's status: a change lets them act (or stop) at once.
 * Those whose last pass failed are queued then, whatever their own failure was: one that failed
 * with Unreachable on its own call waits for the manager as much as one told ManagerNotReady.
 */
function managerReadinessChanged(before: NSXManager, after: NSXManager): boolean {
  const facts = (m: NSXManager): unknown[] => [
    m.status?.authenticated,
    m.status?.reachable,
    m.status?.conditions?.find((c) => c.type === "Ready")?.status,
  ];
  return JSON.stringify(facts(before)) !== JSON.stringify(facts(after));
}

const SYNCED: ConditionType = "Synced";
const STALLED: ConditionType = "Stalled";
/** the conditions that hold an object back until another object of its kind goes or moves */
const HELD_BY_ANOTHER: readonly { type: ConditionType; reason: Reason }[] = [
  { type: STALLED, reason: "Conflict" },
  { type: SYNCED, reason: "ConflictUndecided" },
];

/** Synced=False: the object's last pass failed, and it waits in the queue's backoff. */
function failedLastPass(object: NsxvObject): boolean {
  return (object.status?.conditions ?? []).some((c) => c.type === SYNCED && c.status === "False");
}

/**
 * The objects that a change of `changed` (it went, or its spec changed) may free from a conflict:
 * those of the same kind held back by one (Stalled Conflict, or a pool owner not decided), on any
 * manager object: two NSXManager objects may name one real manager.
 */
function conflictHeldOn(objects: Iterable<NsxvObject>, changed: NsxvObject): ObjectRef[] {
  const changedKey = objectKey(refOf(changed));
  return conflictHeld(objects).filter((ref) => ref.kind === changed.kind && objectKey(ref) !== changedKey);
}

/** Every object held back by another (Stalled Conflict, or a pool owner not decided). */
function conflictHeld(objects: Iterable<NsxvObject>): ObjectRef[] {
  const out: ObjectRef[] = [];
  for (const object of objects) {
    const conditions = object.status?.conditions ?? [];
    const held = HELD_BY_ANOTHER.some(({ type, reason }) =>
      conditions.some((c) => c.type === type && c.reason === reason),
    );
    if (held) out.push(refOf(object));
  }
  return out;
}

/** The managers of the namespace that read the Secret. */
function managersUsingSecret(
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
