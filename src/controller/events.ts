/**
 * Kubernetes Events for what the operator changed and for errors a person must act on. The
 * recorder has two methods; a reason is a CamelCase name (the operator passes its closed list,
 * so that an Event and its condition carry one name). Recording never
 * blocks or throws. `SinkEventRecorder` does what client-go's correlator does: identical events
 * (same object, type, reason, message) become one Event whose `count` and `lastTimestamp` are
 * patched, and each object gets a token bucket (burst 25, then 1 per 5 min). Writes go to an
 * `EventSink`: `KubernetesEventSink` (src/kube/event-sink.ts: core/v1 Events through client-node) or
 * `MemoryEventSink`.
 */
import { hostname } from "node:os";
import type { Clock } from "../util/clock.ts";
import { realClock } from "../util/clock.ts";
import { boundText } from "../util/bounded-text.ts";
import { TokenBucket } from "../util/token-bucket.ts";
import type { Logger } from "./controller.ts";
import { nopLogger } from "./controller.ts";
import { withDefaults } from "../util/options.ts";

/** Any Kubernetes-shaped object: the custom resources, or a manifest read from a file. */
export interface EventObject {
  apiVersion?: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export interface EventRecorder {
  normal(obj: EventObject, reason: string, message: string): void;
  warning(obj: EventObject, reason: string, message: string): void;
}

export const nopRecorder: EventRecorder = { normal: () => {}, warning: () => {} };

/** A core/v1 Event as the recorder writes it; timestamps are RFC 3339. */
export interface EventBody {
  namespace: string;
  involvedObject: {
    apiVersion?: string;
    kind: string;
    namespace?: string;
    name: string;
    uid?: string;
    resourceVersion?: string;
  };
  type: "Normal" | "Warning";
  reason: string;
  message: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string; host: string };
}

export interface EventChange {
  count: number;
  lastTimestamp: string;
  message: string;
}

export interface EventSink {
  /** creates the Event (the server picks the name) and returns its name */
  create(event: EventBody): Promise<string>;
  /** false when the Event no longer exists (Events expire, by default after 1 h) */
  patch(namespace: string, name: string, change: EventChange): Promise<boolean>;
}

export interface SinkEventRecorderOptions {
  sink: EventSink;
  /** `source.component`; default "nsxv-operator" */
  component?: string;
  /** `source.host`; default the hostname */
  host?: string;
  /** events per object before the rate limit applies; default 25 (client-go) */
  burst?: number;
  /** after the burst, one event per object per this long; default 300000 (client-go) */
  refillIntervalMs?: number;
  /** distinct events (and objects) remembered for aggregation and rate limits; default 4096 */
  cacheSize?: number;
  /** writes waiting for the sink beyond this are dropped; default 1000 */
  maxPendingWrites?: number;
  /** longest message kept; longer ones are cut, with a marker that says so; default 1024 */
  maxMessageLength?: number;
  clock?: Clock;
  logger?: Logger;
}

export const EVENT_DEFAULTS = {
  component: "nsxv-operator",
  burst: 25,
  refillIntervalMs: 300_000,
  cacheSize: 4096,
  maxPendingWrites: 1000,
  maxMessageLength: 1024,
} as const;

interface Seen {
  count: number;
  firstTimestamp: string;
  /** the Event's name once created */
  name?: string;
}

/** a Map used as an LRU cache: reading moves the entry to the newest end */
function touch<V>(cache: Map<string, V>, key: string, make: () => V, limit: number): V {
  const found = cache.get(key);
  if (found !== undefined) {
    cache.delete(key);
    cache.set(key, found);
    return found;
  }
  const made = make();
  cache.set(key, made);
  if (cache.size > limit) cache.delete(cache.keys().next().value as string);
  return made;
}

export class SinkEventRecorder implements EventRecorder {
  readonly #sink: EventSink;
  readonly #source: { component: string; host: string };
  readonly #burst: number;
  readonly #refillIntervalMs: number;
  readonly #cacheSize: number;
  readonly #maxPendingWrites: number;
  readonly #maxMessageLength: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #seen = new Map<string, Seen>();
  readonly #buckets = new Map<string, TokenBucket>();
  /** writes run one at a time, in order: an aggregated patch never overtakes its create */
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;

