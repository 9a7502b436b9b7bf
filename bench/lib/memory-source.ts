/**
 * A desired-state source over a memoryStore, for driving the real Operator without a cluster and
 * without files: the objects are given in code, status is kept in the store, events are dropped.
 * `change(object)` replaces an object and tells the operator, as a watch event would.
 */
import type { NsxvObject, Secret } from "../../src/api/types.ts";
import { nopRecorder, type EventRecorder } from "../../src/controller/events.ts";
import {
  ChangeListeners,
  type DesiredStateSource,
  type ChangeListener,
  type Status,
  type StatusWriteOutcome,
} from "../../src/source/source.ts";
import { memoryStore, type MemoryStore } from "../../src/reconcile/index.ts";
import { refOf, type ObjectRef } from "../../src/api/refs.ts";

export class MemorySource implements DesiredStateSource {
  readonly store: MemoryStore;
  readonly events: EventRecorder = nopRecorder;
  readonly #listeners = new ChangeListeners();

  constructor(init: { objects: readonly NsxvObject[]; secrets: readonly Secret[] }) {
    this.store = memoryStore(init);
  }

  async start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }

  synced(): Promise<boolean> {
    return Promise.resolve(true);
  }

  notReady(): string | undefined {
    return undefined;
  }

  subscribe(listener: ChangeListener): () => void {
    return this.#listeners.subscribe(listener);
  }

  async writeStatus(ref: ObjectRef, status: Status): Promise<StatusWriteOutcome> {
    const object = await this.store.get(ref);
    if (object === undefined) return "gone";
    this.store.put({ ...object, status } as NsxvObject);
    return "written";
  }

  async setFinalizer(ref: ObjectRef, finalizer: string, present: boolean): Promise<StatusWriteOutcome> {
    const object = await this.store.get(ref);
    if (object === undefined) return "gone";
    const others = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    const metadata = { ...object.metadata, finalizers: present ? [...others, finalizer] : others };
    this.store.put({ ...object, metadata } as NsxvObject);
    return "written";
  }

  /** Replaces the object's spec and metadata (keeping its status) and queues it, as a watch event would. */
  async change(object: NsxvObject): Promise<void> {
    const before = await this.store.get(refOf(object));
    const status = before?.status;
    const after = { ...object, ...(status !== undefined ? { status } : {}) } as NsxvObject;
    this.store.put(after);
    this.#listeners.emit({ type: "object", before, after });
  }
}
