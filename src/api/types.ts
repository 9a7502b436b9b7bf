/**
 * The three custom resources of group nsxv.io/v1alpha1, as TypeScript types. `crds/` holds the
 * same shapes as OpenAPI schemas; test/api/crd-types.test.ts proves that the two agree.
 */
import type { LabelSelector } from "./label-selector.ts";

export const GROUP = "nsxv.io";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;
/** `nsxv.io/paused: "true"` on any object: no manager calls for it. */
export const PAUSED_ANNOTATION = "nsxv.io/paused";

/** The kinds this operator serves, the one list of them: in the order a pass reconciles them. */
export const KINDS = ["NSXManager", "EdgeTenant", "IPPoolAllocations"] as const;
export type Kind = (typeof KINDS)[number];

/** The kinds that name an NSXManager (spec.managerRef) and act on it: every kind but NSXManager. */
export const DEPENDENT_KINDS = ["EdgeTenant", "IPPoolAllocations"] as const satisfies readonly Kind[];

/** A record with one entry per kind, made from KINDS: a kind added there gets its entry here too. */
export function perKind<V>(value: (kind: Kind) => V): Record<Kind, V> {
  return Object.fromEntries(KINDS.map((kind) => [kind, value(kind)])) as Record<Kind, V>;
}

/** The plural of each kind, as the API server's paths and RBAC name it (crds/ declares the same). */
export const PLURALS: Readonly<Record<Kind, string>> = {
  NSXManager: "nsxmanagers",
  EdgeTenant: "edgetenants",
  IPPoolAllocations: "ippoolallocations",
};

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

export type ConditionStatus = "True" | "False" | "Unknown";

/** metav1.Condition */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/**
 * status.observedGeneration of an object the operator has not looked at yet: the CRDs default it,
 * so that kstatus (Flux) and Argo CD read a new object as in progress, not as reconciled.
 */
export const UNOBSERVED_GENERATION = -1;

