/**
 * Leader election over a `coordination.k8s.io/v1` Lease, as client-go's leaderelection package
 * does it (client-node has no helper): acquire when the lease is free or expired, renew every
 * retry period, stop leading when renewal fails for the renew deadline, release on shutdown.
 * Writes carry the observed resourceVersion, so of two replicas racing only one wins (409).
 * The Lease API sits behind `LeaseStore`; `InMemoryLeaseStore` is its fake, `KubernetesLeaseStore`
 * (src/kube/lease-store.ts) the thin adapter to client-node, loaded only by code that talks to a
 * cluster.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { CodedError } from "../util/errors.ts";
import type { Clock } from "../util/clock.ts";
import { realClock, withTimeout } from "../util/clock.ts";
import type { Logger } from "./controller.ts";
import { nopLogger } from "./controller.ts";
import type { RuntimeMetrics } from "./metrics.ts";
import { nopMetrics } from "./metrics.ts";
import { withDefaults } from "../util/options.ts";

export class LeaderElectionError extends CodedError {}

/**
 * The Lease cannot be used at all (no rights, no such namespace): acquiring stops at once with
 * this error instead of retrying what cannot succeed.
 */
export class LeaseUnusableError extends LeaderElectionError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("LEASE_UNUSABLE", message, options);
  }
}

/** Someone else wrote the lease since we read it (HTTP 409), or created it first. */
export class LeaseConflictError extends LeaderElectionError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("LEASE_CONFLICT", message, options);
  }
}

/** The lease fields leader election uses; times in ms since the epoch. */
export interface LeaseSpec {
  /** "" when nobody holds the lease */
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTimeMs: number;
  renewTimeMs: number;
  leaseTransitions: number;
}

export interface LeaseRecord extends LeaseSpec {
  resourceVersion: string;
}

/** One lease. `create` and `update` throw LeaseConflictError when another writer got there first. */
export interface LeaseStore {
  get(): Promise<LeaseRecord | undefined>;
  create(spec: LeaseSpec): Promise<LeaseRecord>;
  update(resourceVersion: string, spec: LeaseSpec): Promise<LeaseRecord>;
}

/** A lease in memory, for tests and for running without a cluster. Share one between electors. */
export class InMemoryLeaseStore implements LeaseStore {
  #record: LeaseRecord | undefined;
  #version = 0;

