/**
 * The reconcile package: one `reconcile(ref)` for the operator and the CLI, its dependencies
 * (a desired-state store, the manager connections), and what callers read from its report.
 * The handlers, planners and the conflict index are internals, exported from their modules for
 * tests and for tools that print plans.
 */
export { createReconciler, RECONCILER_DEFAULTS, type Reconcile, type ReconcilerDeps } from "./reconciler.ts";
export type { Outcome, PoolUsage, ReconcileChanges, ReconcileReport } from "./report.ts";
export type { ExecutionMode, OneShot } from "./state.ts";
export {
  ManagerConnections,
  type ClosableManagerApi,
  type ManagerConnection,
  type ManagerConnectionsOptions,
} from "./connections.ts";
export { memoryStore, type Awaitable, type DesiredStateStore, type MemoryStore } from "./store.ts";
export {
  EVENT_REASONS,
  REASONS,
  type ChangeReason,
  type EventReason,
  type Reason,
  type ReconcileEvent,
} from "./conditions.ts";
export { ReconcileError } from "./errors.ts";
export { isPaused, SUPPORTED_COMBINATIONS, type PolicyAction } from "./policy.ts";
export type { Action, DroppedAction, PlannedAction, ReleaseAction, SetTenantAction } from "./plan.ts";
export { releaseTarget } from "./ip-pool/actions.ts";
export { CHANGE_REASONS, EFFECTS, type ChangeListName } from "./actions.ts";
export {
  effectOf,
  kindViewOf,
  sanctionedEdgeFields,
  type AnyAction,
  type ChangeList,
  type CliLine,
  type CliText,
  type EffectRegistry,
} from "./effects.ts";
