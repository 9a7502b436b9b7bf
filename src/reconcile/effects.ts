/**
 * What a kind and its actions do, as everything outside the kind sees it: one row per action
 * type, the change lists, the Normal events' reasons and how `plan` and `apply` name an object,
 * declared by the kind in its actions.ts (edge-tenant/actions.ts, ip-pool/actions.ts,
 * nsx-manager/actions.ts) as one `KindEffects` and listed in actions.ts. The report, the
 * operator's events and metrics, `plan` and `apply`'s output and the simulator's audit look a
 * kind's or an action's effect up here; none of them branches on a kind or an action's type.
 * Pure data: no handler is imported here or by a kind's actions.ts, so the report may import it.
 */
import type { ChangeReason, ReconcileEvent } from "./conditions.ts";

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

/** An object as `plan` and `apply` name it: its kind, its spec and its status as they stand. */
export interface ShownObject {
  kind: string;
  spec: unknown;
  status?: unknown;
}

/** How `plan` and `apply` name an object of a kind. */
export interface KindView<O extends ShownObject> {
  /** what it acts on, as its line shows it (`edge-7 (web, version 3)`, `ipaddresspool-2 (pods)`) */
  target(object: O, status: O["status"] | undefined): string;
  /** what two objects of a conflict both name (`edge edge-7`); the object's reference when absent */
  claimed?(object: O): string;
  /** where this pass's verdict came from (an EdgeTenant: its edge list, or its edge read) */
  observedVia?(status: O["status"] | undefined): "EdgeList" | "Read" | undefined;
}

/**
 * What a kind declares of its actions (the union `A`), its change lists (named `L`) and its
 * objects (`O`): its actions.ts exports one, and the registry (actions.ts) lists it.
 */
export interface KindEffects<A extends AnyAction, L extends string, O extends ShownObject = ShownObject> {
  /** the kind (`EdgeTenant`): what `view` is looked up by */
  kind: string;
  actions: ActionEffects<A>;
  changeLists: { readonly [N in L]: ChangeList };
  /** every reason of the Normal events its actions and passes give (changeReasons) */
  changeReasons: readonly ChangeReason[];
  view: KindView<O>;
}

/** The action union of a kind's effects (distributes over a union of them). */
export type ActionOf<K> = K extends KindEffects<infer A, string, never> ? A : never;

/** The change lists' names of a kind's effects (distributes over a union of them). */
export type ChangeListOf<K> = K extends KindEffects<AnyAction, infer L, never> ? L : never;

/**
 * A kind's change reasons, declared: each name becomes a reason its events may carry, and the
 * list the registry gathers (the docs name every one).
 */
export function changeReasons<const N extends string>(...names: N[]): { readonly [K in N]: ChangeReason } {
  return Object.freeze(Object.fromEntries(names.map((name) => [name, name]))) as unknown as {
    readonly [K in N]: ChangeReason;
  };
}

/** Every kind's effects gathered: the built-in one is actions.ts's EFFECTS. */
export interface EffectRegistry {
  actions: Readonly<Record<string, ActionEffect<AnyAction>>>;
  changeLists: Readonly<Record<string, ChangeList>>;
  changeReasons: readonly ChangeReason[];
  views: Readonly<Record<string, KindView<ShownObject>>>;
}

/**
 * The registry of a list of kinds' effects. Two kinds declaring one action type, change list,
 * change reason or kind is a bug, said at once: the later would silently replace the earlier.
 */
export function registryOf(kinds: readonly KindEffects<never, string, never>[]): EffectRegistry {
  const actions: Record<string, ActionEffect<AnyAction>> = {};
  const changeLists: Record<string, ChangeList> = {};
  const views: Record<string, KindView<ShownObject>> = {};
  const reasons: ChangeReason[] = [];
  for (const kind of kinds) {
    addOnce(views, { [kind.kind]: kind.view as unknown as KindView<ShownObject> }, "kind");
    addOnce(actions, effectRows(kind.actions), "action type");
    addOnce(changeLists, kind.changeLists, "change list");
    for (const reason of kind.changeReasons) {
      if (reasons.includes(reason)) throw new Error(`two kinds declare the change reason ${reason}`);
      reasons.push(reason);
    }
  }
  return Object.freeze({
    actions: Object.freeze(actions),
    changeLists: Object.freeze(changeLists),
    changeReasons: Object.freeze(reasons),
    views: Object.freeze(views),
  });
}

function addOnce<V>(into: Record<string, V>, rows: Readonly<Record<string, V>>, what: string): void {
  for (const [key, value] of Object.entries(rows)) {
    if (key in into) throw new Error(`two kinds declare the ${what} ${key}`);
    into[key] = value;
  }
}

/** How `plan` and `apply` name an object of a kind; a kind without a registered view is a bug, said at once. */
export function kindViewOf(registry: EffectRegistry, kind: string): KindView<ShownObject> {
  const view = registry.views[kind];
  if (view === undefined) throw new Error(`no kind registers how to show a ${kind}`);
  return view;
}

/** The effects of an action; an action no kind declared is a bug, said at once. */
export function effectOf(registry: EffectRegistry, action: AnyAction): ActionEffect<AnyAction> {
  const effect = registry.actions[action.type];
  if (effect === undefined) throw new Error(`no kind declares the effects of action ${action.type}`);
  return effect;
}

/** The rows of a kind's effects, as the registry holds them (a row takes its own action type only). */
function effectRows<A extends AnyAction>(
  rows: ActionEffects<A>,
): Readonly<Record<string, ActionEffect<AnyAction>>> {
  return rows as unknown as Record<string, ActionEffect<AnyAction>>;
}

/** The children of `<edge>` the registry's actions may change: what the simulator's audit sanctions. */
export function sanctionedEdgeFields(registry: EffectRegistry): string[] {
  return [...new Set(Object.values(registry.actions).flatMap((effect) => effect.edgeFields))].sort();
}
