/**
 * What the NSXManager kind keeps across passes (its key in the reconciler's state, state.ts's
 * KindStateKey): the credentials each manager refused, and when they may be sent again.
 */
import { objectKey, type ObjectRef } from "../../api/refs.ts";
import type { KindStateKey } from "../state.ts";

/**
 * Credentials a manager refused (401) are sent again only after 1 s doubling to 60 s (a directory
 * may lock an account that keeps failing), while the Secret is read again this often: a rotated
 * one is tried at once.
 */
export const REFUSED_CREDENTIALS = { retryMinMs: 1_000, retryMaxMs: 60_000, secretPollMs: 2_000 } as const;

/** The client whose credentials a manager refused, and when they may be sent again. */
export interface Refusal {
  clientKey: string;
  failures: number;
  retryAtMs: number;
}

export class ManagerState {
  /** NSXManager key → the credentials its manager refused, while they are not accepted */
  readonly #refusals = new Map<string, Refusal>();

  /**
   * What an NSXManager's check learnt of its credentials: refused (with the client that sent
   * them; the same ones refused again double the wait before they are sent again), or not (a
   * refusal is forgotten).
   */
  credentialsChecked(ref: ObjectRef, refusedBy: string | undefined, nowMs: number): void {
    const key = objectKey(ref);
    if (refusedBy === undefined) {
      this.#refusals.delete(key);
      return;
    }
    const before = this.#refusals.get(key);
    const failures = before?.clientKey === refusedBy ? before.failures + 1 : 1;
    const { retryMinMs, retryMaxMs } = REFUSED_CREDENTIALS;
    const waitMs = Math.min(retryMaxMs, retryMinMs * 2 ** Math.min(failures - 1, 30));
    this.#refusals.set(key, { clientKey: refusedBy, failures, retryAtMs: nowMs + waitMs });
  }

  /** The refusal an NSXManager's credentials met at its last check, if they are not accepted since. */
  refusalOf(ref: ObjectRef): Refusal | undefined {
    return this.#refusals.get(objectKey(ref));
  }

  forget(ref: ObjectRef): void {
    this.#refusals.delete(objectKey(ref));
  }
}

export const MANAGER_STATE: KindStateKey<ManagerState> = {
  kind: "NSXManager",
  defaults: {},
  create: () => new ManagerState(),
  forget: (state, ref) => state.forget(ref),
};
