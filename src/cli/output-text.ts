/**
 * The text form of a pass for people, terraform-like: per object its changes (`~` a value changed,
 * `-` something removed: each action's line is its effect's, reconcile/effects.ts) and what became
 * of them, one line for objects with nothing to show, and a summary with counts. Colours only on a
 * terminal, and never with NO_COLOR.
 */
import type { ManifestError, SkippedDocument, SkippedFile } from "../api/manifests.ts";
import { EFFECTS, effectOf, type CliText, type EffectRegistry } from "../reconcile/index.ts";
import { changesCounted, type ChangeView, type CliIo, type ObjectView, type PassView } from "./output.ts";

/** Colours only on a terminal, and never when NO_COLOR is set to anything (no-color.org). */
export function useColour(stream: { isTTY?: boolean }, env: CliIo["env"]): boolean {
  return stream.isTTY === true && (env["NO_COLOR"] ?? "") === "";
}

type Paint = (text: string) => string;
interface Painter {
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  cyan: Paint;
}

function painter(colour: boolean): Painter {
  const sgr = (open: number, close: number): Paint =>
    colour ? (text) => `\u001b[${open}m${text}\u001b[${close}m` : (text) => text;
  return {
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
  };
}

/** What the text is rendered with: colours or not, and the effects (the built-in registry but in tests of a new kind). */
interface TextContext {
  p: Painter;
  effects: EffectRegistry;
  startedAtMs: number;
}

export function renderText(view: PassView, options: { colour: boolean; effects?: EffectRegistry }): string {
  const context = {
    p: painter(options.colour),
    effects: options.effects ?? EFFECTS,
    startedAtMs: view.startedAtMs,
  };
  const lines = view.objects.flatMap((o) => objectLines(o, context));
  return [...lines, "", ...summaryLines(view, context), ""].join("\n");
}

/** where an EdgeTenant's verdict came from, as its header says it */
const VIA: Record<NonNullable<ObjectView["observedVia"]>, string> = {
  EdgeList: "(from the edge list)",
  Read: "(read in full)",
};

function objectLines(object: ObjectView, context: TextContext): string[] {
  const { p } = context;
  const header = [
    p.bold(`${object.kind} ${object.namespace}/${object.name}`),
    object.target && p.dim(printable(object.target)),
    object.observedVia === undefined ? undefined : p.dim(VIA[object.observedVia]),
    object.managementPolicy === "Observe" ? p.cyan("[Observe]") : undefined,
  ]
    .filter((s) => s !== undefined && s !== "")
    .join("  ");
  const warnings = (object.warnings ?? []).map(
    (w) => `  ${p.yellow("!")} ${p.yellow(w.reason)}: ${printable(w.message)}`,
  );
  // objects with nothing to show take one line (and their warnings)
  if (object.state === "paused") return [`${header}  ${p.cyan("[paused]")} ${p.dim("no manager calls")}`];
  if (object.state === "inSync") {
    const message = object.kind === "EdgeTenant" || object.message === "" ? "in sync" : object.message;
    return [`${header}  ${p.green("✓")} ${printable(message)}`, ...warnings];
  }
  const lines = [header, ...warnings, ...object.changes.map((c) => `  ${changeLine(c, context)}`)];
  if (object.error !== undefined)
    lines.push(`  ${p.red("✗")} ${p.red(object.error.reason)}: ${printable(object.error.message)}`);
  else if (object.state === "conflict")
    lines.push(`  ${p.red("✗")} ${p.red("Conflict")}: ${printable(object.message)}`);
  return lines;
}

function changeLine(change: ChangeView, { p, effects, startedAtMs }: TextContext): string {
  const line = effectOf(effects, change).cli(change);
  const subject = line.subject.map((part) => cliText(part, p)).join("");
  const sign = line.sign === "-" ? p.red("-") : p.yellow("~");
  switch (change.result) {
    case "planned": {
      const verb = line.plannedVerb === undefined ? "" : `${line.plannedVerb} `;
      const age = line.age === undefined ? "" : `  ${p.dim(ageOf(line.age, startedAtMs))}`;
      return `${sign} ${verb}${subject}${age}`;
    }
    case "done":
      return `${sign} ${subject}  ${p.green(line.done)}`;
    case "observed":
      return `${p.dim(line.sign)} ${subject}  ${p.dim(line.observed)}`;
    default:
      // a withheld change's why reads as a sentence: "held back: rerun with --release-strays", ...
      return `${p.dim("·")} ${subject}  ${p.dim(printable(change.why ?? line.notDone))}`;
  }
}

