/**
 * A hardened list+watch loop for one collection of the Kubernetes API, in place of client-node's
 * informers (which stop for good on most errors in several releases): list (paged), then watch
 * from the list's resourceVersion with bookmarks; on an error restart with jittered backoff
 * (1 s doubling to 3 s while the API server does not answer at all or refuses the request with
 * 401 or 403, as a restarted server does while it loads RBAC; to 30 s while it answers with other
 * errors; or after the Retry-After it sent), the doubling starting over when the kind of failure
 * changes; relist on 410 Gone and every ~10 min; report not-ready while the watch is down. The handler receives the full list after each (re)list and
 * each event after.
 * `kubeListWatchApi` (src/kube/list-watch.ts) is the thin adapter to a cluster (client-node's auth,
 * undici's fetch).
 */
import { CodedError } from "../util/errors.ts";
import type { Clock } from "../util/clock.ts";
import { realClock } from "../util/clock.ts";
import type { Logger } from "./controller.ts";
import { nopLogger } from "./controller.ts";
import { SyncedLatch } from "./synced-latch.ts";
import { withDefaults } from "../util/options.ts";

/** What the loop needs of an object: its identity and version. */
export interface KubeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}

export type WatchErrorCode = "WATCH_GONE" | "WATCH_FAILED";

/**
 * A list or watch failed; `WATCH_GONE` (HTTP 410) means the resourceVersion expired: relist.
 * `status` is undefined when the API server gave no answer (refused, reset, timed out).
 */
