/**
 * What the simulator saw, for tests to assert on: calls per route and status, PUTs that would
 * have lost content, releases done, and edges and pools created, updated or deleted through the
 * API. Lists are capped so that a long benchmark stays bounded.
 */

/** Route names of the API (see faults.ts) plus `unknown` for paths no route matches. */
export type CounterSnapshot = Record<string, Record<string, number>>;

export class Counters {
  #counts = new Map<string, Map<string, number>>();

  /** status is the HTTP status, or `reset` when the connection was destroyed instead */
  count(route: string, status: number | "reset"): void {
    let byStatus = this.#counts.get(route);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.#counts.set(route, byStatus);
    }
    const key = String(status);
    byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
  }

  snapshot(): CounterSnapshot {
    const out: CounterSnapshot = {};
    for (const [route, byStatus] of this.#counts) out[route] = Object.fromEntries(byStatus);
    return out;
  }

  reset(): void {
    this.#counts = new Map();
  }
}

/**
 * A PUT that did more to the stored edge than set its tenant (edge-diff.ts gives the paths):
 * `lostContent` when it removed content (and maybe changed or added some), `changedContent` when
 * it only edited or added.
 */
export interface PutViolation {
  kind: "lostContent" | "changedContent";
  edgeId: string;
  /** ISO time of the simulator's clock */
  time: string;
  storedVersion: number;
  /** the `<version>` the client sent; lower than storedVersion means it wrote over a newer change */
  sentVersion: number | undefined;
  /** paths of what the PUT removed: `edge.features.firewall`, `edge.features.nat@enabled` */
  lost: string[];
  /** paths whose text or attribute value the PUT edited */
  changed: string[];
  /** paths of what the PUT added */
  added: string[];
  /** paths beyond 100 per list, counted but not listed */
  omitted: number;
  message: string;
}

export interface ReleaseRecord {
  poolId: string;
  ip: string;
  note?: string;
  allocationId: string;
  time: string;
}

/** An edge or pool created, updated (pools) or deleted through the API. */
export interface ObjectChange {
  action: "created" | "updated" | "deleted";
  kind: "edge" | "pool";
  /** the id the manager assigned or that the call named */
  id: string;
  /** the object's name after the call (before it, for a deletion) */
  name?: string;
  time: string;
  /** a pool deleted with `force=true`: the allocations that went with it */
  droppedAllocations?: { ip: string; note?: string; allocationId: string }[];
}

export interface AuditSnapshot {
  violations: PutViolation[];
  releases: ReleaseRecord[];
  /** edges and pools created, updated or deleted through the API, in order */
  objects: ObjectChange[];
  /** entries dropped because a list reached its cap */
  dropped: number;
}

const MAX_ENTRIES = 100_000;

export class Audit {
  #violations: PutViolation[] = [];
  #releases: ReleaseRecord[] = [];
  #objects: ObjectChange[] = [];
  #dropped = 0;

  addViolation(v: PutViolation): void {
    this.#push(this.#violations, v);
  }

  addRelease(r: ReleaseRecord): void {
    this.#push(this.#releases, r);
  }

  addObjectChange(change: ObjectChange): void {
    this.#push(this.#objects, change);
  }

  #push<T>(list: T[], item: T): void {
    if (list.length >= MAX_ENTRIES) {
      list.shift();
      this.#dropped++;
    }
    list.push(item);
  }

  snapshot(): AuditSnapshot {
    return {
      violations: [...this.#violations],
      releases: [...this.#releases],
      objects: [...this.#objects],
      dropped: this.#dropped,
    };
  }

  reset(): void {
    this.#violations = [];
    this.#releases = [];
    this.#objects = [];
    this.#dropped = 0;
  }
}
