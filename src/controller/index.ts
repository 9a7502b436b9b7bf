/**
 * The generic controller machinery: a work queue with controller-runtime semantics, workers that
 * run a reconcile function, Lease-based leader election, health and metrics endpoints, Events and
 * Prometheus metrics. Nothing here knows the operator's kinds or the NSX manager; sources feed
 * keys into a WorkQueue and the reconcile function does the rest. Every long-lived part has the
 * shape `start(signal): Promise<void>`. The adapters to a cluster (kube-lease-store.ts,
 * kube-event-sink.ts, kube-list-watch.ts) load @kubernetes/client-node and are imported only by
 * the code that talks to one, never through this entry.
 */
export type { ExponentialBackoffOptions, RateLimiter } from "./rate-limiter.ts";
export { BACKOFF_DEFAULTS, ExponentialBackoff } from "./rate-limiter.ts";
export type { ShutDownOptions, WorkQueueOptions } from "./workqueue.ts";
export { WorkQueue } from "./workqueue.ts";
export type { ControllerOptions, FailureTraits, Logger, Reconciler, Result } from "./controller.ts";
export { CONTROLLER_DEFAULTS, Controller, nopLogger } from "./controller.ts";
export type { ControllerMetrics, QueueMetrics, ReconcileResultLabel, RuntimeMetrics } from "./metrics.ts";
export { nopMetrics, registerRuntimeMetrics } from "./metrics.ts";
export { SyncedLatch } from "./synced-latch.ts";
export type {
  LeaderCallbacks,
  LeaderElectorOptions,
  LeaseRecord,
  LeaseSpec,
  LeaseStore,
} from "./leader-election.ts";
export {
  InMemoryLeaseStore,
  LEADER_ELECTION_DEFAULTS,
  LeaderElectionError,
  LeaderElector,
  LeaseConflictError,
} from "./leader-election.ts";
export type { BoundAddress, Check, MetricsServerOptions, ProbeServerOptions } from "./probes.ts";
export {
  BindAddressError,
  METRICS_DEFAULTS,
  MetricsServer,
  PROBE_DEFAULTS,
  ProbeServer,
  parseBindAddress,
} from "./probes.ts";
export type {
  EventBody,
  EventChange,
  EventObject,
  EventRecorder,
  EventSink,
  SinkEventRecorderOptions,
} from "./events.ts";
export { EVENT_DEFAULTS, MemoryEventSink, SinkEventRecorder, nopRecorder } from "./events.ts";
