/**
 * One pass of a kind's handler: prepare, observe, plan (again at depth `full` when the plan asks),
 * then each action through one bounded helper. The read that decided an action is its pre-write
 * read; the manager is read again only when an answer says it changed under us (the handler's
 * `rereadOn`): then the fresh observation is planned again, and each action still to come is the
 * fresh plan's version of it, or dropped when the fresh plan no longer wants it. Nothing here
 * turns a failure into status: the pass returns what it got to, and the reconciler composes.
 */
import { NsxError } from "../nsx/errors.ts";
import type { NsxvObject } from "../api/types.ts";
import { observationExpired, retriesExhausted } from "./errors.ts";
import type { Timer } from "../util/clock.ts";
import type { ActionResults, KindPlan, PassContext, PassHandler } from "./kind.ts";
import type { AnyAction } from "./effects.ts";
import { plannedActions, type Action, type PlannedAction } from "./plan.ts";

export interface PassRun<A extends AnyAction = Action> {
  /** the decisions of the plan the pass acted on (what `plan` prints) */
  planned: PlannedAction<A>[];
  /** the plan of the latest observation; undefined when the pass failed before it had one */
  latest: KindPlan<A> | undefined;
  results: ActionResults<A>;
  /** what ended the pass early, as thrown */
  error?: unknown;
}

/** A handler's passes as the reconciler runs them (a kind module's `reconcile` or `finalize`). */
export const passOf =
  <T extends NsxvObject, Target, Observation, A extends Action>(
    handler: PassHandler<T, Target, Observation, A>,
  ) =>
  (ctx: PassContext<T>): Promise<PassRun> =>
    runPass(handler, ctx) as Promise<PassRun>;

/** Runs one pass; never rejects (a failure is returned with what the pass got to). */
export async function runPass<T extends NsxvObject, Target, Observation, A extends AnyAction>(
  handler: PassHandler<T, Target, Observation, A>,
  ctx: PassContext<T>,
): Promise<PassRun<A>> {
  const run: PassRun<A> = { planned: [], latest: undefined, results: { done: [], dropped: [], refused: [] } };
  try {
    const target = await handler.prepare(ctx);
    let observed: Observation;
    const planFresh = async (depth: "first" | "full", by?: number): Promise<KindPlan<A>> => {
      observed = await observeBy(handler.observe(target, ctx, depth), by, ctx);
      run.latest = handler.plan(target, observed, ctx);
      return run.latest;
    };
    // the observations a pass starts with are bounded by Ready's expiry; a fresh read after a 409 is not
    let plan = await planFresh("first", ctx.observeByMs);
    if (plan.observeFully === true) plan = await planFresh("full", ctx.observeByMs);
    run.planned = plannedActions(plan.actions, plan.withheld);
    if (ctx.state.mode === "plan") return run;
    for (const planned of plan.actions) {
      // a fresh read since this plan was made: act on the fresh plan's version of the action
      const action = run.latest === plan ? planned : findAction(handler, run.latest, planned);
      if (action === undefined) run.results.dropped.push(planned);
      else await carryOut({ handler, ctx, target, observed: () => observed, run, planFresh }, action);
    }
  } catch (error) {
    run.error = error;
  }
  return run;
}

/** What a pass carries from one action to the next. */
interface PassInProgress<T extends NsxvObject, Target, Observation, A extends AnyAction> {
  handler: PassHandler<T, Target, Observation, A>;
  ctx: PassContext<T>;
  target: Target;
  /** the observation the latest plan was made on: what an action is carried out on */
  observed: () => Observation;
  run: PassRun<A>;
  /** reads the manager again and plans on that read */
  planFresh: (depth: "full") => Promise<KindPlan<A>>;
}

/** One action, through the manager's answers that call for a fresh read (bounded). */
async function carryOut<T extends NsxvObject, Target, Observation, A extends AnyAction>(
  pass: PassInProgress<T, Target, Observation, A>,
  first: A,
): Promise<void> {
  const { handler, ctx, target, observed, planFresh } = pass;
  const { results } = pass.run;
  let action = first;
  for (let attempt = 1; ; attempt++) {
    try {
      const outcome = await handler.execute(action, { target, observed: observed() }, ctx);
      if (outcome === "done") results.done.push(action);
      else results.refused.push({ action, failure: outcome.refused });
      return;
    } catch (error) {
      const answer = error instanceof NsxError ? handler.rereadOn[error.code] : undefined;
      if (answer === undefined) throw error;
      if (answer === "retry" && attempt >= ctx.state.maxAttempts)
        throw retriesExhausted(handler.describe(action), attempt, error);
      const fresh = findAction(handler, await planFresh("full"), action);
      if (fresh === undefined) {
        results.dropped.push(action);
        return;
      }
      if (answer !== "retry") {
        const message = `${handler.describe(action)}: ${answer.says}, yet a fresh read still shows it to do: ${(error as Error).message}`;
        results.refused.push({ action, failure: { reason: answer.refuse, message } });
        return;
      }
      action = fresh;
    }
  }
}

/**
 * The observation, or Unreachable once `byMs` passes first: a pass never waits on a manager that
 * does not answer past the moment its object's Ready must stop keeping the last observation. The
 * calls are not cancelled (a shared list still lands for the next pass), only no longer waited
 * for. A deadline that has passed still lets an observation that needs no call (the manager's
 * list) settle first: the timer fires after it.
 */
async function observeBy<O>(observing: Promise<O>, byMs: number | undefined, ctx: PassContext): Promise<O> {
  if (byMs === undefined) return observing;
  const { clock } = ctx.state;
  let timer: Timer | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = clock.setTimer(byMs - clock.now(), () => reject(observationExpired(ctx, byMs)));
  });
  try {
    return await Promise.race([observing, expired]);
  } finally {
    timer?.cancel();
  }
}

function findAction<A extends AnyAction>(
  handler: { targetOf(action: A): string },
  plan: KindPlan<A> | undefined,
  action: A,
): A | undefined {
  const key = handler.targetOf(action);
  return plan?.actions.find((a) => handler.targetOf(a) === key);
}
