/**
 * The NSXManager kind, one pass of the common contract (kind.ts) with nothing to act on: the
 * manager's own check. It builds the client from the spec and the Secrets and reads the edge list
 * when EdgeTenants name the manager (which they then observe from), and the pools of the global
 * scope when IPPoolAllocations name it (a fresh list, which they then share) or when there is no
 * edge list to answer the check: reachable and authenticated, or why not. One call per 1024
 * edges is the whole check of a manager with only EdgeTenants. Ready is the outcome of the check itself (`readyFollowsFailure` in
 * its module, kind.ts), and a failed check says what it learnt (`managerFacts`). A connection
 * open to its network path (plain http:// to another machine, or no certificate verification) is
 * said on every pass, checked or not (`insecureConditions`): `Insecure=True`, and a Warning event
 * when that starts or its reason changes.
 */
import {
  IN_USE_FINALIZER,
  RESTORE_FINALIZER,
  SPEC_DEFAULTS,
  type EdgeTenant,
  type NSXManager,
  type NSXManagerStatus,
} from "../../api/types.ts";
import { insecureTransport } from "../../nsx/client-options.ts";
import { NsxError } from "../../nsx/errors.ts";
import {
  findCondition,
  managerValue,
  setConditions,
  syncedUpdates,
  type ConditionUpdate,
  type FailureReason,
  type InsecureReason,
  type ReconcileEvent,
} from "../conditions.ts";
import { formatDuration } from "../../api/duration.ts";
import { formatRef, refOf, type ObjectRef } from "../../api/refs.ts";
import type { ManagerConnection } from "../connections.ts";
import { edgeTenantsToWake } from "../edge-tenant/edge-list-plan.ts";
import type { EdgeList, EdgeListState, ListReuse } from "../edge-tenant/edge-lists.ts";
import { hasNsxCode, ObservationExpiredError, ReconcileError } from "../errors.ts";
import type { PassContext, PassHandler, Settled } from "../kind.ts";
import type { SecretFinalizerChange } from "../report.ts";
import { liveEdgeTenants, type ReconcilerState } from "../state.ts";
import { secretNamesOf } from "../routing.ts";
import { omitUndefined } from "../../util/options.ts";
import { resolveManager } from "../spec.ts";
import { EDGE_TENANT_STATE } from "../edge-tenant/state.ts";
import { POOL_STATE } from "../ip-pool/state.ts";
import { MANAGER_STATE, REFUSED_CREDENTIALS } from "./state.ts";

/** What the check saw: the pools of the global scope, the UUID the manager reports, and its edge list. */
export interface ManagerObservation {
  /** undefined when the edge list answered the check and no object needs the pools */
  pools: number | undefined;
  vsmUuid: string | undefined;
  /** the edge list, read when EdgeTenants name this manager */
  edgeList: EdgeListState | undefined;
}

/** The manager's pass: its client, its EdgeTenants, and when to come back. */
export interface ManagerTarget {
  connection: ManagerConnection;
  edgeTenants: EdgeTenant[];
  /** IPPoolAllocations name it: they share the fresh pool list this check reads */
  hasPools: boolean;
  /** the shortest sync interval of its EdgeTenants (the default without any), spread: its list's interval */
  resyncMs: number;
}

/** Answers to the edge list that fail the check itself; any other failure of the list (a 403, a bad page) is the list's own. */
const CHECK_FAILURES = ["NSX_ERR_UNAUTHORIZED", "NSX_ERR_CONNECTION", "NSX_ERR_UNAVAILABLE"] as const;

/**
 * One list per real manager: a list that another NSXManager naming the same manager (reached the
 * same verified way) fetched within most of this check's interval serves this check too, so a
 * manager several NSXManager objects name is listed once per interval, not once per object.
 */
function reuseOf(target: ManagerTarget): ListReuse {
  return { for: target.connection.key, withinMs: Math.floor(target.resyncMs * 0.9) };
}

