/**
 * The edges as a manager stores them: each as its model, answered in one format of the manager's
 * own (settings `prettyXml` and `edgeSummaryInEdge`) whatever a client sent or the state file
 * wrote, with its serialized text cached per version (a GET of a 5 MB edge costs no
 * serialization; the text is what is kept: a model takes seven times its memory) and its summary
 * computed from what is stored. A StoredEdge is never changed: every change stores a new one, so
 * a reader holding one sees one version whole. What is read of a version only sometimes (its
 * parsed document, its UTF-8 bytes) is made when first read: a PUT pays for neither.
 *
 * Most writes (the operator's, PowerNSX's Set-NsxEdge, a drift through the control API) send an
 * edge's document back with the text of a top-level leaf or two rewritten (`<tenant>`,
 * `<version>`). The store knows where each such text is in the stored text, and what the summary
 * took from the edge's sections, so such a write costs no parse of either document (but of the
 * rewritten texts) nor a rendering: the new text is the old one with those texts replaced, byte
 * for byte what rendering the new model gives (rewrittenLeaves, storeLeaves).
 */
import { EdgeDocument } from "../nsx/edge-document.ts";
import { NsxResponseError } from "../nsx/errors.ts";
import { escapeXmlText, parseXmlDocument } from "../nsx/xml.ts";
import { child, childText, edgeModelOf, modelOfElement, replaceChild, type EdgeModel } from "./edge-model.ts";
import { SINGLE_FIELDS, isPutStable } from "./edge-put.ts";
import {
  listingFrom,
  sectionFacts,
  summaryOf,
  type EdgeListing,
  type LeafText,
  type SectionFacts,
} from "./edge-summary.ts";
import type { ManagerIdentity } from "./manager.ts";
import { renderDocumentWithChildEnds } from "./xml.ts";

export interface StoredEdge {
  readonly id: string;
  readonly version: number;
  /** the document a GET answers, parsed (when first read) */
  readonly doc: EdgeDocument;
  /** doc's text, rendered once when stored */
  readonly text: string;
  /** text as UTF-8, what a GET sends (made when first read) */
  readonly bytes: Buffer;
  /** what the paged list and /summary show of this version */
  readonly listing: EdgeListing;
}

export interface EdgeFormat {
  /** two-space indentation (settings.prettyXml) */
  pretty: boolean;
  /** `<edgeSummary>` inside `<edge>` (settings.edgeSummaryInEdge) */
  summaryInEdge: boolean;
}

/** A leaf of `<edge>` with text, the only child of its name: where its text is, escaped. */
interface LeafSpan {
  /** its position among `<edge>`'s children */
  readonly index: number;
  readonly name: string;
  /** [start, end) of the stored text */
  readonly start: number;
  readonly end: number;
  /** decoded */
  readonly text: string;
}

/** What the store knows of a stored text beyond the edge. */
interface Layout {
  /** `<edge>`'s children by name, and each one's model when it is a leaf (no child elements) */
  readonly children: readonly { readonly name: string; readonly leaf: EdgeModel | undefined }[];
  /** the leaves a write may rewrite in place, in document order */
  readonly leaves: readonly LeafSpan[];
  /** a field a PUT takes once appears twice (readSentEdge refuses its document) */
  readonly repeatsSingleField: boolean;
  /** what its summary and listing took from its sections: a rewrite of leaves leaves it */
  readonly facts: SectionFacts;
  /** isPutStable of its configuration; undefined until asked */
  stable: boolean | undefined;
}

export class EdgeStore {
  readonly #edges = new Map<string, StoredEdge>();
  readonly #layouts = new WeakMap<StoredEdge, Layout>();
  readonly #manager: ManagerIdentity;
  readonly #format: () => EdgeFormat;
  readonly #onStored: (listing: EdgeListing) => void;
  readonly #onRemoved: (id: string) => void;

  /** `listeners` hear every version stored and every edge removed (the stale-list fault keeps a history of them) */
  constructor(
    manager: ManagerIdentity,
    format: () => EdgeFormat,
    listeners: { stored: (listing: EdgeListing) => void; removed: (id: string) => void },
  ) {
    this.#manager = manager;
    this.#format = format;
    this.#onStored = listeners.stored;
    this.#onRemoved = listeners.removed;
  }

  get(id: string): StoredEdge | undefined {
    return this.#edges.get(id);
  }

