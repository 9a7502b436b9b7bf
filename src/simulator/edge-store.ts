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
 * `<version>`). The store knows where each such text is in the stored text, so such a write
 * costs neither a parse of the stored text nor a rendering: the new text is the old one with
 * those texts replaced, byte for byte what rendering the new model gives (storeLeaves).
 */
import { EdgeDocument } from "../nsx/edge-document.ts";
import { escapeXmlText } from "../nsx/xml.ts";
import { child, edgeModelOf, replaceChild, type EdgeModel } from "./edge-model.ts";
import { isPutStable } from "./edge-put.ts";
import { listingOf, summarize, type EdgeListing } from "./edge-summary.ts";
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

/** A top-level leaf of `<edge>` with text, the only child of its name, in a stored text. */
interface LeafSpan {
  readonly name: string;
  /** its position among `<edge>`'s children */
  readonly index: number;
  /** where its escaped text is: [start, end) of the stored text */
  readonly start: number;
  readonly end: number;
  /** its text, decoded */
  readonly text: string;
}

/** What the store knows of a stored text beyond the edge: where its leaves' texts are. */
interface Layout {
  /** in document order */
  readonly leaves: readonly LeafSpan[];
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
    const summary = summarize(config, this.#manager, previousSummary);
    return this.#keep(this.#render(config, listingOf(config, summary)));
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
   * When `sent` is the edge's stored text with only the text of some of its leaves rewritten
   * (none emptied), the sent text of each leaf it changed, by name in document order; otherwise
   * undefined. `sent.model` is the sent text's model.
   */
  rewrittenLeaves(
    edge: StoredEdge,
    sent: { text: string; model: EdgeModel },
  ): Map<string, string> | undefined {
    const layout = this.#layouts.get(edge);
    if (layout === undefined || this.#format().summaryInEdge) return undefined;
    const stored = edge.text;
    const { text } = sent;
    let at = 0;
    let from = 0;
    for (const leaf of layout.leaves) {
      if (!text.startsWith(stored.slice(from, leaf.start), at)) return undefined;
      at += leaf.start - from;
      // a text without '<' is character data of the same element: the documents have one shape
      at = text.indexOf("<", at);
      if (at === -1) return undefined;
      from = leaf.end;
    }
    if (text.length - at !== stored.length - from || !text.startsWith(stored.slice(from), at))
      return undefined;
    const changed = new Map<string, string>();
    for (const leaf of layout.leaves) {
      const now = sent.model.children[leaf.index];
      if (now?.name !== leaf.name || now.text === undefined || now.text === "") return undefined;
      if (now.text !== leaf.text) changed.set(leaf.name, now.text);
    }
    return changed;
  }

  /**
   * Stores the edge with the text of some of its leaves replaced (`texts`, by name), without
   * rendering it: the stored text with those texts replaced. `base` has the edge's shape (its
   * configuration, or a document whose only differences are in those leaves' texts): the new
   * configuration is `base` with every leaf's text the stored one or the new one, for the summary.
   * Undefined when a name is not such a leaf, a text is empty (a leaf without text is written
   * `<name/>`), or the edge carries its summary (which changes with them).
   */
  storeLeaves(edge: StoredEdge, texts: ReadonlyMap<string, string>, base: EdgeModel): StoredEdge | undefined {
    const layout = this.#layouts.get(edge);
    if (layout === undefined || this.#format().summaryInEdge) return undefined;
    const known = new Set(layout.leaves.map((l) => l.name));
    for (const [name, text] of texts) if (!known.has(name) || text === "") return undefined;
    const children = [...base.children];
    const leaves: LeafSpan[] = [];
    // joined, not concatenated: a flat string, holding no slices of the text before
    const parts: string[] = [];
    let from = 0;
    let shift = 0;
    for (const leaf of layout.leaves) {
      const now = texts.get(leaf.name) ?? leaf.text;
      children[leaf.index] = { ...children[leaf.index]!, text: now };
      const escaped = now === leaf.text ? edge.text.slice(leaf.start, leaf.end) : escapeXmlText(now);
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
    const text = parts.join("");
    const config = { ...base, children };
    const summary = summarize(config, this.#manager, edge.listing.summary);
    const stored = this.#edition(config, text, listingOf(config, summary));
    this.#layouts.set(stored, { leaves, stable: layout.stable });
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
    for (const edge of this.#edges.values())
      this.#edges.set(edge.id, this.#render(this.config(edge), edge.listing));
  }

  #render(config: EdgeModel, listing: EdgeListing): StoredEdge {
    const format = this.#format();
    const shown = format.summaryInEdge ? { ...config, children: [...config.children] } : config;
    if (format.summaryInEdge) replaceChild(shown, "edgeSummary", listing.summary);
    const { text, childEnds } = renderDocumentWithChildEnds(shown, { pretty: format.pretty });
    const edge = this.#edition(config, text, listing);
    this.#layouts.set(edge, { leaves: leafSpans(shown, childEnds), stable: undefined });
    return edge;
  }

  /** The stored edge of this configuration, its text and its listing. */
  #edition(config: EdgeModel, text: string, listing: EdgeListing): StoredEdge {
    let doc: EdgeDocument | undefined;
    let bytes: Buffer | undefined;
    const parsed = (): EdgeDocument => (doc ??= EdgeDocument.parse(text));
    // <id> and <version> are leaves in every edge the simulator keeps; the parse decides otherwise
    const id = child(config, "id");
    const version = child(config, "version");
    const leaf = (field: EdgeModel | undefined) => field?.children.length === 0 && field.text !== undefined;
    return {
      id: leaf(id) ? (id?.text ?? "") : parsed().id,
      version: (leaf(version) ? versionOf(version?.text) : parsed().version) ?? 1,
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

/**
 * Where the text of each leaf of the root that has text and is the only child of its name is:
 * rendered `<name attributes>text</name>`, it ends where its end tag starts.
 */
function leafSpans(root: EdgeModel, childEnds: readonly number[]): LeafSpan[] {
  const counts = new Map<string, number>();
  for (const c of root.children) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const leaves: LeafSpan[] = [];
  root.children.forEach((c, index) => {
    if (c.text === undefined || c.text === "" || c.children.length > 0 || counts.get(c.name) !== 1) return;
    const end = childEnds[index]! - `</${c.name}>`.length;
    leaves.push({ name: c.name, index, start: end - escapeXmlText(c.text).length, end, text: c.text });
  });
  return leaves;
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
