/**
 * runPass, the contract's one helper (src/reconcile/pass.ts), driven by a fake handler: a scripted
 * manager whose observations are the tenants it shows per edge (version n for the n-th read), and
 * whose answers to each write come from a script. Each case says why it holds.
 */
import { describe, expect, it } from "vitest";
import type { EdgeTenant } from "../../src/api/types.ts";
import { NsxError, type NsxErrorCode } from "../../src/nsx/errors.ts";
import type { Failure } from "../../src/reconcile/conditions.ts";
import { ObservationExpiredError, ReconcileError } from "../../src/reconcile/errors.ts";
import type { ExecuteOutcome, PassContext, PassHandler, RefusalAnswer } from "../../src/reconcile/kind.ts";
import { runPass } from "../../src/reconcile/pass.ts";
import type { SetTenantAction } from "../../src/reconcile/plan.ts";
import type { ReconcilerState } from "../../src/reconcile/state.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { edgeTenant } from "./edge-tenant/fixtures.ts";
import { T0 } from "./fixtures.ts";

/** What the fake manager shows on one read: edge → its tenant; the wanted tenant is "want". */
type Shown = Record<string, string>;

/** An observation: the read's number (1 for the first) and what it showed. */
interface Seen {
  read: number;
  shown: Shown;
}

type Answer = "done" | { refused: Failure } | NsxErrorCode | "boom";

interface Script {
  /** what each read shows, in order (the last one repeats) */
  reads: Shown[];
  /** the answer to each write, in order (then "done") */
  answers?: Answer[];
  /** the first look cannot decide: read again at depth full */
  firstLookUndecided?: boolean;
  /** edges whose correction is withheld, and why */
  withheld?: Record<string, string>;
  mode?: "plan" | "apply";
  maxAttempts?: number;
  rereadOn?: Partial<Record<NsxErrorCode, "retry" | RefusalAnswer>>;
  prepareFails?: boolean;
  /** the first read never answers, and the pass may wait until this many ms from now */
  hangsWithDeadlineMs?: number;
}

/** A fake handler over the script, logging every call: `read first 1`, `write edge-1 on read 2`. */
function fakeHandler(script: Script, log: string[]): PassHandler<EdgeTenant, string, Seen, SetTenantAction> {
  let reads = 0;
  const answers = [...(script.answers ?? [])];
  const wanted = (shown: Shown, seen: Seen): SetTenantAction[] =>
    Object.entries(shown)
      .filter(([edgeId, tenant]) => tenant !== "want" && script.withheld?.[edgeId] === undefined)
      .map(([edgeId, tenant]) => ({ type: "setTenant", edgeId, from: tenant, to: `want@${seen.read}` }));
  return {
    prepare: () => {
      log.push("prepare");
      return script.prepareFails === true
        ? Promise.reject(new ReconcileError({ reason: "InvalidSpec", message: "spec.edgeId is missing" }))
        : Promise.resolve("target");
    },
    observe: (_target, _ctx, depth) => {
      reads++;
      log.push(`read ${depth} ${reads}`);
      if (script.hangsWithDeadlineMs !== undefined && reads === 1) return new Promise<Seen>(() => {});
      const shown = script.reads[Math.min(reads, script.reads.length) - 1] ?? {};
      return Promise.resolve({ read: reads, shown });
    },
    plan: (_target, seen, ctx) => {
      const actions = wanted(seen.shown, seen);
      const withheld = Object.entries(script.withheld ?? {}).map(([edgeId, why]) => ({
        action: { type: "setTenant" as const, edgeId, from: seen.shown[edgeId], to: "want" },
        why,
      }));
      return {
        actions,
        withheld,
        observeFully: script.firstLookUndecided === true && seen.read === 1 && ctx !== undefined,
        settle: () => ({ events: [] }),
      };
    },
    execute: (action, { observed }) => {
      log.push(`write ${action.edgeId} on read ${observed.read}`);
      const answer = answers.shift() ?? "done";
      if (answer === "boom") return Promise.reject(new Error("socket hang up"));
      if (typeof answer === "string" && answer.startsWith("NSX_ERR_"))
        return Promise.reject(new NsxError(answer as NsxErrorCode, `the manager answered ${answer}`));
      return Promise.resolve(answer as ExecuteOutcome);
    },
    rereadOn: script.rereadOn ?? { NSX_ERR_CONFLICT: "retry" },
    targetOf: (action) => action.edgeId,
    describe: (action) => `PUT edge ${action.edgeId}`,
  };
}

