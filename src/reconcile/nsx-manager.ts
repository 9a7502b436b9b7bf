/**
 * The NSXManager handler: the manager's own check. It builds the client from the spec and the
 * Secrets and lists the pools of the global scope (a fresh list, which the dependents then
 * share): reachable and authenticated, or why not. Ready is the outcome of the check itself.
 */
import { DEFAULTS, type NSXManager, type NSXManagerStatus } from "../api/types.ts";
import { NsxError } from "../nsx/errors.ts";
import type { IpPool } from "../nsx/types.ts";
import { setConditions, syncedUpdates } from "./conditions.ts";
import { hasNsxCode, ReconcileError } from "./errors.ts";
import { failedDraft, type Draft } from "./report.ts";
import { resolveManager } from "./spec.ts";
import type { Pass, ReconcilerState } from "./state.ts";

export async function reconcileNsxManager(pass: Pass<NSXManager>, state: ReconcilerState): Promise<Draft> {
  resolveManager(pass.object);
  const previous = pass.object.status;
  let pools: readonly IpPool[];
  try {
    const connection = await state.connect(pass.object);
    pools = await state.refreshPoolList(connection, DEFAULTS.poolScope);
  } catch (thrown) {
    const error = ReconcileError.from(thrown);
    const base = { ...previous, ...managerFacts(thrown) };
    const ready = { type: "Ready", status: "False", reason: error.reason, message: error.message } as const;
    return failedDraft(pass, error, { base, ready, resyncMs: state.resync(undefined) });
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
    ],
    pass.context,
  );
  const status: NSXManagerStatus = {
    observedGeneration: pass.context.generation,
    reachable: true,
    authenticated: true,
    conditions,
  };
  return { status, outcome: { type: "done", requeueAfterMs: state.resync(undefined) } };
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
