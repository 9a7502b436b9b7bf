import { describe, expect, it } from "vitest";
import type { Condition } from "../../src/api/types.ts";
import {
  failureConditions,
  REASONS,
  setConditions,
  type ConditionUpdate,
} from "../../src/reconcile/conditions.ts";
import { formatTime } from "../../src/util/clock.ts";
import { at, MINUTE, T0 } from "./fixtures.ts";

const t0 = "2024-05-01T12:00:00Z";
const later = at(MINUTE);
const cond = (type: string, status: Condition["status"], reason = "InSync"): Condition => ({
  type,
  status,
  reason,
  message: "",
  lastTransitionTime: t0,
  observedGeneration: 1,
});

interface Case {
  name: string;
  reason: string;
  previous: Condition[];
  updates: ConditionUpdate[];
  want: Partial<Condition>[];
}

const cases: Case[] = [
  {
    name: "SameStatusKeepsTime",
    reason:
      "A condition whose status does not change keeps its lastTransitionTime even when reason and message change.",
    previous: [cond("Ready", "False", "Drifted")],
    updates: [{ type: "Ready", status: "False", reason: "ReleasesPending", message: "m" }],
    want: [
      {
        type: "Ready",
        status: "False",
        reason: "ReleasesPending",
        message: "m",
        lastTransitionTime: t0,
        observedGeneration: 2,
      },
    ],
  },
  {
    name: "StatusChangeMovesTime",
    reason: "A status change is a transition: the time is now.",
    previous: [cond("Ready", "False", "Drifted")],
    updates: [{ type: "Ready", status: "True", reason: "InSync", message: "" }],
    want: [{ type: "Ready", status: "True", lastTransitionTime: formatTime(later) }],
  },
  {
    name: "NewConditionGetsNow",
    reason: "A condition seen for the first time transitions now.",
    previous: [],
    updates: [{ type: "Synced", status: "True", reason: "ReconcileSuccess", message: "" }],
    want: [{ type: "Synced", lastTransitionTime: formatTime(later) }],
  },
  {
    name: "ReconcilingOnlyWhileTrue",
    reason: "kstatus reads Reconciling by its presence: False removes it.",
    previous: [cond("Reconciling", "True", "ReleasesPending")],
    updates: [{ type: "Reconciling", status: "False", reason: "InSync", message: "" }],
    want: [],
  },
  {
    name: "StalledRemoved",
    reason: "A remove update drops Stalled.",
    previous: [cond("Ready", "True"), cond("Stalled", "True", "Conflict")],
    updates: [{ type: "Stalled", remove: true }],
    want: [{ type: "Ready" }],
  },
  {
    name: "UntouchedAndForeignKept",
    reason:
      "Conditions not updated, including ones another controller wrote, stay; known types come first in a fixed order.",
    previous: [cond("Custom", "True"), cond("Synced", "True"), cond("Ready", "True")],
    updates: [{ type: "Stalled", status: "True", reason: "Conflict", message: "x" }],
    want: [{ type: "Ready" }, { type: "Synced" }, { type: "Stalled" }, { type: "Custom" }],
  },
];

describe("setConditions", () => {
  it.each(cases)("$name", (c) => {
    const next = setConditions(c.previous, c.updates, { now: later, generation: 2 });
    expect(next, c.reason).toHaveLength(c.want.length);
    c.want.forEach((want, i) => expect(next[i], c.reason).toMatchObject(want));
  });

  it("does not change the previous list", () => {
    const previous = [cond("Ready", "False")];
    setConditions(previous, [{ type: "Ready", status: "True", reason: "InSync", message: "" }], {
      now: later,
      generation: 2,
    });
    expect(previous[0]?.status).toBe("False");
  });

  it("formats times as RFC 3339 whole seconds, as metav1.Time stores them", () => {
    expect(formatTime(new Date("2024-05-01T12:00:00.987Z"))).toBe("2024-05-01T12:00:00Z");
    expect(formatTime(T0.getTime())).toBe(t0);
  });

  it("has CamelCase reasons only", () => {
    for (const reason of REASONS) expect(reason).toMatch(/^[A-Z][A-Za-z]+$/);
  });
});