  all(): StoredEdge[] {
    return [...this.#edges.values()];
  }

  listings(): EdgeListing[] {
    return this.all().map((e) => e.listing);
  }

  /** The stored configuration of an edge, without its summary. */
  config(edge: StoredEdge): EdgeModel {
    return withoutSummary(edgeModelOf(edge.text));
  }

  /**
   * Stores a whole document (`<edgeSummary>` included, if it has one) as another client or the
   * state file gives it: a summary it carries supplies the manager-owned summary fields.
   */
  storeDocument(model: EdgeModel): StoredEdge {
    const id = child(model, "id")?.text ?? "";
    const embedded = child(model, "edgeSummary");
    return this.store(withoutSummary(model), embedded ?? this.#edges.get(id)?.listing.summary);
  }

  /** Stores a configuration (no summary); `previousSummary` keeps the manager-owned summary fields. */
  store(config: EdgeModel, previousSummary: EdgeModel | undefined): StoredEdge {
    const facts = sectionFacts(config);
    const field = (name: string) => childText(config, name);
    const summary = summaryOf(field, facts, { manager: this.#manager, previous: previousSummary });
    return this.#keep(this.#render(config, listingFrom(field, facts.portgroups, summary), facts));
  }

  #keep(edge: StoredEdge): StoredEdge {
    this.#edges.set(edge.id, edge);
    this.#onStored(edge.listing);
    return edge;
  }

  /** isPutStable of the edge's configuration (`config`, when the caller has it), asked once per version. */
  isPutStable(edge: StoredEdge, config?: EdgeModel): boolean {
    const layout = this.#layouts.get(edge);
    if (layout === undefined) return isPutStable(config ?? this.config(edge));
    layout.stable ??= isPutStable(config ?? this.config(edge));
    return layout.stable;
  }

  /**
   * When `text` is the edge's stored text with only the text of some of its rewritable leaves
   * changed (to text that is not empty), each leaf's new text, by name in document order (only
   * those that differ); otherwise undefined, as for a document readSentEdge refuses. Such a text
   * has the stored text's shape: a text without '<' is character data of the same element.
   */
  rewrittenLeaves(edge: StoredEdge, text: string): Map<string, string> | undefined {
    const layout = this.#layouts.get(edge);
    if (layout === undefined || layout.repeatsSingleField || this.#format().summaryInEdge) return undefined;
    const stored = edge.text;
    const changed = new Map<string, string>();
    let at = 0;
    let from = 0;
    for (const leaf of layout.leaves) {
      // most writes change a leaf or two near the top: the rest is then compared at once
      if (sameRest(text, at, stored, from)) return changed;
      if (!text.startsWith(stored.slice(from, leaf.start), at)) return undefined;
      const start = at + leaf.start - from;
      at = text.indexOf("<", start);
      if (at === -1) return undefined;
      from = leaf.end;
      const raw = text.slice(start, at);
      if (raw === stored.slice(leaf.start, leaf.end)) continue;
      const now = characterData(raw);
      if (now === undefined || now === "" || leaf.name === "id") return undefined;
      if (now !== leaf.text) changed.set(leaf.name, now);
    }
    return sameRest(text, at, stored, from) ? changed : undefined;
  }

  /**
   * Stores the edge with the text of some of its rewritable leaves replaced (`texts`, by name),
   * without a model or a rendering: the stored text with those texts replaced, and the summary of
   * its leaves and the sections it had. Undefined when a name is not such a leaf, a text is empty
   * (a leaf without text is written `<name/>`), or the edge carries its summary (which changes).
   */
  storeLeaves(edge: StoredEdge, texts: ReadonlyMap<string, string>): StoredEdge | undefined {
    const layout = this.#layouts.get(edge);
    if (layout === undefined || this.#format().summaryInEdge) return undefined;
    const known = new Set(layout.leaves.map((l) => l.name));
    for (const [name, text] of texts) if (!known.has(name) || text === "") return undefined;
    const children = [...layout.children];
    const leaves: LeafSpan[] = [];
    // joined, not concatenated: a flat string, holding no slices of the text before
    const parts: string[] = [];
    let from = 0;
    let shift = 0;
    for (const leaf of layout.leaves) {
      const now = texts.get(leaf.name) ?? leaf.text;
      const escaped = now === leaf.text ? edge.text.slice(leaf.start, leaf.end) : escapeXmlText(now);
      if (now !== leaf.text)
        children[leaf.index] = { name: leaf.name, leaf: { ...children[leaf.index]!.leaf!, text: now } };
      parts.push(edge.text.slice(from, leaf.start), escaped);
      leaves.push({
        ...leaf,
        start: leaf.start + shift,
        end: leaf.start + shift + escaped.length,
        text: now,
      });
      shift += escaped.length - (leaf.end - leaf.start);
      from = leaf.end;
    }
    parts.push(edge.text.slice(from));
    const next: Layout = { ...layout, children, leaves };
    const field = leafTexts(next);
    const summary = summaryOf(field, layout.facts, {
      manager: this.#manager,
      previous: edge.listing.summary,
    });
    const stored = this.#edition(field, parts.join(""), listingFrom(field, layout.facts.portgroups, summary));
    this.#layouts.set(stored, next);
    return this.#keep(stored);
  }

  /** Removes an edge; the stale-list fault hears it. Returns whether there was one. */
  delete(id: string): boolean {
    const existed = this.#edges.delete(id);
    if (existed) this.#onRemoved(id);
    return existed;
  }

  /** Renders every edge again, in the format the settings now ask for; versions do not change. */
  reformat(): void {
    for (const edge of this.#edges.values()) {
      const config = this.config(edge);
      this.#edges.set(edge.id, this.#render(config, edge.listing, sectionFacts(config)));
    }
  }

  #render(config: EdgeModel, listing: EdgeListing, facts: SectionFacts): StoredEdge {
    const format = this.#format();
    const shown = format.summaryInEdge ? { ...config, children: [...config.children] } : config;
    if (format.summaryInEdge) replaceChild(shown, "edgeSummary", listing.summary);
    const { text, childEnds } = renderDocumentWithChildEnds(shown, { pretty: format.pretty });
    const layout: Layout = { ...layoutOf(shown, childEnds), facts, stable: undefined };
    const edge = this.#edition(leafTexts(layout), text, listing);
    this.#layouts.set(edge, layout);
    return edge;
  }

  /** The stored edge of this text and listing; `field` gives its leaves' texts (its id and version). */
  #edition(field: LeafText, text: string, listing: EdgeListing): StoredEdge {
    let doc: EdgeDocument | undefined;
    let bytes: Buffer | undefined;
    const parsed = (): EdgeDocument => (doc ??= EdgeDocument.parse(text));
    // <id> and <version> are leaves in every edge the simulator keeps; the parse decides otherwise
    const id = field("id");
    const version = field("version");
    return {
      id: id ?? parsed().id,
      version: (version !== undefined ? versionOf(version) : parsed().version) ?? 1,
      get doc() {
        return parsed();
      },
      text,
      get bytes() {
        bytes ??= Buffer.from(text, "utf8");
        return bytes;
      },
      listing,
    };
  }
}

/** Which of `<edge>`'s children are leaves, where the texts a write may rewrite are in its rendering. */
function layoutOf(root: EdgeModel, childEnds: readonly number[]): Omit<Layout, "facts" | "stable"> {
  const counts = new Map<string, number>();
  for (const c of root.children) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const leaves: LeafSpan[] = [];
  const children = root.children.map((c, index) => {
    const isLeaf = c.children.length === 0;
    if (isLeaf && c.text !== undefined && c.text !== "" && counts.get(c.name) === 1) {
      // written `<name attributes>text</name>`: the text ends where the end tag starts
      const end = childEnds[index]! - `</${c.name}>`.length;
      leaves.push({ index, name: c.name, start: end - escapeXmlText(c.text).length, end, text: c.text });
    }
    return { name: c.name, leaf: isLeaf ? c : undefined };
  });
  return { children, leaves, repeatsSingleField: SINGLE_FIELDS.some((f) => (counts.get(f) ?? 0) > 1) };
}

/** childText of the configuration a layout is of */
function leafTexts(layout: Layout): LeafText {
  return (name) => layout.children.find((c) => c.name === name)?.leaf?.text;
}

/** `text` from `at` is `stored` from `from` */
function sameRest(text: string, at: number, stored: string, from: number): boolean {
  return text.length - at === stored.length - from && text.startsWith(stored.slice(from), at);
}

/** The decoded text of character data as sent, checked as any document is; undefined when it is not well-formed. */
function characterData(raw: string): string | undefined {
  try {
    return modelOfElement(parseXmlDocument(`<x>${raw}</x>`, "edge document").root).text;
  } catch (error) {
    if (error instanceof NsxResponseError) return undefined;
    throw error;
  }
}

/** `<version>`'s text as EdgeDocument reads it: a non-negative safe integer, else undefined */
function versionOf(text: string | undefined): number | undefined {
  const trimmed = text?.trim();
  if (trimmed === undefined || !/^[0-9]+$/.test(trimmed)) return undefined;
  const version = Number(trimmed);
  return Number.isSafeInteger(version) ? version : undefined;
}

function withoutSummary(model: EdgeModel): EdgeModel {
  return { ...model, children: model.children.filter((c) => c.name !== "edgeSummary") };
}