/** An NSXManager's passes plan no action: one that reaches execute is a bug. */
function noActions(action: never): Promise<never> {
  return Promise.reject(new Error(`an NSXManager has no actions: ${String(action)}`));
}

export const nsxManagerPass: PassHandler<NSXManager, ManagerTarget, ManagerObservation, never> = {
  async prepare(ctx) {
    resolveManager(ctx.object);
    const dependents = ctx.state.dependentsOf(ctx.object);
    const edgeTenants = liveEdgeTenants(dependents);
    ctx.state.of(EDGE_TENANT_STATE).countedEdgeTenants(refOf(ctx.object), edgeTenants.length);
    const hasPools = dependents.some((o) => o.kind === "IPPoolAllocations");
    const resyncMs = ctx.state.resync(ctx.state.checkIntervalMs(ctx.object));
    // the manager's own check reads its Secrets as they are now: a rotation or a binding counts at once
    const connection = await ctx.state.connect(ctx.object, { fresh: true });
    return { connection, edgeTenants, hasPools, resyncMs };
  },
  async observe(target, ctx) {
    const { connection } = target;
    const refreshPools = () => ctx.state.of(POOL_STATE).refreshPoolList(connection, SPEC_DEFAULTS.poolScope);
    const [listed, sharedPools] = await Promise.all([
      target.edgeTenants.length === 0 ? undefined : refreshEdgeList(target, ctx),
      target.hasPools ? refreshPools() : undefined,
    ]);
    const edgeList = listed?.state;
    // a list this check read answers it (reachable, authenticated): the pools are listed only for
    // the objects that share that list, or as the check when there is no list of its own (none, or
    // another NSXManager's: that one's credentials were sent, not these)
    const answered = edgeList?.list !== undefined && listed?.own === true;
    const pools = sharedPools ?? (answered ? undefined : await refreshPools());
    return { pools: pools?.length, vsmUuid: reportedUuid(pools, edgeList), edgeList };
  },
  plan(target, observed, ctx) {
    const previous = ctx.object.status;
    const edgeList: EdgeListState | undefined =
      observed.edgeList?.error === undefined
        ? observed.edgeList
        : { error: managerValue(observed.edgeList.error) };
    const pools =
      observed.pools === undefined
        ? undefined
        : `${observed.pools} pool${observed.pools === 1 ? "" : "s"} in ${SPEC_DEFAULTS.poolScope}`;
    const listed =
      edgeList === undefined
        ? undefined
        : edgeList.list !== undefined
          ? `${edgeList.list.byId.size} edge${edgeList.list.byId.size === 1 ? "" : "s"} listed`
          : `the edge list failed (${edgeList.error}): its EdgeTenants read their edges one by one until it works`;
    const seen = [pools, listed, fullReadsOf(target, edgeList, ctx)]
      .filter((part) => part !== undefined)
      .join("; ");
    const vsmUuid = observed.vsmUuid ?? previous?.vsmUuid;
    const status = (): NSXManagerStatus =>
      omitUndefined({
        observedGeneration: ctx.generation,
        reachable: true,
        authenticated: true,
        // a manager with no pool reports no UUID: the one it reported before stays
        vsmUuid,
        edgeListError: edgeList?.error,
        conditions: setConditions(
          previous?.conditions,
          [
            {
              type: "Ready",
              status: "True",
              reason: "Available",
              message: `reachable and authenticated: ${seen}`,
            },
            ...syncedUpdates(ctx.writesBlockedBy),
            edgeListCondition(edgeList),
          ],
          { now: ctx.now, generation: ctx.generation },
        ),
      });
    const events: ReconcileEvent[] =
      edgeList?.error !== undefined && previous?.edgeListError === undefined
        ? [
            {
              type: "Warning",
              reason: "EdgeListUnavailable",
              message: `the edge list failed: ${edgeList.error}`,
            },
          ]
        : [];
    const fromList = listVerdict(target, edgeList);
    return {
      actions: [],
      withheld: [],
      requeueAfterMs: target.resyncMs,
      settle: () => ({ status: status(), events, ...fromList }),
    };
  },
  execute: noActions,
  rereadOn: {},
  targetOf: () => "",
  describe: () => "",
};

