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
  inManagerOrder,
  modelOfElement,
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
const SINGLE_FIELDS: readonly string[] = [
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

/** The manager keeps the CLI password to itself: a GET never shows it (field notes). */
export function withoutCliPassword(model: EdgeModel): void {
  const cli = child(model, "cliSettings");
  if (cli !== undefined) cli.children = cli.children.filter((c) => c.name !== "password");
}
