/**
 * The NSXManager kind, one pass of the common contract (reconcile/kind.ts) with nothing to act on:
 * the manager's own check. It builds the client from the spec and the Secrets, and runs the part
 * of each dependent kind (reconcile/manager-check.ts, from the registry) for the objects of that
 * kind that name the manager: what they observe from is read with the check's connection (the
 * edge list for EdgeTenants, the pools of the global scope for IPPoolAllocations); when no part's
 * read answered, the part that can answers the check (the pools): reachable and authenticated, or
 * why not. Ready is the outcome of the check itself (`readyFollowsFailure` in its module,
 * kind.ts), and a failed check says what it learnt (`managerFacts`). A connection open to its
 * network path (plain http:// to another machine, or no certificate verification) is said on
 * every pass, checked or not (`insecureConditions`): `Insecure=True`, and a Warning event when
 * that starts or its reason changes.
 */
import {
  IN_USE_FINALIZER,
  type DependentObject,
  type NSXManager,
  type NSXManagerStatus,
} from "../../api/types.ts";
import { insecureTransport } from "../../nsx/client-options.ts";
import { NsxError } from "../../nsx/errors.ts";
import {
  findCondition,
  setConditions,
  syncedUpdates,
  type ConditionUpdate,
  type FailureReason,
  type InsecureReason,
  type ReconcileEvent,
} from "../conditions.ts";
import { formatRef, refOf, type ObjectRef } from "../../api/refs.ts";
import { hasNsxCode, ObservationExpiredError, ReconcileError } from "../errors.ts";
import type { PassHandler } from "../kind.ts";
import type { ManagerCheck, ManagerCheckPart, PartObservation } from "../manager-check.ts";
import type { SecretFinalizerChange } from "../report.ts";
import type { ReconcilerState } from "../state.ts";
import { secretNamesOf } from "../routing.ts";
import { omitUndefined } from "../../util/options.ts";
import { resolveManager } from "../spec.ts";
import { MANAGER_STATE, REFUSED_CREDENTIALS } from "./state.ts";

/** What the check saw: each dependent kind's part (in the registry's order), and the UUID the manager reports. */
export interface ManagerObservation {
  parts: PartObservation[];
  vsmUuid: string | undefined;
}

/** The manager's pass: its client, the objects that name it, and when to come back. */
export interface ManagerTarget extends ManagerCheck {
  dependents: DependentObject[];
}

/** An NSXManager's passes plan no action: one that reaches execute is a bug. */
function noActions(action: never): Promise<never> {
  return Promise.reject(new Error(`an NSXManager has no actions: ${String(action)}`));
}

/**
 * The NSXManager's passes over the dependent kinds' parts of its check (`parts`: the registry's,
 * kinds.ts): the check of a live object, and the release pass of a deleting one.
 */
export function managerPasses(parts: readonly ManagerCheckPart[]): {
  check: PassHandler<NSXManager, ManagerTarget, ManagerObservation, never>;
  release: PassHandler<NSXManager, ReleaseTarget, ManagerObservation | undefined, never>;
} {
  const check = checkPass(parts);
  return { check, release: releasePass(check) };
}

function checkPass(
  parts: readonly ManagerCheckPart[],
): PassHandler<NSXManager, ManagerTarget, ManagerObservation, never> {
  return {
    async prepare(ctx) {
      resolveManager(ctx.object);
      const dependents = ctx.state.dependentsOf(ctx.object);
      for (const part of parts) part.prepare?.(ofKind(dependents, part), ctx);
      const resyncMs = ctx.state.resync(ctx.state.checkIntervalMs(ctx.object));
      // the manager's own check reads its Secrets as they are now: a rotation or a binding counts at once
      const connection = await ctx.state.connect(ctx.object, { fresh: true });
      return { connection, dependents, resyncMs };
    },
    async observe(target, ctx) {
      const read = (part: ManagerCheckPart, asCheck: boolean) =>
        part.observe(ofKind(target.dependents, part), target, ctx, asCheck);
      const seen = await Promise.all(parts.map((part) => read(part, false)));
      // no part's read answered (none of its kinds names it, or the list read was another's): a part's read is the check
      const asCheck = parts.findIndex((part) => part.answersCheck === true);
      const checkPart = parts[asCheck];
      if (!seen.some((part) => part.answered) && checkPart !== undefined)
        seen[asCheck] = await read(checkPart, true);
      return { parts: seen, vsmUuid: seen.find((part) => part.vsmUuid !== undefined)?.vsmUuid };
    },
    plan(target, observed, ctx) {
      const previous = ctx.object.status;
      const verdicts = observed.parts.map((part) => part.verdict(ctx));
      const seen = verdicts.flatMap((v) => v.seen ?? []).join("; ");
      const status = (): NSXManagerStatus =>
        omitUndefined({
          observedGeneration: ctx.generation,
          reachable: true,
          authenticated: true,
          // a manager with no pool reports no UUID: the one it reported before stays
          vsmUuid: observed.vsmUuid ?? previous?.vsmUuid,
          ...Object.assign({}, ...verdicts.map((v) => v.status ?? {})),
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
              ...verdicts.flatMap((v) => v.conditions ?? []),
            ],
            { now: ctx.now, generation: ctx.generation },
          ),
        });
      const events = verdicts.flatMap((v) => v.events ?? []);
      const wake = verdicts.flatMap((v) => v.wake ?? []);
      const alsoObserved = verdicts.find((v) => v.alsoObserved !== undefined)?.alsoObserved;
      return {
        actions: [],
        withheld: [],
        requeueAfterMs: target.resyncMs,
        settle: () => ({
          status: status(),
          events,
          wake,
          ...(alsoObserved === undefined ? {} : { alsoObserved }),
        }),
      };
    },
    execute: noActions,
    rereadOn: {},
    targetOf: () => "",
    describe: () => "",
  };
}

/** The dependents of a part's kind. */
function ofKind(dependents: readonly DependentObject[], part: ManagerCheckPart): DependentObject[] {
  return dependents.filter((o) => o.kind === part.kind);
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

/** An object that names this manager needs its Secrets kept (its kind's part says: an EdgeTenant with a restore pending). */
function restoresPending(manager: NSXManager, state: ReconcilerState): boolean {
  const roles = new Map(state.dependentRoles.map((role) => [role.kind, role]));
  return state.dependentsOf(manager).some((o) => roles.get(o.kind)?.needsSecrets?.(o) === true);
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
function releasePass(
  check: PassHandler<NSXManager, ManagerTarget, ManagerObservation, never>,
): PassHandler<NSXManager, ReleaseTarget, ManagerObservation | undefined, never> {
  return {
    async prepare(ctx) {
      const dependents = ctx.state.dependentsOf(ctx.object).map((o) => formatRef(refOf(o)));
      if (dependents.length === 0) return { dependents, check: undefined };
      return { dependents, check: await check.prepare(ctx) };
    },
    observe: (target, ctx, depth) =>
      target.check === undefined ? Promise.resolve(undefined) : check.observe(target.check, ctx, depth),
    plan(target, observed, ctx) {
      if (target.check === undefined || observed === undefined)
        return { actions: [], withheld: [], settle: () => ({ events: [], finalized: true }) };
      const checked = check.plan(target.check, observed, ctx);
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
}
