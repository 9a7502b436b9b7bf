/**
 * What an action does, as everything outside its kind sees it: one row per action type, declared
 * by the kind beside its actions (edge-tenant/actions.ts, ip-pool/actions.ts) and gathered in
 * actions.ts. The report, the operator's events and metrics, `plan` and `apply`'s output and the
 * simulator's audit look an action's effect up here; none of them branches on an action's type.
 */
import type { ReconcileEvent } from "./conditions.ts";

/** Any action: a `type` and its fields (a kind's own union narrows it). */
export interface AnyAction {
  type: string;
}

/** A change made on the manager, as the report lists it: the action's fields a reader needs. */
export type ChangeRecord = Readonly<Record<string, string | undefined>>;

/**
 * A piece of a line `plan` and `apply` print: text (escaped), a value from outside quoted as JSON
 * (`(none)` when undefined), or text shown dimmed.
 */
export type CliText = string | { quoted: string | undefined } | { dim: string };

/** How `plan` and `apply` print an action, by what became of it. */
export interface CliLine {
  /** `~` a value changed in place, `-` something removed */
  sign: "~" | "-";
  /** what the action is about: `tenant: "a" → "b"`, `10.0.0.7  note "x"` */
  subject: CliText[];
  /** a word before the subject while it is only planned (`release`) */
  plannedVerb?: string;
  /** after a planned one: how long what it acts on has been so (`stray since <time>`, or `stray now`) */
  age?: { what: string; since: string };
  /** after a done one: `corrected`, `released` */
  done: string;
  /** after one an Observe object would make: `(observe only: not changed)` */
  observed: string;
  /** after one not made, when nothing says why: `not changed` */
  notDone: string;
}

/** One action type's effects. */
export interface ActionEffect<A extends AnyAction> {
  /** the list of the report's changes it is recorded in (a key of the kind's `changeLists`) */
  change: string;
  /** what the report's change list records of it */
  record(action: A): ChangeRecord;
  /** the Normal event once the manager accepted it */
  event(action: A): ReconcileEvent;
  /** the key of what it acts on: a planned action is matched by it to one done or dropped */
  target(action: A): string;
  /** how `plan` and `apply` print it */
  cli(action: A): CliLine;
  /** the children of `<edge>` its PUT may change (none when it writes no edge): the simulator's audit sanctions them */
  edgeFields: readonly string[];
}

/** A list of the report's changes: what counts it and how people read it. */
export interface ChangeList {
  /** the Prometheus counter of its changes (`nsxv_ip_releases_total`) */
  metric: { name: string; help: string };
  /** one change, in `plan`'s summary (`tenant correction`, `release`) */
  noun: string;
  /**
   * printed under `plan`'s summary when it found such changes, and under `apply`'s when some were
   * held back, unless `--release-strays` was given (releases: why they wait)
   */
  hint?: string;
}

/** The rows of a kind's actions: one per action type of its union `A`, or it does not compile. */
export type ActionEffects<A extends AnyAction> = { [T in A["type"]]: ActionEffect<Extract<A, { type: T }>> };

/** Every action's effects and every change list: the built-in one is actions.ts's EFFECTS. */
export interface EffectRegistry {
  actions: Readonly<Record<string, ActionEffect<AnyAction>>>;
  changeLists: Readonly<Record<string, ChangeList>>;
}

/** The effects of an action; an action no kind declared is a bug, said at once. */
export function effectOf(registry: EffectRegistry, action: AnyAction): ActionEffect<AnyAction> {
  const effect = registry.actions[action.type];
  if (effect === undefined) throw new Error(`no kind declares the effects of action ${action.type}`);
  return effect;
}

/** The rows of a kind's effects, as the registry holds them (a row takes its own action type only). */
export function effectRows<A extends AnyAction>(
  rows: ActionEffects<A>,
): Readonly<Record<string, ActionEffect<AnyAction>>> {
  return rows as unknown as Record<string, ActionEffect<AnyAction>>;
}

/** The children of `<edge>` the registry's actions may change: what the simulator's audit sanctions. */
export function sanctionedEdgeFields(registry: EffectRegistry): string[] {
  return [...new Set(Object.values(registry.actions).flatMap((effect) => effect.edgeFields))].sort();
}
