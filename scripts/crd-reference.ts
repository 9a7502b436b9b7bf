/**
 * Writes docs/crd-reference.md from the CustomResourceDefinitions in crds/: per kind, its names,
 * the columns of `kubectl get`, a table of every field (type, default, validation, description)
 * and the CEL rules. Run it after changing a CRD: `node scripts/crd-reference.ts`.
 * test/docs/crd-reference.test.ts fails while the committed file differs from what this renders.
 */
import { writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readCrds } from "../src/api/crds.ts";
import { schemaEntries, type CrdInfo, type SchemaNode } from "../src/api/schema.ts";
import { API_VERSION, type Kind } from "../src/api/types.ts";

export const REFERENCE_PATH = fileURLToPath(new URL("../docs/crd-reference.md", import.meta.url));

/** The order a reader meets the kinds in: the manager first, then what refers to it. */
const KIND_ORDER: readonly Kind[] = ["NSXManager", "EdgeTenant", "IPPoolAllocations"];

/** One row of a kind's field table. */
export interface FieldRow {
  path: string;
  type: string;
  default: string;
  validation: string[];
  description: string;
}

interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
}

interface CrdNames {
  plural?: string;
  singular?: string;
  shortNames?: string[];
  categories?: string[];
}

/** The whole reference for these CRDs; links are relative to `referencePath`. */
export function renderCrdReference(crds: readonly CrdInfo[], referencePath: string = REFERENCE_PATH): string {
  const sorted = [...crds].sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
  const crdDir = crds[0] === undefined ? "../crds" : linkFrom(referencePath, dirname(crds[0].file));
  const lines = [
    "# Custom resource reference",
    "",
    `Generated from the CustomResourceDefinitions in [crds/](${crdDir}/) by \`node scripts/crd-reference.ts\`;`,
    "do not edit it by hand: `test/docs/crd-reference.test.ts` fails when this file differs from what",
    "the script writes. `kubectl explain <kind>.spec` shows the same descriptions on a cluster.",
    "",
    "Every kind is namespaced, in group and version `" + API_VERSION + "`, with a `/status` subresource",
    'that only the operator writes. The annotation `nsxv.io/paused: "true"` on any of them stops every',
    "manager call for that object.",
    "",
    ...sorted.map((crd) => `- [${crd.kind}](#${crd.kind.toLowerCase()})`),
    "",
  ];
  for (const crd of sorted) lines.push(...renderKind(crd, referencePath));
  return `${lines.join("\n").trimEnd()}\n`;
}

function renderKind(crd: CrdInfo, referencePath: string): string[] {
  const spec = crd.definition["spec"] as { names?: CrdNames; scope?: string; versions?: unknown[] };
  const version = (spec.versions ?? []).find((v) => (v as { name?: string }).name === "v1alpha1") as
    { additionalPrinterColumns?: PrinterColumn[] } | undefined;
  const names = spec.names ?? {};
  const rows = fieldRows(crd.schema);
  const rules = celRules(crd.schema);
  return [
    `## ${crd.kind}`,
    "",
    prose(crd.schema.description ?? ""),
    "",
    "| | |",
    "| --- | --- |",
    `| API version | ${code(API_VERSION)} |`,
    `| Scope | ${spec.scope ?? "Namespaced"} |`,
    `| Plural, singular | ${code(names.plural ?? crd.plural)}, ${code(names.singular ?? "")} |`,
    `| Short names | ${(names.shortNames ?? []).map(code).join(", ") || "none"} |`,
    `| Categories | ${(names.categories ?? []).map(code).join(", ") || "none"} |`,
    `| Definition | [${relative(resolve(dirname(crd.file), ".."), crd.file)}](${linkFrom(referencePath, crd.file)}) |`,
    "",
    `### Columns of \`kubectl get ${names.plural ?? crd.plural}\``,
    "",
    "| Column | JSONPath | Shown | Description |",
    "| --- | --- | --- | --- |",
    ...(version?.additionalPrinterColumns ?? []).map(
      (c) =>
        `| ${c.name} | ${code(c.jsonPath)} | ${(c.priority ?? 0) > 0 ? "with `-o wide`" : "always"} | ${prose(c.description ?? "")} |`,
    ),
    "",
    "### Fields",
    "",
    "| Field | Type | Default | Validation | Description |",
    "| --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${code(r.path)} | ${r.type} | ${r.default} | ${r.validation.join("; ")} | ${prose(r.description)} |`,
    ),
    "",
    ...(rules.length === 0
      ? []
      : [
          "### CEL validation rules",
          "",
          "The API server evaluates these on create and update (`x-kubernetes-validations`); `plan` and",
          "`apply` check the same rules before any manager call.",
          "",
          "| Field | Rule | Message |",
          "| --- | --- | --- |",
          ...rules.map((r) => `| ${code(r.path)} | ${code(r.rule)} | ${prose(r.message)} |`),
          "",
        ]),
  ];
}

