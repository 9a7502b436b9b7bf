/**
 * The NSXManager kind, one pass of the common contract (kind.ts) with nothing to act on: the
 * manager's own check. It builds the client from the spec and the Secrets and lists the pools
 * of the global scope (a fresh list, which the dependents then share): reachable and
 * authenticated, or why not. Ready is the outcome of the check itself (`readyFollowsFailure` in
 * the reconciler's table), and a failed check says what it learnt (`managerFacts`). A connection
 * open to its network path (plain http:// to another machine, or no certificate verification) is
 * said on every pass, checked or not (`insecureConditions`): `Insecure=True`, and a Warning event
 * when that starts or its reason changes.
 */
import { DEFAULTS, type NSXManager, type NSXManagerStatus } from "../api/types.ts";
import { insecureTransport } from "../nsx/client-options.ts";
import { NsxError } from "../nsx/errors.ts";
import {
  findCondition,
  setConditions,
  syncedUpdates,
  type ConditionUpdate,
  type InsecureReason,
  type ReconcileEvent,
} from "./conditions.ts";
import { formatRef, refOf } from "../api/refs.ts";
import type { ManagerConnection } from "./connections.ts";
import { hasNsxCode } from "./errors.ts";
import type { PassHandler } from "./kind.ts";
import { resolveManager } from "./spec.ts";

/** What the check saw: how many pools the global scope holds, and the UUID the manager reports on them. */
export interface ManagerObservation {
  pools: number;
  vsmUuid: string | undefined;
}

/** An NSXManager's passes plan no action: one that reaches execute is a bug. */
function noActions(action: never): Promise<never> {
  return Promise.reject(new Error(`an NSXManager has no actions: ${String(action)}`));
}

export const nsxManagerPass: PassHandler<NSXManager, ManagerConnection, ManagerObservation, never> = {
  async prepare(ctx) {
    resolveManager(ctx.object);
    // the manager's own check reads its Secrets as they are now: a rotation or a binding counts at once
    return ctx.state.connect(ctx.object, { fresh: true });
  },
  async observe(connection, ctx) {
    const pools = await ctx.state.refreshPoolList(connection, DEFAULTS.poolScope);
    return { pools: pools.length, vsmUuid: pools.find((p) => p.vsmUuid !== undefined)?.vsmUuid };
  },
  plan(_connection, observed, ctx) {
    const count = `${observed.pools} pool${observed.pools === 1 ? "" : "s"}`;
    const status = (): NSXManagerStatus => ({
      observedGeneration: ctx.generation,
      reachable: true,
      authenticated: true,
      // a manager with no pool reports no UUID: the one it reported before stays
      ...((observed.vsmUuid ?? ctx.object.status?.vsmUuid) !== undefined
        ? { vsmUuid: observed.vsmUuid ?? ctx.object.status?.vsmUuid }
        : {}),
      conditions: setConditions(
        ctx.object.status?.conditions,
        [
          {
            type: "Ready",
            status: "True",
            reason: "Available",
            message: `reachable and authenticated: ${count} in ${DEFAULTS.poolScope}`,
          },
          ...syncedUpdates(ctx.hold),
        ],
        { now: ctx.now, generation: ctx.generation },
      ),
    });
    return { actions: [], withheld: [], settle: () => ({ status: status(), events: [] }) };
  },
  execute: noActions,
  rereadOn: {},
  targetOf: () => "",
  describe: () => "",
};

/** What a failed check tells of the manager; a failure before any call (a Secret) tells nothing. */
export function managerFacts(error: unknown): Pick<NSXManagerStatus, "reachable" | "authenticated"> {
  if (hasNsxCode(error, "NSX_ERR_CONNECTION") || hasNsxCode(error, "NSX_ERR_UNAVAILABLE"))
    return { reachable: false };
  if (hasNsxCode(error, "NSX_ERR_UNAUTHORIZED")) return { reachable: true, authenticated: false };
  // any other answer (403 included): the credentials were accepted
  if (error instanceof NsxError) return { reachable: true, authenticated: true };
  return {};
}

const INSECURE_REASON_BY_KIND = {
  insecureSkipVerify: "InsecureSkipVerify",
  plainHttp: "PlainHTTP",
} as const satisfies Record<string, InsecureReason>;

/**
 * `Insecure=True` with why (or its removal), and a Warning event when the connection becomes
 * insecure, or insecure for another reason, than the previous status said. From the spec alone.
 */
export function insecureConditions(object: NSXManager): {
  updates: ConditionUpdate[];
  events: ReconcileEvent[];
} {
  const spec = object.spec;
  const risk = insecureTransport({ url: spec.url, insecureSkipVerify: spec.tls?.insecureSkipVerify });
  if (risk === undefined) return { updates: [{ type: "Insecure", remove: true }], events: [] };
  const said = { reason: INSECURE_REASON_BY_KIND[risk.kind], message: risk.message };
  const previous = findCondition(object.status?.conditions, "Insecure");
  const events: ReconcileEvent[] = previous?.reason === said.reason ? [] : [{ type: "Warning", ...said }];
  return { updates: [{ type: "Insecure", status: "True", ...said }], events };
}

/** What deleting an NSXManager found: the objects that still name it, and its connection while they do. */
interface ReleaseTarget {
  dependents: string[];
  connection: ManagerConnection | undefined;
}

/**
 * Deleting an NSXManager that holds the in-use finalizer: while objects still name it (a restore
 * may be pending), it is checked as usual and kept; once none does, it goes without a call.
 */
export const managerReleasePass: PassHandler<
  NSXManager,
  ReleaseTarget,
  ManagerObservation | undefined,
  never
> = {
  async prepare(ctx) {
    const dependents = ctx.state.dependentsOf(ctx.object).map((o) => formatRef(refOf(o)));
    if (dependents.length === 0) return { dependents, connection: undefined };
    return { dependents, connection: await nsxManagerPass.prepare(ctx) };
  },
  observe: (target, ctx, depth) =>
    target.connection === undefined
      ? Promise.resolve(undefined)
      : nsxManagerPass.observe(target.connection, ctx, depth),
  plan(target, observed, ctx) {
    if (target.connection === undefined || observed === undefined)
      return { actions: [], withheld: [], settle: () => ({ events: [], finalized: true }) };
    const checked = nsxManagerPass.plan(target.connection, observed, ctx);
    return {
      ...checked,
      settle: (results, failure) => ({ ...checked.settle(results, failure), finalized: false }),
    };
  },
  execute: noActions,
  rereadOn: {},
  targetOf: () => "",
  describe: () => "",
};
