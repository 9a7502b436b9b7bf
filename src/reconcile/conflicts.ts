/**
 * Which object owns which edge or pool. Two EdgeTenants naming the same edge of the same
 * NSXManager, or two IPPoolAllocations naming the same pool (by id, or by scope and name),
 * would fight each other on every pass; instead the oldest (creationTimestamp, then
 * namespace/name) owns the target and the others act on nothing (Stalled, reason Conflict).
 * Built from every object of the kind that the source lists. A by-name and a by-id object can
 * only be seen to collide once the pool list is read: `poolWinner` settles that case.
 * It reads only metadata and spec, never status, so a status write does not make it stale: the
 * reconciler keeps one per kind while the store's revision stays the same.
 */
import { DEFAULTS, type EdgeTenant, type IPPoolAllocations, type NsxvObject } from "../api/types.ts";
import { DEFAULT_NAMESPACE, refOf, sameRef, type ObjectRef } from "../api/refs.ts";

type Dependent = EdgeTenant | IPPoolAllocations;

export class ConflictIndex {
  /** target key → claimants, oldest first */
  readonly #byTarget: Map<string, Dependent[]>;
  /** manager key → pool objects on that manager */
  readonly #poolsByManager: Map<string, IPPoolAllocations[]>;

  private constructor(byTarget: Map<string, Dependent[]>, poolsByManager: Map<string, IPPoolAllocations[]>) {
    this.#byTarget = byTarget;
    this.#poolsByManager = poolsByManager;
  }

  /**
   * From every EdgeTenant and IPPoolAllocations of the source (other kinds are ignored). Objects
   * being deleted own nothing; objects whose target fields are missing own nothing (their
   * reconcile fails with InvalidSpec before it could act).
   */
  static build(objects: readonly NsxvObject[]): ConflictIndex {
    const byTarget = new Map<string, Dependent[]>();
    const poolsByManager = new Map<string, IPPoolAllocations[]>();
    // one pass, appending in place: linear in the number of objects
    for (const object of objects) {
      if (object.kind === "NSXManager" || object.metadata.deletionTimestamp !== undefined) continue;
      const key = targetKey(object);
      if (key === undefined) continue;
      append(byTarget, key, object);
      if (object.kind === "IPPoolAllocations") append(poolsByManager, managerKey(object) as string, object);
    }
    for (const claimants of byTarget.values()) if (claimants.length > 1) claimants.sort(olderFirst);
    return new ConflictIndex(byTarget, poolsByManager);
  }

  /** The older object that owns this object's edge or pool (as written in the spec), or undefined. */
  winnerOver(object: Dependent): ObjectRef | undefined {
    const key = targetKey(object);
    const owner = key === undefined ? undefined : this.#byTarget.get(key)?.[0];
    return owner === undefined || sameRef(refOf(owner), refOf(object)) ? undefined : refOf(owner);
  }

  /** The other pool objects on the same NSXManager: whose by-name selections the caller resolves. */
  poolsOnSameManager(object: IPPoolAllocations): IPPoolAllocations[] {
    const key = managerKey(object);
    const name = object.metadata.name;
    // same manager key: same kind and namespace, so the name alone tells the object apart
    return (key === undefined ? [] : (this.#poolsByManager.get(key) ?? [])).filter(
      (o) => o.metadata.name !== name,
    );
  }

  /**
   * Once `object`'s pool resolved to `poolId`: the oldest of the objects on the same manager
   * whose selection resolves to the same pool, when that is not `object` (`owner`); or, when an
   * older object's selection cannot be resolved now (its scope's list is unreadable), that object
   * (`undecided`): it may own the pool, so nothing is decided yet. `resolve` maps another object
   * to its pool id (by id as written; by name through its scope's pool list), null when it
   * resolves to no pool, undefined when that cannot be told now.
   */
  poolWinner(
    object: IPPoolAllocations,
    poolId: string,
    resolve: (other: IPPoolAllocations) => string | null | undefined,
  ): { owner?: ObjectRef; undecided?: ObjectRef } {
    const older = this.poolsOnSameManager(object)
      .filter((o) => olderFirst(o, object) < 0)
      .sort(olderFirst);
    let undecided: ObjectRef | undefined;
    for (const other of older) {
      const resolved = resolve(other);
      if (resolved === poolId) return { owner: refOf(other) };
      if (resolved === undefined) undecided ??= refOf(other);
    }
    return undecided === undefined ? {} : { undecided };
  }
}

function append<T>(map: Map<string, T[]>, key: string, value: T): void {
  const values = map.get(key);
  if (values === undefined) map.set(key, [value]);
  else values.push(value);
}

/** e.g. `ns/manager` for the NSXManager the object names */
function managerKey(object: Dependent): string | undefined {
  const name = object.spec?.managerRef?.name;
  return typeof name === "string" && name !== ""
    ? `${object.metadata.namespace ?? DEFAULT_NAMESPACE}/${name}`
    : undefined;
}

function targetKey(object: Dependent): string | undefined {
  const manager = managerKey(object);
  if (manager === undefined) return undefined;
  if (object.kind === "EdgeTenant") {
    return typeof object.spec.edgeId === "string" ? `${manager} edge ${object.spec.edgeId}` : undefined;
  }
  const { id, name, scope = DEFAULTS.poolScope } = object.spec.pool ?? {};
  if ((id === undefined) === (name === undefined)) return undefined;
  return id !== undefined ? `${manager} pool-id ${id}` : `${manager} pool-name ${scope} ${name}`;
}

/** creationTimestamp (objects without one after those with one), then namespace/name */
function olderFirst(a: NsxvObject, b: NsxvObject): number {
  const ta = Date.parse(a.metadata.creationTimestamp ?? "");
  const tb = Date.parse(b.metadata.creationTimestamp ?? "");
  if (Number.isFinite(ta) || Number.isFinite(tb)) {
    if (!Number.isFinite(ta)) return 1;
    if (!Number.isFinite(tb)) return -1;
    if (ta !== tb) return ta - tb;
  }
  const ra = refOf(a);
  const rb = refOf(b);
  const na = `${ra.namespace}/${ra.name}`;
  const nb = `${rb.namespace}/${rb.name}`;
  return na < nb ? -1 : na > nb ? 1 : 0;
}
