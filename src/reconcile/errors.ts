/**
 * The reconciler's one error type, and the one place that turns any thrown value into it: our
 * own errors as they are, the manager client's by their code (a table, `REASON_BY_NSX_CODE`),
 * anything else as a ReconcileError of reason ReconcileError. Messages never carry credentials:
 * the client's errors are built from method, path and what the manager said, ours from object
 * names and spec fields.
 */
import type { ObjectRef } from "../api/refs.ts";
import { NsxError, type NsxErrorCode } from "../nsx/errors.ts";
import { formatTime } from "../util/clock.ts";
import { CodedError } from "../util/errors.ts";
import type { FailureReason } from "./conditions.ts";

/** A reconcile failed for a reason of the closed list. */
export class ReconcileError extends CodedError {
  readonly reason: FailureReason;
  /** only a change of the object can fix it: not retried until the object changes */
  readonly terminal: boolean;
  /** a Conflict's owner: the object that acts on the edge or pool this one names */
  readonly owner: ObjectRef | undefined;

  constructor(init: {
    reason: FailureReason;
    message: string;
    terminal?: boolean;
    cause?: unknown;
    owner?: ObjectRef;
  }) {
    // stable: `RECONCILE_` + the reason in upper snake case, e.g. `RECONCILE_INVALID_SPEC`
    super(`RECONCILE_${init.reason.replace(/(?<=[a-z])(?=[A-Z])/g, "_").toUpperCase()}`, init.message, init);
    this.reason = init.reason;
    this.terminal = init.terminal ?? false;
    this.owner = init.owner;
  }

  /** Bad spec that the CRD should have refused: terminal. */
  static invalidSpec(message: string, cause?: unknown): ReconcileError {
    return new ReconcileError({ reason: "InvalidSpec", message, terminal: true, cause });
  }

  /** Any thrown value as a ReconcileError. Calls that know better (a 404 on an edge read) wrap first. */
  static from(error: unknown): ReconcileError {
    if (error instanceof ReconcileError) return error;
    if (error instanceof NsxError) {
      const { reason, says } = REASON_BY_NSX_CODE[error.code];
      const message = says === undefined ? error.message : `${says}: ${error.message}`;
      return new ReconcileError({ reason, message, cause: error });
    }
    const message =
      error instanceof Error ? `${error.name}: ${error.message}` : `unexpected failure: ${String(error)}`;
    return new ReconcileError({ reason: "ReconcileError", message, cause: error });
  }
}

/**
 * What each answer of the manager means for the object, and what a person reads first. A reason
 * says why (what to fix), never which call failed: a 503 needs the same fix on a GET as on a PUT.
 */
const REASON_BY_NSX_CODE: Readonly<Record<NsxErrorCode, { reason: FailureReason; says?: string }>> = {
  NSX_ERR_UNAUTHORIZED: { reason: "Unauthorized", says: "the manager refused the credentials" },
  NSX_ERR_FORBIDDEN: { reason: "Unauthorized", says: "the user lacks the rights" },
  NSX_ERR_UNAVAILABLE: { reason: "Unreachable" },
  NSX_ERR_CONNECTION: { reason: "Unreachable" },
  NSX_ERR_CONFLICT: { reason: "ConcurrentModification" },
  NSX_ERR_NOT_FOUND: { reason: "ReconcileError" },
  NSX_ERR_NOT_ALLOCATED: { reason: "ReconcileError" },
  NSX_ERR_POOL_EXHAUSTED: { reason: "ReconcileError" },
  NSX_ERR_BAD_REQUEST: { reason: "ReconcileError" },
  NSX_ERR_SERVER: { reason: "ReconcileError" },
  NSX_ERR_BAD_RESPONSE: { reason: "ReconcileError" },
  NSX_ERR_BAD_DOCUMENT: { reason: "ReconcileError" },
};

/** True when the manager client's error carries this code. */
export function hasNsxCode(error: unknown, code: NsxErrorCode): error is NsxError {
  return error instanceof NsxError && error.code === code;
}

/**
 * The manager did not answer a pass's observation before Ready's last observation expired: the
 * manager cannot be asked now (an NSXManager's check records it as unreachable).
 */
export class ObservationExpiredError extends ReconcileError {
  constructor(message: string) {
    super({ reason: "Unreachable", message });
  }
}

/** The ObservationExpiredError of a pass that waited until `byMs`. */
export function observationExpired(ctx: { now: Date }, byMs: number): ObservationExpiredError {
  const waited = Math.max(0, Math.round((byMs - ctx.now.getTime()) / 1000));
  return new ObservationExpiredError(
    `the manager did not answer within ${waited} s, and Ready's last observation expired at ${formatTime(byMs)}`,
  );
}

/** A write the manager kept answering 409, each time after a fresh read. */
export function retriesExhausted(what: string, attempts: number, cause: unknown): ReconcileError {
  const message = `${what}: the manager answered 409 (concurrent modification) ${attempts} times, each after a fresh read; giving up for this pass`;
  return new ReconcileError({ reason: "ConcurrentModification", message, cause });
}