describe("failureConditions", () => {
  const context = { now: later, generation: 3 };
  const of = (c: Condition, generation: number): Condition => ({ ...c, observedGeneration: generation });
  it.each([
    {
      name: "KeepsReadyOfThisGeneration",
      reason: "The latest observation was made for this generation and matched: it still holds.",
      previous: [of(cond("Ready", "True"), 3), cond("Synced", "True", "ReconcileSuccess")],
      failure: { reason: "Unreachable" as const, message: "connect ECONNREFUSED" },
      ready: undefined,
      want: {
        Ready: { status: "True", reason: "InSync", observedGeneration: 3 },
        Synced: { status: "False", reason: "Unreachable" },
        Stalled: undefined,
      },
    },
    {
      name: "KeepsDriftOfThisGeneration",
      reason: "An observed drift of this generation still holds too: Ready stays False Drifted.",
      previous: [of(cond("Ready", "False", "Drifted"), 3)],
      failure: { reason: "Unreachable" as const, message: "connect ECONNREFUSED" },
      ready: undefined,
      want: { Ready: { status: "False", reason: "Drifted" }, Synced: { reason: "Unreachable" } },
    },
    {
      name: "NewGenerationIsNotReady",
      reason: "Ready=True of an older generation says nothing of this one: False with the failure's reason.",
      previous: [of(cond("Ready", "True"), 2)],
      failure: { reason: "Unauthorized" as const, message: "401" },
      ready: undefined,
      want: { Ready: { status: "False", reason: "Unauthorized", message: "401", observedGeneration: 3 } },
    },
    {
      name: "ReadyFollowsTheLatestCause",
      reason: "A Ready set by an earlier failure follows the latest one, not a stale reason.",
      previous: [of({ ...cond("Ready", "False", "Unreachable"), message: "old" }, 3)],
      failure: { reason: "Unauthorized" as const, message: "401 now" },
      ready: undefined,
      want: { Ready: { status: "False", reason: "Unauthorized", message: "401 now" } },
    },
    {
      name: "ReadyFalseWhenNone",
      reason: "An object never observed is not Ready, with the failure's reason.",
      previous: [],
      failure: { reason: "ManagerNotReady" as const, message: "Secret ns/x not found" },
      ready: undefined,
      want: {
        Ready: { status: "False", reason: "ManagerNotReady" },
        Synced: { status: "False" },
        Stalled: undefined,
      },
    },
    {
      name: "ObservedReadyWins",
      reason: "What the failing pass observed (an NSXManager's own check, a refused correction) sets Ready.",
      previous: [of(cond("Ready", "True", "Available"), 3)],
      failure: { reason: "Unauthorized" as const, message: "401" },
      ready: {
        type: "Ready" as const,
        status: "False" as const,
        reason: "Unauthorized" as const,
        message: "401",
      },
      want: {
        Ready: { status: "False", reason: "Unauthorized" },
        Synced: { status: "False" },
        Stalled: undefined,
      },
    },
    {
      name: "StalledForInvalidSpec",
      reason: "Bad spec needs a person: Stalled=True, which kstatus reports as Failed.",
      previous: [cond("Reconciling", "True", "ReleasesPending")],
      failure: { reason: "InvalidSpec" as const, message: "spec.allowed[0]: bad" },
      ready: undefined,
      want: {
        Stalled: { status: "True", reason: "InvalidSpec" },
        Reconciling: undefined,
        Synced: { reason: "InvalidSpec" },
      },
    },
    {
      name: "StalledForConflict",
      reason: "A conflict needs a person as well.",
      previous: [],
      failure: { reason: "Conflict" as const, message: "owned by EdgeTenant ns/a" },
      ready: undefined,
      want: { Stalled: { status: "True", reason: "Conflict" } },
    },
    {
      name: "StalledForSourceInvalid",
      reason: "A manifest that does not load needs a person too.",
      previous: [],
      failure: { reason: "SourceInvalid" as const, message: "edges.yaml:3: invalid YAML" },
      ready: undefined,
      want: { Stalled: { status: "True", reason: "SourceInvalid" } },
    },
  ])("$name", ({ reason, previous, failure, ready, want }) => {
    const { conditions, event } = failureConditions(previous, failure, context, ready);
    for (const [type, expected] of Object.entries(want)) {
      const found = conditions.find((c) => c.type === type);
      if (expected === undefined) expect(found, `${reason} (${type} absent)`).toBeUndefined();
      else expect(found, `${reason} (${type})`).toMatchObject(expected);
    }
    expect(event, reason).toEqual({ type: "Warning", reason: failure.reason, message: failure.message });
  });
});
