/**
 * One pass of the operator's reconcile over manifests on disk, without a cluster: the engine of
 * `plan`, `apply` and the demo. It loads and validates the manifests (refusing to call any
 * manager when one is bad), fills in credentials (Secret manifests, or NSX_USERNAME and
 * NSX_PASSWORD, which win), then reconciles the NSXManagers first and their dependents after,
 * concurrently within the managers' limits. Printing is output.ts's job.
 */
import {
  loadManifests,
  ManifestError,
  type LoadedObject,
  type ManifestSource,
  type SkippedDocument,
  type SkippedFile,
} from "../api/manifests.ts";
import { ReadLedger, type ReadBounds } from "../api/manifest-files.ts";
import { SPEC_DEFAULTS, KINDS, type NSXManager, type NsxvObject, type Secret } from "../api/types.ts";
import { ManagerClient, type ManagerClientOptions } from "../nsx/client.ts";
import {
  createReconciler,
  ManagerConnections,
  memoryStore,
  type ClosableManagerApi,
  type ExecutionMode,
  type MemoryStore,
  type Reconcile,
  type ReconcileReport,
} from "../reconcile/index.ts";
import { DEFAULT_NAMESPACE, managerRefOf, objectKey, refOf } from "../api/refs.ts";
import { withDefaults } from "../util/options.ts";
import { CodedError } from "../util/errors.ts";
import { hasQueryOrFragment, hideUrlCredentials } from "../util/url-credentials.ts";
import { realClock, type Clock } from "../util/clock.ts";

/** Bad command-line input found before any manager call (an unknown --manager-url name, no objects). */
export class CliInputError extends CodedError {
  constructor(message: string) {
    super("CLI_BAD_INPUT", message);
  }
}

export interface OneShotOptions {
  /** manifest files and directories */
  paths: readonly string[];
  mode: ExecutionMode;
  /**
   * apply: release strays although one pass cannot observe minStrayAge (maxPerSync still
   * applies). plan always plans what `apply --release-strays` would do.
   */
  releaseStrays?: boolean;
  /** read every edge in full instead of taking the manager's edge list for what it shows */
  fullRead?: boolean;
  /** NSXManager `name` or `namespace/name` → URL that replaces its spec.url */
  managerUrls?: ReadonlyMap<string, string>;
  /** NSX_USERNAME and NSX_PASSWORD are read from here; default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /** default: `new ManagerClient(options)` */
  createClient?: (options: ManagerClientOptions) => ClosableManagerApi;
  /** default realClock */
  clock?: Pick<Clock, "now" | "setTimer">;
  signal?: AbortSignal;
  /** what all the manifests read may hold together; default READ_BOUNDS */
  readBounds?: ReadBounds;
}

export const ONE_SHOT_DEFAULTS = Object.freeze({
  releaseStrays: false,
  fullRead: false,
  createClient: (options: ManagerClientOptions): ClosableManagerApi => new ManagerClient(options),
  clock: realClock,
});

/** One object of the pass: as it was run (URL overridden), where it came from, and what happened. */
export interface ObjectOutcome {
  object: NsxvObject;
  source: ManifestSource;
  report: ReconcileReport;
}

export type OneShotResult =
  | { type: "invalid"; errors: ManifestError[]; skipped: SkippedDocument[]; skippedFiles: SkippedFile[] }
  | {
      type: "ran";
      mode: ExecutionMode;
      releaseStrays: boolean;
      fullRead: boolean;
      /** ms since the epoch, by the pass's clock: strays first seen from here on are "stray now" */
      startedAtMs: number;
      /** NSXManagers first, then EdgeTenants, then IPPoolAllocations; by namespace/name within a kind */
      objects: ObjectOutcome[];
      skipped: SkippedDocument[];
      skippedFiles: SkippedFile[];
    };

/** an NSXManager's name, or namespace/name */
const MANAGER_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * `NAME=URL` texts (repeatable flag) → map; throws CliInputError on a malformed one. A text is
 * quoted only through hideUrlCredentials: a URL given without `NAME=`, or one whose password holds
 * `=`, must not print its password in the refusal.
 */
