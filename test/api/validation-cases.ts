/**
 * One table of custom resources, valid and invalid, shared by the unit tests (the TypeScript
 * validator and the manifest loader) and the integration test that sends the same objects to a
 * real kube-apiserver: both must reach the same verdict, except where a case says why not.
 */
import type { Kind } from "../../src/api/types.ts";

export interface ValidationCase {
  name: string;
  reason: string;
  kind: Kind;
  /** merged over the kind's minimal valid spec; `undefined` removes a field */
  spec?: Record<string, unknown>;
  /** merged over the whole object (apiVersion, kind, metadata, spec) */
  extra?: Record<string, unknown>;
  /** the field the first error names; absent for a valid object */
  field?: string;
  /** text the error message contains */
  message?: string;
  /** text no error message may contain: a credential in the value */
  notShown?: string;
  /** when the API server's verdict differs from ours: what it does and why */
  server?: { accepts: boolean; why: string };
}

export const MINIMAL_SPECS: Record<Kind, Record<string, unknown>> = {
  NSXManager: { url: "https://nsx.example.com", credentialsSecretRef: { name: "nsx-credentials" } },
  EdgeTenant: { managerRef: { name: "nsx" }, edgeId: "edge-1", tenant: "tenant-a" },
  IPPoolAllocations: { managerRef: { name: "nsx" }, pool: { id: "ipaddresspool-1" }, allowed: ["10.0.0.1"] },
};

export function objectFor(c: ValidationCase, name = "case"): Record<string, unknown> {
  const spec: Record<string, unknown> = { ...MINIMAL_SPECS[c.kind], ...c.spec };
  for (const [key, value] of Object.entries(spec)) if (value === undefined) delete spec[key];
  return { apiVersion: "nsxv.io/v1alpha1", kind: c.kind, metadata: { name }, spec, ...c.extra };
}

const url = (
  value: string,
  field?: string,
  reason = "",
  refusal: { message: string; notShown?: string } = { message: "must be https://host[:port][/path]" },
): ValidationCase => ({
  name: `Url ${value}`,
  reason,
  kind: "NSXManager",
  spec: { url: value },
  ...(field === undefined ? {} : { field, ...refusal }),
});

const allowed = (entry: string, reason: string, message?: string): ValidationCase => ({
  name: `Allowed ${entry.length > 40 ? `${entry.slice(0, 40)}...` : entry}`,
  reason,
  kind: "IPPoolAllocations",
  spec: { allowed: ["10.0.0.1", entry] },
  ...(message === undefined ? {} : { field: "spec.allowed[1]", message }),
});

const sync = (kind: Kind, value: string, reason: string, message?: string): ValidationCase => ({
  name: `${kind} syncInterval ${value}`,
  reason,
  kind,
  spec: { syncInterval: value },
  ...(message === undefined ? {} : { field: "spec.syncInterval", message }),
});