/**
 * How often the safety net reads each of the manager's edges in full, when the operator runs and
 * its list was read (EdgeTenants name it): the full-read interval, or the longer cycle its budget of reads a minute
 * makes (reconcile/edge-tenant/full-read-schedule.ts), with why.
 */
function fullReadsOf(
  target: ManagerTarget,
  edgeList: EdgeListState | undefined,
  ctx: PassContext<NSXManager>,
): string | undefined {
  const { state } = ctx;
  // while the list fails, every EdgeTenant reads its edge at each pass: no safety net to tell of
  if (state.oneShot !== undefined || edgeList?.list === undefined) return undefined;
  const cycleMs = state.of(EDGE_TENANT_STATE).fullReadCycleMsOf(refOf(ctx.object));
  const every = `each edge read in full every ${formatDuration(cycleMs)}`;
  if (cycleMs <= state.of(EDGE_TENANT_STATE).fullReadIntervalMs) return every;
  return `${every} (${state.of(EDGE_TENANT_STATE).fullReadsPerMinute} full reads a minute at most, over ${target.edgeTenants.length} EdgeTenants)`;
}

/**
 * What the list tells the manager's EdgeTenants: those to wake now, and those it shows as their
 * status says, observed when it was read.
 */
function listVerdict(
  target: ManagerTarget,
  edgeList: EdgeListState | undefined,
): Pick<Settled, "wake" | "alsoObserved"> {
  if (edgeList === undefined) return { wake: [] };
  const { wake, shown } = edgeTenantsToWake(target.edgeTenants, edgeList);
  const fetchedAtMs = edgeList.list?.fetchedAtMs;
  return fetchedAtMs === undefined ? { wake } : { wake, alsoObserved: { refs: shown, atMs: fetchedAtMs } };
}

/**
 * The manager's edge list, fetched now (or one another NSXManager naming the same manager fetched
 * lately: `own` false): what its EdgeTenants observe from. A failure that says the manager refused
 * the credentials or did not answer is the check's own failure; any other (a 403 on the list, a
 * bad page) is the list's, kept as the reason its EdgeTenants read one by one.
 */
async function refreshEdgeList(
  target: ManagerTarget,
  ctx: PassContext<NSXManager>,
): Promise<{ state: EdgeListState | undefined; own: boolean }> {
  const { edgeLists } = ctx.state.of(EDGE_TENANT_STATE);
  const { connection } = target;
  let list: EdgeList | undefined;
  try {
    list = await edgeLists.refresh(
      connection.sharedKey,
      connection.api,
      { signal: ctx.signal },
      reuseOf(target),
    );
  } catch (error) {
    if (CHECK_FAILURES.some((code) => hasNsxCode(error, code))) throw error;
  }
  return { state: edgeLists.latest(connection.sharedKey), own: list?.fetchedFor === connection.key };
}

/** The manager's UUID as its pools or edges report it, kept (and compared) as status shows it. */
function reportedUuid(
  pools: readonly { vsmUuid?: string | undefined }[] | undefined,
  edgeList: EdgeListState | undefined,
): string | undefined {
  const summaries = edgeList?.list?.byId.values() ?? [];
  const vsmUuid = [...(pools ?? []), ...summaries].find((o) => o.vsmUuid !== undefined)?.vsmUuid;
  return vsmUuid === undefined ? undefined : managerValue(vsmUuid);
}

/**
 * `EdgeListUnavailable=True` while the manager's edge list cannot be used (refused, or past what
 * one list may cost): the manager is still Ready, and its EdgeTenants read their edges one by one.
 */