export function parseManagerUrls(texts: readonly string[]): Map<string, string> {
  const urls = new Map<string, string>();
  for (const text of texts) {
    const at = text.indexOf("=");
    const name = text.slice(0, at).trim();
    const url = text.slice(at + 1).trim();
    if (at <= 0 || url === "" || !MANAGER_NAME.test(name)) {
      throw new CliInputError(
        `--manager-url ${JSON.stringify(hideUrlCredentials(text))}: want NAME=URL, NAME an NSXManager's name or namespace/name`,
      );
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new CliInputError(
        `--manager-url ${name}: ${JSON.stringify(hideUrlCredentials(url))} is not a URL`,
      );
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
      throw new CliInputError(`--manager-url ${name}: the URL must be https:// or http://`);
    }
    if (parsed.username !== "" || parsed.password !== "") {
      // never echo it: it carries credentials
      throw new CliInputError(`--manager-url ${name}: the URL must not carry credentials`);
    }
    if (hasQueryOrFragment(url)) {
      // nor this one: a query often carries a token
      throw new CliInputError(
        `--manager-url ${name}: the URL must not carry a query string or fragment (? or #)`,
      );
    }
    if (urls.has(name)) throw new CliInputError(`--manager-url ${name}: given twice`);
    urls.set(name, url);
  }
  return urls;
}

/**
 * Loads the manifests and runs one pass. Returns `invalid` (no manager called) when a manifest is
 * bad; throws CliInputError for bad flags or when no object was found.
 */
export async function runOneShot(options: OneShotOptions): Promise<OneShotResult> {
  const o = withDefaults({ ...ONE_SHOT_DEFAULTS, env: process.env }, options);
  const set = await loadManifests(o.paths, { ledger: new ReadLedger(o.paths.join(", "), o.readBounds) });
  const errors = [...set.errors, ...missingManagers(set.objects, set.errors)];
  const { skipped, skippedFiles } = set;
  if (errors.length > 0) return { type: "invalid", errors, skipped, skippedFiles };
  if (set.objects.length === 0) {
    throw new CliInputError(`no NSXManager, EdgeTenant or IPPoolAllocations object in ${o.paths.join(", ")}`);
  }
  const loaded = inFileOrder(overrideUrls(set.objects, o.managerUrls ?? new Map()));
  const store = memoryStore({
    objects: loaded.map((l) => l.object),
    secrets: credentialSecrets(loaded, set.secrets, o.env),
  });
  const connections = new ManagerConnections({ createClient: o.createClient });
  const releaseStrays = o.releaseStrays;
  const reconcile = createReconciler({
    store,
    connections,
    clock: o.clock,
    mode: o.mode,
    // plan shows what `apply --release-strays` would release; output.ts says the flag is needed
    oneShot: { releaseStrays: o.mode === "plan" ? true : releaseStrays, fullRead: o.fullRead },
    kinds: { IPPoolAllocations: { poolListTtlMs: Infinity } },
  });
  const startedAtMs = o.clock.now();
  const sorted = sortedByKindThenName(loaded);
  const managers = sorted.filter((l) => l.object.kind === "NSXManager");
  const dependents = sorted.filter((l) => l.object.kind !== "NSXManager");
  const limit = concurrencyLimit(managers.map((l) => l.object as NSXManager));
  try {
    // a manager's status tells its dependents whether it authenticated: they make no calls if not;
    // no object reads a dependent's status, which the pass never writes back
    const pass = (items: LoadedObject[], keep: MemoryStore | undefined) =>
      mapBounded(items, limit, (item) => reconcileOne(reconcile, item, { keep, signal: o.signal }));
    const objects = [...(await pass(managers, store)), ...(await pass(dependents, undefined))];
    const { fullRead } = o;
    return {
      type: "ran",
      mode: o.mode,
      releaseStrays,
      fullRead,
      startedAtMs,
      objects,
      skipped,
      skippedFiles,
    };
  } finally {
    await connections.close();
  }
}

/** One object's pass; `keep`: the store its new status goes to, for the objects after it to read. */
async function reconcileOne(
  reconcile: Reconcile,
  item: LoadedObject,
  { keep, signal }: { keep: MemoryStore | undefined; signal: AbortSignal | undefined },
): Promise<ObjectOutcome> {
  const report = await reconcile(refOf(item.object), signal === undefined ? {} : { signal });
  if (keep !== undefined && report.status !== undefined)
    keep.put({ ...item.object, status: report.status } as NsxvObject);
  return { object: item.object, source: item.source, report };
}

/**
 * A dependent whose managerRef names no NSXManager of the files: caught before any call. A
 * manager that is in the files but invalid has its own error: its dependents are not blamed.
 */
