/**
 * What `plan` and `apply` print: the pass's reports turned into one view (per object, each change
 * with what became of it), rendered as text for people (terraform-like; colours only on a TTY,
 * never with NO_COLOR) or as one JSON document for machines (shape in JSON_FORMAT_VERSION's doc),
 * and the exit code. The text form is in output-text.ts. Credentials never reach these modules:
 * reports do not carry them.
 */
import type { ManifestError, ManifestSource, SkippedDocument, SkippedFile } from "../api/manifests.ts";
import type { Condition, ManagementPolicy, NsxvObject } from "../api/types.ts";
import { NsxApiError } from "../nsx/errors.ts";
import type { ReconcileError } from "../reconcile/errors.ts";
import {
  EFFECTS,
  effectOf,
  isPaused,
  kindViewOf,
  type Action,
  type AnyAction,
  type ChangeListName,
  type EffectRegistry,
  type ExecutionMode,
  type PlannedAction,
  type ReconcileReport,
} from "../reconcile/index.ts";
import { formatRef, objectKey, refOf, type ObjectRef } from "../api/refs.ts";
import type { ObjectOutcome, OneShotResult } from "./oneshot.ts";
import { VERSION } from "./version.ts";

/** Where commands write; `process` in the binary, captured buffers in tests. */
export interface CliIo {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  env: Readonly<Record<string, string | undefined>>;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}

/**
 * 0: nothing pending (plan) or nothing it manages left different (apply); 2: plan found changes,
 * or apply finished without error but held something back (strays without --release-strays,
 * maxPerSync reached); 1: any error or bad input.
 */
export const EXIT = { ok: 0, error: 1, changes: 2 } as const;

/**
 * Version of the JSON document `--output json` prints:
 * `{ formatVersion, version, command, releaseStrays, fullRead, exitCode, summary, objects[],
 * skipped[], skippedFiles[], manifestErrors[] }` (`skippedFiles`: files of a directory left unread,
 * `{ file, reason }`) (`version`: the tool's; `summary.fromEdgeList`: EdgeTenants judged from the
 * manager's edge list without a read), each object `{ kind, namespace, name, file, line,
 * managementPolicy?, target?, observedVia?, state, message, changes[], error?, warnings? }`
 * (`observedVia`: an EdgeTenant's verdict came from `EdgeList`, the edge's summary in the manager's
 * list, or from `Read`, the edge read in full; `warnings`: an NSXManager whose connection is
 * insecure, `{ reason, message }`; `target`: the manager's URL, the edge with its name and
 * version, the pool with its name), each change the action
 * (`setTenant`: edgeId, from, to; `releaseAddress`: poolId, ip, managerIp, allocationId, note,
 * firstSeen) plus
 * `result` and `why`; each manifest error `{ file, line, documentIndex, kind, namespace, name,
 * field, detail, message }`. 2: `documentIndex` counts from 1, as the text output does.
 */
export const JSON_FORMAT_VERSION = 2;

/** planned: plan would do it; done / notDone: apply did it or not; held: not this pass; observed: Observe */
export type ChangeResult = "planned" | "done" | "notDone" | "held" | "never" | "observed";
/** the action as planned (a union on `type`), and what became of it */
export type ChangeView = Action & { result: ChangeResult; why?: string };
export type ObjectState = "inSync" | "changes" | "drifted" | "observedOnly" | "paused" | "conflict" | "error";

export interface ErrorView {
  reason: string;
  message: string;
  /** the manager's answer, when the failure was one */
  manager?: {
    status: number;
    method: string;
    path: string;
    errorCode?: string;
    details?: string;
    moduleName?: string;
  };
}

export interface ObjectView {
  kind: NsxvObject["kind"];
  namespace: string;
  name: string;
  file: string;
  line: number;
  managementPolicy?: ManagementPolicy;
  /** the manager URL, the edge or the pool, as far as known */
  target?: string;
  /** where an EdgeTenant's verdict came from: the manager's edge list, or the edge read in full */
  observedVia?: "EdgeList" | "Read";
  state: ObjectState;
  /** the Ready condition's message, or the failure's */
  message: string;
  changes: ChangeView[];
  error?: ErrorView;
  /** what a person must know though nothing failed: an insecure connection (`Insecure=True`) */
  warnings?: WarningView[];
}

