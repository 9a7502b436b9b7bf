/**
 * The kstatus rules of test/integration/kstatus.ts, which the integration tests use to show that
 * converged objects read as Current to Flux and other kstatus users.
 */
import { describe, expect, it } from "vitest";
import { computeKStatus, type KStatus } from "../integration/kstatus.ts";

const condition = (type: string, status: string, reason = "Reason") => ({
  type,
  status,
  reason,
  message: `${type} is ${status}`,
});

const cases: { name: string; reason: string; object: Parameters<typeof computeKStatus>[0]; want: KStatus }[] =
  [
    {
      name: "Converged",
      reason: "the generation is observed and Ready is True",
      object: {
        metadata: { generation: 2 },
        status: { observedGeneration: 2, conditions: [condition("Ready", "True")] },
      },
      want: "Current",
    },
    {
      name: "GenerationNotObserved",
      reason: "status describes an older spec, whatever its conditions say",
      object: {
        metadata: { generation: 3 },
        status: { observedGeneration: 2, conditions: [condition("Ready", "True")] },
      },
      want: "InProgress",
    },
    {
      name: "Reconciling",
      reason: "Reconciling=True means work is under way",
      object: {
        metadata: { generation: 1 },
        status: {
          observedGeneration: 1,
          conditions: [condition("Reconciling", "True"), condition("Ready", "True")],
        },
      },
      want: "InProgress",
    },
    {
      name: "Stalled",
      reason: "Stalled=True means a person must act",
      object: {
        metadata: { generation: 1 },
        status: { observedGeneration: 1, conditions: [condition("Stalled", "True", "Conflict")] },
      },
      want: "Failed",
    },
    {
      name: "StalledFalseIgnored",
      reason: "Reconciling and Stalled count only when True",
      object: {
        metadata: { generation: 1 },
        status: { conditions: [condition("Stalled", "False"), condition("Ready", "True")] },
      },
      want: "Current",
    },
    {
      name: "NotReady",
      reason: "Ready=False (drift reported by Observe) is still in progress",
      object: {
        metadata: { generation: 1 },
        status: { observedGeneration: 1, conditions: [condition("Ready", "False", "Drifted")] },
      },
      want: "InProgress",
    },
    {
      name: "ReadyUnknown",
      reason: "Ready=Unknown is not ready",
      object: { metadata: { generation: 1 }, status: { conditions: [condition("Ready", "Unknown")] } },
      want: "InProgress",
    },
    {
      name: "NoConditions",
      reason: "without known conditions kstatus assumes nothing is pending",
      object: { metadata: { generation: 1 }, status: {} },
      want: "Current",
    },
    {
      name: "NoObservedGeneration",
      reason: "the generation check applies only when status carries observedGeneration",
      object: { metadata: { generation: 5 }, status: { conditions: [condition("Ready", "True")] } },
      want: "Current",
    },
    {
      name: "Terminating",
      reason: "a deletion mark wins over everything",
      object: {
        metadata: { generation: 1, deletionTimestamp: "2025-01-01T00:00:00Z" },
        status: { conditions: [condition("Ready", "True")] },
      },
      want: "Terminating",
    },
  ];

describe("computeKStatus", () => {
  it.each(cases)("$name", ({ object, want, reason }) => {
    expect(computeKStatus(object).status, reason).toBe(want);
  });
});
