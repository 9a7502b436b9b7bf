/**
 * What the EdgeTenant kind keeps across passes (its key in the reconciler's state, state.ts's
 * KindStateKey): each manager's edge list, the safety net's schedule and its options, how many
 * live EdgeTenants each NSXManager's last check counted, and the restores this replica wrote.
 */
import { objectKey, type ObjectRef } from "../../api/refs.ts";
import type { KindStateKey, ReconcilerSettings } from "../state.ts";
import { EdgeListCache } from "./edge-lists.ts";
import { fullReadCycleMs, FullReadSchedule } from "./full-read-schedule.ts";

/** The EdgeTenant kind's options (the reconciler's `kinds.EdgeTenant`). */
export interface EdgeTenantOptions {
  /** every edge is read in full at least this often, whatever the edge list says; default 3600000 (1 h) */
  fullReadIntervalMs: number;
  /**
   * the safety net's budget: at most this many full reads a minute of the edges of one NSXManager,
   * on average; a manager with more EdgeTenants than fit in fullReadIntervalMs at this rate has
   * its edges read once per fullReadCycleMs instead; default 7
   */
  fullReadsPerMinute: number;
}

export class EdgeTenantState {
  /** each manager's edge list, as its last check read it */
  readonly edgeLists: EdgeListCache;
  /** when each edge's next safety-net read is due */
  readonly fullReads = new FullReadSchedule();
  readonly fullReadIntervalMs: number;
  readonly fullReadsPerMinute: number;
  /** EdgeTenant key → the restore this replica wrote for it (edge and tenant), until the object goes */
  readonly #restored = new Map<string, string>();
  /** NSXManager key → the live EdgeTenants its last check counted (fullReadCycleMsOf) */
  readonly #edgeTenantCounts = new Map<string, number>();

  constructor(clock: ReconcilerSettings["clock"], options: EdgeTenantOptions) {
    this.edgeLists = new EdgeListCache(clock);
    this.fullReadIntervalMs = options.fullReadIntervalMs;
    this.fullReadsPerMinute = options.fullReadsPerMinute;
  }

  /** This replica wrote `tenant` back to `edgeId` for the object being deleted. */
  restoredBy(ref: ObjectRef, edgeId: string, tenant: string): void {
    this.#restored.set(objectKey(ref), `${edgeId}\n${tenant}`);
  }

  /** Whether this replica wrote exactly that restore for the object (a later pass finds it done, not skipped). */
  wasRestoredBy(ref: ObjectRef, edgeId: string, tenant: string): boolean {
    return this.#restored.get(objectKey(ref)) === `${edgeId}\n${tenant}`;
  }

  /** The NSXManager's check found this many live EdgeTenants naming it (what its full-read cycle counts). */
  countedEdgeTenants(manager: ObjectRef, count: number): void {
    this.#edgeTenantCounts.set(objectKey(manager), count);
  }

  /**
   * How often the safety net reads each edge of the NSXManager in full: fullReadIntervalMs, or
   * longer when the live EdgeTenants its last check counted would take more than
   * fullReadsPerMinute (full-read-schedule.ts). Before its first check, the interval: the
   * schedule counts in cycles, so what falls due keeps its place when the cycle moves.
   */
  fullReadCycleMsOf(manager: ObjectRef): number {
    const edgeTenants = this.#edgeTenantCounts.get(objectKey(manager)) ?? 0;
    return fullReadCycleMs(this.fullReadIntervalMs, this.fullReadsPerMinute, edgeTenants);
  }

  /** The object (an EdgeTenant, or an NSXManager) is gone. */
  forget(ref: ObjectRef): void {
    this.#restored.delete(objectKey(ref));
    this.#edgeTenantCounts.delete(objectKey(ref));
    this.fullReads.forget(ref);
  }
}

export const EDGE_TENANT_STATE: KindStateKey<EdgeTenantState, EdgeTenantOptions> = {
  kind: "EdgeTenant",
  defaults: Object.freeze({ fullReadIntervalMs: 3_600_000, fullReadsPerMinute: 7 }),
  create: (settings, options) => new EdgeTenantState(settings.clock, options),
  forget: (state, ref) => state.forget(ref),
};
