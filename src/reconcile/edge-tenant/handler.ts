/**
 * The EdgeTenant kind: two passes of the common contract (reconcile/kind.ts). `edgeTenantPass` observes
 * the edge (GET), plans (plan.ts) and writes the document just read with only
 * `<tenant>` changed: a correction is exactly GET + PUT, and after a 409 the shared helper reads
 * again and plans again. `restorePass` is what deleting an object that holds the restore
 * finalizer does: the same GET + PUT, back to the tenant the edge carried before the first
 * correction, on the edge that tenant was read from (restore-plan.ts decides).
 *
 * A read is checked before it can decide a write: a document that lacks what every edge of its
 * type carries is refused by the client's PUT (IncompleteEdge), and a read that lost content its
 * last full read had (status.edgeShape) or is older than the edge list is read again at once
 * (edge-shapes.ts decides what the second read may decide).
 */
import { managerOfLabel, managerRefOf, refOf, type ObjectRef } from "../../api/refs.ts";
import {
  RESTORE_FINALIZER,
  SKIP_RESTORE_ANNOTATION,
  type EdgeTenant,
  type EdgeTenantStatus,
} from "../../api/types.ts";
import type { EdgeDocument } from "../../nsx/edge-document.ts";
import { NsxIncompleteEdgeError } from "../../nsx/errors.ts";
import type { ManagerApi, CallOptions } from "../../nsx/types.ts";
import type { ManagerConnection } from "../connections.ts";
import type { EdgeList } from "./edge-lists.ts";
import { decidingRead, doubted, rememberedOf, rememberedShapeOf, type KnownOfEdge } from "./edge-shapes.ts";
import { listShows } from "./edge-list-plan.ts";
import { planEdgeTenant, type EdgeObservation } from "./plan.ts";
import { hasNsxCode, ReconcileError } from "../errors.ts";
import type { Failure } from "../conditions.ts";
import type { KindPlan, PassContext, PassHandler, Settled } from "../kind.ts";
import type { RestoreTenantAction, SetTenantAction } from "./actions.ts";
import { planRestore, restoreDecision, type RestoreDecision } from "./restore-plan.ts";
import { isPaused } from "../policy.ts";
import { phaseOf } from "./full-read-schedule.ts";
import { resolveEdgeTenant, type EdgeTenantConfig } from "./spec.ts";
import { holdsItsSecrets } from "../nsx-manager/handler.ts";
import { EDGE_TENANT_STATE } from "./state.ts";

/** What a pass over one edge found before reading it. */
interface EdgeTarget {
  config: EdgeTenantConfig;
  connection: ManagerConnection;
  /** a Restore correction waits for the manager's Secrets to be held (a cluster) */
  secretsHold?: { held: boolean; manager: ObjectRef } | undefined;
  /** the tenant the manager's edge list showed, when this pass looked there first */
  listed?: string | undefined;
}

/** An observation of the edge, and the document read when it was a full read. */
interface EdgeSeen {
  edge: EdgeObservation;
  /** the edge as a full read returned it: what a write planned on this observation sends back, its tenant changed */
  document?: EdgeDocument;
}

export const edgeTenantPass: PassHandler<EdgeTenant, EdgeTarget, EdgeSeen, SetTenantAction> = {
  async prepare(ctx) {
    const config = resolveEdgeTenant(ctx.object);
    await ctx.state.assertOwnTarget(ctx.object, `edge ${config.edgeId}`);
    const connection = await ctx.state.connectDependent(ctx.object, config.manager);
    return { config, connection, secretsHold: await secretsHoldOf(ctx, config) };
  },
  async observe(target, ctx, depth) {
    const listed = depth === "first" ? await fromEdgeList(target, ctx) : undefined;
    if (listed !== undefined) {
      target.listed = listed.tenant ?? "";
      return { edge: listed };
    }
    return readEdgeSeen(target, ctx);
  },
  plan(target, observed, ctx) {
    const plan = planEdgeTenantFor(target, observed.edge, ctx);
    return {
      ...plan,
      settle: (results, failure) => followed(plan.settle(results, failure), target, ctx, failure),
    };
  },
  execute: (action, { target, observed }, ctx) =>
    writeTenant({ connection: target.connection, document: observed.document }, action, ctx),
  rereadOn: { NSX_ERR_CONFLICT: "retry" },
  targetOf: (action) => action.edgeId,
  describe: (action) => `PUT edge ${action.edgeId}`,
};

