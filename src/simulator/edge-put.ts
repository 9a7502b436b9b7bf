/**
 * An edge PUT as a manager takes it: the body read into the manager's model, and the rules that
 * turn it into what is stored. The URL names the edge: `<id>` may be absent or empty (VMware's
 * RAML example sends `<id></id>`, govnsx sends none) but may not name another edge. The sent
 * configuration replaces the stored one, sections left out included (that is how lossy clients
 * destroy firewall rules on real managers), except the manager-owned fields, which stay what the
 * manager knows, the summary, which the manager computes, and what a manager fills in
 * (edge-fill.ts: defaults, the stored name, appliances' runtime fields, new rules' ids).
 */
import { NsxResponseError } from "../nsx/errors.ts";
import { parseXmlDocument } from "../nsx/xml.ts";
import {
  EdgeModelError,
  child,
  childText,
  cloneModel,
  inManagerOrder,
  modelOfElement,
  modelsEqual,
  replaceChild,
  setChildText,
  type EdgeModel,
} from "./edge-model.ts";
import {
  assignRuleIds,
  fillSettingDefaults,
  keepApplianceRuntime,
  keepName,
  normalizeVnicBooleans,
} from "./edge-fill.ts";
import { ERROR_CODES, type ErrorCode } from "./error-codes.ts";

/** Fields a PUT does not set: they stay what the manager knows (field notes), `id` and `version` aside. */
export const MANAGER_OWNED_FIELDS: readonly string[] = [
  "status",
  "datacenterMoid",
  "datacenterName",
  "fqdn",
  "hypervisorAssist",
  "type",
  // set when the edge is created (the isUniversal query parameter; an id the manager assigns)
  "isUniversal",
  "edgeAssistId",
];

/** top-level fields a manager reads as one value: a document with two of one is refused */
export const SINGLE_FIELDS: readonly string[] = [
  "id",
  "version",
  "tenant",
  "name",
  "description",
  ...MANAGER_OWNED_FIELDS,
];

export interface SentEdge {
  /** the root `<edge>`, as the manager's model */
  model: EdgeModel;
  /** the `<version>` sent, when it is an integer */
  version: number | undefined;
}

export type ReadSentEdgeResult =
  { ok: true; sent: SentEdge } | { ok: false; code: ErrorCode; message: string };

/** Reads a PUT body for the edge the URL names. */
export function readSentEdge(text: string, edgeId: string): ReadSentEdgeResult {
  let model: EdgeModel;
  try {
    model = modelOfElement(parseXmlDocument(text, "edge document").root);
  } catch (error) {
    if (error instanceof NsxResponseError || error instanceof EdgeModelError) {
      return { ok: false, code: ERROR_CODES.invalidEdgeDocument, message: error.message };
    }
    throw error;
  }
  if (model.name !== "edge") {
    return {
      ok: false,
      code: ERROR_CODES.invalidEdgeDocument,
      message: `edge document: root element is <${model.name}>, expected <edge>`,
    };
  }
  for (const name of SINGLE_FIELDS) {
    const count = model.children.filter((c) => c.name === name).length;
    if (count > 1) {
      return {
        ok: false,
        code: ERROR_CODES.invalidEdgeDocument,
        message: `edge document: <${name}> appears ${count} times in <edge>`,
      };
    }
  }
  const sentId = childText(model, "id")?.trim() ?? "";
  if (sentId !== "" && sentId !== edgeId) {
    return {
      ok: false,
      code: ERROR_CODES.edgeIdMismatch,
      message: `The edge id in the document (${sentId}) does not match the path (${edgeId}).`,
    };
  }
  const versionText = childText(model, "version")?.trim();
  const version = versionText !== undefined && /^\d+$/.test(versionText) ? Number(versionText) : undefined;
  return { ok: true, sent: { model, version } };
}

/**
 * The configuration stored for `sent` over `current` (both without summary): what was sent, with
 * the id of the URL, the manager-owned fields of `current`, version + 1, what the manager fills
 * in (edge-fill.ts), and children in the manager's order.
 */
export function configAfterPut(current: EdgeModel, sent: EdgeModel, storedVersion: number): EdgeModel {
  const next: EdgeModel = { ...sent, children: sent.children.filter((c) => c.name !== "edgeSummary") };
  setChildText(next, "id", childText(current, "id") ?? "");
  for (const name of MANAGER_OWNED_FIELDS) replaceChild(next, name, child(current, name));
  setChildText(next, "version", String(storedVersion + 1));
  keepName(next, current);
  fillSettingDefaults(next);
  keepApplianceRuntime(next, current);
  assignRuleIds(next, current);
  normalizeVnicBooleans(next);
  withoutCliPassword(next);
  return inManagerOrder(next, current);
}

/**
 * Whether a PUT of this configuration as it is stores it unchanged but for its version: nothing to
 * fill in, order or drop. A PUT that sends such an edge's document back with only the text of
 * top-level leaves rewritten then stores exactly that document, with the id, the manager-owned
 * fields and the version the manager keeps (none of configAfterPut's rules reads a leaf's text but
 * for those), and so is such an edge again: EdgeStore takes those PUTs without the rules.
 */
export function isPutStable(config: EdgeModel): boolean {
  // whatever its version's text, a PUT sets it from the stored version: here one above 0
  const expected = { ...config, children: [...config.children] };
  setChildText(expected, "version", "1");
  // the copy is what the rules change in place; attribute lists are never changed in place, and a
  // list sent in the reference's order keeps it, so modelsEqual's unordered attributes suffice
  return modelsEqual(configAfterPut(config, cloneModel(config), 0), expected);
}

/** The fields of `<edge>` a PUT does not set: the manager keeps the stored ones (version: one above). */
export const KEPT_ON_PUT: ReadonlySet<string> = new Set(["id", "version", ...MANAGER_OWNED_FIELDS]);

/** The manager keeps the CLI password to itself: a GET never shows it (field notes). */
export function withoutCliPassword(model: EdgeModel): void {
  const cli = child(model, "cliSettings");
  if (cli !== undefined) cli.children = cli.children.filter((c) => c.name !== "password");
}