export interface WarningView {
  reason: string;
  message: string;
}

/**
 * The counts of a pass. Besides these, one count per change list the kinds declare
 * (`tenantCorrections`, `releases`: reconcile/actions.ts), planned (plan) or done (apply).
 */
export interface PassCounts {
  objects: number;
  /** changes not made this pass (maxPerSync, no --release-strays, ...), Observe ones aside */
  heldBack: number;
  /** Observe objects that ran (not paused, not failed): what they would change is never pending */
  observedOnly: number;
  paused: number;
  conflicts: number;
  errors: number;
  /** EdgeTenants judged from the manager's edge list, their edges not read (none with --full-read) */
  fromEdgeList: number;
}

export type Summary = PassCounts & Record<ChangeListName, number>;

/** The summary of a pass that ran nothing, the change lists of `effects` at 0, in their order. */
function emptySummary(effects: EffectRegistry): Summary {
  const lists = Object.fromEntries(Object.keys(effects.changeLists).map((list) => [list, 0]));
  const { objects, ...rest } = EMPTY_COUNTS;
  return { objects, ...lists, ...rest } as Summary;
}

const EMPTY_COUNTS: PassCounts = Object.freeze({
  objects: 0,
  heldBack: 0,
  observedOnly: 0,
  paused: 0,
  conflicts: 0,
  errors: 0,
  fromEdgeList: 0,
});

export interface PassView {
  command: ExecutionMode;
  releaseStrays: boolean;
  fullRead: boolean;
  startedAtMs: number;
  objects: ObjectView[];
  skipped: SkippedDocument[];
  skippedFiles: SkippedFile[];
  summary: Summary;
  exitCode: number;
}

/** The view of a pass; `effects` is the built-in registry but in tests of a new kind. */
export function viewOf(
  result: Extract<OneShotResult, { type: "ran" }>,
  effects: EffectRegistry = EFFECTS,
): PassView {
  const sources = new Map(result.objects.map((o) => [objectKey(refOf(o.object)), o.source]));
  const objects = result.objects.map((o) =>
    objectView(o, { mode: result.mode, effects, sourceOf: (ref) => sources.get(objectKey(ref)) }),
  );
  const summary = summaryOf(objects, result.mode, effects);
  const failed = summary.errors + summary.conflicts > 0;
  // plan: changes to make; apply: something it manages left different (held back by a flag or a cap)
  const pending = result.mode === "plan" ? changesCounted(summary, effects) > 0 : summary.heldBack > 0;
  const exitCode = failed ? EXIT.error : pending ? EXIT.changes : EXIT.ok;
  const { releaseStrays, fullRead, startedAtMs, skipped, skippedFiles } = result;
  return {
    command: result.mode,
    releaseStrays,
    fullRead,
    startedAtMs,
    objects,
    skipped,
    skippedFiles,
    summary,
    exitCode,
  };
}

function summaryOf(objects: readonly ObjectView[], mode: ExecutionMode, effects: EffectRegistry): Summary {
  const count = (state: ObjectState) => objects.filter((o) => o.state === state).length;
  const changes = objects.flatMap((o) => o.changes);
  const effective = mode === "plan" ? "planned" : "done";
  const summary = emptySummary(effects) as unknown as Record<string, number>;
  summary["objects"] = objects.length;
  for (const change of changes)
    if (change.result === effective) summary[effectOf(effects, change).change]! += 1;
  return {
    ...(summary as Summary),
    heldBack: changes.filter((c) => c.result === "held").length,
    observedOnly: objects.filter(
      (o) => o.managementPolicy === "Observe" && !["paused", "error", "conflict"].includes(o.state),
    ).length,
    paused: count("paused"),
    conflicts: count("conflict"),
    errors: count("error"),
    fromEdgeList: objects.filter((o) => o.observedVia === "EdgeList").length,
  };
}

/** The changes of every list the summary counts. */
export function changesCounted(summary: Summary, effects: EffectRegistry): number {
  const counts = summary as unknown as Record<string, number>;
  return Object.keys(effects.changeLists).reduce((sum, list) => sum + (counts[list] ?? 0), 0);
}