function planEdgeTenantFor(
  target: EdgeTarget,
  observed: EdgeObservation,
  ctx: PassContext<EdgeTenant>,
): KindPlan<SetTenantAction> {
  const { object } = ctx;
  return planEdgeTenant({
    config: target.config,
    manager: { name: target.config.managerName, url: target.connection.url },
    observed,
    previous: object.status,
    now: ctx.now,
    generation: ctx.generation,
    writesBlockedBy: ctx.writesBlockedBy,
    // only a run that keeps status and writes records before it writes: not plan, not a one-shot apply
    recordsOriginal: ctx.state.oneShot === undefined && ctx.state.mode === "apply",
    finalizerPresent: (object.metadata.finalizers ?? []).includes(RESTORE_FINALIZER),
    statusLost: ctx.statusLost,
    listedTenant: target.listed,
    secretsHold: target.secretsHold,
  });
}

/**
 * A pass that leaves the object as the manager's edge list shows its edge (in sync, or an Observe
 * object's drift as status reports it) needs no come-back of its own: the manager's check reads
 * the list every interval, counts it observed, and wakes it when its edge changes. It comes back
 * when its safety-net read falls due. A one-shot run keeps no come-back.
 */
function followed(
  settled: Settled,
  target: EdgeTarget,
  ctx: PassContext<EdgeTenant>,
  failure: Failure | undefined,
): Settled {
  const { state } = ctx;
  const status = settled.status as EdgeTenantStatus | undefined;
  if (failure !== undefined || status === undefined || state.oneShot !== undefined) return settled;
  const list = state.of(EDGE_TENANT_STATE).edgeLists.latest(target.connection.sharedKey)?.list;
  const summary = list?.byId.get(target.config.edgeId);
  if (summary === undefined || !listShows({ ...ctx.object, status }, summary)) return settled;
  const followedForMs = Math.max(0, nextFullReadMs(ctx, status.lastFullReadTime) - ctx.now.getTime());
  return { ...settled, followedForMs };
}

/** What a restore found before reading the edge: nothing to do (and why), or where to write. */
interface RestoreTarget {
  decision: RestoreDecision;
  edge: EdgeTarget | undefined;
}

export const restorePass: PassHandler<EdgeTenant, RestoreTarget, EdgeSeen | undefined, RestoreTenantAction> =
  {
    async prepare(ctx) {
      const managerRef = managerRefOf(ctx.object);
      const manager = managerRef === undefined ? undefined : await ctx.state.store.get(managerRef);
      const managerPaused = manager !== undefined && isPaused(manager.metadata);
      const decision = restoreDecision(ctx.object, await ownerOfOriginalEdge(ctx), managerPaused);
      if (decision.type === "skip") return { decision, edge: undefined };
      const { config, managerURL } = decision;
      const connection = await ctx.state.connectDependent(ctx.object, config.manager, { restoring: true });
      // the original was read on one real manager: never written to another one's edge
      if (managerURL !== undefined && connection.url !== managerURL) {
        const message = `the original tenant of ${config.edgeId} was read on ${managerURL}, and NSXManager ${config.managerName} points at ${connection.url} now: not restoring it on another manager; point the NSXManager back, or annotate this object ${SKIP_RESTORE_ANNOTATION}: "true" to let it go without restoring`;
        throw new ReconcileError({ reason: "EdgeMoved", message });
      }
      return { decision, edge: { config, connection } };
    },
    observe: (target, ctx) =>
      target.edge === undefined ? Promise.resolve(undefined) : readEdgeSeen(target.edge, ctx),
    plan: (target, observed, ctx) => {
      const { decision } = target;
      const ours =
        decision.type === "restore" &&
        ctx.state
          .of(EDGE_TENANT_STATE)
          .wasRestoredBy(refOf(ctx.object), decision.config.edgeId, decision.original);
      return planRestore(decision, observed?.edge, ours);
    },
    async execute(action, { target, observed }, ctx) {
      if (target.edge === undefined) throw new Error(`restore of ${action.edgeId} planned without an edge`);
      const done = await writeTenant(
        { connection: target.edge.connection, document: observed?.document },
        action,
        ctx,
      );
      // the finalizer's removal may still lose a race: the pass after it finds this restore done
      ctx.state.of(EDGE_TENANT_STATE).restoredBy(refOf(ctx.object), action.edgeId, action.to);
      return done;
    },
    rereadOn: { NSX_ERR_CONFLICT: "retry" },
    targetOf: (action) => action.edgeId,
    describe: (action) => `PUT edge ${action.edgeId} (restoring its original tenant)`,
  };

