/**
 * What an edge PUT did to the stored model, as paths a test can assert on: content it removed
 * (lost), content it edited (changed: a text or an attribute value), content it added. A path
 * names elements from the root, `[i]` counting among same-named siblings where there are several,
 * and `@name` for an attribute: `edge.features.firewall.firewallRules.firewallRule[3].name`,
 * `edge.features.nat@enabled`. A removed element is reported once, not element by element.
 */
import { groupByName, modelsEqual, type EdgeModel } from "./edge-model.ts";

export interface ModelDiff {
  lost: string[];
  changed: string[];
  added: string[];
  /** paths beyond MAX_PATHS per list, counted but not listed */
  omitted: number;
}

/** per list: a PUT that drops a whole large edge reports its top-level sections, not every rule */
export const MAX_PATHS = 100;

/** A diff being collected, and the paths it does not report. */
interface Collector {
  diff: ModelDiff;
  skip: (path: string) => boolean;
}

/**
 * The difference between two models of one edge, outside the ignored parts: a name is a child of
 * the root (`tenant`), a dotted path one deeper down (`features.firewall.defaultPolicy.action`),
 * its attributes and descendants included.
 */
export function diffModels(before: EdgeModel, after: EdgeModel, ignored: ReadonlySet<string>): ModelDiff {
  const out = collector(before.name, ignored);
  const keep = (m: EdgeModel) => ({ ...m, children: m.children.filter((c) => !ignored.has(c.name)) });
  compare(keep(before), keep(after), before.name, out);
  return out.diff;
}

/**
 * diffModels of two models that differ only in the text of these children of the root, each the
 * only child of its name and a leaf on both sides, in the root's order.
 */
export function diffLeafTexts(
  root: string,
  names: readonly string[],
  ignored: ReadonlySet<string>,
): ModelDiff {
  const out = collector(root, ignored);
  for (const name of names) if (!ignored.has(name)) note(out, "changed", `${root}.${name}`);
  return out.diff;
}

function collector(root: string, ignored: ReadonlySet<string>): Collector {
  const nested = [...ignored].filter((name) => name.includes(".")).map((name) => `${root}.${name}`);
  const skip = (path: string) =>
    nested.some((p) => path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}@`));
  return { diff: { lost: [], changed: [], added: [], omitted: 0 }, skip };
}

export function isEmptyDiff(diff: ModelDiff): boolean {
  return diff.lost.length + diff.changed.length + diff.added.length + diff.omitted === 0;
}

function note({ diff, skip }: Collector, kind: "lost" | "changed" | "added", path: string): void {
  if (skip(path)) return;
  if (diff[kind].length < MAX_PATHS) diff[kind].push(path);
  else diff.omitted++;
}

function compare(a: EdgeModel, b: EdgeModel, path: string, out: Collector): void {
  const after = new Map(b.attributes);
  for (const [name, value] of a.attributes) {
    const now = after.get(name);
    if (now === undefined) note(out, "lost", `${path}@${name}`);
    else if (now !== value) note(out, "changed", `${path}@${name}`);
  }
  const before = new Map(a.attributes);
  for (const [name] of b.attributes) if (!before.has(name)) note(out, "added", `${path}@${name}`);
  // an empty leaf is an element without children: <vnics/> then <vnics><vnic/></vnics> adds a vnic
  const textA = a.text !== undefined && a.text !== "";
  const textB = b.text !== undefined && b.text !== "";
  if (textA || textB) {
    if (a.text !== b.text) note(out, "changed", path);
    return;
  }
  compareChildren(a.children, b.children, path, out);
}

/**
 * Children of one name are a list: the common head and tail are matched first, so that removing
 * the first of twenty rules reports that rule lost, not nineteen changed and the last lost.
 */
function compareChildren(
  a: readonly EdgeModel[],
  b: readonly EdgeModel[],
  path: string,
  out: Collector,
): void {
  const groupsA = groupByName(a);
  const groupsB = groupByName(b);
  const names = new Set([...groupsA.keys(), ...groupsB.keys()]);
  for (const name of names) {
    const listA = groupsA.get(name) ?? [];
    const listB = groupsB.get(name) ?? [];
    const indexed = listA.length > 1 || listB.length > 1;
    const at = (i: number) => `${path}.${name}${indexed ? `[${i}]` : ""}`;
    let head = 0;
    while (head < listA.length && head < listB.length && modelsEqual(listA[head]!, listB[head]!)) head++;
    let tail = 0;
    while (
      tail < listA.length - head &&
      tail < listB.length - head &&
      modelsEqual(listA[listA.length - 1 - tail]!, listB[listB.length - 1 - tail]!)
    ) {
      tail++;
    }
    const middleA = listA.length - head - tail;
    const middleB = listB.length - head - tail;
    for (let k = 0; k < Math.max(middleA, middleB); k++) {
      const i = head + k;
      if (k >= middleB) note(out, "lost", at(i));
      else if (k >= middleA) note(out, "added", at(i));
      else compare(listA[i]!, listB[i]!, at(i), out);
    }
  }
}