/** A row for every node of the schema below its root, in schema order. */
export function fieldRows(schema: SchemaNode): FieldRow[] {
  const entries = schemaEntries(schema).filter((e) => e.path !== "");
  const byPath = new Map(schemaEntries(schema).map((e) => [e.path, e.node]));
  return entries.map(({ path, node }) => {
    const at = path.lastIndexOf(".");
    const parent = path.endsWith("[*]") ? undefined : byPath.get(at === -1 ? "" : path.slice(0, at));
    const required = parent?.required?.includes(path.slice(at + 1)) ?? false;
    return {
      path,
      type: typeOf(node),
      default: node.default === undefined ? "" : code(JSON.stringify(node.default).replace(/^"(.*)"$/, "$1")),
      validation: validationOf(node, required),
      // metadata is the standard ObjectMeta, which CRDs leave undescribed
      description:
        node.description ??
        (path === "metadata" ? "Standard object metadata: name, namespace, labels, annotations." : ""),
    };
  });
}

function typeOf(node: SchemaNode): string {
  const format = typeof node["format"] === "string" ? ` (${node["format"]})` : "";
  if (node.type === "array") return `[]${node.items?.type ?? "any"}`;
  return `${node.type ?? "any"}${format}`;
}

function validationOf(node: SchemaNode, required: boolean): string[] {
  const checks: string[] = [];
  const num = (key: string): number | undefined =>
    typeof node[key] === "number" ? (node[key] as number) : undefined;
  if (required) checks.push("required");
  if (node.enum !== undefined) checks.push(`one of ${node.enum.map((v) => code(String(v))).join(", ")}`);
  if (node.pattern !== undefined) checks.push(`pattern ${code(node.pattern)}`);
  const range = (what: string, min: number | undefined, max: number | undefined): void => {
    if (min !== undefined && max !== undefined) checks.push(`${what}${min} to ${max}`);
    else if (min !== undefined) checks.push(`${what}at least ${min}`);
    else if (max !== undefined) checks.push(`${what}at most ${max}`);
  };
  range("", num("minimum"), num("maximum"));
  range("length ", num("minLength"), num("maxLength"));
  range("items ", num("minItems"), num("maxItems"));
  const listType = node["x-kubernetes-list-type"];
  if (listType !== undefined) {
    const keys = node["x-kubernetes-list-map-keys"] ?? [];
    checks.push(`list type ${listType}${keys.length > 0 ? ` (key ${keys.map(code).join(", ")})` : ""}`);
  }
  for (const rule of node["x-kubernetes-validations"] ?? []) {
    checks.push(`CEL: ${prose(rule.message ?? rule.rule)}`);
  }
  return checks;
}

function celRules(schema: SchemaNode): { path: string; rule: string; message: string }[] {
  return schemaEntries(schema).flatMap(({ path, node }) =>
    (node["x-kubernetes-validations"] ?? []).map((r) => ({
      path: path === "" ? "(object)" : path,
      rule: r.rule.trim(),
      message: r.message ?? "",
    })),
  );
}

/** Text for a table cell: one line, no cell breaks, no HTML tags (`edge-<n>` must stay visible). */
function prose(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .trim()
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll("|", "\\|");
}

/** A code span for a table cell; GitHub's tables need the pipe escaped even inside code. */
function code(text: string): string {
  const fence = text.includes("`") ? "``" : "`";
  const pad = text.includes("`") ? " " : "";
  return `${fence}${pad}${text.replace(/\s+/g, " ").replaceAll("|", "\\|")}${pad}${fence}`;
}

function linkFrom(referencePath: string, target: string): string {
  return relative(dirname(referencePath), target).split("\\").join("/");
}

function main(): void {
  const crds = readCrds();
  writeFileSync(REFERENCE_PATH, renderCrdReference(crds));
  const fields = crds.reduce((n, crd) => n + fieldRows(crd.schema).length, 0);
  process.stdout.write(
    `wrote ${relative(process.cwd(), REFERENCE_PATH)}: ${crds.length} kinds, ${fields} fields\n`,
  );
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