/** What an object's view is made with besides the object. */
interface ViewContext {
  mode: ExecutionMode;
  effects: EffectRegistry;
  sourceOf: (ref: ObjectRef) => ManifestSource | undefined;
}

function objectView({ object, source, report }: ObjectOutcome, context: ViewContext): ObjectView {
  const { namespace, name } = refOf(object);
  const status = report.status ?? object.status;
  const policy = object.kind === "NSXManager" ? undefined : (object.spec.managementPolicy ?? "Enforce");
  const changes = report.planned.map((p) => changeView(p, report, { ...context, policy }));
  const target = kindViewOf(context.effects, object.kind).target(object, status);
  const conditions = status?.conditions ?? [];
  const { state, message, error } = stateOf({ object, report, conditions, changes }, context);
  const warnings = (status?.conditions ?? [])
    .filter((c) => c.type === "Insecure" && c.status === "True")
    .map(({ reason, message }) => ({ reason, message }));
  const observedVia = observedViaOf(object, status, { state, effects: context.effects });
  return {
    kind: object.kind,
    namespace,
    name,
    file: source.file,
    line: source.line,
    ...(policy !== undefined ? { managementPolicy: policy } : {}),
    ...(target !== undefined ? { target } : {}),
    ...(observedVia !== undefined ? { observedVia } : {}),
    state,
    message,
    changes,
    ...(error !== undefined ? { error } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/**
 * How this pass observed the object, where its kind says (an EdgeTenant: its edge list or a
 * read): a failed, paused or conflicting object observed nothing (a status from the manifest may
 * still say how an earlier pass did).
 */
function observedViaOf(
  object: NsxvObject,
  status: NsxvObject["status"],
  { state, effects }: { state: ObjectState; effects: EffectRegistry },
): ObjectView["observedVia"] {
  if (["error", "paused", "conflict"].includes(state)) return undefined;
  return kindViewOf(effects, object.kind).observedVia?.(status);
}

/** What the pass did to one object, as the summary of an object's view needs it. */
interface ObjectPass {
  object: NsxvObject;
  report: ReconcileReport;
  /** of the status after the pass */
  conditions: readonly Condition[];
  changes: readonly ChangeView[];
}

function stateOf(
  { object, report, conditions, changes }: ObjectPass,
  { sourceOf, effects }: ViewContext,
): { state: ObjectState; message: string; error?: ErrorView } {
  if (report.outcome.type === "failed") {
    const error = errorView(report.outcome.error);
    return { state: "error", message: error.message, error };
  }
  if (isPaused(object.metadata))
    return { state: "paused", message: `annotation nsxv.io/paused is "true": no manager calls` };
  const conflict = conditions.find((c) => c.type === "Stalled" && c.reason === "Conflict");
  if (conflict !== undefined) {
    const owner = report.conflictOwner;
    const at = owner === undefined ? undefined : sourceOf(owner);
    // without a cluster, the first of two objects in the files acts (oneshot.ts gives it the older creationTimestamp)
    const message =
      owner === undefined || at === undefined
        ? conflict.message
        : `${conflictTarget(object, effects)} is also named by ${formatRef(owner)} (${at.file}:${at.line}), which comes first in the files: this object acts on nothing`;
    return { state: "conflict", message };
  }
  const results = new Set(changes.map((c) => c.result));
  const state: ObjectState =
    results.has("planned") || results.has("done") || results.has("notDone")
      ? "changes"
      : results.has("observed")
        ? "observedOnly"
        : results.has("held") || results.has("never")
          ? "drifted"
          : "inSync";
  return { state, message: conditions.find((c) => c.type === "Ready")?.message ?? "" };
}

function changeView(
  planned: PlannedAction,
  report: ReconcileReport,
  { mode, effects, policy }: ViewContext & { policy: ManagementPolicy | undefined },
): ChangeView {
  const { action } = planned;
  let result: ChangeResult;
  let why = planned.withheld;
  if (why !== undefined) {
    // "never released" is the spec's own choice (maxPerSync 0, an unreadable address): not held back
    result = policy === "Observe" ? "observed" : why.startsWith("never released") ? "never" : "held";
  } else if (mode === "plan") result = "planned";
  else if (wasDone(action, report, effects)) result = "done";
  else {
    const dropped = report.dropped.find((d) => sameTarget(d.action, action, effects));
    result = dropped?.heldBack === true ? "held" : "notDone";
    why =
      dropped?.why ??
      (report.outcome.type === "failed"
        ? "not carried out: see the error"
        : "not needed: a fresh read after a concurrent change showed it done");
  }
  return why === undefined ? { ...action, result } : { ...action, result, why };
}

/**
 * Done as planned: a change of its list records what it acts on (the tenant of that edge, that
 * very allocation and not another one on the address).
 */
function wasDone(action: Action, report: ReconcileReport, effects: EffectRegistry): boolean {
  const effect = effectOf(effects, action);
  const lists = report.changes as unknown as Record<string, readonly AnyAction[] | undefined>;
  const records = lists[effect.change] ?? [];
  // a record keeps the fields its action's target is made of
  return records.some((record) => effect.target(record) === effect.target(action));
}

function sameTarget(a: Action, b: Action, effects: EffectRegistry): boolean {
  const [ea, eb] = [effectOf(effects, a), effectOf(effects, b)];
  return ea.change === eb.change && ea.target(a) === eb.target(b);
}

/** What two objects of a conflict both name (the edge, the pool as selected), as the kind says. */
function conflictTarget(object: NsxvObject, effects: EffectRegistry): string {
  return kindViewOf(effects, object.kind).claimed?.(object) ?? formatRef(refOf(object));
}

/** The failure's reason and message, and the manager's answer found along the cause chain. */
function errorView(error: ReconcileError): ErrorView {
  const view: ErrorView = { reason: error.reason, message: error.message };
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (!(e instanceof NsxApiError)) continue;
    const { status, method, path, errorCode, details, moduleName } = e;
    view.manager = { status, method, path };
    if (errorCode !== undefined) view.manager.errorCode = errorCode;
    if (details !== undefined) view.manager.details = details;
    if (moduleName !== undefined) view.manager.moduleName = moduleName;
    break;
  }
  return view;
}

// ---- JSON

export function renderJson(view: PassView): string {
  const document = {
    formatVersion: JSON_FORMAT_VERSION,
    version: VERSION,
    command: view.command,
    releaseStrays: view.releaseStrays,
    fullRead: view.fullRead,
    exitCode: view.exitCode,
    summary: view.summary,
    objects: view.objects,
    skipped: view.skipped.map(skippedJson),
    skippedFiles: view.skippedFiles,
    manifestErrors: [],
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** The same document when the manifests were refused: no object ran, manifestErrors says why. */
export function renderInvalidJson(
  { command, releaseStrays, fullRead }: { command: ExecutionMode; releaseStrays: boolean; fullRead: boolean },
  {
    errors,
    skipped,
    skippedFiles,
  }: {
    errors: readonly ManifestError[];
    skipped: readonly SkippedDocument[];
    skippedFiles: readonly SkippedFile[];
  },
): string {
  const manifestErrors = errors.map((e) => ({
    file: e.file,
    line: e.line,
    // counted from 1, as the text says "document 1"
    documentIndex: e.documentIndex === undefined ? undefined : e.documentIndex + 1,
    kind: e.kind,
    namespace: e.namespace,
    name: e.objectName,
    field: e.field,
    detail: e.detail,
    message: e.message,
  }));
  const document = {
    formatVersion: JSON_FORMAT_VERSION,
    version: VERSION,
    command,
    releaseStrays,
    fullRead,
    exitCode: EXIT.error,
    summary: { ...emptySummary(EFFECTS), errors: errors.length },
    objects: [],
    skipped: skipped.map(skippedJson),
    skippedFiles,
    manifestErrors,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

function skippedJson(s: SkippedDocument) {
  return {
    ...sourceJson(s.source),
    apiVersion: s.apiVersion,
    kind: s.kind,
    namespace: s.namespace,
    name: s.name,
  };
}

function sourceJson(source: ManifestSource) {
  return { file: source.file, line: source.line };
}
