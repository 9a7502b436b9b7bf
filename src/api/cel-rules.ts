/**
 * TypeScript counterparts of the CEL rules (`x-kubernetes-validations`) in crds/, so that the
 * cluster-less CLI rejects what the API server would reject. Each counterpart is keyed by the
 * kind, the schema path of the node that carries the rule and the rule's exact text:
 * ResourceValidator refuses to start when a rule in crds/ has no counterpart, and
 * test/api/crd-types.test.ts checks that no counterpart is left without its rule.
 */
import { AddressSetError, parseAddressEntry, RANGE_REVERSED } from "./address-set.ts";
import { DurationError, parseDuration } from "./duration.ts";
import { SPEC_DEFAULTS, type Kind } from "./types.ts";

export interface CelCounterpart {
  kind: Kind;
  /** schema path of the node that carries the rule: `spec.pool`, `spec.allowed[*]` */
  path: string;
  /** the rule's exact text in crds/ */
  rule: string;
  /**
   * undefined when the value passes; otherwise `true` (say the rule's message) or a more
   * precise message. Values of the wrong type pass: the schema reports those.
   */
  check(value: unknown): true | string | undefined;
}

/** NSXManager spec.url: https (or http) with a host, optional port and path, nothing else. */
export const MANAGER_URL_PATTERN =
  "^https?://([A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?(/[^\\s?#@]*)?$";

const SYNC_FLOOR_RULE = "duration(self) >= duration('10s')";

/** the duration in ms, or why it is none (CEL's `duration()` cannot convert such text either) */
function durationOf(value: string): number | string {
  try {
    return parseDuration(value);
  } catch (error) {
    if (error instanceof DurationError) return `is not a duration: ${error.reason}`;
    throw error;
  }
}

function syncIntervalFloor(value: unknown): true | string | undefined {
  if (typeof value !== "string") return undefined;
  const ms = durationOf(value);
  if (typeof ms === "string") return ms;
  return ms >= SPEC_DEFAULTS.minSyncIntervalSeconds * 1000 ? undefined : true;
}

/** why parseAddressEntry refuses an entry; undefined when it accepts it (or it is no string) */
function entryProblem(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  try {
    parseAddressEntry(value);
    return undefined;
  } catch (error) {
    if (error instanceof AddressSetError) return error.reason;
    throw error;
  }
}

/**
 * CEL has no ordering of IP addresses, but it can test whether a CIDR contains an address: the
 * common prefix of a range's ends s and e is found by binary search over prefix lengths (a tree
 * of `s/m contains e?` tests, of which one path runs: 5 tests for IPv4, 7 for IPv6), and the
 * bit after it decides: s is below e when that bit of s is 0, i.e. when s's network at that
 * length is the one at the length before. Each end is bound to a name by mapping a list of one.
 */
function prefixSearch(lo: number, hi: number): string {
  if (hi === lo + 1) return `cidr(s + '/${hi}').masked().ip() == cidr(s + '/${lo}').masked().ip()`;
  const m = (lo + hi) >> 1;
  return `(cidr(s + '/${m}').containsIP(e) ? ${prefixSearch(m, hi)} : ${prefixSearch(lo, m)})`;
}

const RANGE_ORDER_RULE =
  "!self.contains('-') || [self.substring(0, self.indexOf('-'))].map(s, " +
  "[self.substring(self.indexOf('-') + 1)].map(e, " +
  "!(isIP(s) && isIP(e) && ip(s).family() == ip(e).family()) || ip(s) == ip(e) || " +
  `(ip(s).family() == 4 ? ${prefixSearch(0, 32)} : ${prefixSearch(0, 128)}))[0])[0]`;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * EdgeTenant: the edge and manager of a Restore object are bound to its remembered original. A
 * transition rule (it compares with the stored object), so a manifest alone cannot break it: the
 * cluster-less CLI has no previous version, and `run --manifests`, which has, stalls such an edit
 * in the reconciler (EdgeMoved) instead.
 */
