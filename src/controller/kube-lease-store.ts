/**
 * The Lease of leader election through client-node's CoordinationV1Api: `KubernetesLeaseStore`
 * implements `LeaseStore` (leader-election.ts) and turns a 409 into LeaseConflictError.
 */
import type { CoordinationV1Api, V1Lease, V1LeaseSpec } from "@kubernetes/client-node";
import { ApiException, V1MicroTime } from "@kubernetes/client-node";
import { LeaseConflictError, type LeaseRecord, type LeaseSpec, type LeaseStore } from "./leader-election.ts";

export type LeaseApi = Pick<
  CoordinationV1Api,
  "readNamespacedLease" | "createNamespacedLease" | "replaceNamespacedLease"
>;

function toMs(time: unknown): number {
  // client-node 2.x types MicroTime as a Date but hands back the server's string unparsed
  if (time instanceof Date) return time.getTime();
  if (typeof time === "string") return Date.parse(time);
  return 0;
}

function toRecord(lease: V1Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? "",
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTimeMs: toMs(spec.acquireTime),
    renewTimeMs: toMs(spec.renewTime),
    leaseTransitions: spec.leaseTransitions ?? 0,
    resourceVersion: lease.metadata?.resourceVersion ?? "",
  };
}

function toV1Spec(spec: LeaseSpec): V1LeaseSpec {
  return {
    holderIdentity: spec.holderIdentity,
    leaseDurationSeconds: spec.leaseDurationSeconds,
    acquireTime: new V1MicroTime(spec.acquireTimeMs),
    renewTime: new V1MicroTime(spec.renewTimeMs),
    leaseTransitions: spec.leaseTransitions,
  };
}

function asConflict(error: unknown, what: string): unknown {
  return error instanceof ApiException && error.code === 409
    ? new LeaseConflictError(`${what}: conflict`, { cause: error })
    : error;
}

/** The Lease `namespace/name` through client-node's CoordinationV1Api. */
export class KubernetesLeaseStore implements LeaseStore {
  readonly #api: LeaseApi;
  readonly #namespace: string;
  readonly #name: string;
  /** the last lease read or written: updates keep its labels, annotations and other spec fields */
  #last: V1Lease | undefined;

  constructor(options: { api: LeaseApi; namespace: string; name: string }) {
    this.#api = options.api;
    this.#namespace = options.namespace;
    this.#name = options.name;
  }

  async get(): Promise<LeaseRecord | undefined> {
    try {
      this.#last = await this.#api.readNamespacedLease({ name: this.#name, namespace: this.#namespace });
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw error;
    }
    return toRecord(this.#last);
  }

  async create(spec: LeaseSpec): Promise<LeaseRecord> {
    const body: V1Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: this.#name, namespace: this.#namespace },
      spec: toV1Spec(spec),
    };
    try {
      this.#last = await this.#api.createNamespacedLease({ namespace: this.#namespace, body });
    } catch (error) {
      throw asConflict(error, `create lease ${this.#namespace}/${this.#name}`);
    }
    return toRecord(this.#last);
  }

  async update(resourceVersion: string, spec: LeaseSpec): Promise<LeaseRecord> {
    const last = this.#last;
    const body: V1Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { ...last?.metadata, name: this.#name, namespace: this.#namespace, resourceVersion },
      spec: { ...last?.spec, ...toV1Spec(spec) },
    };
    try {
      this.#last = await this.#api.replaceNamespacedLease({
        name: this.#name,
        namespace: this.#namespace,
        body,
      });
    } catch (error) {
      throw asConflict(error, `update lease ${this.#namespace}/${this.#name}`);
    }
    return toRecord(this.#last);
  }
}