  get(): Promise<LeaseRecord | undefined> {
    return Promise.resolve(this.#record === undefined ? undefined : { ...this.#record });
  }

  create(spec: LeaseSpec): Promise<LeaseRecord> {
    if (this.#record !== undefined) return Promise.reject(new LeaseConflictError("lease already exists"));
    return Promise.resolve(this.#write(spec));
  }

  update(resourceVersion: string, spec: LeaseSpec): Promise<LeaseRecord> {
    if (this.#record?.resourceVersion !== resourceVersion) {
      return Promise.reject(new LeaseConflictError(`lease changed since resourceVersion ${resourceVersion}`));
    }
    return Promise.resolve(this.#write(spec));
  }

  #write(spec: LeaseSpec): LeaseRecord {
    this.#record = { ...spec, resourceVersion: String(++this.#version) };
    return { ...this.#record };
  }
}

export interface LeaderElectorOptions {
  store: LeaseStore;
  /** written into the lease; default `<hostname>_<uuid>`, unique per process */
  identity?: string;
  /** label of leader_election_master_status and of logs; default "nsxv-operator" */
  name?: string;
  /** how long others wait after the last renewal before taking over; default 15000 */
  leaseDurationMs?: number;
  /** the leader stops leading when it has not renewed for this long; default 10000 */
  renewDeadlineMs?: number;
  /** between attempts to acquire or renew; default 2000 */
  retryPeriodMs?: number;
  /** how long releasing the lease on shutdown may take before it is given up; default renewDeadlineMs */
  releaseTimeoutMs?: number;
  /** acquire attempts wait retryPeriodMs * (1 + random * jitterFactor); default 1.2 (client-go) */
  jitterFactor?: number;
  /** default Math.random */
  random?: () => number;
  clock?: Clock;
  metrics?: RuntimeMetrics;
  logger?: Logger;
}

export const LEADER_ELECTION_DEFAULTS = {
  name: "nsxv-operator",
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  jitterFactor: 1.2,
} as const;

export interface LeaderCallbacks {
  /**
   * Called once the lease is won. `signal` aborts when leading must stop; the returned promise
   * (if any) should settle once the work started here has stopped: the lease is renewed until
   * then and released only after.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called when this replica stops leading: lease lost or released. Not called if it never led. */
  onStoppedLeading(): void;
}

export class LeaderElector {
  readonly identity: string;
  readonly #store: LeaseStore;
  readonly #name: string;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #releaseTimeoutMs: number;
  readonly #jitterFactor: number;
  readonly #random: () => number;
  readonly #clock: Clock;
  readonly #metrics: RuntimeMetrics;
  readonly #logger: Logger;
  /** the last record seen, and when (by our clock: the holder's clock may be skewed) it changed */
  #observed: LeaseRecord | undefined;
  #observedAtMs = 0;
  #lastRenewMs = 0;
  #leading = false;

  constructor(options: LeaderElectorOptions) {
    const o = withDefaults(LEADER_ELECTION_DEFAULTS, options);
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.#store = options.store;
    this.#name = o.name;
    this.#leaseDurationMs = o.leaseDurationMs;
    this.#renewDeadlineMs = o.renewDeadlineMs;
    this.#retryPeriodMs = o.retryPeriodMs;
    this.#releaseTimeoutMs = options.releaseTimeoutMs ?? o.renewDeadlineMs;
    this.#jitterFactor = o.jitterFactor;
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? realClock;
    this.#metrics = options.metrics ?? nopMetrics;
    this.#logger = options.logger ?? nopLogger;
    if (this.identity === "") throw new LeaderElectionError("LEASE_INVALID_OPTIONS", "identity is empty");
    if (this.#leaseDurationMs <= this.#renewDeadlineMs) {
      throw new LeaderElectionError("LEASE_INVALID_OPTIONS", "leaseDurationMs must exceed renewDeadlineMs");
    }
    if (this.#renewDeadlineMs <= this.#retryPeriodMs * (1 + this.#jitterFactor)) {
      throw new LeaderElectionError(
        "LEASE_INVALID_OPTIONS",
        "renewDeadlineMs must exceed retryPeriodMs * (1 + jitterFactor)",
      );
    }
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /**
   * Tries to acquire the lease until `signal` aborts; once acquired, leads until the signal
   * aborts (then waits for the work to stop and releases the lease) or the lease is lost
   * (renewal failing for renewDeadlineMs: the process should exit then, as controller-runtime's
   * does, since the work may not have stopped writing). Resolves when it no longer leads and the
   * work started in onStartedLeading has settled.
   */
  async start(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    this.#metrics.leaderStatus(this.#name, false);
    if (!(await this.#acquire(signal))) return;
    this.#setLeading(true);
    this.#logger.info({ lease: this.#name, identity: this.identity }, "acquired lease");
    const leading = new AbortController();
    const workDone = new AbortController();
    const work = (async () => {
      try {
        await callbacks.onStartedLeading(leading.signal);
      } catch (err) {
        this.#logger.error({ lease: this.#name, err }, "leader work failed");
      } finally {
        workDone.abort();
      }
    })();
    const outcome = await this.#lead(signal, leading, workDone.signal);
    if (outcome === "released") await this.#release();
    else this.#logger.error({ lease: this.#name, identity: this.identity }, "lost lease");
    this.#setLeading(false);
    callbacks.onStoppedLeading();
    await work;
  }

  /** Tries until acquired or asked to stop; rejects with LeaseUnusableError when no retry can help. */
  async #acquire(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      if (await this.#attempt(this.#renewDeadlineMs, { unusableIsFatal: true })) {
        if (!signal.aborted) return true;
        // won while being asked to stop: hand the lease back rather than lead for no one
        await this.#release();
        return false;
      }
      const jitter = this.#jitterFactor > 0 ? this.#random() * this.#jitterFactor : 0;
      await this.#clock.sleep(this.#retryPeriodMs * (1 + jitter), signal);
    }
    return false;
  }

  /** Renews until asked to stop and the work settled ("released"), or renewal fails ("lost"). */
  async #lead(
    signal: AbortSignal,
    leading: AbortController,
    workDone: AbortSignal,
  ): Promise<"released" | "lost"> {
    while (!signal.aborted) {
      await this.#clock.sleep(this.#retryPeriodMs, signal);
      if (signal.aborted) break;
      if (!(await this.#renew())) {
        leading.abort(new LeaderElectionError("LEASE_LOST", "lease lost"));
        return "lost";
      }
    }
    // asked to stop: keep the lease while the work winds down, so nobody else starts meanwhile
    leading.abort(signal.reason);
    while (!workDone.aborted) {
      await this.#clock.sleep(this.#retryPeriodMs, workDone);
      if (workDone.aborted) break;
      if (!(await this.#renew())) return "lost";
    }
    return "released";
  }

  /** Retries every retry period until renewed, or until renewDeadlineMs after the last renewal. */
  async #renew(): Promise<boolean> {
    const leftMs = (): number => this.#lastRenewMs + this.#renewDeadlineMs - this.#clock.now();
    while (leftMs() > 0) {
      if (await this.#attempt(leftMs())) return true;
      if (leftMs() > 0) await this.#clock.sleep(Math.min(this.#retryPeriodMs, leftMs()));
    }
    return false;
  }

  /**
   * One tryAcquireOrRenew, given up (not cancelled) after `timeoutMs`: a hung call counts as
   * failed. While acquiring, an unusable Lease rejects instead (`unusableIsFatal`); while
   * leading it counts as a failed renewal like any other.
   */
  #attempt(timeoutMs: number, options: { unusableIsFatal?: boolean } = {}): Promise<boolean> {
    const tried = this.#tryAcquireOrRenew().catch((err: unknown) => {
      if (err instanceof LeaseUnusableError && options.unusableIsFatal === true) throw err;
      if (err instanceof LeaseConflictError) this.#logger.debug({ lease: this.#name }, "lease conflict");
      else {
        const error = err instanceof Error ? err.message : String(err);
        this.#logger.warn({ lease: this.#name, error }, "lease read or write failed");
      }
      return false;
    });
    return withTimeout(this.#clock, tried, timeoutMs, false);
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const current = await this.#store.get();
    const nowMs = this.#clock.now();
    if (current === undefined) {
      const spec = this.#spec(nowMs, nowMs, 0);
      this.#observe(await this.#store.create(spec), nowMs);
      return true;
    }
    if (this.#observed?.resourceVersion !== current.resourceVersion) {
      this.#observed = current;
      this.#observedAtMs = nowMs;
    }
    const ours = current.holderIdentity === this.identity;
    if (!ours && current.holderIdentity !== "") {
      const durationMs =
        current.leaseDurationSeconds > 0 ? current.leaseDurationSeconds * 1000 : this.#leaseDurationMs;
      if (this.#observedAtMs + durationMs > nowMs) return false;
    }
    const spec = ours
      ? this.#spec(current.acquireTimeMs, nowMs, current.leaseTransitions)
      : this.#spec(nowMs, nowMs, current.leaseTransitions + 1);
    this.#observe(await this.#store.update(current.resourceVersion, spec), nowMs);
    return true;
  }

  #spec(acquireTimeMs: number, renewTimeMs: number, leaseTransitions: number): LeaseSpec {
    const leaseDurationSeconds = Math.ceil(this.#leaseDurationMs / 1000);
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds,
      acquireTimeMs,
      renewTimeMs,
      leaseTransitions,
    };
  }

  #observe(record: LeaseRecord, nowMs: number): void {
    this.#observed = record;
    this.#observedAtMs = nowMs;
    this.#lastRenewMs = nowMs;
  }

  /** client-go's ReleaseOnCancel: empty holder, 1 s duration, so a standby takes over at once. */
  async #release(): Promise<void> {
    const observed = this.#observed;
    if (observed === undefined || observed.holderIdentity !== this.identity) return;
    const nowMs = this.#clock.now();
    const spec: LeaseSpec = {
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTimeMs: nowMs,
      renewTimeMs: nowMs,
      leaseTransitions: observed.leaseTransitions,
    };
    const released = this.#store.update(observed.resourceVersion, spec).then(
      (record) => {
        this.#observed = record;
        return true;
      },
      (err: unknown) => {
        this.#logger.warn({ lease: this.#name, err }, "could not release lease");
        return false;
      },
    );
    if (await withTimeout(this.#clock, released, this.#releaseTimeoutMs, false)) {
      this.#logger.info({ lease: this.#name, identity: this.identity }, "released lease");
    }
  }

  #setLeading(leading: boolean): void {
    this.#leading = leading;
    this.#metrics.leaderStatus(this.#name, leading);
  }
}
