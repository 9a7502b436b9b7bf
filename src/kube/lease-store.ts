/**
 * The Lease of leader election through client-node's CoordinationV1Api: `KubernetesLeaseStore`
 * implements `LeaseStore` (src/controller/leader-election.ts). A 409 is a LeaseConflictError
 * (someone else wrote first); a 403, or a namespace that does not exist, a LeaseUnusableError: no
 * retry can help, so the operator stops at start with a message that says what to change.
 */
import type { KubeConfig, V1Lease, V1LeaseSpec } from "@kubernetes/client-node";
import { ApiException, CoordinationV1Api, V1MicroTime } from "@kubernetes/client-node";
import { decodeApiError, KubeApiError } from "./errors.ts";
import {
  LeaseConflictError,
  LeaseUnusableError,
  type LeaseRecord,
  type LeaseSpec,
  type LeaseStore,
} from "../controller/leader-election.ts";

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

/** What a failed Lease call means for leader election: a conflict, unusable, or a passing failure. */
function leaseError(error: unknown, what: string, lease: string): unknown {
  if (error instanceof ApiException && error.code === 409) {
    return new LeaseConflictError(`${what}: conflict`, { cause: error });
  }
  const decoded = decodeApiError(`${what} ${lease}`, error);
  if (!(decoded instanceof KubeApiError)) return decoded;
  const namespaceMissing = decoded.status === 404 && decoded.detailsKind === "namespaces";
  if (decoded.status !== 403 && !namespaceMissing) return decoded;
  const fix = namespaceMissing
    ? "create the namespace, or set --leader-election-namespace to one that exists"
    : "grant get, create and update on leases (coordination.k8s.io) there, or set --leader-election-namespace";
  return new LeaseUnusableError(`${decoded.message}; ${fix}`, { cause: decoded });
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

  /** `namespace/name`, as messages name the Lease */
  get #lease(): string {
    return `${this.#namespace}/${this.#name}`;
  }

  async get(): Promise<LeaseRecord | undefined> {
    try {
      this.#last = await this.#api.readNamespacedLease({ name: this.#name, namespace: this.#namespace });
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw leaseError(error, "read lease", this.#lease);
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
      throw leaseError(error, "create lease", this.#lease);
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
      throw leaseError(error, "update lease", this.#lease);
    }
    return toRecord(this.#last);
  }
}

/** The Lease `namespace/name` in the cluster the kubeconfig reaches. */
export function clusterLeaseStore(
  kc: KubeConfig,
  lease: { namespace: string; name: string },
): KubernetesLeaseStore {
  return new KubernetesLeaseStore({ api: kc.makeApiClient(CoordinationV1Api), ...lease });
}
