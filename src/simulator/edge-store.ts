/**
 * The edges as a manager stores them: each as its model, answered in one format of the manager's
 * own (settings `prettyXml` and `edgeSummaryInEdge`) whatever a client sent or the state file
 * wrote, with its serialized text cached per version (a GET of a 5 MB edge costs no
 * serialization; the text is what is kept: a model takes seven times its memory) and its summary
 * computed from what is stored. A StoredEdge is never changed: every change stores a new one, so
 * a reader holding one sees one version whole. What is read of a version only sometimes (its
 * parsed document, its UTF-8 bytes) is made when first read: a PUT pays for neither.
 */
import { EdgeDocument } from "../nsx/edge-document.ts";
import { child, edgeModelOf, replaceChild, type EdgeModel } from "./edge-model.ts";
import { listingOf, summarize, type EdgeListing } from "./edge-summary.ts";
import type { ManagerIdentity } from "./manager.ts";
import { renderDocument } from "./xml.ts";

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

export class EdgeStore {
  readonly #edges = new Map<string, StoredEdge>();
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
    const edge = this.#render(config, listingOf(config, summary));
    this.#edges.set(edge.id, edge);
    this.#onStored(edge.listing);
    return edge;
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
    const text = renderDocument(shown, { pretty: format.pretty });
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
