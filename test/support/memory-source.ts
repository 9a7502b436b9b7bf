/**
 * A desired-state source over a memory store, for driving the real Operator without a cluster and
 * without files (the operator tests, the benchmarks): the objects are given in code, status is
 * kept in the store, and `change(object)` replaces an object and tells the operator, as a watch
 * event would. By default every status write and Event is kept for a test to read, and status
 * writes can be answered otherwise (`answers`); benchmarks, whose memory is measured, pass
 * `record: false`.
 */
import type { ObjectRef } from "../../src/api/refs.ts";
import { refOf } from "../../src/api/refs.ts";
import type { NsxvObject, Secret } from "../../src/api/types.ts";
import {
  MemoryEventSink,
  nopRecorder,
  SinkEventRecorder,
  type EventRecorder,
} from "../../src/controller/events.ts";
import { memoryStore, type MemoryStore } from "../../src/reconcile/store.ts";
import {
  ChangeListeners,
  type ChangeListener,
  type DesiredStateSource,
  type Status,
  type StatusWriteOutcome,
} from "../../src/source/source.ts";

export interface MemorySourceInit {
  objects: readonly NsxvObject[];
  secrets: readonly Secret[];
  /** keep every status write and Event (default true) */
  record?: boolean;
}

export class MemorySource implements DesiredStateSource {
  readonly store: MemoryStore;
  /** the Events recorded */
  readonly sink = new MemoryEventSink();
  readonly events: EventRecorder & { flush(): Promise<void> };
  /** every status write asked for, in order */
  readonly writes: { ref: ObjectRef; status: Status }[] = [];
  /** how the next status writes are answered, in order; then "written" */
  readonly answers: StatusWriteOutcome[] = [];
  /** what notReady() says: undefined while the source is ready */
  ready: string | undefined = undefined;
  readonly #record: boolean;
  readonly #listeners = new ChangeListeners();

  constructor(init: MemorySourceInit) {
    this.store = memoryStore(init);
    this.#record = init.record ?? true;
    this.events = this.#record
      ? new SinkEventRecorder({ sink: this.sink, host: "test" })
      : { ...nopRecorder, flush: () => Promise.resolve() };
  }

  start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }

  synced(): Promise<boolean> {
    return Promise.resolve(true);
  }

  notReady(): string | undefined {
    return this.ready;
  }

  subscribe(listener: ChangeListener): () => void {
    return this.#listeners.subscribe(listener);
  }

  writeStatus(ref: ObjectRef, status: Status): Promise<StatusWriteOutcome> {
    if (this.#record) this.writes.push({ ref, status });
    const answer = this.answers.shift() ?? "written";
    if (answer !== "written") return Promise.resolve(answer);
    const object = this.#get(ref);
    if (object === undefined) return Promise.resolve("gone");
    this.store.put({ ...object, status } as NsxvObject);
    return Promise.resolve("written");
  }

  setFinalizer(ref: ObjectRef, finalizer: string, present: boolean): Promise<StatusWriteOutcome> {
    const object = this.#get(ref);
    if (object === undefined) return Promise.resolve("gone");
    const others = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    const metadata = { ...object.metadata, finalizers: present ? [...others, finalizer] : others };
    this.store.put({ ...object, metadata } as NsxvObject);
    return Promise.resolve("written");
  }

  /** Replaces the object's spec and metadata (its status stays) and queues it, as a watch event would. */
  change(object: NsxvObject): void {
    const before = this.#get(refOf(object));
    const after = (
      before?.status !== undefined ? { ...object, status: before.status } : object
    ) as NsxvObject;
    this.store.put(after);
    this.#listeners.emit({ type: "object", before, after });
  }

  statusOf(ref: ObjectRef): Status | undefined {
    return this.#get(ref)?.status;
  }

  /** the memory store answers at once */
  #get(ref: ObjectRef): NsxvObject | undefined {
    return this.store.get(ref) as NsxvObject | undefined;
  }
}
