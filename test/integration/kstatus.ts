/**
 * The rules kstatus (sigs.k8s.io/cli-utils/pkg/kstatus, what Flux's health checks use) applies to
 * a custom resource without type-specific rules, in its order:
 * 1. metadata.deletionTimestamp set → Terminating;
 * 2. status.observedGeneration present and != metadata.generation → InProgress;
 * 3. a condition Reconciling=True → InProgress; Stalled=True → Failed;
 * 4. a Ready condition: True → Current, False or Unknown → InProgress;
 * 5. otherwise Current (no known conditions means nothing is pending).
 * A test helper: the integration tests check that converged objects read as Current.
 */

export type KStatus = "Current" | "InProgress" | "Failed" | "Terminating";

export interface KStatusResult {
  status: KStatus;
  message: string;
}

interface Readable {
  metadata?: { generation?: number; deletionTimestamp?: string };
  status?: {
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

export function computeKStatus(object: Readable): KStatusResult {
  if (object.metadata?.deletionTimestamp)
    return { status: "Terminating", message: "Resource scheduled for deletion" };
  const generation = object.metadata?.generation;
  const observed = object.status?.observedGeneration;
  if (generation !== undefined && observed !== undefined && observed !== generation) {
    return {
      status: "InProgress",
      message: `generation is ${generation}, but latest observed generation is ${observed}`,
    };
  }
  const conditions = object.status?.conditions ?? [];
  for (const c of conditions) {
    if (c.type === "Reconciling" && c.status === "True")
      return { status: "InProgress", message: c.message ?? "" };
    if (c.type === "Stalled" && c.status === "True") return { status: "Failed", message: c.message ?? "" };
  }
  const ready = conditions.find((c) => c.type === "Ready");
  if (ready !== undefined) {
    return ready.status === "True"
      ? { status: "Current", message: "Resource is Ready" }
      : { status: "InProgress", message: ready.message ?? "" };
  }
  return { status: "Current", message: "Resource is current" };
}
