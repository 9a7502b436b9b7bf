/**
 * The NSXManager handler: the manager's own check. It builds the client from the spec and the
 * Secrets and lists the pools of the global scope (a fresh list, which the dependents then
 * share): reachable and authenticated, or why not. Ready is the outcome of the check itself.
 * A connection open to its network path (plain http:// to another machine, or no certificate
 * verification) is said on every pass, checked or not: `Insecure=True`, and a Warning event when
 * that starts or its reason changes.
 */
import { DEFAULTS, type NSXManager, type NSXManagerStatus } from "../api/types.ts";
import { insecureTransport } from "../nsx/client-options.ts";
import { NsxError } from "../nsx/errors.ts";
import type { IpPool } from "../nsx/types.ts";
import {
  findCondition,
  setConditions,
  syncedUpdates,
  type ConditionUpdate,
  type InsecureReason,
  type ReconcileEvent,
} from "./conditions.ts";
import { hasNsxCode, ReconcileError } from "./errors.ts";
import { failedDraft, type Draft } from "./report.ts";
import { resolveManager } from "./spec.ts";
import type { Pass, ReconcilerState } from "./state.ts";

export async function reconcileNsxManager(pass: Pass<NSXManager>, state: ReconcilerState): Promise<Draft> {
  const config = resolveManager(pass.object);
  const previous = pass.object.status;
  const { update: insecure, events } = insecureOutcome(config, previous?.conditions);
  let pools: readonly IpPool[];
  try {
    const connection = await state.connect(pass.object);
    pools = await state.refreshPoolList(connection, DEFAULTS.poolScope);
  } catch (thrown) {
    const error = ReconcileError.from(thrown);
    const conditions = setConditions(previous?.conditions, [insecure], pass.context);
    const base = { ...previous, ...managerFacts(thrown), conditions };
    const ready = { type: "Ready", status: "False", reason: error.reason, message: error.message } as const;
    const draft = failedDraft(pass, error, { base, ready, resyncMs: state.resync(undefined) });
    return { ...draft, events: [...events, ...(draft.events ?? [])] };
  }
  const count = `${pools.length} pool${pools.length === 1 ? "" : "s"}`;
  const conditions = setConditions(
    previous?.conditions,
    [
      {
        type: "Ready",
        status: "True",
        reason: "Available",
        message: `reachable and authenticated: ${count} in ${DEFAULTS.poolScope}`,
      },
      ...syncedUpdates(pass.hold),
      insecure,
    ],
    pass.context,
  );
  const status: NSXManagerStatus = {
    observedGeneration: pass.context.generation,
    reachable: true,
    authenticated: true,
    conditions,
  };
  return { status, events, outcome: { type: "done", requeueAfterMs: state.resync(undefined) } };
}

const INSECURE_REASON_BY_KIND = {
  insecureSkipVerify: "InsecureSkipVerify",
  plainHttp: "PlainHTTP",
} as const satisfies Record<string, InsecureReason>;

/**
 * `Insecure=True` with why (or its removal), and a Warning event when the connection becomes
 * insecure, or insecure for another reason, than the previous status said.
 */
function insecureOutcome(
  config: { url: string; insecureSkipVerify: boolean },
  previous: NSXManagerStatus["conditions"],
): { update: ConditionUpdate; events: ReconcileEvent[] } {
  const risk = insecureTransport(config);
  if (risk === undefined) return { update: { type: "Insecure", remove: true }, events: [] };
  const said = { reason: INSECURE_REASON_BY_KIND[risk.kind], message: risk.message };
  const events: ReconcileEvent[] =
    findCondition(previous, "Insecure")?.reason === said.reason ? [] : [{ type: "Warning", ...said }];
  return { update: { type: "Insecure", status: "True", ...said }, events };
}

/** What a failed check tells of the manager; a failure before any call (a Secret) tells nothing. */
function managerFacts(error: unknown): Pick<NSXManagerStatus, "reachable" | "authenticated"> {
  if (hasNsxCode(error, "NSX_ERR_CONNECTION") || hasNsxCode(error, "NSX_ERR_UNAVAILABLE"))
    return { reachable: false };
  if (hasNsxCode(error, "NSX_ERR_UNAUTHORIZED")) return { reachable: true, authenticated: false };
  // any other answer (403 included): the credentials were accepted
  if (error instanceof NsxError) return { reachable: true, authenticated: true };
  return {};
}
