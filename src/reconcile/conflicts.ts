/**
 * Which object owns which edge or pool. Two EdgeTenants naming the same edge of the same real
 * manager, or two IPPoolAllocations naming the same pool (by id, or by scope and name), would
 * fight each other on every pass; instead one owns the target and the others act on nothing
 * (Stalled, reason Conflict). Authority before ownership (authority.ts): an object with authority
 * (its NSXManager allows it and its credentials were accepted) ranks before one without; among
 * equals the oldest (creationTimestamp, then namespace/name) owns. A real manager is what the
 * NSXManager objects name, not the objects: two of them name the same manager when their URLs are
 * the same (normalized), in any namespaces, or when the manager reported the same vsmUuid to both
 * (status.vsmUuid) and they are in one namespace: a UUID is what a server says, and a server of
 * one's own can say any, so it never joins another namespace's manager. Built from every object of
 * the kind and every NSXManager that the source lists. A by-name and a by-id object can only be
 * seen to collide once the pool list is read: `poolWinner` settles that case. It reads metadata,
 * spec and the managers' status, so the reconciler keeps one per kind while the store's revisions
 * of the kind, of NSXManagers and of namespaces stay.
 */
import {
  SPEC_DEFAULTS,
  type DependentObject,
  type IPPoolAllocations,
  type NSXManager,
  type NsxvObject,
} from "../api/types.ts";
import { managerRefOf, objectKey, refOf, sameRef, type ObjectRef } from "../api/refs.ts";
import { REAL_MANAGER_PREFIX, realManagers } from "./real-managers.ts";

/** The pool objects of one NSXManager, grouped for poolWinner: each group oldest first. */
interface ManagerPools {
  /** pool id → the objects selecting that pool by id */
  byId: Map<string, IPPoolAllocations[]>;
  /** the objects selecting a pool by scope and name: any may turn out to name any pool */
  byName: IPPoolAllocations[];
  /** the scopes those name */
  nameScopes: Set<string>;
}

export class ConflictIndex {
  /** target key → claimants, oldest first */
  readonly #byTarget: Map<string, DependentObject[]>;
  /** manager key → its pool objects */
  readonly #pools: Map<string, ManagerPools>;
  /** NSXManager `namespace/name` → the real manager it names */
  readonly #managers: ReadonlyMap<string, string>;
  /** the claimants with authority, by objectKey */
  readonly #authorized: ReadonlySet<string>;
  /** what an object claims on its manager (its kind says: an edge, a pool as selected) */
  readonly #claimOf: ClaimOf;

  private constructor(parts: {
    byTarget: Map<string, DependentObject[]>;
    pools: Map<string, ManagerPools>;
    managers: ReadonlyMap<string, string>;
    authorized: ReadonlySet<string>;
    claimOf: ClaimOf;
  }) {
    this.#byTarget = parts.byTarget;
    this.#pools = parts.pools;
    this.#managers = parts.managers;
    this.#authorized = parts.authorized;
    this.#claimOf = parts.claimOf;
  }

  /**
   * From every dependent object of the source (NSXManagers are ignored), what each claims
   * (`claimOf`: its kind's claim, state.ts's DependentRole), and whether each has authority
   * (none has: age alone decides). Objects being deleted own nothing; objects whose target fields
   * are missing (no claim) own nothing (their reconcile fails with InvalidSpec before it could act).
   */
  static build(
    objects: readonly NsxvObject[],
    managers: readonly NsxvObject[],
    authority: ((object: DependentObject) => boolean) | undefined,
    claimOf: ClaimOf,
  ): ConflictIndex {
    const byTarget = new Map<string, DependentObject[]>();
    const pools = new Map<string, ManagerPools>();
    const identities = realManagers(managers.filter((m): m is NSXManager => m.kind === "NSXManager"));
    const authorized = new Set<string>();
    // one pass, appending in place: linear in the number of objects
    for (const object of objects) {
      if (object.kind === "NSXManager" || object.metadata.deletionTimestamp !== undefined) continue;
      const key = targetKey(object, identities, claimOf);
      if (key === undefined) continue;
      if (authority?.(object) === true) authorized.add(objectKey(refOf(object)));
      append(byTarget, key, object);
      if (object.kind === "IPPoolAllocations")
        addPool(pools, managerKey(object, identities) as string, object);
    }
    const has = (o: DependentObject): boolean => authorized.has(objectKey(refOf(o)));
    const order = (a: DependentObject, b: DependentObject): number =>
      Number(has(b)) - Number(has(a)) || olderFirst(a, b);
    for (const claimants of byTarget.values()) if (claimants.length > 1) claimants.sort(order);
    for (const { byId, byName } of pools.values()) {
      for (const group of byId.values()) if (group.length > 1) group.sort(order);
      byName.sort(order);
    }
    return new ConflictIndex({ byTarget, pools, managers: identities, authorized, claimOf });
  }

