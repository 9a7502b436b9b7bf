/**
 * A full read of an edge, checked against what else is known of it before it may decide a write:
 * the shape of its last full read, remembered in status (`status.edgeShape`, with that read's
 * version: so a restart does not forget it), and the manager's edge list, whose `revision` is the
 * edge's version when the list was read. The manager raises an edge's version with every change,
 * so a read may lack what the last read had only at a higher version, and may never be older
 * than the list. A doubted read (it lost sections or list members, or is older than the list: a
 * proxy that cut or rewrote the answer, a cache serving an old document) is read again, and the
 * second read decides only when it is no older than the list and doubts nothing, or lost content
 * at a higher version and agrees with the first (the edge really changed). What every edge of its
 * type must carry is the client's own check, on every PUT (nsx/edge-shape.ts).
 */
import type { EdgeShapeStatus } from "../../api/types.ts";
import type { EdgeDocument } from "../../nsx/edge-document.ts";
import { describePath, type EdgeShape } from "../../nsx/edge-shape.ts";
import type { EdgeSummary } from "../../nsx/types.ts";
import { detached } from "../../util/detached.ts";
import { omitUndefined } from "../../util/options.ts";
import { ReconcileError } from "../errors.ts";

/** What is known of an edge besides a new read of it. */
export interface KnownOfEdge {
  /** the shape of its last full read, when status remembers one of this edge */
  remembered?: EdgeShapeStatus | undefined;
  /** its summary in the manager's edge list, when the list shows it */
  listed?: EdgeSummary | undefined;
}

/** Names kept once for all edges: the same few dozen sections recur in every edge's status. */
const names = new Map<string, string>();
/** Beyond this many different names (a manager sending names of its own), each is kept as a copy of its own. */
const MAX_NAMES = 1024;

/** The one copy of a name, detached from the document it was read from. */
function shared(name: string): string {
  const known = names.get(name);
  if (known !== undefined) return known;
  const copy = detached(name);
  if (names.size < MAX_NAMES) names.set(copy, copy);
  return copy;
}

/** What status keeps of a read: names shared by every edge, nothing of the document. */
export function rememberedShapeOf(edgeId: string, document: EdgeDocument): EdgeShapeStatus {
  const shape = document.shape();
  const lists = Object.entries(shape.counts).map(([path, count]) => ({ path: shared(path), count }));
  return omitUndefined({ edgeId, version: document.version, sections: shape.sections.map(shared), lists });
}

/** The remembered shape when it is of this edge (a status remembers the edge its spec named then). */
export function rememberedOf(
  status: { edgeShape?: EdgeShapeStatus } | undefined,
  edgeId: string,
): EdgeShapeStatus | undefined {
  const shape = status?.edgeShape;
  return shape?.edgeId === edgeId && Array.isArray(shape.sections) ? shape : undefined;
}

/** What the read lost of the remembered shape: sections, then list members, as a message names them. */
export function lostSince(remembered: EdgeShapeStatus | undefined, shape: EdgeShape): string[] {
  if (remembered === undefined) return [];
  const sections = new Set(shape.sections);
  const lost = remembered.sections.filter((s) => !sections.has(s)).map((s) => describePath(s));
  for (const { path, count: before } of Array.isArray(remembered.lists) ? remembered.lists : []) {
    const now = shape.counts[path] ?? 0;
    if (typeof before === "number" && now < before)
      lost.push(`${before - now} of ${before} ${describePath(path)}`);
  }
  return lost;
}

/** Why the read is older than the edge list, when it is: the list showed a later version. */
function olderThanList(document: EdgeDocument, listed: EdgeSummary | undefined): string | undefined {
  const { version } = document;
  const revision = listed?.revision;
  if (version === undefined || revision === undefined || version >= revision) return undefined;
  return `the read has version ${version}, the edge list showed version ${revision}`;
}

/** Whether the read is doubtful: older than the list, or lacking what the last full read had. */
export function doubted(document: EdgeDocument, known: KnownOfEdge): boolean {
  return (
    olderThanList(document, known.listed) !== undefined ||
    lostSince(known.remembered, document.shape()).length > 0
  );
}

/**
 * The read that decides after a doubted one: the second read, unless it is still older than the
 * list (StaleRead), or still lacks what was remembered while its version did not rise or it
 * disagrees with the first (IncompleteEdge). Throws; nothing is written, and the next pass reads
 * again.
 */
export function decidingRead(
  edgeId: string,
  reads: { first: EdgeDocument; second: EdgeDocument },
  known: KnownOfEdge,
): EdgeDocument {
  const { first, second } = reads;
  const after = "nothing is written; the next pass reads it again";
  const stale = olderThanList(second, known.listed);
  if (stale !== undefined) {
    const message = `edge ${edgeId}: read twice, and both reads are older than the manager's edge list (${stale}): a cache or proxy may serve an old document; ${after}`;
    throw new ReconcileError({ reason: "StaleRead", message });
  }
  const lost = lostSince(known.remembered, second.shape());
  if (lost.length === 0) return second;
  const before = known.remembered?.version;
  if (before !== undefined && second.version !== undefined && second.version <= before) {
    const message = `edge ${edgeId}: read twice at version ${second.version}, and it lacks ${lost.join(", ")} that its last full read, of version ${before}, had: the manager raises the version with every change, so this is an answer cut short or rewritten on the way; ${after}`;
    throw new ReconcileError({ reason: "IncompleteEdge", message });
  }
  if (!sameShape(first.shape(), second.shape())) {
    const message = `edge ${edgeId}: read twice, the reads disagree and the second lacks ${lost.join(", ")} that its last full read had (an answer cut short?); ${after}`;
    throw new ReconcileError({ reason: "IncompleteEdge", message });
  }
  return second;
}

function sameShape(a: EdgeShape, b: EdgeShape): boolean {
  return (
    a.sections.join("\n") === b.sections.join("\n") &&
    JSON.stringify(Object.entries(a.counts).sort()) === JSON.stringify(Object.entries(b.counts).sort())
  );
}