function cliText(part: CliText, p: Painter): string {
  if (typeof part === "string") return printable(part);
  return "quoted" in part ? quote(part.quoted) : p.dim(printable(part.dim));
}

function ageOf({ what, since }: { what: string; since: string }, startedAtMs: number): string {
  const ms = Date.parse(since);
  // a pass takes a moment: anything first seen during it is "now"
  return Number.isFinite(ms) && ms < startedAtMs - 1000 ? `${what} since ${since}` : `${what} now`;
}

/** The summary, then a hint per change list that explains changes not made, then where verdicts came from. */
function summaryLines(view: PassView, { p, effects }: TextContext): string[] {
  const s = view.summary;
  const counted = changesCounted(s, effects);
  const counts = Object.entries(effects.changeLists)
    .map(([list, { noun }]) => plural(countOf(view, list), noun))
    .join(", ");
  const failures = [
    s.conflicts > 0 ? plural(s.conflicts, "conflict") : undefined,
    s.errors > 0 ? plural(s.errors, "error") : undefined,
  ].filter((n) => n !== undefined);
  const line = [p.bold(headOf(view.command, counts, { done: counted > 0, failed: failures.length > 0 }))];
  const notes = [
    s.observedOnly > 0 ? `${plural(s.observedOnly, "object")} observed only` : undefined,
    s.paused > 0 ? `${s.paused} paused` : undefined,
    s.heldBack > 0 ? `${s.heldBack} held back` : undefined,
  ].filter((n) => n !== undefined);
  if (notes.length > 0) line.push(`${capitalize(notes.join(", "))}.`);
  if (failures.length > 0) line.push(p.red(`${capitalize(failures.join(", "))}.`));
  const listed =
    s.fromEdgeList === 0
      ? []
      : [
          p.dim(
            `${plural(s.fromEdgeList, "edge")} judged from the manager's edge list, not read: --full-read reads every edge in full.`,
          ),
        ];
  return [line.join(" "), ...hintsOf(view, effects).map((hint) => p.dim(hint)), ...listed];
}

function headOf(
  command: PassView["command"],
  counts: string,
  { done, failed }: { done: boolean; failed: boolean },
): string {
  if (command === "apply") return done || failed ? `Applied: ${counts}.` : "Nothing changed.";
  if (failed) return `Plan incomplete: ${counts} found.`;
  return done ? `Plan: ${counts}.` : "No changes.";
}

function countOf(view: PassView, list: string): number {
  return (view.summary as unknown as Record<string, number>)[list] ?? 0;
}

/**
 * The hints of the change lists that have one, where such changes were not made: plan found some,
 * or apply held some back; never with --release-strays.
 */
function hintsOf(view: PassView, effects: EffectRegistry): string[] {
  if (view.releaseStrays) return [];
  const held = new Set(
    view.objects.flatMap((o) =>
      o.changes.filter((c) => c.result === "held").map((c) => effectOf(effects, c).change),
    ),
  );
  return Object.entries(effects.changeLists).flatMap(([list, { hint }]) => {
    const pending = view.command === "plan" ? countOf(view, list) > 0 : held.has(list);
    return hint !== undefined && pending ? [hint] : [];
  });
}

/** Manifest errors, for stderr: all of them, each naming file, line, object and field. */
export function renderManifestErrors(errors: readonly ManifestError[], options: { colour: boolean }): string {
  const p = painter(options.colour);
  const head = p.red(`error: ${plural(errors.length, "invalid manifest")}; no manager was called:`);
  return [head, ...errors.map((e) => `  ${printable(e.message)}`), ""].join("\n");
}

/** Notes for stderr: documents of kinds this tool does not read, files it did not open. */
export function renderSkipped(
  skipped: readonly SkippedDocument[],
  skippedFiles: readonly SkippedFile[],
): string {
  const documents = skipped.map((s) => {
    const what = `${s.apiVersion} ${s.kind} ${s.namespace ?? "default"}/${s.name ?? "(no name)"}`;
    return `note: skipped ${printable(what)} (${s.source.file}:${s.source.line}): not a kind this tool reads\n`;
  });
  const files = skippedFiles.map((f) => `note: ${printable(f.file)}: ${f.reason}\n`);
  return [...files, ...documents].join("");
}

function quote(text: string | undefined): string {
  return text === undefined ? "(none)" : printable(JSON.stringify(text));
}

/**
 * Text from outside (a manager's names and notes, a manifest's strings) with every control
 * character escaped (C0, DEL, C1, line and paragraph separators, bidirectional overrides), so
 * that it cannot start a line of its own, move the cursor or reorder what a reader sees.
 */
export function printable(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) =>
      ({ "\n": "\\n", "\r": "\\r", "\t": "\\t" })[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
