/**
 * The reconciler's own error class, and the one place that turns any error (the manager
 * client's, ours, a bug) into a Failure: a closed-list reason, a message a person can act on,
 * and whether retrying can help. Messages never carry credentials: the client's errors are built
 * from method, path and what the manager said, ours from object names and spec fields.
 */
import { NsxApiError, NsxError, NsxTransportError } from "../nsx/errors.ts";
import type { FailureReason } from "./conditions.ts";

/** A reconcile failed for a reason of the closed list. */
export class ReconcileError extends Error {
  /** stable: `RECONCILE_` + the reason in upper snake case, e.g. `RECONCILE_INVALID_SPEC` */
  readonly code: string;
  readonly reason: FailureReason;
  /** only a change of the object can fix it: not retried until the object changes */
  readonly terminal: boolean;

  constructor(init: { reason: FailureReason; message: string; terminal?: boolean; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "ReconcileError";
    this.reason = init.reason;
    this.terminal = init.terminal ?? false;
    this.code = `RECONCILE_${init.reason.replace(/(?<=[a-z])(?=[A-Z])/g, "_").toUpperCase()}`;
  }

  /** Bad spec that the CRD should have refused: terminal. */
  static invalidSpec(message: string, cause?: unknown): ReconcileError {
    return new ReconcileError({ reason: "InvalidSpec", message, terminal: true, cause });
  }
}

/** What a failed reconcile reports: one condition reason, one event, one outcome. */
export interface Failure {
  reason: FailureReason;
  message: string;
  terminal: boolean;
}

/** Any thrown value → Failure. Calls that know better (a 404 on a GET edge) wrap first. */
export function toFailure(error: unknown): Failure {
  if (error instanceof ReconcileError) {
    return { reason: error.reason, message: error.message, terminal: error.terminal };
  }
  if (error instanceof NsxApiError && (error.status === 401 || error.status === 403)) {
    const what = error.status === 401 ? "the manager refused the credentials" : "the user lacks the rights";
    return { reason: "Unauthorized", message: `${what}: ${error.message}`, terminal: false };
  }
  if (isUnavailable(error)) return { reason: "Unreachable", message: error.message, terminal: false };
  if (error instanceof NsxError) return { reason: "ReconcileError", message: error.message, terminal: false };
  const message =
    error instanceof Error ? `${error.name}: ${error.message}` : `unexpected failure: ${String(error)}`;
  return { reason: "ReconcileError", message, terminal: false };
}

/** Gateway and availability answers: the manager, or a proxy in front of it, cannot serve now. */
const UNAVAILABLE_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/**
 * No usable answer from the manager: no complete HTTP response (refused, reset, TLS, timeout), or
 * 502/503/504 (a real manager answers 503 "NSX Edge is unreachable"). Retries were the client's.
 */
export function isUnavailable(error: unknown): error is NsxTransportError | NsxApiError {
  return (
    error instanceof NsxTransportError ||
    (error instanceof NsxApiError && UNAVAILABLE_STATUSES.has(error.status))
  );
}

/** The manager's "not found" answers: HTTP 404, errorCode 202, or IPAM's 120054 (pool does not exist). */
export function isNotFound(error: unknown): error is NsxApiError {
  return (
    error instanceof NsxApiError &&
    (error.status === 404 || error.errorCode === "202" || error.errorCode === "120054")
  );
}

/** 409: concurrent modification of the same object; re-read and retry. */
export function isConcurrentModification(error: unknown): error is NsxApiError {
  return error instanceof NsxApiError && error.status === 409;
}