function contextOf(script: Script, clock: FakeClock): PassContext<EdgeTenant> {
  const state = { mode: script.mode ?? "apply", maxAttempts: script.maxAttempts ?? 3, clock };
  return {
    object: edgeTenant(),
    now: new Date(clock.now()),
    generation: 1,
    signal: undefined,
    writesBlockedBy: undefined,
    statusLost: undefined,
    ...(script.hangsWithDeadlineMs !== undefined
      ? { observeByMs: clock.now() + script.hangsWithDeadlineMs }
      : {}),
    state: state as unknown as ReconcilerState,
  };
}

interface Want {
  log: string[];
  done?: string[];
  dropped?: string[];
  refused?: string[];
  /** the reason of the error that ended the pass */
  error?: string;
  planned?: string[];
}

const edges = (actions: readonly SetTenantAction[]) => actions.map((a) => `${a.edgeId}→${a.to}`);

describe("runPass", () => {
  it.each<{ name: string; reason: string; script: Script; want: Want }>([
    {
      name: "InSync",
      reason: "an observation that wants nothing is read once and nothing is written",
      script: { reads: [{ "edge-1": "want" }] },
      want: { log: ["prepare", "read first 1"], done: [], planned: [] },
    },
    {
      name: "WriteOnTheReadThatDecidedIt",
      reason:
        "the read that decided a write is its pre-write read: no second read, and the write is given that observation",
      script: { reads: [{ "edge-1": "x" }] },
      want: { log: ["prepare", "read first 1", "write edge-1 on read 1"], done: ["edge-1→want@1"] },
    },
    {
      name: "PlanModeWritesNothing",
      reason:
        "plan observes and plans: every decision is listed, withheld ones with why, and nothing is carried out",
      script: { reads: [{ "edge-1": "x", "edge-2": "y" }], mode: "plan", withheld: { "edge-2": "Observe" } },
      want: {
        log: ["prepare", "read first 1"],
        done: [],
        planned: ["edge-1→want@1", "edge-2→want (Observe)"],
      },
    },
    {
      name: "FirstLookUndecided",
      reason:
        "a plan that cannot decide from the first look (a summary) is made again on a full read, and acted on",
      script: { reads: [{ "edge-1": "x" }, { "edge-1": "x" }], firstLookUndecided: true },
      want: {
        log: ["prepare", "read first 1", "read full 2", "write edge-1 on read 2"],
        done: ["edge-1→want@2"],
        planned: ["edge-1→want@2"],
      },
    },
    {
      name: "ConflictReadsAgainAndRetries",
      reason:
        "a 409 means the manager changed under us: read again, plan again, and write the fresh plan's version on the fresh read",
      script: { reads: [{ "edge-1": "x" }, { "edge-1": "z" }], answers: ["NSX_ERR_CONFLICT"] },
      want: {
        log: ["prepare", "read first 1", "write edge-1 on read 1", "read full 2", "write edge-1 on read 2"],
        done: ["edge-1→want@2"],
      },
    },
    {
      name: "ConflictFreshPlanDropsIt",
      reason:
        "after a 409 a fresh read that no longer wants the write (someone else made it) drops it: nothing is written",
      script: { reads: [{ "edge-1": "x" }, { "edge-1": "want" }], answers: ["NSX_ERR_CONFLICT"] },
      want: {
        log: ["prepare", "read first 1", "write edge-1 on read 1", "read full 2"],
        done: [],
        dropped: ["edge-1→want@1"],
      },
    },
    {
      name: "ConflictBounded",
      reason:
        "409 after 409 ends the pass after maxAttempts writes, each after a fresh read: ConcurrentModification",
      script: {
        reads: [{ "edge-1": "x" }],
        answers: ["NSX_ERR_CONFLICT", "NSX_ERR_CONFLICT", "NSX_ERR_CONFLICT"],
        maxAttempts: 3,
      },
      want: {
        log: [
          "prepare",
          "read first 1",
          "write edge-1 on read 1",
          "read full 2",
          "write edge-1 on read 2",
          "read full 3",
          "write edge-1 on read 3",
        ],
        done: [],
        error: "ConcurrentModification",
      },
    },
    {
      name: "LaterActionsFollowTheFreshRead",
      reason:
        "after a fresh read every action still to come is the fresh plan's version, or dropped when it wants it no more",
      script: {
        reads: [
          { "edge-1": "x", "edge-2": "y", "edge-3": "z" },
          { "edge-1": "x", "edge-2": "want", "edge-3": "z" },
        ],
        answers: ["NSX_ERR_CONFLICT"],
      },
      want: {
        log: [
          "prepare",
          "read first 1",
          "write edge-1 on read 1",
          "read full 2",
          "write edge-1 on read 2",
          "write edge-3 on read 2",
        ],
        done: ["edge-1→want@2", "edge-3→want@2"],
        dropped: ["edge-2→want@1"],
      },
    },
    {
      name: "RefusedByAnAnswer",
      reason:
        "an answer the handler maps to a refusal, while a fresh read still wants the action, refuses it for that reason and the pass goes on",
      script: {
        reads: [{ "edge-1": "x", "edge-2": "y" }],
        answers: ["NSX_ERR_NOT_ALLOCATED"],
        rereadOn: { NSX_ERR_NOT_ALLOCATED: { refuse: "ReleaseFailed", says: "not allocated" } },
      },
      want: {
        log: ["prepare", "read first 1", "write edge-1 on read 1", "read full 2", "write edge-2 on read 2"],
        done: ["edge-2→want@2"],
        refused: ["edge-1→want@1: ReleaseFailed"],
      },
    },
    {
      name: "RefusedOutcome",
      reason:
        "a write the manager refuses for that action alone is reported refused; the others go on without a read",
      script: {
        reads: [{ "edge-1": "x", "edge-2": "y" }],
        answers: [{ refused: { reason: "ReleaseFailed", message: "answered false" } }],
      },
      want: {
        log: ["prepare", "read first 1", "write edge-1 on read 1", "write edge-2 on read 1"],
        done: ["edge-2→want@1"],
        refused: ["edge-1→want@1: ReleaseFailed"],
      },
    },
    {
      name: "OtherErrorEndsThePass",
      reason:
        "an answer that is no reason to read again ends the pass: nothing after it is tried, and the error is returned",
      script: { reads: [{ "edge-1": "x", "edge-2": "y" }], answers: ["boom"] },
      want: { log: ["prepare", "read first 1", "write edge-1 on read 1"], done: [], error: "Error" },
    },
    {
      name: "UnmappedManagerErrorEndsThePass",
      reason: "a manager error the handler does not read again on (a 403) ends the pass as thrown",
      script: { reads: [{ "edge-1": "x" }], answers: ["NSX_ERR_FORBIDDEN"] },
      want: {
        log: ["prepare", "read first 1", "write edge-1 on read 1"],
        done: [],
        error: "NSX_ERR_FORBIDDEN",
      },
    },
    {
      name: "PrepareFails",
      reason: "a pass whose prepare fails observes nothing and has no plan",
      script: { reads: [{ "edge-1": "x" }], prepareFails: true },
      want: { log: ["prepare"], done: [], error: "InvalidSpec" },
    },
  ])("$name: $reason", async ({ script, want }) => {
    const log: string[] = [];
    const run = await runPass(fakeHandler(script, log), contextOf(script, new FakeClock(T0.getTime())));
    expect(log).toEqual(want.log);
    expect(edges(run.results.done)).toEqual(want.done ?? []);
    expect(edges(run.results.dropped)).toEqual(want.dropped ?? []);
    expect(run.results.refused.map((r) => `${r.action.edgeId}→${r.action.to}: ${r.failure.reason}`)).toEqual(
      want.refused ?? [],
    );
    const error = run.error as { reason?: string; code?: string; name?: string } | undefined;
    expect(error?.reason ?? error?.code ?? error?.name).toEqual(want.error);
    if (want.planned !== undefined)
      expect(
        run.planned.map((p) => {
          const { edgeId, to } = p.action as SetTenantAction;
          return `${edgeId}→${to}${p.withheld === undefined ? "" : ` (${p.withheld})`}`;
        }),
      ).toEqual(want.planned);
    if (want.error === "InvalidSpec") expect(run.latest).toBeUndefined();
  });

  it("Unreachable once Ready's last observation expires: a read that does not answer is no longer waited for", async () => {
    const clock = new FakeClock(T0.getTime());
    const script: Script = { reads: [{ "edge-1": "x" }], hangsWithDeadlineMs: 5_000 };
    const log: string[] = [];
    const running = runPass(fakeHandler(script, log), contextOf(script, clock));
    await clock.advance(5_000);
    const run = await running;
    expect(run.error).toBeInstanceOf(ObservationExpiredError);
    expect(run.latest).toBeUndefined();
    expect(log).toEqual(["prepare", "read first 1"]);
  });
});
