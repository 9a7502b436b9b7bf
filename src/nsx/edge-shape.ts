/**
 * What a whole edge is, written down once as data with its sources, and the shape of an edge
 * document read in one pass without a tree. A PUT replaces the edge's configuration with what it
 * carries (field notes: "a PUT that leaves out configuration sections replaces the edge's
 * configuration with what was sent"), so a document that lacks what every edge of its type
 * carries (a truncated answer, a proxy that dropped a section) must never be written back: on
 * NSX-v that PUT removes interfaces or firewall rules. The shape (which sections, how many of each
 * counted list) is also what the operator remembers of an edge between reads, in status.
 */
import { detached } from "../util/detached.ts";
import { decodeXmlText, ELEMENT_NAMES, isNameAt, walkXml, XmlChildFilter, type XmlSink } from "./xml.ts";

/** What every edge of one `<type>` carries, and where that is written. */
export interface EdgeTypeRule {
  /** how a message names the type */
  label: string;
  /** elements every such edge carries, as paths from `<edge>` (`vnics`, `features/firewall`) */
  elements: readonly string[];
  /** the `<index>` of each `<vnic>` in `<vnics>`: every one is there */
  vnicIndexes: readonly string[];
  source: string;
}

/** The direct children of `<edge>` that every edge carries, ESG and DLR alike. */
export const EVERY_EDGE: { elements: readonly string[]; source: string } = {
  elements: ["id", "version", "type", "appliances", "cliSettings", "features"],
  source:
    "nsx-manager-api.md 2.1 (the edge document, spec 4.2: the PUT body is the whole document as read); VMware's RAML, nsxEdgeUpdate's example body (vmware-archive/nsxraml, nsxvapi.raml, PUT /4.0/edges/{edgeId})",
};

/** Per `<type>`: what every such edge carries beyond EVERY_EDGE. An unknown type is not a whole edge. */
export const EDGE_TYPES: Readonly<Record<string, EdgeTypeRule>> = {
  gatewayServices: {
    label: "ESG (gatewayServices)",
    elements: [
      "vnics",
      "features/firewall",
      "features/routing",
      "features/highAvailability",
      "features/syslog",
      "features/ipsec",
      "features/dhcp",
      "features/nat",
    ],
    vnicIndexes: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
    source:
      "VMware's RAML: POST /4.0/edges, 'vNIC Parameters: Edge Services Gateway Only' (index: 'Value varies from 0-9'), and the <features> of nsxEdgeUpdate's example body (firewall, routing, highAvailability, syslog, ipsec, dhcp, nat); nsx-manager-field-notes.md ('Real edges have up to 10 vnic entries'): a deployed ESG lists all ten vNICs, connected or not",
  },
  distributedRouter: {
    label: "DLR (distributedRouter)",
    elements: ["mgmtInterface", "interfaces", "features/firewall", "features/routing"],
    vnicIndexes: [],
    source:
      "VMware's RAML: POST /4.0/edges, 'HA (Management) Interfaces and Interfaces Configuration: Logical (Distributed) Router Only' (mgmtInterface: Required; interfaces), and the firewall and routing sections it documents for logical routers",
  },
};

/** The lists whose length the shape counts, as paths from `<edge>`: losing members of one is losing content. */
export const COUNTED_LISTS: readonly string[] = [
  "vnics/vnic",
  "interfaces/interface",
  "features/firewall/firewallRules/firewallRule",
  "features/nat/natRules/natRule",
  "features/routing/staticRouting/staticRoutes/route",
];

/** At most this many sections are remembered of an edge (status stays small whatever a manager sends). */
const MAX_SECTIONS = 64;
/** Section names longer than this are not remembered. */
const MAX_SECTION_CHARS = 128;

