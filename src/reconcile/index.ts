/**
 * The reconcile package: one `reconcile(ref)` for the operator and the CLI, its dependencies
 * (a desired-state store, the manager connections), and what callers read from its report.
 * The planners, the executor and the conflict index are internals, exported from their modules
 * for tests and for tools that print plans.
 */
export {
  createReconciler,
  DEFAULT_RECONCILER_OPTIONS,
  type Reconcile,
  type ReconcileChanges,
  type ReconcileOutcome,
  type ReconcileReport,
  type ReconcilerDeps,
} from "./reconciler.ts";
export {
  ManagerConnections,
  type ClosableManagerApi,
  type ManagerConnection,
  type ManagerConnectionsOptions,
} from "./connections.ts";
export {
  DEFAULT_NAMESPACE,
  formatRef,
  memoryStore,
  refOf,
  type Awaitable,
  type DesiredStateStore,
  type MemoryStore,
  type ObjectRef,
} from "./store.ts";
export { EVENT_REASONS, REASONS, type EventReason, type Reason, type ReconcileEvent } from "./conditions.ts";
export { ReconcileError } from "./errors.ts";
export { isPaused, SUPPORTED_COMBINATIONS, type PolicyAction } from "./policy.ts";
export type { Action, PlannedAction, ReleaseAction, SetTenantAction } from "./plan.ts";
export type { ExecutionMode } from "./executor.ts";