function missingManagers(
  objects: readonly LoadedObject[],
  errors: readonly ManifestError[],
): ManifestError[] {
  const managers = new Set([
    ...objects.filter((l) => l.object.kind === "NSXManager").map((l) => objectKey(refOf(l.object))),
    ...errors
      .filter((e) => e.kind === "NSXManager" && e.objectName !== undefined)
      .map((e) =>
        objectKey({ kind: "NSXManager", namespace: e.namespace ?? DEFAULT_NAMESPACE, name: e.objectName! }),
      ),
  ]);
  return objects.flatMap(({ object, source }) => {
    const manager = managerRefOf(object);
    if (manager === undefined || managers.has(objectKey(manager))) return [];
    const { namespace, name } = refOf(object);
    const detail = `NSXManager ${manager.namespace}/${manager.name} is not in the manifests`;
    return [
      new ManifestError({
        ...source,
        kind: object.kind,
        namespace,
        name,
        field: "spec.managerRef.name",
        detail,
      }),
    ];
  });
}

/**
 * Each object's creationTimestamp set to its place in the files (the first object one second
 * after the epoch, the next one second later, ...): without a cluster, which of two objects
 * naming one edge or pool acts is decided by file order, and the conflict says so.
 */
function inFileOrder(objects: readonly LoadedObject[]): LoadedObject[] {
  return objects.map((item, i) => {
    const metadata = { ...item.object.metadata, creationTimestamp: new Date((i + 1) * 1000).toISOString() };
    return { ...item, object: { ...item.object, metadata } as NsxvObject };
  });
}

function overrideUrls(objects: readonly LoadedObject[], urls: ReadonlyMap<string, string>): LoadedObject[] {
  const used = new Set<string>();
  const result = objects.map((item): LoadedObject => {
    if (item.object.kind !== "NSXManager") return item;
    const { namespace, name } = refOf(item.object);
    const key = urls.has(`${namespace}/${name}`) ? `${namespace}/${name}` : name;
    const url = urls.get(key);
    if (url === undefined) return item;
    used.add(key);
    return { ...item, object: { ...item.object, spec: { ...item.object.spec, url } } };
  });
  const unused = [...urls.keys()].filter((k) => !used.has(k));
  if (unused.length > 0) {
    throw new CliInputError(`--manager-url names no NSXManager of the manifests: ${unused.join(", ")}`);
  }
  return result;
}

/**
 * The Secrets as the reconciler reads them: each decoded into stringData, and for every
 * NSXManager's credentials Secret, NSX_USERNAME and NSX_PASSWORD over it when set (creating it
 * when no manifest defines it).
 */
function credentialSecrets(
  objects: readonly LoadedObject[],
  secrets: readonly { secret: Secret; values: Record<string, string> }[],
  env: Readonly<Record<string, string | undefined>>,
): Secret[] {
  const byName = new Map<string, Secret>();
  const keyOf = (namespace: string | undefined, name: string) => `${namespace ?? DEFAULT_NAMESPACE}/${name}`;
  for (const { secret, values } of secrets) {
    const { apiVersion, kind, metadata } = secret;
    byName.set(keyOf(metadata.namespace, metadata.name), { apiVersion, kind, metadata, stringData: values });
  }
  const overrides = Object.fromEntries(
    [
      ["username", env["NSX_USERNAME"]],
      ["password", env["NSX_PASSWORD"]],
    ].filter(([, value]) => value !== undefined && value !== ""),
  );
  if (Object.keys(overrides).length > 0) {
    for (const { object } of objects) {
      if (object.kind !== "NSXManager") continue;
      const { namespace } = refOf(object);
      const name = object.spec.credentialsSecretRef.name;
      const existing = byName.get(keyOf(namespace, name));
      byName.set(keyOf(namespace, name), {
        apiVersion: "v1",
        kind: "Secret",
        metadata: existing?.metadata ?? { name, namespace },
        stringData: { ...existing?.stringData, ...overrides },
      });
    }
  }
  return [...byName.values()];
}

/** The sum of the managers' request caps: each client queues beyond its own cap anyway. */
function concurrencyLimit(managers: readonly NSXManager[]): number {
  const sum = managers.reduce(
    (n, m) => n + (m.spec.maxConcurrentRequests ?? SPEC_DEFAULTS.maxConcurrentRequests),
    0,
  );
  return Math.max(1, sum);
}

/** fn over items with at most `limit` running at once; results in the order of items. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** By kind (KINDS' order), then by namespace/name; each object's key made once, not per comparison. */
function sortedByKindThenName(items: readonly LoadedObject[]): LoadedObject[] {
  const keyed = items.map((item) => {
    const { namespace, name } = refOf(item.object);
    return { item, kind: KINDS.indexOf(item.object.kind), key: `${namespace}/${name}` };
  });
  keyed.sort((a, b) => a.kind - b.kind || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map(({ item }) => item);
}
