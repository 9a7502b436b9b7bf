/**
 * Management policies as data (Crossplane's `managementPolicies`): each named policy is a set of
 * the actions the operator may take for an object, and only the combinations listed in
 * SUPPORTED_COMBINATIONS exist. Planners ask `allows(policy, action)`; nothing else decides
 * whether a write may happen. Pausing is separate: a paused object makes no manager call at all.
 */
import { SPEC_DEFAULTS, PAUSED_ANNOTATION, type ManagementPolicy, type ObjectMeta } from "../api/types.ts";
import { ReconcileError } from "./errors.ts";

/** What the operator may do for an object. */
export type PolicyAction = "observe" | "updateEdge" | "releaseAddress";

export interface SupportedCombination {
  policy: ManagementPolicy;
  actions: readonly PolicyAction[];
  why: string;
}

/**
 * The only supported combinations. Not supported, on purpose: writes without `observe` (every
 * write is planned from a fresh read, so a blind write cannot be made safe), and `updateEdge`
 * without `releaseAddress` or the reverse (each kind does one kind of write, so a per-action
 * split would only be a second spelling of Enforce or Observe).
 */
export const SUPPORTED_COMBINATIONS: readonly SupportedCombination[] = [
  {
    policy: "Enforce",
    actions: ["observe", "updateEdge", "releaseAddress"],
    why: "The declared state is held: a drifted tenant is corrected and stray addresses are released.",
  },
  {
    policy: "Observe",
    actions: ["observe"],
    why: "Drift is reported in status and `plan`, nothing is changed: adopting a manager, audits, dry runs.",
  },
];

const ALLOWED: ReadonlyMap<ManagementPolicy, ReadonlySet<PolicyAction>> = new Map(
  SUPPORTED_COMBINATIONS.map((c) => [c.policy, new Set(c.actions)]),
);

/** The object's policy, defaulted; throws a terminal InvalidSpec error for an unknown name. */
export function resolvePolicy(name: string | undefined): ManagementPolicy {
  const policy = name ?? SPEC_DEFAULTS.managementPolicy;
  if (!ALLOWED.has(policy as ManagementPolicy)) {
    const known = [...ALLOWED.keys()].join(", ");
    throw ReconcileError.invalidSpec(
      `spec.managementPolicy: ${JSON.stringify(policy)} is not one of ${known}`,
    );
  }
  return policy as ManagementPolicy;
}

export function allows(policy: ManagementPolicy, action: PolicyAction): boolean {
  return ALLOWED.get(policy)?.has(action) ?? false;
}

/** `nsxv.io/paused: "true"`: no manager calls for this object. Any other value is not a pause. */
export function isPaused(metadata: ObjectMeta): boolean {
  return metadata.annotations?.[PAUSED_ANNOTATION] === "true";
}
