/**
 * `nsxv-operator run`: the operator. Against a cluster (kubeconfig, or the in-cluster config) it
 * watches the custom resources and the Secrets their managers reference; with `--manifests DIR`
 * it runs the same controller on a directory of manifests. Flag parsing and wiring only: every
 * flag is checked here with a message naming it, the work is in src/operator/operator.ts.
 * Exit status: 0 after SIGTERM/SIGINT; 1 for bad flags, a fatal error, a lost lease (the pod
 * restarts, as controller-runtime's do), a status file another process holds, or its lock lost.
 */
import { Command, InvalidArgumentError, Option } from "commander";
import { pino, type Logger as PinoLogger } from "pino";
import { CodedError } from "../util/errors.ts";
import type { ClusterSourceConfig, LeaseConfig } from "./run-cluster.ts";
import { formatDuration, parseDuration } from "../api/duration.ts";
import { RECONCILER_DEFAULTS } from "../reconcile/reconciler.ts";
import { DIRECTORY_DEFAULTS, DirectorySource } from "../source/directory.ts";
import { StatusFileLock } from "../source/status-lock.ts";
import type { ReadBounds } from "../api/manifest-files.ts";
import { readBoundOptions, readBoundsOf, type ReadBoundFlags } from "./read-bounds.ts";
import { LEADER_ELECTION_DEFAULTS } from "../controller/leader-election.ts";
import {
  defaultConcurrencyPerManager,
  Operator,
  OPERATOR_DEFAULTS,
  type OperatorExit,
} from "../operator/operator.ts";
import { parseBindAddress } from "../controller/probes.ts";
import { DNS_SUBDOMAIN_PATTERN, isDnsLabel, isDnsSubdomain } from "../api/names.ts";

/** The flags as commander hands them over, each already checked on its own. */
export interface RunFlags extends ReadBoundFlags {
  kubeconfig?: string;
  namespace?: string;
  selector?: string;
  concurrency: number;
  concurrencyPerManager?: number;
  syncInterval: number;
  fullReadInterval: number;
  fullReadsPerMinute: number;
  leaderElect: boolean;
  leaderElectionId: string;
  leaderElectionNamespace?: string;
  leaderElectionLeaseDuration: number;
  leaderElectionRenewDeadline: number;
  leaderElectionRetryPeriod: number;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  logLevel: string;
  shutdownTimeout: number;
  manifests?: string;
  statusFile?: string;
  removalQuietPeriod?: number;
}

/** `run --manifests`: the directory, the status file, and the rules of reading them. */
export interface ManifestsSourceConfig {
  type: "manifests";
  dir: string;
  statusFile?: string;
  removalQuietMs: number;
  readBounds: ReadBounds;
}

export interface RunConfig {
  source: ClusterSourceConfig | ManifestsSourceConfig;
  concurrency: number;
  concurrencyPerManager: number;
  syncIntervalMs: number;
  fullReadIntervalMs: number;
  fullReadsPerMinute: number;
  shutdownTimeoutMs: number;
  leaderElection?: LeaseConfig;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  logLevel: string;
}

/** Flags that cannot go together, or a flag that needs another. */
export class RunFlagError extends CodedError {
  constructor(message: string) {
    super("INVALID_FLAGS", message);
  }
}

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];
const LABEL_NAME = "([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)";
const LABEL_KEY = `((${DNS_SUBDOMAIN_PATTERN.slice(1, -1)})/)?${LABEL_NAME}`;
const LABEL_VALUE = `(${LABEL_NAME})?`;
const REQUIREMENT = new RegExp(
  `^(!?${LABEL_KEY}|${LABEL_KEY}\\s*(=|==|!=)\\s*${LABEL_VALUE}|${LABEL_KEY}\\s+(in|notin)\\s*\\(\\s*${LABEL_VALUE}(\\s*,\\s*${LABEL_VALUE})*\\s*\\))$`,
);