/** The shape of an edge document. */
export interface EdgeShape {
  /** the text of `<type>`, trimmed; undefined without one */
  type: string | undefined;
  /** the direct children of `<edge>` and of its `<features>` (as `features/<name>`) */
  elements: ReadonlySet<string>;
  /**
   * what is remembered of the edge between reads: the direct children of `<edge>` that hold
   * elements, and every child of `<features>`, sorted (at most MAX_SECTIONS)
   */
  sections: string[];
  /** members of each list of COUNTED_LISTS present */
  counts: Record<string, number>;
  /** the `<index>` of each `<vnic>` of `<vnics>`, trimmed */
  vnicIndexes: string[];
}

/** the elements whose text the shape keeps */
const TEXTS = new Set(["type", "vnics/vnic/index"]);
const COUNTED = new Set(COUNTED_LISTS);
/**
 * The paths whose children the shape looks at: `<edge>` and `<features>` (their children are
 * listed), and every element on the way to a counted list or a kept text. Below any other element
 * nothing is named (most of an edge: its rules), so nothing is allocated for it.
 */
const WATCHED: ReadonlySet<string> = new Set([
  "",
  "features",
  ...[...COUNTED_LISTS, ...TEXTS].flatMap((path) =>
    path
      .split("/")
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join("/")),
  ),
]);

function childPath(parent: string, name: string): string {
  return parent === "" ? name : `${parent}/${name}`;
}

/** Paths of children of `<features>` the shape does not watch, at most this many kept. */
const MAX_FEATURE_PATHS = 1024;
/** `features/<name>` per name: one string per feature, not one built (and hashed) per edge read */
const FEATURE_PATHS = new Map<string, string>();

/** the path of a listed child the shape does not watch, named text[start, start + length), under `parent` (`<edge>` or `<features>`) */
function listedPath(parent: string, text: string, start: number, length: number): string {
  const name = ELEMENT_NAMES.at(text, start, length);
  if (parent === "") return name;
  const known = FEATURE_PATHS.get(name);
  if (known !== undefined) return known;
  const path = childPath(parent, name);
  // kept detached: a name XmlNames did not keep is a slice of the document it was read in
  if (FEATURE_PATHS.size < MAX_FEATURE_PATHS) FEATURE_PATHS.set(detached(name), detached(path));
  return path;
}

/** the last sections sorted, in the order they were read and sorted: the next edge read nearly always has the same */
let lastSections: { read: string[]; sorted: string[] } = { read: [], sorted: [] };

/** whether the set holds the list's strings in the list's order */
function inOrder(set: ReadonlySet<string>, list: readonly string[]): boolean {
  if (set.size !== list.length) return false;
  let i = 0;
  for (const item of set) if (item !== list[i++]) return false;
  return true;
}

/** what shape.sections holds of the sections read: at most MAX_SECTIONS of those short enough, sorted */
function sortedSections(read: ReadonlySet<string>): string[] {
  if (inOrder(read, lastSections.read)) return [...lastSections.sorted];
  const sorted = [...read]
    .filter((section) => section.length <= MAX_SECTION_CHARS)
    .sort()
    .slice(0, MAX_SECTIONS);
  lastSections = { read: [...read], sorted };
  return [...sorted];
}

/** a child the shape looks at, and what it does with it (decided once, not per element read) */
interface WatchedChild {
  name: string;
  path: string;
  /** its index in COUNTED_LISTS; -1 when it is not a member of a counted list */
  countIndex: number;
  /** a direct child of `<edge>` or of `<features>`: in shape.elements */
  listed: boolean;
  /** its text is kept (TEXTS) */
  text: boolean;
  /** the children it looks at below this one; undefined when none */
  children: readonly WatchedChild[] | undefined;
  /**
   * what its start answers below `<edge>`'s own children: true for a kept text; for a watched
   * element whose children are not all members of a counted list, a filter of those it watches (of
   * a vnic's dozen fields the tokenizer tells only `<index>`, of a firewall's sections only
   * `<firewallRules>`, and reads past the rest without a call); else whether it is watched
   */
  answer: boolean | XmlChildFilter;
}

