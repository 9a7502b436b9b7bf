/**
 * What the kinds' specs share, checked and defaulted into what the planners and the executor
 * use: the NSXManager's (every dependent's pass resolves its manager's) and the fields every
 * dependent has (its manager, policy, sync interval). A kind's own fields are resolved in its
 * folder (edge-tenant/spec.ts, ip-pool/spec.ts). The CRDs refuse bad input already; these checks
 * are the second line (manifest files in the CLI skip the API server), and what they find is a
 * terminal InvalidSpec error naming the field, since only a change of the object can fix it.
 */
import { managerLabel, managerRefOf, refOf, type ObjectRef } from "../api/refs.ts";
import { parseDuration } from "../api/duration.ts";
import {
  SPEC_DEFAULTS,
  type DependentObject,
  type ManagementPolicy,
  type ManagerAuth,
  type NSXManager,
} from "../api/types.ts";
import { hasQueryOrFragment, hideUrlCredentials } from "../util/url-credentials.ts";
import { ReconcileError } from "./errors.ts";
import { resolvePolicy } from "./policy.ts";

/** What every dependent's spec resolves to, besides its kind's own fields. */
export interface DependentConfig {
  /** the NSXManager the object acts through (spec.managerRef, in its own namespace by default) */
  manager: ObjectRef;
  /** how status and messages name it: its name, or `namespace/name` in another namespace (managerLabel) */
  managerName: string;
  policy: ManagementPolicy;
  /** spec.syncInterval clamped to the floor; undefined when not set */
  syncIntervalMs: number | undefined;
}

export interface ManagerConfig {
  url: string;
  credentialsSecret: string;
  auth: ManagerAuth;
  ca?: { secret: string; key: string };
  insecureSkipVerify: boolean;
  maxConcurrentRequests: number;
  requestsPerSecond: number;
  requestTimeoutMs: number;
}

/**
 * The config of each spec already resolved: every dependent's pass resolves its manager's, and a
 * spec is replaced, never changed in place (a store put, a watch event). Frozen: shared by them all.
 */
const MANAGER_CONFIGS = new WeakMap<NSXManager["spec"], ManagerConfig>();

export function resolveManager(object: NSXManager): ManagerConfig {
  const known = MANAGER_CONFIGS.get(object.spec);
  if (known !== undefined) return known;
  const config = resolveManagerSpec(object.spec);
  MANAGER_CONFIGS.set(object.spec, Object.freeze(config));
  return config;
}

function resolveManagerSpec(spec: NSXManager["spec"]): ManagerConfig {
  checkManagerUrl(spec.url);
  const credentialsSecret = spec.credentialsSecretRef?.name;
  if (typeof credentialsSecret !== "string" || credentialsSecret === "") {
    throw ReconcileError.invalidSpec("spec.credentialsSecretRef.name: must be set");
  }
  const caRef = spec.tls?.caSecretRef;
  const auth = spec.auth ?? SPEC_DEFAULTS.auth;
  if (auth !== "Basic" && auth !== "Token") {
    throw ReconcileError.invalidSpec(`spec.auth: ${JSON.stringify(auth)} is not Basic or Token`);
  }
  return {
    url: spec.url,
    credentialsSecret,
    auth,
    ...(caRef !== undefined ? { ca: { secret: caRef.name, key: caRef.key } } : {}),
    insecureSkipVerify: spec.tls?.insecureSkipVerify ?? SPEC_DEFAULTS.insecureSkipVerify,
    maxConcurrentRequests: positive(
      "spec.maxConcurrentRequests",
      spec.maxConcurrentRequests,
      SPEC_DEFAULTS.maxConcurrentRequests,
    ),
    requestsPerSecond: positive(
      "spec.requestsPerSecond",
      spec.requestsPerSecond,
      SPEC_DEFAULTS.requestsPerSecond,
    ),
    requestTimeoutMs:
      positive(
        "spec.requestTimeoutSeconds",
        spec.requestTimeoutSeconds,
        SPEC_DEFAULTS.requestTimeoutSeconds,
      ) * 1000,
  };
}

/** spec.syncInterval of a dependent, clamped to the floor; undefined when unset or unreadable (the pass says why). */
export function syncIntervalMsOf(object: DependentObject): number | undefined {
  try {
    return resolveDependent(object).syncIntervalMs;
  } catch {
    return undefined;
  }
}

/** The fields every dependent has: spec.managerRef, spec.managementPolicy, spec.syncInterval. */
export function resolveDependent(object: DependentObject): DependentConfig {
  const { spec } = object;
  const manager = managerRefOf(object);
  if (manager === undefined) throw ReconcileError.invalidSpec("spec.managerRef.name: must be set");
  const floorMs = SPEC_DEFAULTS.minSyncIntervalSeconds * 1000;
  const syncIntervalMs =
    spec.syncInterval === undefined
      ? undefined
      : Math.max(floorMs, specDuration("spec.syncInterval", spec.syncInterval));
  return {
    manager,
    managerName: managerLabel(refOf(object).namespace, manager),
    policy: resolvePolicy(spec.managementPolicy),
    syncIntervalMs,
  };
}

/** A Go duration of the spec, in ms; its field named when it does not parse. */
export function specDuration(field: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (error) {
    throw ReconcileError.invalidSpec(
      `${field}: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
}

function positive(field: string, value: number | undefined, fallback: number): number {
  const n = value ?? fallback;
  if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) {
    throw ReconcileError.invalidSpec(`${field}: ${String(n)} is not a number > 0`);
  }
  return n;
}

/** spec.url: http(s), without credentials, query or fragment; never echoed with them. */
function checkManagerUrl(text: string): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // a URL that does not parse may still hold a password (`admin:secret@nsx` without a scheme);
    // the parser's error is left out: it carries the input
    throw ReconcileError.invalidSpec(
      `spec.url: ${JSON.stringify(hideUrlCredentials(String(text)))} is not a URL`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw ReconcileError.invalidSpec(`spec.url: scheme ${url.protocol} is not https: or http:`);
  }
  if (url.username !== "" || url.password !== "") {
    // never echo the URL here: it carries credentials
    throw ReconcileError.invalidSpec("spec.url: must not carry credentials; use spec.credentialsSecretRef");
  }
  if (hasQueryOrFragment(text)) {
    // nor here: a query often carries a token
    throw ReconcileError.invalidSpec("spec.url: must not carry a query string or fragment (? or #)");
  }
}