/**
 * Whether a Restore object's NSXManager holds its Secrets against deletion yet (a cluster, where
 * the run records before it writes); undefined when nothing waits on it.
 */
async function secretsHoldOf(
  ctx: PassContext<EdgeTenant>,
  config: EdgeTenantConfig,
): Promise<{ held: boolean; manager: ObjectRef } | undefined> {
  const { state } = ctx;
  if (config.deletionPolicy !== "Restore" || state.store.secretsHoldable !== true) return undefined;
  if (state.oneShot !== undefined || state.mode !== "apply") return undefined;
  const ref = config.manager;
  const manager = await state.store.get(ref);
  return { held: manager?.kind === "NSXManager" && holdsItsSecrets(manager), manager: ref };
}

/** The live object that owns the edge the original was read from, if any: that edge's tenant is its to decide. */
async function ownerOfOriginalEdge(ctx: PassContext<EdgeTenant>): Promise<ObjectRef | undefined> {
  const { object } = ctx;
  const of = object.status?.originalTenantOf;
  let spec = object.spec;
  if (of !== undefined) {
    const { namespace, name } = managerOfLabel(refOf(object).namespace, of.manager);
    spec = { ...spec, edgeId: of.edgeId, managerRef: { name, namespace } };
  }
  return (await ctx.state.conflictIndex("EdgeTenant")).winnerOver({ ...object, spec });
}

function observationOf(edgeId: string, document: EdgeDocument): Omit<EdgeObservation, "via"> {
  const shape = rememberedShapeOf(edgeId, document);
  return { edgeId, name: document.name, version: document.version, tenant: document.tenant, shape };
}

/**
 * The edge as the manager's edge list shows it, when that may stand for a read: the list is
 * recent for this object (within two of its sync intervals), shows the edge, and the edge's full
 * read is not due (the safety net: every edge is read in full once per fullReadInterval, so a
 * manager whose summaries were ever wrong cannot hide drift for long; a one-shot run trusts the
 * list). Undefined: read the edge.
 */
async function fromEdgeList(
  target: EdgeTarget,
  ctx: PassContext<EdgeTenant>,
): Promise<EdgeObservation | undefined> {
  if (safetyNetReadDue(ctx)) return undefined;
  const list = await recentEdgeList(target, ctx);
  const summary = list?.byId.get(target.config.edgeId);
  if (list === undefined || summary === undefined) return undefined;
  return {
    edgeId: target.config.edgeId,
    name: summary.name,
    version: summary.revision,
    tenant: summary.tenant,
    via: "list",
    observedAtMs: list.fetchedAtMs,
  };
}

/**
 * The manager's edge list, recent for this object (within two of its sync intervals), or
 * undefined: its last fetch failed (the manager's check tries again; each object reads its edge
 * meanwhile), or a fetch now fails. An operator that starts (or takes the lease) over thousands of
 * EdgeTenants queues them all with their manager, and a queue may take longer to drain than the
 * list stays recent: without a list each would GET its edge, N calls where the list's pages do. So
 * an object that finds none yet, or one grown old, joins the fetch in flight or starts one (the
 * cache shares one fetch); one whose full read is due reads anyway: fromEdgeList asks that first.
 */
async function recentEdgeList(
  target: EdgeTarget,
  ctx: PassContext<EdgeTenant>,
): Promise<EdgeList | undefined> {
  const { state } = ctx;
  const { edgeLists } = state.of(EDGE_TENANT_STATE);
  const { sharedKey, api } = target.connection;
  const latest = edgeLists.latest(sharedKey);
  if (latest?.error !== undefined) return undefined;
  const recent = (list: EdgeList | undefined) =>
    list !== undefined &&
    ctx.now.getTime() - list.fetchedAtMs <= state.staleAfterMs(target.config.syncIntervalMs);
  if (recent(latest?.list)) return latest?.list;
  // a one-shot run reconciles its managers first: their lists are there, or failed
  if (state.oneShot !== undefined) return undefined;
  const fetched = await edgeLists.refresh(sharedKey, api, { signal: ctx.signal }).catch(() => undefined);
  return recent(fetched) ? fetched : undefined;
}

/**
 * This object's full read is due now: in a one-shot run only when asked (--full-read: every edge;
 * otherwise one pass takes the list for what it shows, and says so), in the operator once per its
 * manager's full-read cycle (full-read-schedule.ts: fullReadInterval, longer when its EdgeTenants
 * would take more than fullReadsPerMinute), counted from its last full read or from when this
 * replica first looked at it, whichever is later: thousands of objects the operator starts over
 * (or that are created at once) are read in full spread over the next cycle, each at its phase,
 * never all on their first pass, however long ago their last full read was.
 */