export const EDGE_BOUND_TO_ORIGINAL_RULE =
  "!has(oldSelf.status) || !has(oldSelf.status.originalTenant) || " +
  "(self.spec.deletionPolicy != 'Restore' && oldSelf.spec.deletionPolicy != 'Restore') || " +
  "(self.spec.edgeId == oldSelf.spec.edgeId && self.spec.managerRef == oldSelf.spec.managerRef)";

/** NSXManager allowedNamespaces: In and NotIn test values, Exists and DoesNotExist take none. */
const SELECTOR_VALUES_RULE =
  "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)";

export const CEL_COUNTERPARTS: readonly CelCounterpart[] = [
  { kind: "EdgeTenant", path: "", rule: EDGE_BOUND_TO_ORIGINAL_RULE, check: () => undefined },
  {
    kind: "NSXManager",
    path: "spec.allowedNamespaces.selector.matchExpressions[*]",
    rule: SELECTOR_VALUES_RULE,
    check: (value) => {
      if (!isObject(value)) return undefined;
      const values = Array.isArray(value["values"]) ? value["values"].length : 0;
      const wantsValues = value["operator"] === "In" || value["operator"] === "NotIn";
      return wantsValues === values > 0 ? undefined : true;
    },
  },
  {
    kind: "NSXManager",
    path: "spec.url",
    // a URL with `@`, `?` or `#` is the next rules': refused there without quoting it
    rule: `self.contains('@') || self.contains('?') || self.contains('#') || self.matches(r'${MANAGER_URL_PATTERN}')`,
    check: (value) =>
      typeof value === "string" && !/[@?#]/.test(value) && !new RegExp(MANAGER_URL_PATTERN).test(value)
        ? true
        : undefined,
  },
  {
    kind: "NSXManager",
    path: "spec.url",
    rule: "!self.contains('@')",
    check: (value) => (typeof value === "string" && value.includes("@") ? true : undefined),
  },
  {
    kind: "NSXManager",
    path: "spec.url",
    rule: "!self.contains('?') && !self.contains('#')",
    check: (value) => (typeof value === "string" && /[?#]/.test(value) ? true : undefined),
  },
  {
    kind: "NSXManager",
    path: "spec.tls",
    rule: "!(has(self.insecureSkipVerify) && self.insecureSkipVerify && has(self.caSecretRef))",
    check: (value) =>
      isObject(value) && value["insecureSkipVerify"] === true && value["caSecretRef"] !== undefined
        ? true
        : undefined,
  },
  { kind: "EdgeTenant", path: "spec.syncInterval", rule: SYNC_FLOOR_RULE, check: syncIntervalFloor },
  { kind: "IPPoolAllocations", path: "spec.syncInterval", rule: SYNC_FLOOR_RULE, check: syncIntervalFloor },
  {
    kind: "IPPoolAllocations",
    path: "spec.release.minStrayAge",
    rule: "duration(self) >= duration('0s')",
    check: (value) => {
      const ms = typeof value === "string" ? durationOf(value) : undefined;
      return typeof ms === "string" ? ms : undefined;
    },
  },
  {
    kind: "IPPoolAllocations",
    path: "spec.pool",
    rule: "has(self.id) != has(self.name)",
    check: (value) =>
      isObject(value) && (value["id"] === undefined) === (value["name"] === undefined) ? true : undefined,
  },
  {
    kind: "IPPoolAllocations",
    path: "spec.allowed[*]",
    rule:
      "isIP(self) || isCIDR(self) || (self.split('-').size() == 2 && isIP(self.split('-')[0]) && " +
      "isIP(self.split('-')[1]) && ip(self.split('-')[0]).family() == ip(self.split('-')[1]).family())",
    // the same parser the reconciler uses; the two range rules below say their own reasons
    check: (value) => {
      const problem = entryProblem(value);
      return problem === RANGE_REVERSED ? undefined : problem;
    },
  },
  {
    kind: "IPPoolAllocations",
    path: "spec.allowed[*]",
    rule: RANGE_ORDER_RULE,
    check: (value) => (entryProblem(value) === RANGE_REVERSED ? true : undefined),
  },
];