/**
 * Per WATCHED path, the children that the shape looks at (a few each): a rule's path is found by
 * comparing its name where it is written, not built, sliced or hashed for every rule of an edge.
 */
function watchedChildren(parent: string): readonly WatchedChild[] | undefined {
  if (!WATCHED.has(parent)) return undefined;
  return [...new Set([...WATCHED, ...COUNTED, ...TEXTS])]
    .filter((path) => path !== "" && childPath(parent, path.split("/").at(-1) ?? "") === path)
    .map((path) => {
      const children = watchedChildren(path);
      const filtered = children?.some((child) => child.countIndex === -1) === true;
      return {
        name: path.split("/").at(-1) ?? "",
        path,
        countIndex: COUNTED_LISTS.indexOf(path),
        listed: parent === "" || parent === "features",
        text: TEXTS.has(path),
        children,
        answer:
          TEXTS.has(path) || (filtered ? new XmlChildFilter(children.map((c) => c.name)) : WATCHED.has(path)),
      };
    });
}

/** the children of `<edge>` the shape looks at, each with its own */
const EDGE_CHILDREN = watchedChildren("") as readonly WatchedChild[];

/** the child of `children` named text[start, start + length); undefined when none is */
function watchedChild(
  children: readonly WatchedChild[],
  text: string,
  start: number,
  length: number,
): WatchedChild | undefined {
  for (const child of children) {
    if (isNameAt(text, start, length, child.name)) return child;
  }
  return undefined;
}

/**
 * Hears the tokenizer and keeps what the shape needs: the paths of WATCHED elements' children,
 * two texts. Heard in the edge's own parse (EdgeDocument.parse) or alone (edgeShapeOf). Most of an
 * edge (its rules) lies below elements it does not watch: there it only counts how deep it is,
 * allocating nothing.
 */
export class ShapeReader implements XmlSink {
  /** the path from `<edge>` of each open element down to the deepest one with a path ("" for `<edge>`) */
  readonly #paths: string[] = [];
  /** for each of #paths, the children the shape looks at below it (undefined: none) */
  readonly #watched: (readonly WatchedChild[] | undefined)[] = [];
  /** open elements below the last of #paths: nothing there is named */
  #unnamedDepth = 0;
  /** the open direct child of `<edge>` holds an element */
  #childHoldsElements = false;
  #text: string | undefined;
  readonly #elements = new Set<string>();
  readonly #sections = new Set<string>();
  /** members of each list of COUNTED_LISTS, by its index (a number in an array: no hashing per rule) */
  readonly #counts: number[] = COUNTED_LISTS.map(() => 0);
  /** the indexes of the lists counted, in the order their first member came (shape.counts' order) */
  readonly #countedLists: number[] = [];
  readonly shape: EdgeShape = {
    type: undefined,
    elements: this.#elements,
    sections: [],
    counts: {},
    vnicIndexes: [],
  };

  start(text: string, nameStart: number, nameLength: number): boolean | XmlChildFilter {
    const paths = this.#paths;
    const depth = paths.length + this.#unnamedDepth;
    if (depth === 2) this.#childHoldsElements = true;
    if (depth === 0) {
      paths.push("");
      this.#watched.push(EDGE_CHILDREN);
      return true;
    }
    const children = this.#unnamedDepth === 0 ? this.#watched[depth - 1] : undefined;
    const known = children === undefined ? undefined : watchedChild(children, text, nameStart, nameLength);
    if (known !== undefined) return this.#open(known.path, known, depth);
    const parent = paths[depth - 1] as string;
    if (children === undefined || (depth > 1 && parent !== "features")) {
      // nothing below an element the shape does not name concerns it, and of the children of a
      // watched one only those on the way to what the shape keeps (a vnic's label, mtu, ... get no
      // path of their own)
      this.#unnamedDepth++;
      return false;
    }
    return this.#open(listedPath(parent, text, nameStart, nameLength), undefined, depth);
  }