function safetyNetReadDue(ctx: PassContext<EdgeTenant>): boolean {
  const { state } = ctx;
  if (state.oneShot !== undefined) return state.oneShot.fullRead === true;
  return ctx.now.getTime() >= nextFullReadMs(ctx, ctx.object.status?.lastFullReadTime);
}

/** When the object's next full read falls due, after the last one (`lastFullRead`, RFC 3339) and this replica's first look. */
export function nextFullReadMs(ctx: PassContext<EdgeTenant>, lastFullRead: string | undefined): number {
  const { state, object } = ctx;
  const nowMs = ctx.now.getTime();
  // status keeps it to the second: the read was within the second it names, counted to its end
  const lastMs = lastFullRead === undefined ? NaN : Date.parse(lastFullRead) + 999;
  const firstLookMs = state.trackedSinceMs(refOf(object), nowMs);
  // a full read counts only when it is the later of the two (a first look stands in for nothing)
  const fullRead = Number.isFinite(lastMs) && lastMs >= firstLookMs;
  const manager = managerRefOf(object) ?? refOf(object);
  const edgeTenants = state.of(EDGE_TENANT_STATE);
  const cycleMs = edgeTenants.fullReadCycleMsOf(manager);
  return edgeTenants.fullReads.dueAtMs(
    refOf(object),
    { manager, cycleMs, phase: phaseOf(object) },
    { ms: fullRead ? lastMs : firstLookMs, fullRead },
    nowMs,
  );
}

/** A full read of the edge, as an observation with the document read. */
async function readEdgeSeen(
  target: Pick<EdgeTarget, "config" | "connection">,
  ctx: PassContext<EdgeTenant>,
): Promise<EdgeSeen> {
  const { edgeId } = target.config;
  const document = await readEdge(target.connection, edgeId, ctx);
  return { edge: { ...observationOf(edgeId, document), via: "read" }, document };
}

/** PUTs the document of the observation the write was planned on, with only its tenant set to `to`. */
async function writeTenant(
  at: { connection: ManagerConnection; document: EdgeDocument | undefined },
  { edgeId, to }: { edgeId: string; to: string },
  ctx: PassContext<EdgeTenant>,
): Promise<"done"> {
  const { connection, document } = at;
  if (document === undefined) throw new Error(`PUT edge ${edgeId} planned without a read`);
  try {
    await connection.api.putEdge(edgeId, document.clone().setTenant(to), { signal: ctx.signal });
  } catch (error) {
    if (!(error instanceof NsxIncompleteEdgeError)) throw error;
    const message = `edge ${edgeId}: ${error.message}; nothing was written, the next pass reads it again`;
    throw new ReconcileError({ reason: "IncompleteEdge", message, cause: error });
  }
  ctx.state.of(EDGE_TENANT_STATE).edgeLists.wrote(connection.sharedKey, edgeId, to);
  return "done";
}

/**
 * GET the edge, checked against what is known of it (edge-shapes.ts): a read that lost sections or
 * list members its last full read had (status.edgeShape), or that is older than the manager's edge
 * list, is read again, and the second read decides only when it is no older than the list and
 * doubts nothing, or lost content at a higher version and agrees with the first: a write is never
 * based on a read that no second read agrees with, after a restart or on the first read of
 * `apply` as well.
 */
async function readEdge(
  connection: ManagerConnection,
  edgeId: string,
  ctx: PassContext<EdgeTenant>,
): Promise<EdgeDocument> {
  const call: CallOptions = { signal: ctx.signal };
  const known: KnownOfEdge = {
    remembered: rememberedOf(ctx.object.status, edgeId),
    listed: ctx.state.of(EDGE_TENANT_STATE).edgeLists.latest(connection.sharedKey)?.list?.byId.get(edgeId),
  };
  const first = await getEdge(connection.api, edgeId, call);
  if (!doubted(first, known)) return first;
  const second = await getEdge(connection.api, edgeId, call);
  return decidingRead(edgeId, { first, second }, known);
}

async function getEdge(api: ManagerApi, edgeId: string, call: CallOptions): Promise<EdgeDocument> {
  try {
    return await api.getEdge(edgeId, call);
  } catch (error) {
    if (!hasNsxCode(error, "NSX_ERR_NOT_FOUND")) throw error;
    throw new ReconcileError({
      reason: "EdgeNotFound",
      message: `edge ${edgeId}: ${error.message}`,
      cause: error,
    });
  }
}