export interface CommonStatus {
  /** UNOBSERVED_GENERATION until the operator writes status */
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface LocalObjectReference {
  name: string;
}

/**
 * The NSXManager an EdgeTenant or IPPoolAllocations acts through: by default in the object's own
 * namespace; in another one only while that NSXManager allows the object's namespace
 * (NSXManagerSpec.allowedNamespaces), or the object is refused (reason NamespaceNotAllowed).
 */
export interface ManagerReference {
  name: string;
  /** default: the object's own namespace */
  namespace?: string;
}

export type ManagementPolicy = "Enforce" | "Observe";
export type ManagerAuth = "Basic" | "Token";
export type DeletionPolicy = "Orphan" | "Restore";

/**
 * On a Secret of credentials, in a cluster: the manager URLs (comma- or space-separated) its
 * credentials may be sent to. Set by whoever may write Secrets; an NSXManager pointing anywhere
 * else does not get them (reason CredentialsNotBound).
 */
export const SECRET_BINDING_ANNOTATION = "nsxv.io/allowed-manager-urls";
/**
 * On a Secret of credentials, in a cluster: the Secrets (same namespace, comma- or
 * space-separated) whose CA bundle an NSXManager may trust to verify the manager for these
 * credentials (spec.tls.caSecretRef); the credentials Secret itself needs no mention.
 */
export const SECRET_ALLOWED_CA_ANNOTATION = "nsxv.io/allowed-ca-secrets";
/**
 * `nsxv.io/allow-insecure-skip-verify: "true"` on a Secret of credentials, in a cluster: its
 * owner's consent to send them to an https:// manager whose certificate is not verified.
 */
export const SECRET_INSECURE_ANNOTATION = "nsxv.io/allow-insecure-skip-verify";

/**
 * Holds an NSXManager while EdgeTenants or IPPoolAllocations name it (Crossplane protects its
 * ProviderConfigs so): deleting a namespace or a directory of manifests in any order leaves the
 * manager there until a pending restore is done. In a cluster it holds the manager's Secrets too
 * (credentials, CA) while an EdgeTenant that names it remembers an original to restore
 * (NSXManagerStatus.heldSecrets): any replica, after any restart, can still restore.
 */
export const IN_USE_FINALIZER = "nsxv.io/in-use";

/** Holds an EdgeTenant with deletionPolicy Restore until its original tenant is written back. */
export const RESTORE_FINALIZER = "nsxv.io/restore-tenant";
/**
 * `nsxv.io/skip-restore: "true"` on an EdgeTenant being deleted: it goes without its original
 * tenant being written back (a manager that is gone for good), with a Warning saying so.
 */
export const SKIP_RESTORE_ANNOTATION = "nsxv.io/skip-restore";

export interface NSXManagerSpec {
  /** https://host[:port] (or http:// for a simulator or a local proxy) */
  url: string;
  /**
   * Other namespaces whose EdgeTenants and IPPoolAllocations may name this manager
   * (`spec.managerRef.namespace`): those whose labels the selector matches. Absent: none but its
   * own (the default); `selector: {}` matches every namespace.
   */
  allowedNamespaces?: { selector: LabelSelector };
  /** Secret in the same namespace with keys `username` and `password` */
  credentialsSecretRef: LocalObjectReference;
  /** Basic on every request, or the 6.4 token scheme (AUTHTOKEN); default Basic */
  auth?: ManagerAuth;
  tls?: {
    insecureSkipVerify?: boolean;
    caSecretRef?: { name: string; key: string };
  };
  maxConcurrentRequests?: number;
  requestsPerSecond?: number;
  requestTimeoutSeconds?: number;
}

export interface NSXManagerStatus extends CommonStatus {
  reachable?: boolean;
  authenticated?: boolean;
  /**
   * the manager instance's UUID, as its objects report it: NSXManager objects whose manager
   * reports the same one name the same manager, whatever their URLs
   */
  vsmUuid?: string;
  /** why the manager's edge list could not be read at the last check (its EdgeTenants then read their edges one by one) */
  edgeListError?: string;
  /** the Secrets (its credentials, its CA) this manager holds with IN_USE_FINALIZER, sorted */
  heldSecrets?: string[];
}

export interface EdgeTenantSpec {
  managerRef: ManagerReference;
  /** `edge-<n>` */
  edgeId: string;
  tenant: string;
  managementPolicy?: ManagementPolicy;
  /** what deleting the object does on the edge; default Orphan */
  deletionPolicy?: DeletionPolicy;
  /** Go duration, e.g. `5m`; floor 10s */
  syncInterval?: string;
}

export interface EdgeTenantStatus extends CommonStatus {
  edgeName?: string;
  edgeVersion?: number;
  observedTenant?: string;
  /**
   * the tenant before the operator's first correction ("" when there was none): what Restore
   * writes back. Recorded before that correction is written.
   */
  originalTenant?: string;
  /** the edge originalTenant was read from, and so the only edge Restore writes it to */
  originalTenantOf?: OriginalTenantSource;
  lastCorrectionTime?: string;
  /** how the latest observation was made: the edge read in full, or its summary in the manager's edge list */
  observedVia?: "Read" | "EdgeList";
  /** RFC 3339: when the edge was last read in full (the safety net reads it at least once per fullReadInterval) */
  lastFullReadTime?: string;
  /**
   * what the last full read of the edge showed of its content: a later read that lacks some of it
   * is read again, and never written back on its own (absent in a status written by an older release)
   */
  edgeShape?: EdgeShapeStatus;
}

/** The shape of an edge at its last full read (nsx/edge-shape.ts): sections and the length of its lists. */
export interface EdgeShapeStatus {
  /** the edge read: a shape is compared only with reads of the same edge */
  edgeId: string;
  /** the edge's `<version>` in that read: a read of the same version cannot hold less */
  version?: number;
  /** the direct children of `<edge>` that hold elements, and each child of `<features>` as `features/<name>` */
  sections: string[];
  /** the length of each counted list, by path from `<edge>` (`vnics/vnic`, `features/nat/natRules/natRule`, ...) */
  lists: { path: string; count: number }[];
}

/** Where a remembered original tenant was read: one edge of one real manager. */
export interface OriginalTenantSource {
  edgeId: string;
  /** the NSXManager object's name, as `namespace/name` when it is in another namespace than the EdgeTenant */
  manager: string;
  /** the manager's URL at the time, normalized: the real manager, whatever the object points at later */
  managerURL: string;
}

export interface PoolSelector {
  /** `ipaddresspool-<n>`; exactly one of id and name */
  id?: string;
  name?: string;
  /** scope to list pools in; default `globalroot-0` */
  scope?: string;
}

export interface ReleasePolicy {
  /** Go duration; a stray is released only after it has been stray this long. Default 5m. */
  minStrayAge?: string;
  /** most releases in one pass; 0 = never release. Default 10. */
  maxPerSync?: number;
}

export interface IPPoolAllocationsSpec {
  managerRef: ManagerReference;
  pool: PoolSelector;
  /** addresses, inclusive ranges `a-b`, CIDRs; IPv4 or IPv6 */
  allowed: string[];
  managementPolicy?: ManagementPolicy;
  release?: ReleasePolicy;
  syncInterval?: string;
}

export interface StrayAddress {
  ip: string;
  /**
   * the id of the allocation that holds the address (absent when the manager lists none): with
   * the note, the identity whose grace period firstSeen counts; another id or note on the same
   * address is a new allocation, and its grace period starts anew
   */
  allocationId?: string;
  note?: string;
  /** RFC 3339; when this allocation was first seen stray. Persists across restarts so the grace period is not reset */
  firstSeen: string;
}

export interface ReleasedAddress {
  ip: string;
  note?: string;
  time: string;
}

export interface IPPoolAllocationsStatus extends CommonStatus {
  poolId?: string;
  poolName?: string;
  totalAddressCount?: number;
  usedAddressCount?: number;
  /** stray.length, for the printer column (JSONPath cannot count) */
  strayCount?: number;
  stray?: StrayAddress[];
  /** allowed addresses that are not allocated */
  missing?: number;
  /** the last 20 releases, newest last */
  released?: ReleasedAddress[];
}

export interface Resource<K extends Kind, Spec, Status> {
  apiVersion: typeof API_VERSION;
  kind: K;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

export type NSXManager = Resource<"NSXManager", NSXManagerSpec, NSXManagerStatus>;
export type EdgeTenant = Resource<"EdgeTenant", EdgeTenantSpec, EdgeTenantStatus>;
export type IPPoolAllocations = Resource<"IPPoolAllocations", IPPoolAllocationsSpec, IPPoolAllocationsStatus>;
export type NsxvObject = NSXManager | EdgeTenant | IPPoolAllocations;

/** A kind that names an NSXManager and acts on it, from DEPENDENT_KINDS. */
export type DependentKind = (typeof DEPENDENT_KINDS)[number];

/** An object of a dependent kind. */
export type DependentObject = Extract<NsxvObject, { kind: DependentKind }>;

/** v1 Secret, the parts the operator reads */
export interface Secret {
  apiVersion: "v1";
  kind: "Secret";
  metadata: ObjectMeta;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** The defaults of the kinds' specs, in one place; `crds/` declares the same values (test/api/crd-types.test.ts checks that). */
export const SPEC_DEFAULTS = {
  managementPolicy: "Enforce" as ManagementPolicy,
  deletionPolicy: "Orphan" as DeletionPolicy,
  poolScope: "globalroot-0",
  minStrayAge: "5m",
  maxPerSync: 10,
  maxConcurrentRequests: 8,
  requestsPerSecond: 20,
  requestTimeoutSeconds: 30,
  insecureSkipVerify: false,
  auth: "Basic" as ManagerAuth,
  /** floor of spec.syncInterval */
  minSyncIntervalSeconds: 10,
  /** how many releases status keeps */
  releasedHistory: 20,
} as const;