function edgeListCondition(edgeList: EdgeListState | undefined): ConditionUpdate {
  if (edgeList?.error === undefined) return { type: "EdgeListUnavailable", remove: true };
  const message = `the edge list failed: ${edgeList.error}; its EdgeTenants read their edges one by one until it works (tried again at every check)`;
  return { type: "EdgeListUnavailable", status: "True", reason: "EdgeListUnavailable", message };
}

/**
 * What a failed check tells of the manager. A failure before any call tells nothing of the
 * manager, but one that leaves no credentials to send (a spec or a Secret that cannot be used,
 * a Secret not bound to the manager) takes back `authenticated`: whatever was accepted before
 * is not what the operator holds now, and authority (authority.ts) goes with it. A check that
 * got no answer before its last observation expired (ObservationExpiredError) found it
 * unreachable, as a timeout does: its dependents stop calling it.
 */
export function managerFacts(error: unknown): Pick<NSXManagerStatus, "reachable" | "authenticated"> {
  if (error instanceof ReconcileError && CREDENTIALS_UNUSABLE.has(error.reason))
    return { authenticated: undefined };
  if (
    hasNsxCode(error, "NSX_ERR_CONNECTION") ||
    hasNsxCode(error, "NSX_ERR_UNAVAILABLE") ||
    error instanceof ObservationExpiredError
  )
    return { reachable: false };
  if (hasNsxCode(error, "NSX_ERR_UNAUTHORIZED")) return { reachable: true, authenticated: false };
  // any other answer (403 included): the credentials were accepted
  if (error instanceof NsxError) return { reachable: true, authenticated: true };
  return {};
}

/**
 * The NSXManager's dependents (those being deleted too: a pending restore) when its Ready changes
 * with this pass: down, they say at once that it cannot be used (ManagerNotReady, Ready Unknown);
 * back, they observe again at once rather than at their next retry. Not on its first check: its
 * dependents are as new to the operator, and queued by their own arrival.
 */
export function dependentsOnReadyChange(
  manager: NSXManager,
  status: NSXManagerStatus | undefined,
  state: ReconcilerState,
): ObjectRef[] {
  const before = findCondition(manager.status?.conditions, "Ready");
  const after = findCondition((status ?? manager.status)?.conditions, "Ready");
  if (before === undefined || (before.status === "True") === (after?.status === "True")) return [];
  return state.dependentsOf(manager).map(refOf);
}

/**
 * An NSXManager's check whose credentials the manager refused does not send the same ones again
 * before the refusal's retry time: it reads its Secret (a fresh read, every secretPollMs) and asks
 * the manager at once when the credentials changed (a rotation), else waits. Undefined: check now.
 */
export async function refusedCredentialsWaitMs(
  manager: NSXManager,
  state: ReconcilerState,
  nowMs: number,
): Promise<number | undefined> {
  const refusal = state.of(MANAGER_STATE).refusalOf(refOf(manager));
  if (refusal === undefined || nowMs >= refusal.retryAtMs) return undefined;
  let clientKey: string;
  try {
    clientKey = (await state.connect(manager, { fresh: true })).key;
  } catch {
    return undefined; // the Secret went or is unusable now: the check says so
  }
  if (clientKey !== refusal.clientKey) return undefined;
  return Math.min(REFUSED_CREDENTIALS.secretPollMs, refusal.retryAtMs - nowMs);
}

/**
 * What a check tells of its credentials: refused by the manager (401), by the client that sent
 * them; then the check comes back within secretPollMs to read the Secret again. Or accepted.
 */
export function recordCredentials(
  manager: NSXManager,
  error: unknown,
  state: ReconcilerState,
  nowMs: number,
): number | undefined {
  const ref = refOf(manager);
  if (!hasNsxCode(error, "NSX_ERR_UNAUTHORIZED")) {
    if (error === undefined) state.of(MANAGER_STATE).credentialsChecked(ref, undefined, nowMs);
    return undefined;
  }
  const client = state.connections.held(ref.namespace, ref.name);
  if (client !== undefined) state.of(MANAGER_STATE).credentialsChecked(ref, client.key, nowMs);
  return REFUSED_CREDENTIALS.secretPollMs;
}