function integerAtLeast(min: number) {
  return (text: string): number => {
    if (!/^\d+$/.test(text) || Number(text) < min)
      throw new InvalidArgumentError(`must be an integer >= ${min}`);
    return Number(text);
  };
}

/** A Go duration (`90s`, `5m`, `1h30m`) of at least `minMs`, in milliseconds. */
function durationAtLeast(minMs: number, minText: string) {
  return (text: string): number => {
    let ms: number;
    try {
      ms = parseDuration(text);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
    if (ms < minMs) throw new InvalidArgumentError(`must be at least ${minText}`);
    return ms;
  };
}

function bindAddress(text: string): string {
  if (text === "0") return text;
  try {
    parseBindAddress(text);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  return text;
}

function namespace(text: string): string {
  if (!isDnsLabel(text)) throw new InvalidArgumentError("not a namespace name (RFC 1123 label)");
  return text;
}

function leaseName(text: string): string {
  if (!isDnsSubdomain(text)) throw new InvalidArgumentError("not a Lease name (RFC 1123 subdomain)");
  return text;
}

/** Kubernetes label selector syntax: `a=b,c!=d,e in (f,g),!h,i`. */
export function labelSelector(text: string): string {
  const requirements = text.split(/,(?![^(]*\))/);
  const bad = requirements.find((r) => !REQUIREMENT.test(r.trim()));
  if (text.trim() === "" || bad !== undefined) {
    throw new InvalidArgumentError(
      `not a label selector${bad === undefined ? "" : `: ${JSON.stringify(bad.trim())}`}`,
    );
  }
  return text;
}

function logLevel(text: string): string {
  if (!LOG_LEVELS.includes(text)) throw new InvalidArgumentError(`must be one of ${LOG_LEVELS.join(", ")}`);
  return text;
}

/** The flags of one source given with the other: cluster-only flags with --manifests, and the other way round. */
function checkSourceFlags(flags: RunFlags): void {
  if (flags.manifests !== undefined) {
    const clusterOnly = (
      [
        ["--kubeconfig", flags.kubeconfig],
        ["--namespace", flags.namespace],
        ["--selector", flags.selector],
        ["--leader-election-namespace", flags.leaderElectionNamespace],
      ] as const
    ).find(([, value]) => value !== undefined);
    if (clusterOnly !== undefined)
      throw new RunFlagError(`${clusterOnly[0]} needs a cluster: not with --manifests`);
    if (flags.leaderElect) throw new RunFlagError("--leader-elect needs a cluster: not with --manifests");
    return;
  }
  const notFromFiles = "a cluster's objects are not read from files";
  const manifestsOnly = (
    [
      ["--status-file", flags.statusFile, "in a cluster, status is on the objects"],
      ["--removal-quiet-period", flags.removalQuietPeriod, "in a cluster, a delete is a delete"],
      ["--max-manifest-bytes", flags.maxManifestBytes, notFromFiles],
      ["--max-manifest-documents", flags.maxManifestDocuments, notFromFiles],
    ] as const
  ).find(([, value]) => value !== undefined);
  if (manifestsOnly !== undefined)
    throw new RunFlagError(`${manifestsOnly[0]} goes with --manifests (${manifestsOnly[2]})`);
}

/** Checks the flags against each other and applies the defaults that depend on others or on the environment. */
export function runConfig(flags: RunFlags, env: Record<string, string | undefined> = process.env): RunConfig {
  checkSourceFlags(flags);
  const perManager = flags.concurrencyPerManager ?? defaultConcurrencyPerManager(flags.concurrency);
  if (perManager > flags.concurrency) {
    throw new RunFlagError(
      `--concurrency-per-manager (${perManager}) cannot be more than --concurrency (${flags.concurrency}): a manager's share of the reconciles`,
    );
  }
  const leaderElection = leaderElectionConfig(flags, env);
  return {
    source: sourceConfig(flags),
    concurrency: flags.concurrency,
    concurrencyPerManager: perManager,
    syncIntervalMs: flags.syncInterval,
    fullReadIntervalMs: flags.fullReadInterval,
    fullReadsPerMinute: flags.fullReadsPerMinute,
    shutdownTimeoutMs: flags.shutdownTimeout,
    ...(flags.leaderElect ? { leaderElection } : {}),
    metricsBindAddress: flags.metricsBindAddress,
    healthProbeBindAddress: flags.healthProbeBindAddress,
    logLevel: flags.logLevel,
  };
}

/** Where the objects come from: a directory of manifests, or the cluster. */
function sourceConfig(flags: RunFlags): RunConfig["source"] {
  if (flags.manifests !== undefined)
    return {
      type: "manifests",
      dir: flags.manifests,
      ...(flags.statusFile !== undefined ? { statusFile: flags.statusFile } : {}),
      removalQuietMs: flags.removalQuietPeriod ?? DIRECTORY_DEFAULTS.removalQuietMs,
      readBounds: readBoundsOf(flags),
    };
  return {
    type: "cluster",
    ...(flags.kubeconfig !== undefined ? { kubeconfig: flags.kubeconfig } : {}),
    ...(flags.namespace !== undefined ? { namespace: flags.namespace } : {}),
    ...(flags.selector !== undefined ? { selector: flags.selector } : {}),
  };
}

/** The leader election's lease, checked whether or not it is on: the lease outlasts the renewal, the renewal its retries. */
function leaderElectionConfig(
  flags: RunFlags,
  env: Record<string, string | undefined>,
): NonNullable<RunConfig["leaderElection"]> {
  const le = {
    leaseDurationMs: flags.leaderElectionLeaseDuration,
    renewDeadlineMs: flags.leaderElectionRenewDeadline,
    retryPeriodMs: flags.leaderElectionRetryPeriod,
  };
  if (le.leaseDurationMs <= le.renewDeadlineMs) {
    throw new RunFlagError(
      "--leader-election-lease-duration must be longer than --leader-election-renew-deadline",
    );
  }
  if (le.renewDeadlineMs <= le.retryPeriodMs * (1 + LEADER_ELECTION_DEFAULTS.jitterFactor)) {
    throw new RunFlagError(
      `--leader-election-renew-deadline must be longer than ${1 + LEADER_ELECTION_DEFAULTS.jitterFactor} x --leader-election-retry-period`,
    );
  }
  return {
    id: flags.leaderElectionId,
    namespace: flags.leaderElectionNamespace ?? env.POD_NAMESPACE ?? flags.namespace ?? "default",
    ...le,
  };
}

/** How `run` ended: the operator's exit, or the status file's lock lost to another process. */
export type RunExit = OperatorExit | "status-file-lost";

/**
 * Builds the source and the operator from the configuration and runs it until `signal` aborts.
 * The cluster's parts (client-node, heavy) are loaded only when no --manifests is given. With a
 * status file, its lock is taken first (StatusFileLockedError when a live process holds it), and
 * losing it stops the operator.
 */
export async function runOperator(
  config: RunConfig,
  signal: AbortSignal,
  logger: PinoLogger,
): Promise<RunExit> {
  const { statusFile } = config.source.type === "manifests" ? config.source : {};
  const lock = statusFile === undefined ? undefined : await StatusFileLock.acquire(statusFile, { logger });
  try {
    const stop = lock === undefined ? signal : AbortSignal.any([signal, lock.lost]);
    const exit = await startOperator(config, stop, logger);
    return lock?.lost.aborted === true && !signal.aborted ? "status-file-lost" : exit;
  } finally {
    await lock?.release();
  }
}

async function startOperator(
  config: RunConfig,
  signal: AbortSignal,
  logger: PinoLogger,
): Promise<OperatorExit> {
  const le = config.leaderElection;
  const { source, leaderElection } =
    config.source.type === "manifests"
      ? {
          source: new DirectorySource({
            dir: config.source.dir,
            statusFile: config.source.statusFile,
            removalQuietMs: config.source.removalQuietMs,
            readBounds: config.source.readBounds,
            logger,
          }),
          leaderElection: undefined,
        }
      : await (await import("./run-cluster.ts")).clusterParts(config.source, le, logger);
  const operator = new Operator({
    source,
    concurrency: config.concurrency,
    concurrencyPerManager: config.concurrencyPerManager,
    syncIntervalMs: config.syncIntervalMs,
    fullReadIntervalMs: config.fullReadIntervalMs,
    fullReadsPerMinute: config.fullReadsPerMinute,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    metricsBindAddress: config.metricsBindAddress,
    healthProbeBindAddress: config.healthProbeBindAddress,
    logger,
    ...(leaderElection !== undefined ? { leaderElection } : {}),
  });
  logger.info(
    {
      source: config.source,
      leaderElection: le?.id ?? false,
      concurrency: config.concurrency,
      concurrencyPerManager: config.concurrencyPerManager,
    },
    "starting",
  );
  return operator.start(signal);
}

/** The flags of `run`, as data: name, help, parser, default (with the text --help shows); one entry per flag, hence its length. */
function runOptions(): Option[] {
  const d = OPERATOR_DEFAULTS;
  const le = LEADER_ELECTION_DEFAULTS;
  const option = (
    flags: string,
    help: string,
    parse?: (text: string) => unknown,
    fallback?: [unknown, string?],
  ) => {
    const o = new Option(flags, help);
    if (parse !== undefined) o.argParser(parse);
    if (fallback !== undefined) o.default(fallback[0], fallback[1]);
    return o;
  };
  const duration = (minMs: number, minText: string) => durationAtLeast(minMs, minText);
  // a duration's default as --help shows it, from the one number
  const shown = (ms: number): [number, string] => [ms, formatDuration(ms)];
  return [
    option(
      "--kubeconfig <file>",
      "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else the in-cluster config)",
    ),
    option("--namespace <name>", "watch only this namespace (default: every namespace)", namespace),
    option(
      "--selector <selector>",
      "label selector of the custom resources, to split them between deployments",
      labelSelector,
    ),
    option(
      "--concurrency <n>",
      "reconciles at once (a manager with none running may have one beyond it)",
      integerAtLeast(1),
      [d.concurrency],
    ),
    option(
      "--concurrency-per-manager <n>",
      "reconciles at once of the objects of one real NSX manager, however many NSXManager objects name it, so that a manager that hangs stalls only itself (default: half of --concurrency, rounded up)",
      integerAtLeast(1),
    ),
    option(
      "--sync-interval <duration>",
      `drift check of objects without spec.syncInterval, ±${RECONCILER_DEFAULTS.jitterFraction * 100} %`,
      duration(1000, "1s"),
      shown(d.syncIntervalMs),
    ),
    option(
      "--full-read-interval <duration>",
      "each edge is read in full at least this often, even while the manager's edge list shows it in sync, within --full-reads-per-minute",
      duration(1000, "1s"),
      [d.fullReadIntervalMs, "1h"],
    ),
    option(
      "--full-reads-per-minute <n>",
      "at most this many of those full reads a minute per NSXManager: one with more EdgeTenants than fit in --full-read-interval at this rate has each edge read once per EdgeTenants / n minutes instead, as its Ready message says",
      integerAtLeast(1),
      [d.fullReadsPerMinute],
    ),
    option(
      "--leader-elect",
      "reconcile only while holding the Lease (for more than one replica)",
      undefined,
      [false],
    ),
    option("--leader-election-id <name>", "name of the Lease", leaseName, [le.name]),
    option(
      "--leader-election-namespace <name>",
      "namespace of the Lease (default: $POD_NAMESPACE, else --namespace, else default)",
      namespace,
    ),
    option(
      "--leader-election-lease-duration <duration>",
      "how long standbys wait before taking over",
      duration(1000, "1s"),
      shown(le.leaseDurationMs),
    ),
    option(
      "--leader-election-renew-deadline <duration>",
      "the leader gives up when it could not renew for this long",
      duration(1000, "1s"),
      shown(le.renewDeadlineMs),
    ),
    option(
      "--leader-election-retry-period <duration>",
      "between attempts to acquire or renew",
      duration(100, "100ms"),
      shown(le.retryPeriodMs),
    ),
    option("--metrics-bind-address <address>", 'address of /metrics; "0" for none', bindAddress, [
      d.metricsBindAddress,
    ]),
    option(
      "--health-probe-bind-address <address>",
      'address of /healthz and /readyz; "0" for none',
      bindAddress,
      [d.healthProbeBindAddress],
    ),
    option("--log-level <level>", `one of ${LOG_LEVELS.join(", ")}`, logLevel, ["info"]),
    option(
      "--shutdown-timeout <duration>",
      "on SIGTERM, how long stopping may take: running reconciles get all but a quarter of it (at most 5s), kept for releasing the Lease",
      duration(0, "0s"),
      shown(d.shutdownTimeoutMs),
    ),
    option(
      "--manifests <dir>",
      "run on the manifests of this directory instead of a cluster; status is logged",
    ),
    option(
      "--status-file <file>",
      "with --manifests: keep status in this file across restarts; one process at a time holds it (<file>.lock)",
    ),
    option(
      "--removal-quiet-period <duration>",
      `with --manifests: an object missing from the files is removed (its deletionPolicy acted on) only once the file it was in has stayed unchanged this long; what is added or changed is acted on at once (default: ${formatDuration(DIRECTORY_DEFAULTS.removalQuietMs)})`,
      duration(0, "0s"),
    ),
    ...readBoundOptions("with --manifests: "),
  ];
}

export function runCommand(): Command {
  const command = new Command("run").description(
    "Run the operator: reconcile NSXManager, EdgeTenant and IPPoolAllocations objects of a cluster, or of a directory (--manifests).",
  );
  for (const option of runOptions()) command.addOption(option);
  return command.action(async function (this: Command, flags: RunFlags) {
    let config: RunConfig;
    try {
      config = runConfig(flags);
    } catch (error) {
      this.error(`error: ${(error as Error).message}`);
    }
    process.exit(await runProcess(config));
  });
}

/** Runs the operator as the process: SIGTERM/SIGINT stop it gracefully (a second one at once); the exit code. */
async function runProcess(config: RunConfig): Promise<number> {
  // synchronous writes: a line is on stdout when the call returns, so the last lines cannot be
  // lost or overtaken at exit by a write still queued in libuv's thread pool (pino's default
  // destination writes there, and its flush does not wait for a write in progress)
  const logger = pino({ level: config.logLevel }, pino.destination({ dest: 1, sync: true }));
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (name: string): void => {
    signals += 1;
    // a second signal does not wait for the graceful shutdown
    if (signals > 1) process.exit(1);
    logger.info({ signal: name }, "shutting down");
    stop.abort();
    // the operator stops within the timeout by itself; this keeps the promise whatever happens
    // (a second at least: a timeout of 0 still lets the lease go)
    setTimeout(
      () => {
        logger.error({ shutdownTimeoutMs: config.shutdownTimeoutMs }, "shutdown timeout passed; exiting");
        process.exit(1);
      },
      Math.max(config.shutdownTimeoutMs, 1_000),
    ).unref();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  let code = 1;
  try {
    code = (await runOperator(config, stop.signal, logger)) === "stopped" ? 0 : 1;
  } catch (err) {
    // one line that says what to change; the stack for whoever runs at debug
    logger.fatal({ error: err instanceof Error ? err.message : String(err) }, "operator failed");
    logger.debug({ err }, "operator failure detail");
  }
  return code;
}