export class WatchError extends CodedError {
  declare readonly code: WatchErrorCode;
  readonly status: number | undefined;
  /** how long the server asked to wait (Retry-After of a 429 or 503) */
  readonly retryAfterMs: number | undefined;
  constructor(
    code: WatchErrorCode,
    message: string,
    options: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(code, message, options);
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * What a failure says of the API server: `silent`, no answer (down, restarting); `refused`, 401 or
 * 403 (a restarted server until it has loaded RBAC, or a grant missing until an admin adds it);
 * `error`, any other answer (it is up and may be struggling).
 */
type FailureKind = "silent" | "refused" | "error";

function failureKind(error: unknown): FailureKind {
  const status = error instanceof WatchError ? error.status : undefined;
  if (status === undefined) return "silent";
  return status === 401 || status === 403 ? "refused" : "error";
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface ListPage {
  items: KubeObject[];
  resourceVersion: string;
  /** the continue token of the next page, "" or undefined on the last */
  continue?: string;
}

export interface ListWatchApi {
  list(path: string, query: Query, signal: AbortSignal): Promise<ListPage>;
  /**
   * Opens a watch. Resolves once the server accepted it, with `ended`: resolves when the watch
   * ends normally (server timeout, or `signal` aborted), rejects when it breaks. Rejects at once
   * when it cannot be opened.
   */
  watch(
    path: string,
    query: Query,
    onEvent: (type: string, object: unknown) => void,
    signal: AbortSignal,
  ): Promise<{ ended: Promise<void> }>;
}

export interface WatchHandler {
  /** the complete collection after a (re)list: anything not in it is gone */
  replace(objects: KubeObject[]): void;
  upsert(object: KubeObject): void;
  remove(object: KubeObject): void;
}

export interface ResourceWatchOptions {
  api: ListWatchApi;
  /** the collection, e.g. `/apis/nsxv.io/v1alpha1/namespaces/x/edgetenants` */
  path: string;
  /** names the collection in logs and in readiness messages, e.g. `EdgeTenant` */
  name: string;
  handler: WatchHandler;
  labelSelector?: string;
  /** default 500 */
  pageSize?: number;
  /** first restart delay after an error; doubles per failure; default 1000 */
  minBackoffMs?: number;
  /** cap of the delay while the API server answers with errors (it is up and may be struggling); default 30000 */
  maxBackoffMs?: number;
  /**
   * cap of the delay while the API server gives no answer at all (refused, reset, timed out), or
   * refuses the request with 401 or 403 (a restarted server does until it has loaded its
   * authenticators and RBAC, about a second): an attempt costs such a server nothing, and the
   * watch is back within this long of it (and listed a moment later: within the 5 s docs/cli.md
   * promises, with room for a loaded machine); default 3000
   */
  quickMaxBackoffMs?: number;
  /** relist this often even when the watch is healthy, ±10 %; default 600000 */
  relistIntervalMs?: number;
  /** server-side watch timeout, randomised in [t, 2t) as client-go does; default 300 */
  watchTimeoutSeconds?: number;
  clock?: Clock;
  /** [0, 1); default Math.random */
  random?: () => number;
  logger?: Logger;
}

export const WATCH_DEFAULTS = {
  pageSize: 500,
  minBackoffMs: 1000,
  maxBackoffMs: 30_000,
  quickMaxBackoffMs: 3_000,
  relistIntervalMs: 600_000,
  watchTimeoutSeconds: 300,
} as const;

type Settings = Omit<Required<ResourceWatchOptions>, "labelSelector"> & { labelSelector?: string };

export class ResourceWatch {
  readonly name: string;
  readonly #o: Settings;
  #resourceVersion = "";
  readonly #listed = new SyncedLatch();
  /** undefined while healthy; otherwise since when (ms) and why the watch is down */
  #down: { sinceMs: number; why: string } | undefined = { sinceMs: 0, why: "not listed yet" };

  constructor(options: ResourceWatchOptions) {
    this.name = options.name;
    this.#o = withDefaults(
      { ...WATCH_DEFAULTS, clock: realClock, random: Math.random, logger: nopLogger },
      options,
    );
    this.#down = { sinceMs: this.#o.clock.now(), why: "not listed yet" };
  }

  /** the last resourceVersion seen (list, event or bookmark) */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /** undefined while listed and watching; otherwise why not */
  notReady(): string | undefined {
    if (this.#down === undefined) return undefined;
    const forMs = this.#o.clock.now() - this.#down.sinceMs;
    return `${this.name}: ${this.#down.why} (for ${Math.round(forMs / 1000)} s)`;
  }

  /** resolves true after the first complete list, false if `signal` aborts first */
  synced(signal: AbortSignal): Promise<boolean> {
    return this.#listed.wait(signal);
  }

  /** Lists and watches until `signal` aborts; never rejects. */
  async start(signal: AbortSignal): Promise<void> {
    const { clock, logger } = this.#o;
    let needList = true;
    let nextRelistMs = 0;
    /** failures in a row of one kind: another kind starts the doubling over */
    let failures = 0;
    let lastKind: FailureKind | undefined;
    while (!signal.aborted) {
      try {
        if (needList || clock.now() >= nextRelistMs) {
          await this.#list(signal);
          needList = false;
          nextRelistMs = clock.now() + this.#jitter(this.#o.relistIntervalMs, 0.1);
        }
        await this.#watch(signal, nextRelistMs, () => {
          failures = 0;
          lastKind = undefined;
          this.#down = undefined;
        });
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof WatchError && error.code === "WATCH_GONE") {
          // the resourceVersion is too old (compaction, a restarted server): start over from a list
          logger.info(
            { watch: this.name, resourceVersion: this.#resourceVersion },
            "watch expired; relisting",
          );
          needList = true;
          if (failures === 0) {
            failures = 1;
            continue;
          }
        }
        const kind = failureKind(error);
        // a server answering after silence is back: its first errors get the quick retries again
        failures = kind === lastKind ? failures + 1 : 1;
        lastKind = kind;
        const delayMs = this.#backoff(failures, kind, error);
        const why = error instanceof Error ? error.message : String(error);
        // the same failure again is a debug line: quick retries of a missing grant do not flood the log
        const log = this.#down?.why === why ? logger.debug : logger.warn;
        this.#down ??= { sinceMs: clock.now(), why };
        this.#down.why = why;
        log.call(logger, { watch: this.name, error: why, retryInMs: delayMs }, "watch failed; restarting");
        await clock.sleep(delayMs, signal);
      }
    }
  }

  /**
   * The delay after the n-th failure of one kind in a row: what the server asked for (Retry-After,
   * as on the 429 "storage is (re)initializing" right after a restart), plus up to 20 %; else
   * min * 2^(n-1) times a factor in [0.8, 1.2) so that replicas do not restart in step, capped by
   * the kind. Each cap bounds how long a watch stays down after the server is back.
   */
  #backoff(failures: number, kind: FailureKind, error: unknown): number {
    const { minBackoffMs, maxBackoffMs, quickMaxBackoffMs, random } = this.#o;
    const retryAfterMs = error instanceof WatchError ? error.retryAfterMs : undefined;
    if (retryAfterMs !== undefined) {
      return Math.min(maxBackoffMs, Math.round(retryAfterMs * (1 + random() * 0.2)));
    }
    const cap = kind === "error" ? maxBackoffMs : Math.min(maxBackoffMs, quickMaxBackoffMs);
    const base = Math.min(cap, minBackoffMs * 2 ** Math.min(failures - 1, 30));
    return Math.min(cap, this.#jitter(base, 0.2));
  }

  #jitter(value: number, fraction: number): number {
    return Math.round(value * (1 + (this.#o.random() * 2 - 1) * fraction));
  }

  async #list(signal: AbortSignal): Promise<void> {
    const items: KubeObject[] = [];
    let token: string | undefined;
    let resourceVersion: string;
    do {
      const page = await this.#o.api.list(
        this.#o.path,
        { labelSelector: this.#o.labelSelector, limit: this.#o.pageSize, continue: token },
        signal,
      );
      items.push(...page.items);
      resourceVersion = page.resourceVersion;
      token = page.continue === "" ? undefined : page.continue;
    } while (token !== undefined && !signal.aborted);
    if (signal.aborted) return;
    this.#resourceVersion = resourceVersion;
    this.#o.handler.replace(items);
    this.#down = undefined;
    this.#listed.open();
    this.#o.logger.debug({ watch: this.name, objects: items.length, resourceVersion }, "listed");
  }

  /** One watch, until it ends, breaks, `signal` aborts, or the relist is due. */
  async #watch(signal: AbortSignal, untilMs: number, onOpen: () => void): Promise<void> {
    const { clock } = this.#o;
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    const relist = clock.setTimer(untilMs - clock.now(), () => stop.abort());
    let failure: unknown;
    const onEvent = (type: string, object: unknown): void => {
      if (failure !== undefined || stop.signal.aborted) return;
      try {
        this.#apply(type, object);
      } catch (error) {
        failure = error;
        stop.abort();
      }
    };
    const timeoutSeconds = Math.floor(this.#o.watchTimeoutSeconds * (1 + this.#o.random()));
    try {
      const { ended } = await this.#o.api.watch(
        this.#o.path,
        {
          resourceVersion: this.#resourceVersion,
          allowWatchBookmarks: true,
          labelSelector: this.#o.labelSelector,
          timeoutSeconds,
        },
        onEvent,
        stop.signal,
      );
      onOpen();
      await ended.catch((error: unknown) => {
        if (!stop.signal.aborted) throw error;
      });
    } finally {
      relist.cancel();
      signal.removeEventListener("abort", onAbort);
    }
    if (failure !== undefined) throw failure;
  }

  #apply(type: string, raw: unknown): void {
    if (type === "ERROR") throw watchError(this.#o.path, raw);
    const object = raw as KubeObject;
    if (typeof object?.metadata?.name !== "string" && type !== "BOOKMARK") return;
    const version = object?.metadata?.resourceVersion;
    if (type === "ADDED" || type === "MODIFIED") this.#o.handler.upsert(object);
    else if (type === "DELETED") this.#o.handler.remove(object);
    else if (type !== "BOOKMARK") return;
    if (typeof version === "string" && version !== "") this.#resourceVersion = version;
  }
}

/** A watch's ERROR event (a Status) as the error it ends the watch with: 410 Gone asks for a new list. */
function watchError(path: string, raw: unknown): WatchError {
  const status = (raw ?? {}) as { code?: number; message?: string; reason?: string };
  const message = `watch ${path}: ${status.code ?? "?"} ${status.reason ?? ""} ${status.message ?? ""}`;
  return new WatchError(status.code === 410 ? "WATCH_GONE" : "WATCH_FAILED", message.trim(), {
    status: status.code,
  });
}