  /** Whether the object had authority when the index was built (its NSXManager allows it and accepted its credentials). */
  hasAuthority(object: ObjectRef): boolean {
    return this.#authorized.has(objectKey(object));
  }

  /** The real manager an object's NSXManager names (its normalized URL), for messages. */
  managerOf(object: DependentObject): string | undefined {
    const key = managerKey(object, this.#managers);
    return key?.startsWith(REAL_MANAGER_PREFIX) === true ? key.slice(REAL_MANAGER_PREFIX.length) : undefined;
  }

  /** The older object that owns this object's edge or pool (as written in the spec), or undefined. */
  winnerOver(object: DependentObject): ObjectRef | undefined {
    const key = targetKey(object, this.#managers, this.#claimOf);
    const owner = key === undefined ? undefined : this.#byTarget.get(key)?.[0];
    return owner === undefined || sameRef(refOf(owner), refOf(object)) ? undefined : refOf(owner);
  }

  /** The scopes whose pool lists resolve the by-name selections on this object's NSXManager. */
  nameScopes(object: IPPoolAllocations): ReadonlySet<string> {
    return this.#pools.get(managerKey(object, this.#managers) ?? "")?.nameScopes ?? new Set();
  }

  /**
   * Once `object`'s pool resolved to `poolId`: the oldest of the objects on the same manager
   * whose selection resolves to the same pool, when that is not `object` (`owner`); or, when an
   * older object's selection cannot be resolved now (its scope's list is unreadable), that object
   * (`undecided`): it may own the pool, so nothing is decided yet. `resolve` maps another object
   * to its pool id (by id as written; by name through its scope's pool list), null when it
   * resolves to no pool, undefined when that cannot be told now. Only the objects that can name
   * `poolId` are asked (those selecting it by id, and those selecting by name), oldest first, so
   * a pass over n objects selecting pools by id costs n, not n².
   */
  poolWinner(
    object: IPPoolAllocations,
    poolId: string,
    resolve: (other: IPPoolAllocations) => string | null | undefined,
  ): { owner?: ObjectRef; undecided?: ObjectRef } {
    const pools = this.#pools.get(managerKey(object, this.#managers) ?? "");
    const byId = pools?.byId.get(poolId) ?? [];
    const byName = pools?.byName ?? [];
    let undecided: ObjectRef | undefined;
    const order = (a: DependentObject, b: DependentObject): number =>
      Number(this.hasAuthority(refOf(b))) - Number(this.hasAuthority(refOf(a))) || olderFirst(a, b);
    // the two lists merged in rank order, up to the first object that does not rank before `object`
    for (const other of merged(byId, byName, order)) {
      if (order(other, object) >= 0) break;
      const resolved = resolve(other);
      if (resolved === poolId) return { owner: refOf(other) };
      if (resolved === undefined) undecided ??= refOf(other);
    }
    return undecided === undefined ? {} : { undecided };
  }
}

/** Two lists, each in `order`, as one in that order (the first list's first on a tie); lazily. */
function* merged<T>(a: readonly T[], b: readonly T[], order: (x: T, y: T) => number): Generator<T> {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const takeA = j >= b.length || (i < a.length && order(a[i] as T, b[j] as T) <= 0);
    yield takeA ? (a[i++] as T) : (b[j++] as T);
  }
}

function addPool(pools: Map<string, ManagerPools>, manager: string, object: IPPoolAllocations): void {
  let entry = pools.get(manager);
  if (entry === undefined) {
    entry = { byId: new Map(), byName: [], nameScopes: new Set() };
    pools.set(manager, entry);
  }
  const { id, scope = SPEC_DEFAULTS.poolScope } = object.spec.pool;
  if (id !== undefined) append(entry.byId, id, object);
  else {
    entry.byName.push(object);
    entry.nameScopes.add(scope);
  }
}

function append<T>(map: Map<string, T[]>, key: string, value: T): void {
  const values = map.get(key);
  if (values === undefined) map.set(key, [value]);
  else values.push(value);
}

/** The real manager the object's NSXManager names, or `object ns/name` when that NSXManager is unknown. */
function managerKey(object: DependentObject, managers: ReadonlyMap<string, string>): string | undefined {
  const manager = managerRefOf(object);
  if (manager === undefined) return undefined;
  const ref = `${manager.namespace}/${manager.name}`;
  return managers.get(ref) ?? `object ${ref}`;
}

/** What an object claims on its manager (an edge, a pool as selected), or undefined: it claims nothing. */
export type ClaimOf = (object: DependentObject) => string | undefined;

/** What the object claims, on the real manager its NSXManager names. */
function targetKey(
  object: DependentObject,
  managers: ReadonlyMap<string, string>,
  claimOf: ClaimOf,
): string | undefined {
  const manager = managerKey(object, managers);
  const claim = manager === undefined ? undefined : claimOf(object);
  return claim === undefined ? undefined : `${manager} ${claim}`;
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