export const VALIDATION_CASES: ValidationCase[] = [
  // NSXManager
  url("https://nsx.example.com", undefined, "the usual form"),
  url("http://127.0.0.1:8080", undefined, "http is for a simulator or a local proxy"),
  url("https://[fd00::1]:443/api", undefined, "a bracketed IPv6 host, a port and a path prefix"),
  url("ftp://nsx.example.com", "spec.url", "only http and https reach a manager"),
  url("HTTPS://nsx.example.com", "spec.url", "the scheme is written in lowercase"),
  url(
    "https://admin:secret@nsx.example.com",
    "spec.url",
    "credentials belong in the Secret, never in the URL, and the refusal does not print them",
    { message: "Forbidden: must not carry credentials (user:password@)", notShown: "secret" },
  ),
  url(
    "https://admin:p@ss/w0rd@nsx.example.com",
    "spec.url",
    "a password with @ and / is a password all the same",
    { message: "Forbidden: must not carry credentials", notShown: "w0rd" },
  ),
  url(
    "https://nsx.example.com?x=1",
    "spec.url",
    "a query would be appended to every call, and the refusal does not print it",
    { message: "Forbidden: must not carry a query string or fragment", notShown: "x=1" },
  ),
  url(
    "https://nsx.example.com/api?token=Qs-secret-5",
    "spec.url",
    "a query often carries a token: refused without quoting it",
    { message: "Forbidden: must not carry a query string or fragment", notShown: "Qs-secret-5" },
  ),
  url(
    "https://nsx.example.com/#frag-secret-6",
    "spec.url",
    "a fragment is refused as a query is, without quoting it",
    { message: "Forbidden: must not carry a query string or fragment", notShown: "frag-secret-6" },
  ),
  url("https://", "spec.url", "a URL needs a host"),
  url("https://nsx.example.com:123456", "spec.url", "a port has at most five digits"),
  {
    name: "MissingCredentials",
    reason: "a manager cannot be called without credentials",
    kind: "NSXManager",
    spec: { credentialsSecretRef: undefined },
    field: "spec.credentialsSecretRef",
    message: "Required value",
  },
  {
    name: "TlsSkipAndCa",
    reason: "a CA is pointless when nothing is verified",
    kind: "NSXManager",
    spec: { tls: { insecureSkipVerify: true, caSecretRef: { name: "ca", key: "ca.crt" } } },
    field: "spec.tls",
    message: "exclude each other",
  },
  {
    name: "TlsCaOnly",
    reason: "a CA from a Secret is the normal way to trust a private CA",
    kind: "NSXManager",
    spec: { tls: { caSecretRef: { name: "ca", key: "ca.crt" } } },
  },
  {
    name: "TlsBadKey",
    reason: "Secret keys are alphanumerics, '-', '_' and '.'",
    kind: "NSXManager",
    spec: { tls: { caSecretRef: { name: "ca", key: "ca/crt" } } },
    field: "spec.tls.caSecretRef.key",
    message: "should match",
  },
  {
    name: "ConcurrencyZero",
    reason: "at least one request must be allowed",
    kind: "NSXManager",
    spec: { maxConcurrentRequests: 0 },
    field: "spec.maxConcurrentRequests",
  },
  {
    name: "RateFraction",
    reason: "requestsPerSecond is an integer",
    kind: "NSXManager",
    spec: { requestsPerSecond: 1.5 },
    field: "spec.requestsPerSecond",
  },
  {
    name: "TimeoutTooLong",
    reason: "ten minutes is the longest request timeout",
    kind: "NSXManager",
    spec: { requestTimeoutSeconds: 601 },
    field: "spec.requestTimeoutSeconds",
  },
  // EdgeTenant
  {
    name: "EdgeIdWord",
    reason: "edge ids are edge-<n>",
    kind: "EdgeTenant",
    spec: { edgeId: "edge-x" },
    field: "spec.edgeId",
    message: "should match '^edge-[0-9]+$'",
  },
  {
    name: "EdgeIdUppercase",
    reason: "the manager's ids are lowercase",
    kind: "EdgeTenant",
    spec: { edgeId: "Edge-1" },
    field: "spec.edgeId",
  },
  {
    name: "TenantEmpty",
    reason: "an empty tenant is most likely a templating mistake",
    kind: "EdgeTenant",
    spec: { tenant: "" },
    field: "spec.tenant",
  },
  {
    name: "TenantNewline",
    reason: "control characters do not belong in a one-line XML field",
    kind: "EdgeTenant",
    spec: { tenant: "a\nb" },
    field: "spec.tenant",
  },
  {
    name: "TenantTooLong",
    reason: "256 characters at most",
    kind: "EdgeTenant",
    spec: { tenant: "x".repeat(257) },
    field: "spec.tenant",
    message: "Too long",
  },
  {
    name: "TenantUnicode",
    reason: "free text may be any language",
    kind: "EdgeTenant",
    spec: { tenant: "Mandant Süd" },
  },
  {
    name: "PolicyUnknown",
    reason: "only Enforce and Observe exist",
    kind: "EdgeTenant",
    spec: { managementPolicy: "Ignore" },
    field: "spec.managementPolicy",
    message: 'supported values: "Enforce", "Observe"',
  },
  {
    name: "PolicyObserve",
    reason: "observe-only is a policy",
    kind: "EdgeTenant",
    spec: { managementPolicy: "Observe" },
  },
  sync("EdgeTenant", "9s", "below the 10s floor", "must be at least 10s"),
  sync("EdgeTenant", "0", "zero is below the floor", "must be at least 10s"),
  sync("EdgeTenant", "10s", "the floor itself is allowed"),
  sync("EdgeTenant", "1.5h", "Go fractions"),
  sync("EdgeTenant", "1h30m", "Go combinations"),
  sync("EdgeTenant", "-1m", "no negative intervals", "should match"),
  sync("EdgeTenant", "1d", "Go has no days", "should match"),
  sync("EdgeTenant", "9999999999h", "longer than a Go duration can hold", "longest Go duration"),
  sync("IPPoolAllocations", "5s", "the floor holds for pools too", "must be at least 10s"),
  {
    name: "ManagerOfAnotherNamespace",
    reason: "an NSXManager of another namespace, which must allow this one (checked when it is reconciled)",
    kind: "EdgeTenant",
    spec: { managerRef: { name: "nsx", namespace: "platform" } },
  },
  {
    name: "ManagerNamespaceNotALabel",
    reason: "a namespace is a DNS label",
    kind: "IPPoolAllocations",
    spec: { managerRef: { name: "nsx", namespace: "Platform_1" } },
    field: "spec.managerRef.namespace",
    message: "should match",
  },
  {
    name: "AllowedNamespacesBySelector",
    reason: "an NSXManager shares itself with the namespaces a label selector matches",
    kind: "NSXManager",
    spec: {
      allowedNamespaces: {
        selector: {
          matchLabels: { "nsxv.io/manager": "nsx-prod" },
          matchExpressions: [{ key: "team", operator: "NotIn", values: ["legacy"] }],
        },
      },
    },
  },
  {
    name: "AllowedNamespacesEverySelector",
    reason: "{} selects every namespace, as in a NetworkPolicy",
    kind: "NSXManager",
    spec: { allowedNamespaces: { selector: {} } },
  },
  {
    name: "AllowedNamespacesInWithoutValues",
    reason: "In tests values: it needs one at least",
    kind: "NSXManager",
    spec: { allowedNamespaces: { selector: { matchExpressions: [{ key: "team", operator: "In" }] } } },
    field: "spec.allowedNamespaces.selector.matchExpressions[0]",
    message: "In and NotIn need at least one value",
  },
  {
    name: "AllowedNamespacesExistsWithValues",
    reason: "Exists tests the key only: values would be ignored, so they are refused",
    kind: "NSXManager",
    spec: {
      allowedNamespaces: {
        selector: { matchExpressions: [{ key: "team", operator: "Exists", values: ["a"] }] },
      },
    },
    field: "spec.allowedNamespaces.selector.matchExpressions[0]",
    message: "Exists and DoesNotExist take none",
  },
  {
    name: "AllowedNamespacesWithoutSelector",
    reason: "allowedNamespaces says whom by its selector",
    kind: "NSXManager",
    spec: { allowedNamespaces: {} },
    field: "spec.allowedNamespaces.selector",
    message: "Required value",
  },
  {
    name: "UnknownSpecField",
    reason: "a typo must not be dropped silently",
    kind: "EdgeTenant",
    spec: { tenantName: "x" },
    field: "spec.tenantName",
    message: "unknown field",
  },
  {
    name: "UnknownTopLevelField",
    reason: "strict decoding covers the whole object",
    kind: "EdgeTenant",
    extra: { extra: true },
    field: "extra",
    message: "unknown field",
  },
  {
    name: "UnknownStatusField",
    reason: "status is declared field by field, not left open",
    kind: "EdgeTenant",
    extra: { status: { colour: "red" } },
    field: "status.colour",
    message: "unknown field",
  },
  {
    name: "MissingEdgeId",
    reason: "which edge is the point of the object",
    kind: "EdgeTenant",
    spec: { edgeId: undefined },
    field: "spec.edgeId",
    message: "Required value",
  },
  // IPPoolAllocations
  {
    name: "PoolBoth",
    reason: "a pool is selected by id or by name, not both",
    kind: "IPPoolAllocations",
    spec: { pool: { id: "ipaddresspool-1", name: "vteps" } },
    field: "spec.pool",
    message: "set exactly one of id and name",
  },
  {
    name: "PoolNeither",
    reason: "a pool must be selected",
    kind: "IPPoolAllocations",
    spec: { pool: { scope: "globalroot-0" } },
    field: "spec.pool",
    message: "set exactly one of id and name",
  },
  {
    name: "PoolByName",
    reason: "selecting by name is allowed",
    kind: "IPPoolAllocations",
    spec: { pool: { name: "vteps" } },
  },
  {
    name: "PoolIdWord",
    reason: "pool ids are ipaddresspool-<n>",
    kind: "IPPoolAllocations",
    spec: { pool: { id: "pool-1" } },
    field: "spec.pool.id",
  },
  {
    name: "AllowedMissing",
    reason: "allowed must be written, even when empty",
    kind: "IPPoolAllocations",
    spec: { allowed: undefined },
    field: "spec.allowed",
    message: "Required value",
  },
  {
    name: "AllowedEmpty",
    reason: "an empty list is explicit: everything is stray",
    kind: "IPPoolAllocations",
    spec: { allowed: [] },
  },
  allowed("2001:db8::1", "IPv6 addresses"),
  allowed("2001:0DB8:0:0:0:0:0:1", "IPv6 in full, uppercase"),
  allowed("10.0.0.10-10.0.0.20", "an IPv4 range"),
  allowed("2001:db8::1-2001:db8::ff", "an IPv6 range"),
  allowed("10.0.0.0/24", "an IPv4 CIDR"),
  allowed("10.0.0.7/24", "host bits are accepted and ignored"),
  allowed("2001:db8::/64", "an IPv6 CIDR"),
  allowed("10.0.0.256", "an octet above 255", "is not an IP address"),
  allowed("010.0.0.1", "leading zeros are ambiguous", "is not an IP address"),
  allowed("fe80::1%eth0", "zone ids are host-local", "zone"),
  allowed("::ffff:10.0.0.1", "IPv4-mapped addresses are written as IPv4", "IPv4-mapped"),
  allowed("10.0.0.1 - 10.0.0.5", "no spaces around the dash", "white space"),
  allowed("10.0.0.1-2001:db8::1", "a range stays in one family", "mixes IPv4 and IPv6"),
  allowed("10.0.0.1-10.0.0.2-10.0.0.3", "a range has two ends", "has the end"),
  allowed("10.0.0.0/33", "IPv4 prefixes stop at 32", "want 0 to 32"),
  allowed("10.0.0.0/08", "prefix lengths have no leading zeros", "prefix length"),
  allowed("a".repeat(101), "entries are at most 100 characters", "Too long"),
  allowed("10.0.0.9-10.0.0.1", "a range must not run backwards", "start is above its end"),
  allowed("10.0.0.10-10.0.0.9", "octets compare as numbers, not as text", "start is above its end"),
  allowed("10.0.0.9-10.0.0.10", '9 is below 10 although "9" sorts after "10"'),
  allowed("10.0.0.5-10.0.0.5", "a range of one address"),
  allowed("10.1.0.0-10.0.255.255", "a higher octet decides first", "start is above its end"),
  allowed(
    "2001:db8::ff-2001:db8::1",
    "an IPv6 range must not run backwards either",
    "start is above its end",
  ),
  allowed(
    "2001:db8::1:0-2001:db8::ffff",
    "groups compare as numbers once :: is expanded",
    "start is above its end",
  ),
  allowed("2001:db8::a-2001:DB8::F", "hex digits compare without regard to case"),
  allowed("::-::1", "the unspecified address starts a range"),
  allowed("1::-::ffff", "a leading group outweighs any tail", "start is above its end"),
  allowed(
    "2001:db8:0:0:0:0:0:2-2001:db8::1",
    "written in full or compressed, ends compare by value",
    "start is above its end",
  ),
  allowed("64:ff9b::10.0.0.1-64:ff9b::10.0.0.9", "an IPv6 end may end in a dotted quad"),
  allowed(
    "64:ff9b::10.0.0.9-64:ff9b::10.0.0.1",
    "a dotted quad orders as its hex groups",
    "start is above its end",
  ),
  {
    name: "AllowedTooMany",
    reason:
      "5000 entries at most, which keeps the CEL cost estimates (the range-order rule's) within the API server's budget",
    kind: "IPPoolAllocations",
    spec: {
      allowed: Array.from({ length: 5_001 }, (_, i) => `10.${i >> 16}.${(i >> 8) & 0xff}.${i & 0xff}`),
    },
    field: "spec.allowed",
    message: "Too many",
  },
  {
    name: "AllowedMaximum",
    reason: "5000 of the longest entries, all ranges, pass, within the runtime CEL budget too",
    kind: "IPPoolAllocations",
    spec: {
      allowed: Array.from(
        { length: 5_000 },
        () => "ffff:ffff:ffff:ffff:ffff:fffe:0.0.0.0-ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255",
      ),
    },
  },
  {
    name: "MinStrayAgeOverflow",
    reason: "a grace period longer than a Go duration holds",
    kind: "IPPoolAllocations",
    spec: { release: { minStrayAge: "9999999999h" } },
    field: "spec.release.minStrayAge",
  },
  {
    name: "MinStrayAgeZero",
    reason: "no grace period is allowed",
    kind: "IPPoolAllocations",
    spec: { release: { minStrayAge: "0" } },
  },
  {
    name: "MaxPerSyncNegative",
    reason: "0 already means never",
    kind: "IPPoolAllocations",
    spec: { release: { maxPerSync: -1 } },
    field: "spec.release.maxPerSync",
  },
  {
    name: "NullsDefaulted",
    reason: "null fields are pruned, then defaulted, as the API server does",
    kind: "IPPoolAllocations",
    spec: { release: null, managementPolicy: null },
  },
  {
    name: "DuplicateConditions",
    reason: "conditions are a map keyed by type",
    kind: "IPPoolAllocations",
    extra: {
      status: {
        conditions: ["Ready", "Ready"].map((type) => ({
          type,
          status: "True",
          reason: "Ok",
          message: "",
          lastTransitionTime: "2024-01-01T00:00:00Z",
        })),
      },
    },
    field: "status.conditions[1]",
    message: "Duplicate value",
    server: {
      accepts: true,
      why: "the API server drops status on create when the status subresource is enabled",
    },
  },
];
