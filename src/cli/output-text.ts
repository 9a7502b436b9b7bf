/**
 * The text form of a pass for people, terraform-like: per object its changes (`~` a tenant, `-` a
 * release) and what became of them, one line for objects with nothing to show, and a summary
 * with counts. Colours only on a terminal, and never with NO_COLOR.
 */
import type { ManifestError, SkippedDocument, SkippedFile } from "../api/manifests.ts";
import type { ChangeView, CliIo, ObjectView, PassView } from "./output.ts";

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

export function renderText(view: PassView, options: { colour: boolean }): string {
  const p = painter(options.colour);
  const lines = view.objects.flatMap((o) => objectLines(o, view.startedAtMs, p));
  return [...lines, "", summaryLine(view, p), ""].join("\n");
}

/** where an EdgeTenant's verdict came from, as its header says it */
const VIA: Record<NonNullable<ObjectView["observedVia"]>, string> = {
  EdgeList: "(from the edge list)",
  Read: "(read in full)",
};

function objectLines(object: ObjectView, startedAtMs: number, p: Painter): string[] {
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
  const lines = [header, ...warnings, ...object.changes.map((c) => `  ${changeLine(c, startedAtMs, p)}`)];
  if (object.error !== undefined)
    lines.push(`  ${p.red("✗")} ${p.red(object.error.reason)}: ${printable(object.error.message)}`);
  else if (object.state === "conflict")
    lines.push(`  ${p.red("✗")} ${p.red("Conflict")}: ${printable(object.message)}`);
  return lines;
}

function changeLine(change: ChangeView, startedAtMs: number, p: Painter): string {
  // a withheld change's why reads as a sentence: "held back: rerun with --release-strays", ...
  const why = (otherwise: string) => p.dim(printable(change.why ?? otherwise));
  if (change.type !== "releaseAddress") {
    const { from, to } = change;
    const text = `tenant: ${quote(from)} → ${quote(to)}`;
    switch (change.result) {
      case "planned":
        return `${p.yellow("~")} ${text}`;
      case "done":
        return `${p.yellow("~")} ${text}  ${p.green("corrected")}`;
      case "observed":
        return `${p.dim("~")} ${text}  ${p.dim("(observe only: not changed)")}`;
      default:
        return `${p.dim("·")} ${text}  ${why("not changed")}`;
    }
  }
  const { ip, note, firstSeen } = change;
  const noted = `${printable(ip)}  ${note === undefined ? p.dim("(no note)") : `note ${quote(note)}`}`;
  switch (change.result) {
    case "planned":
      return `${p.red("-")} release ${noted}  ${p.dim(strayAge(firstSeen, startedAtMs))}`;
    case "done":
      return `${p.red("-")} ${noted}  ${p.green("released")}`;
    case "observed":
      return `${p.dim("-")} ${noted}  ${p.dim("(observe only: would release)")}`;
    default:
      return `${p.dim("·")} ${noted}  ${why("not released")}`;
  }
}

function strayAge(firstSeen: string, startedAtMs: number): string {
  const ms = Date.parse(firstSeen);
  // a pass takes a moment: anything first seen during it is "now"
  return Number.isFinite(ms) && ms < startedAtMs - 1000 ? `stray since ${firstSeen}` : "stray now";
}

function summaryLine(view: PassView, p: Painter): string {
  const s = view.summary;
  const done = s.tenantCorrections + s.releases > 0;
  const counts = `${plural(s.tenantCorrections, "tenant correction")}, ${plural(s.releases, "release")}`;
  const failed = s.errors + s.conflicts > 0;
  const head = p.bold(
    view.command === "plan"
      ? failed
        ? `Plan incomplete: ${counts} found.`
        : done
          ? `Plan: ${counts}.`
          : "No changes."
      : done || failed
        ? `Applied: ${counts}.`
        : "Nothing changed.",
  );
  const heldStrays = view.objects.some((o) =>
    o.changes.some((c) => c.type === "releaseAddress" && c.result === "held"),
  );
  const notes = [
    s.observedOnly > 0 ? `${plural(s.observedOnly, "object")} observed only` : undefined,
    s.paused > 0 ? `${s.paused} paused` : undefined,
    s.heldBack > 0 ? `${s.heldBack} held back` : undefined,
  ].filter((n) => n !== undefined);
  const failures = [
    s.conflicts > 0 ? plural(s.conflicts, "conflict") : undefined,
    s.errors > 0 ? plural(s.errors, "error") : undefined,
  ].filter((n) => n !== undefined);
  const line = [head, notes.length > 0 ? `${capitalize(notes.join(", "))}.` : undefined];
  if (failures.length > 0) line.push(p.red(`${capitalize(failures.join(", "))}.`));
  const hint =
    view.releaseStrays || !(view.command === "plan" ? s.releases > 0 : heldStrays)
      ? undefined
      : p.dim("Strays are released only by apply --release-strays: one pass cannot observe minStrayAge.");
  const listed =
    s.fromEdgeList === 0
      ? undefined
      : p.dim(
          `${plural(s.fromEdgeList, "edge")} judged from the manager's edge list, not read: --full-read reads every edge in full.`,
        );
  return [line.filter((n) => n !== undefined).join(" "), hint, listed]
    .filter((n) => n !== undefined)
    .join("\n");
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