/** An NSXManager holds every Secret it reads (credentials, CA) against deletion: a restore can read them. */
export function holdsItsSecrets(manager: NSXManager): boolean {
  const held = manager.status?.heldSecrets ?? [];
  return secretNamesOf(manager).every((name) => held.includes(name));
}

/**
 * Which Secrets this NSXManager holds against deletion, and the finalizer changes that makes: a
 * Secret it reads is held while an EdgeTenant that names it remembers an original to write back
 * (it holds the restore finalizer and status.originalTenant), so that deleting a namespace or
 * pruning files leaves the Secret until the restore is done, whichever replica does it after
 * whatever restart. A Secret is released once no NSXManager of its namespace that reads it needs
 * it (two may share one); one it no longer reads (its spec moved) is looked up from the status's
 * `heldSecrets`. A Secret that cannot be read now keeps what it had.
 */
export async function secretHolds(
  manager: NSXManager,
  state: ReconcilerState,
): Promise<{ held: string[]; changes: SecretFinalizerChange[] }> {
  const { namespace } = refOf(manager);
  const reads = secretNamesOf(manager);
  const before = manager.status?.heldSecrets ?? [];
  const held: string[] = [];
  const changes: SecretFinalizerChange[] = [];
  for (const name of [...new Set([...reads, ...before])].sort()) {
    const mine = reads.includes(name) && restoresPending(manager, state);
    let secret;
    try {
      secret = await state.store.getSecret(namespace, name);
    } catch {
      if (before.includes(name) && reads.includes(name)) held.push(name);
      continue;
    }
    if (secret === undefined) continue;
    const wanted = mine || neededByAnother(manager, name, state);
    const present = (secret.metadata.finalizers ?? []).includes(IN_USE_FINALIZER);
    if (wanted !== present) changes.push({ namespace, name, present: wanted });
    if (mine) held.push(name);
  }
  return { held, changes };
}

/** An EdgeTenant that names this manager remembers an original tenant to write back on delete. */
function restoresPending(manager: NSXManager, state: ReconcilerState): boolean {
  return state
    .dependentsOf(manager)
    .some(
      (o) =>
        o.kind === "EdgeTenant" &&
        o.status?.originalTenant !== undefined &&
        (o.metadata.finalizers ?? []).includes(RESTORE_FINALIZER),
    );
}

/** Another NSXManager of the namespace reads the Secret and has restores pending: it stays held. */
function neededByAnother(manager: NSXManager, secretName: string, state: ReconcilerState): boolean {
  const { namespace, name } = refOf(manager);
  return state.store
    .list("NSXManager")
    .some(
      (other): other is NSXManager =>
        other.kind === "NSXManager" &&
        refOf(other).namespace === namespace &&
        other.metadata.name !== name &&
        secretNamesOf(other).includes(secretName) &&
        restoresPending(other, state),
    );
}

/** Check failures that leave the operator no credentials it may send to the manager. */
const CREDENTIALS_UNUSABLE: ReadonlySet<string> = new Set([
  "InvalidSpec",
  "ManagerNotReady",
  "CredentialsNotBound",
] satisfies FailureReason[]);

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

/** What deleting an NSXManager found: the objects that still name it, and its check while they do. */
interface ReleaseTarget {
  dependents: string[];
  check: ManagerTarget | undefined;
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
    if (dependents.length === 0) return { dependents, check: undefined };
    return { dependents, check: await nsxManagerPass.prepare(ctx) };
  },
  observe: (target, ctx, depth) =>
    target.check === undefined
      ? Promise.resolve(undefined)
      : nsxManagerPass.observe(target.check, ctx, depth),
  plan(target, observed, ctx) {
    if (target.check === undefined || observed === undefined)
      return { actions: [], withheld: [], settle: () => ({ events: [], finalized: true }) };
    const checked = nsxManagerPass.plan(target.check, observed, ctx);
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