  constructor(options: SinkEventRecorderOptions) {
    const o = withDefaults(EVENT_DEFAULTS, options);
    this.#sink = options.sink;
    this.#source = { component: o.component, host: options.host ?? hostname() };
    this.#burst = o.burst;
    this.#refillIntervalMs = o.refillIntervalMs;
    this.#cacheSize = o.cacheSize;
    this.#maxPendingWrites = o.maxPendingWrites;
    this.#maxMessageLength = o.maxMessageLength;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? nopLogger;
  }

  normal(obj: EventObject, reason: string, message: string): void {
    this.#record(obj, "Normal", reason, message);
  }

  warning(obj: EventObject, reason: string, message: string): void {
    this.#record(obj, "Warning", reason, message);
  }

  /** resolves once every write accepted so far is done (for shutdown and tests) */
  flush(): Promise<void> {
    return this.#chain;
  }

  #record(obj: EventObject, type: EventBody["type"], reason: string, text: string): void {
    const message = boundText(text, this.#maxMessageLength);
    const m = obj.metadata;
    const objectKey = JSON.stringify([obj.apiVersion, obj.kind, m.namespace, m.name, m.uid]);
    const nowIso = new Date(this.#clock.now()).toISOString();
    // count every occurrence, even rate-limited ones, so the next write carries the true count
    const seen = touch(
      this.#seen,
      JSON.stringify([objectKey, type, reason, message]),
      () => ({ count: 0, firstTimestamp: nowIso }),
      this.#cacheSize,
    );
    seen.count += 1;
    const bucket = touch(
      this.#buckets,
      objectKey,
      () =>
        new TokenBucket({ burst: this.#burst, refillIntervalMs: this.#refillIntervalMs, clock: this.#clock }),
      this.#cacheSize,
    );
    if (!bucket.tryTake()) {
      this.#logger.debug({ object: objectKey, reason }, "event rate-limited");
      return;
    }
    if (this.#pending >= this.#maxPendingWrites) {
      this.#logger.warn({ object: objectKey, reason }, "event dropped: too many pending writes");
      return;
    }
    const body: EventBody = {
      namespace: m.namespace ?? "default",
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        namespace: m.namespace,
        name: m.name,
        uid: m.uid,
        resourceVersion: m.resourceVersion,
      },
      type,
      reason,
      message,
      count: 0,
      firstTimestamp: seen.firstTimestamp,
      lastTimestamp: nowIso,
      source: this.#source,
    };
    this.#pending += 1;
    this.#chain = this.#chain
      .then(() => this.#write(seen, body))
      .finally(() => {
        this.#pending -= 1;
      });
  }

  async #write(seen: Seen, body: EventBody): Promise<void> {
    const count = seen.count;
    try {
      if (seen.name !== undefined) {
        const change = { count, lastTimestamp: body.lastTimestamp, message: body.message };
        if (await this.#sink.patch(body.namespace, seen.name, change)) return;
      }
      const name = await this.#sink.create({ ...body, count });
      seen.name = name === "" ? undefined : name;
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.#logger.warn(
        { error, reason: body.reason, object: body.involvedObject.name },
        "could not write event",
      );
    }
  }
}

/** Keeps the Events in memory: for tests, and for runs without a cluster. */
export class MemoryEventSink implements EventSink {
  readonly events: (EventBody & { name: string })[] = [];
  #next = 0;

  create(event: EventBody): Promise<string> {
    const name = `${event.involvedObject.name}.${(++this.#next).toString(16)}`;
    this.events.push({ ...event, name });
    return Promise.resolve(name);
  }

  patch(namespace: string, name: string, change: EventChange): Promise<boolean> {
    const event = this.events.find((e) => e.namespace === namespace && e.name === name);
    if (event !== undefined) Object.assign(event, change);
    return Promise.resolve(event !== undefined);
  }
}