  /** an element with a path opens: `known` when the shape looks at it, else a listed one it does not know */
  #open(path: string, known: WatchedChild | undefined, depth: number): boolean | XmlChildFilter {
    this.#paths.push(path);
    this.#watched.push(known?.children);
    if (depth === 1) this.#childHoldsElements = false;
    if (known === undefined || known.listed) {
      this.#elements.add(path);
      if (depth === 2) this.#sections.add(path);
    }
    if (known !== undefined && known.countIndex !== -1) this.#count(known.countIndex);
    if (known?.text === true) this.#text = "";
    // below a direct child of <edge> the shape still asks whether it holds elements
    return depth === 1 || (known?.answer ?? false);
  }

  #count(index: number): void {
    const counts = this.#counts;
    if (counts[index] === 0) this.#countedLists.push(index);
    counts[index] = (counts[index] as number) + 1;
  }

  text(text: string, start: number, end: number, cdata: boolean): void {
    if (this.#text === undefined) return;
    const raw = text.slice(start, end);
    this.#text += cdata ? raw : decodeXmlText(raw);
  }

  end(): void {
    if (this.#unnamedDepth > 0) {
      this.#unnamedDepth--;
      return;
    }
    const path = this.#paths.pop() as string;
    this.#watched.pop();
    if (this.#text !== undefined && TEXTS.has(path)) {
      if (path === "type") this.shape.type = this.#text.trim();
      else this.shape.vnicIndexes.push(this.#text.trim());
      this.#text = undefined;
    }
    const depth = this.#paths.length;
    if (depth === 1 && this.#childHoldsElements) this.#sections.add(path);
    if (depth === 0) {
      const counts: Record<string, number> = {};
      for (const index of this.#countedLists)
        counts[COUNTED_LISTS[index] as string] = this.#counts[index] as number;
      this.shape.counts = counts;
      this.shape.sections = sortedSections(this.#sections);
    }
  }
}

/** The shape of an edge document, in one pass of the tokenizer; throws NsxResponseError as parsing does. */
export function edgeShapeOf(xml: string): EdgeShape {
  const reader = new ShapeReader();
  walkXml(xml, "edge document", reader);
  return reader.shape;
}

/**
 * What the document lacks of what every edge of its type carries, each as a message names it
 * (`<vnics>`, `<vnic> with index 3 in <vnics>`, `<firewall> in <features>`, a `<type>` that is
 * neither); none for a whole edge.
 */
export function missingFromWholeEdge(shape: EdgeShape): string[] {
  const missing = EVERY_EDGE.elements.filter((e) => !shape.elements.has(e)).map(describePath);
  if (shape.type === undefined) return missing;
  const rule = EDGE_TYPES[shape.type];
  if (rule === undefined) {
    const types = Object.keys(EDGE_TYPES).join(" or ");
    return [...missing, `a <type> of ${types} (it says ${JSON.stringify(shape.type.slice(0, 40))})`];
  }
  missing.push(...rule.elements.filter((e) => !shape.elements.has(e)).map(describePath));
  if (shape.elements.has("vnics")) {
    const present = new Set(shape.vnicIndexes);
    missing.push(
      ...rule.vnicIndexes.filter((i) => !present.has(i)).map((i) => `<vnic> with index ${i} in <vnics>`),
    );
  }
  return missing;
}

/** The label of the type's rule (`ESG (gatewayServices)`), or "edge" for a type without one. */
export function edgeTypeLabel(shape: EdgeShape): string {
  return (shape.type === undefined ? undefined : EDGE_TYPES[shape.type]?.label) ?? "edge";
}

/** A path from `<edge>` as a message names it: `features/firewall` → `<firewall> in <features>`. */
export function describePath(path: string): string {
  const parts = path.split("/");
  return parts
    .reverse()
    .map((p) => `<${p}>`)
    .join(" in ");
}
