/** core/v1 Events through client-node: the EventSink of an operator that runs against a cluster. */
import type { CoreV1Api, CoreV1Event } from "@kubernetes/client-node";
import { ApiException, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { EventBody, EventChange, EventSink } from "../controller/events.ts";
import { decodeApiError } from "./errors.ts";

export type EventApi = Pick<CoreV1Api, "createNamespacedEvent" | "patchNamespacedEvent">;

/** core/v1 Events through client-node: create, and merge-patch of count/lastTimestamp/message. */
export class KubernetesEventSink implements EventSink {
  readonly #api: EventApi;

  constructor(options: { api: EventApi }) {
    this.#api = options.api;
  }

  async create(event: EventBody): Promise<string> {
    const body: CoreV1Event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { generateName: `${event.involvedObject.name}.`, namespace: event.namespace },
      involvedObject: event.involvedObject,
      type: event.type,
      reason: event.reason,
      message: event.message,
      count: event.count,
      firstTimestamp: new Date(event.firstTimestamp),
      lastTimestamp: new Date(event.lastTimestamp),
      source: event.source,
    };
    const created = await this.#api
      .createNamespacedEvent({ namespace: event.namespace, body })
      .catch((error: unknown) => Promise.reject(decodeApiError(`create Event in ${event.namespace}`, error)));
    return created.metadata.name ?? "";
  }

  async patch(namespace: string, name: string, change: EventChange): Promise<boolean> {
    try {
      await this.#api.patchNamespacedEvent(
        { name, namespace, body: change },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
      return true;
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return false;
      throw decodeApiError(`patch Event ${namespace}/${name}`, error);
    }
  }
}
