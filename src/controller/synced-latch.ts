/**
 * A latch that opens once, when the first complete load is done: what sources and each watch use
 * for `synced(signal)`.
 */
export class SyncedLatch {
  #open = false;
  readonly #waiters = new Set<() => void>();

  get isOpen(): boolean {
    return this.#open;
  }

  /** marks the first load done and wakes every waiter; later calls do nothing */
  open(): void {
    if (this.#open) return;
    this.#open = true;
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  /** resolves true once open, false if `signal` aborts first */
  wait(signal: AbortSignal): Promise<boolean> {
    if (this.#open) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = (): void => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      };
      const onAbort = (): void => {
        this.#waiters.delete(wake);
        resolve(false);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.add(wake);
    });
  }
}
