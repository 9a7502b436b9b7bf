import { describe, expect, it } from "vitest";
import type { Condition } from "../../src/api/types.ts";
import { REASONS, setConditions, type ConditionUpdate } from "../../src/reconcile/conditions.ts";
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
