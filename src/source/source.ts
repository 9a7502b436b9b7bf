/**
 * The desired-state source: what the operator reads objects from and writes their status to.
 * Two implementations share this interface: the Kubernetes API (kubernetes.ts: watches, `/status`
 * merge patches, Events) and a directory of manifests (directory.ts: files, status in memory and
 * a status file). The operator (src/operator/operator.ts) only sees this interface. A source is a
 * thin adapter: it says what changed (DesiredStateChange), and reconcile/routing.ts decides which
 * objects that concerns.
 */
import type { ObjectRef } from "../api/refs.ts";
import type { NsxvObject } from "../api/types.ts";
import type { EventRecorder } from "../controller/events.ts";
import type { DesiredStateChange, DesiredStateStore } from "../reconcile/store.ts";
import { CodedError } from "../util/errors.ts";

export type Status = NonNullable<NsxvObject["status"]>;

/** How a status write ended; any other failure is thrown. */
export type StatusWriteOutcome =
  /** stored */
  | "written"
  /** the object changed since it was read (HTTP 409): read it again and retry, quietly */
  | "conflict"
  /** the object no longer exists: nothing to do */
  | "gone";

/**
 * The store refused the status as invalid (HTTP 422, or 413: too large), whatever the object's
 * version: writing the same again would be refused again. The message is the store's reason.
 */
export class StatusRefusedError extends CodedError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("STATUS_REFUSED", message, options);
  }
}

export interface StatusSink {
  /**
   * Writes the object's status; `status` is the complete new status (the sink computes any
   * patch). Throws StatusRefusedError when the store refuses that status as invalid.
   */
  writeStatus(ref: ObjectRef, status: Status): Promise<StatusWriteOutcome>;
  /**
   * Adds (`present`) or removes a finalizer of the object: what holds its deletion until the
   * operator has acted on it. Removing the last one of an object being deleted lets it go.
   */
  setFinalizer(ref: ObjectRef, finalizer: string, present: boolean): Promise<StatusWriteOutcome>;
  /**
   * The same for a Secret the operator reads (a manager's, held while a restore may need it): a
   * source whose `store.secretsHoldable` is set has it.
   */
  setSecretFinalizer?(
    namespace: string,
    name: string,
    finalizer: string,
    present: boolean,
  ): Promise<StatusWriteOutcome>;
}

/** Called with each change the source sees: an object came, went or changed; a Secret changed. */
export type ChangeListener = (change: DesiredStateChange) => void;

export interface DesiredStateSource extends StatusSink {
  /** the objects and Secrets as last seen, each object with its latest status */
  readonly store: DesiredStateStore;
  /** where the reconcile's events go (Kubernetes Events, or the log) */
  readonly events: EventRecorder;
  /** Loads and follows the desired state until `signal` aborts; never rejects for a passing failure. */
  start(signal: AbortSignal): Promise<void>;
  /** Resolves true once every object has been loaded once, false if `signal` aborts first. */
  synced(signal: AbortSignal): Promise<boolean>;
  /** undefined while the source is complete and following changes; otherwise why not (`/readyz`). */
  notReady(): string | undefined;
  /** Listens for changes; returns the function that stops listening. */
  subscribe(listener: ChangeListener): () => void;
}

/** Fans listeners out; what both sources use for `subscribe`. */
export class ChangeListeners {
  readonly #listeners = new Set<ChangeListener>();

  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  emit(change: DesiredStateChange): void {
    for (const listener of this.#listeners) listener(change);
  }
}
