/**
 * Loads the manifests the cluster-less CLI works from (`plan -f PATH...`): YAML or JSON files
 * and directories (recursively, `*.yaml`, `*.yml`, `*.json`, in sorted order), several
 * documents per file. Keeps NSXManager, EdgeTenant and IPPoolAllocations objects (validated
 * and defaulted as the API server would) and v1 Secrets (decoded); notes other kinds as
 * skipped. Every problem is collected as a ManifestError naming the file, line, document,
 * object and field, so one run shows them all.
 */
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { isMap, isSeq, LineCounter, parseAllDocuments, type Document, type Node } from "yaml";
import { CodedError } from "../util/errors.ts";
import { fieldOf, ResourceValidator, type FieldIssue } from "./schema.ts";
import {
  API_VERSION,
  GROUP,
  KINDS,
  type Kind,
  type NsxvObject,
  type ObjectMeta,
  type Secret,
} from "./types.ts";

export interface ManifestSource {
  file: string;
  /** 0-based position of the document in its file */
  documentIndex: number;
  /** 1-based line where the document starts */
  line: number;
}

export interface LoadedObject {
  object: NsxvObject;
  source: ManifestSource;
}

export interface LoadedSecret {
  /** metadata with the namespace filled in; data and stringData as written */
  secret: Secret;
  /** every key's value as text: `data` base64-decoded, then `stringData` over it per key, as Kubernetes merges them */
  values: Record<string, string>;
  source: ManifestSource;
}

export interface SkippedDocument {
  source: ManifestSource;
  apiVersion: string;
  kind: string;
  namespace: string | undefined;
  name: string | undefined;
}

export interface ManifestSet {
  objects: LoadedObject[];
  secrets: LoadedSecret[];
  skipped: SkippedDocument[];
  errors: ManifestError[];
}

export interface LoadManifestsOptions {
  /** default: the CRDs shipped in crds/ */
  validator?: ResourceValidator;
}

/** A file, document or field that cannot be used; `message` names all of them. */
export class ManifestError extends CodedError {
  readonly file: string;
  /** 0-based; undefined when the whole file is at fault */
  readonly documentIndex: number | undefined;
  /** 1-based */
  readonly line: number | undefined;
  readonly kind: string | undefined;
  readonly namespace: string | undefined;
  readonly objectName: string | undefined;
  /** `spec.allowed[3]` */
  readonly field: string | undefined;
  /** what is wrong, without the location */
  readonly detail: string;

  constructor(init: {
    file: string;
    documentIndex?: number;
    line?: number;
    kind?: string;
    namespace?: string;
    name?: string;
    field?: string;
    detail: string;
  }) {
    const where = [
      `${init.file}${init.line === undefined ? "" : `:${init.line}`}`,
      init.documentIndex === undefined ? undefined : `document ${init.documentIndex + 1}`,
      init.kind === undefined
        ? undefined
        : `${init.kind} ${init.namespace ?? "default"}/${init.name ?? "(no name)"}`,
      init.field,
    ].filter((s) => s !== undefined);
    super("INVALID_MANIFEST", `${where.join(": ")}: ${init.detail}`);
    this.file = init.file;
    this.documentIndex = init.documentIndex;
    this.line = init.line;
    this.kind = init.kind;
    this.namespace = init.namespace;
    this.objectName = init.name;
    this.field = init.field;
    this.detail = init.detail;
  }
}

const EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

/** whether a directory walk reads this file (`*.yaml`, `*.yml`, `*.json`) */
export function isManifestFile(path: string): boolean {
  return EXTENSIONS.has(extname(path).toLowerCase());
}
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const OBJECT_META_FIELDS = new Set([
  "name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
  "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
  "finalizers", "managedFields", "selfLink",
]); // prettier-ignore
const SECRET_FIELDS = new Set(["apiVersion", "kind", "metadata", "data", "stringData", "type", "immutable"]);

export async function loadManifests(
  paths: readonly string[],
  options: LoadManifestsOptions = {},
): Promise<ManifestSet> {
  const validator = options.validator ?? ResourceValidator.load();
  const result: ManifestSet = { objects: [], secrets: [], skipped: [], errors: [] };
  const seen = new Map<string, ManifestSource>();
  for (const file of await manifestFiles(paths, result.errors)) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      result.errors.push(new ManifestError({ file, detail: `cannot read: ${(error as Error).message}` }));
      continue;
    }
    const lineCounter = new LineCounter();
    for (const [documentIndex, doc] of parseAllDocuments(text, { lineCounter }).entries()) {
      const start = doc.contents?.range?.[0] ?? doc.range[0];
      const source = { file, documentIndex, line: lineCounter.linePos(start).line };
      loadDocument({ doc, source, lineCounter, validator, result, seen });
    }
  }
  return result;
}

/** The files named, and the manifest files under the directories named, each once. */
async function manifestFiles(paths: readonly string[], errors: ManifestError[]): Promise<string[]> {
  const files: string[] = [];
  const visited = new Set<string>();
  const walk = async (path: string, named: boolean): Promise<void> => {
    const real = await realpath(path);
    if (visited.has(real)) return;
    visited.add(real);
    if ((await stat(real)).isDirectory()) {
      const names = (await readdir(path)).filter((n) => !n.startsWith(".")).sort();
      for (const name of names) await walk(join(path, name), false);
    } else if (named || isManifestFile(path)) {
      files.push(path);
    }
  };
  for (const path of paths) {
    try {
      await walk(path, true);
    } catch (error) {
      errors.push(new ManifestError({ file: path, detail: `cannot read: ${(error as Error).message}` }));
    }
  }
  return files;
}

interface DocumentContext {
  doc: Document.Parsed;
  source: ManifestSource;
  lineCounter: LineCounter;
  validator: ResourceValidator;
  result: ManifestSet;
  seen: Map<string, ManifestSource>;
}

function loadDocument(ctx: DocumentContext): void {
  const object = readDocument(ctx);
  if (object === undefined) return;
  const { source, result } = ctx;
  const apiVersion = object["apiVersion"];
  const kind = object["kind"];
  if (typeof apiVersion !== "string" || apiVersion === "" || typeof kind !== "string" || kind === "") {
    const field = typeof apiVersion !== "string" || apiVersion === "" ? "apiVersion" : "kind";
    result.errors.push(new ManifestError({ ...source, field, detail: "Required value" }));
    return;
  }
  const metadata = isRecord(object["metadata"]) ? object["metadata"] : {};
  const name = typeof metadata["name"] === "string" ? metadata["name"] : undefined;
  const namespace = typeof metadata["namespace"] === "string" ? metadata["namespace"] : "default";
  const isOurs = apiVersion.split("/")[0] === GROUP;
  const isSecret = apiVersion === "v1" && kind === "Secret";
  if (!isOurs && !isSecret) {
    result.skipped.push({ source, apiVersion, kind, namespace, name });
    return;
  }
  const report = (issues: FieldIssue[]): boolean => {
    for (const { field, path, message } of issues) {
      const line = lineOf(ctx, path);
      result.errors.push(
        new ManifestError({ ...source, line, kind, namespace, name, field, detail: message }),
      );
    }
    return issues.length === 0;
  };
  if (isOurs && (apiVersion !== API_VERSION || !(KINDS as readonly string[]).includes(kind))) {
    const message = `${apiVersion} ${kind} is not a kind of ${API_VERSION}: want one of ${KINDS.join(", ")}`;
    report([{ field: "kind", path: ["kind"], message }]);
    return;
  }
  const issues = [
    ...metadataIssues(object["metadata"]),
    ...duplicateIssues(ctx, `${kind}/${namespace}`, name),
  ];
  const withNamespace = { ...object, metadata: { ...metadata, namespace } };
  if (isSecret) {
    const decoded = decodeSecret(object);
    if (report([...issues, ...decoded.issues])) {
      result.secrets.push({ secret: withNamespace as unknown as Secret, values: decoded.values, source });
    }
    return;
  }
  const validated = ctx.validator.validate(kind as Kind, withNamespace);
  if (report([...issues, ...validated.issues])) {
    result.objects.push({ object: validated.value as NsxvObject, source });
  }
}

/** The document as a plain object; undefined (with errors recorded) for bad YAML, empty or non-object documents. */
function readDocument({ doc, source, result }: DocumentContext): Record<string, unknown> | undefined {
  if (doc.errors.length > 0) {
    for (const error of doc.errors) {
      const line = error.linePos?.[0].line ?? source.line;
      result.errors.push(
        new ManifestError({ ...source, line, detail: `invalid YAML: ${firstLine(error.message)}` }),
      );
    }
    return undefined;
  }
  let value: unknown;
  try {
    value = doc.toJS(); // throws on too many aliases (a "billion laughs" document)
  } catch (error) {
    result.errors.push(new ManifestError({ ...source, detail: `invalid YAML: ${(error as Error).message}` }));
    return undefined;
  }
  if (value === null || value === undefined) return undefined; // an empty document, as after a trailing `---`
  if (!isRecord(value)) {
    result.errors.push(new ManifestError({ ...source, detail: "not an object with apiVersion and kind" }));
    return undefined;
  }
  return value;
}

/** Two documents with one kind, namespace and name: the second is an error. */
function duplicateIssues(ctx: DocumentContext, scope: string, name: string | undefined): FieldIssue[] {
  if (name === undefined) return [];
  const first = ctx.seen.get(`${scope}/${name}`);
  if (first === undefined) {
    ctx.seen.set(`${scope}/${name}`, ctx.source);
    return [];
  }
  const where = `${first.file}:${first.line} (document ${first.documentIndex + 1})`;
  return [
    {
      field: "metadata.name",
      path: ["metadata", "name"],
      message: `Duplicate value: ${JSON.stringify(name)}: already defined at ${where}`,
    },
  ];
}

function metadataIssues(metadata: unknown): FieldIssue[] {
  const issue = (step: string, message: string): FieldIssue => ({
    field: `metadata.${step}`,
    path: ["metadata", step],
    message,
  });
  if (!isRecord(metadata)) return [{ field: "metadata", path: ["metadata"], message: "Required value" }];
  const issues: FieldIssue[] = [];
  const { name, namespace } = metadata as Partial<Record<keyof ObjectMeta, unknown>>;
  if (name === undefined || name === "") issues.push(issue("name", "Required value"));
  else if (typeof name !== "string" || name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    issues.push(
      issue(
        "name",
        `Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain of at most 253 characters`,
      ),
    );
  }
  if (
    namespace !== undefined &&
    (typeof namespace !== "string" || namespace.length > 63 || !DNS_LABEL.test(namespace))
  ) {
    issues.push(
      issue(
        "namespace",
        `Invalid value: ${JSON.stringify(namespace)}: a lowercase RFC 1123 label of at most 63 characters`,
      ),
    );
  }
  for (const map of ["labels", "annotations"]) {
    const value = metadata[map];
    if (
      value !== undefined &&
      (!isRecord(value) || Object.values(value).some((v) => typeof v !== "string"))
    ) {
      issues.push(issue(map, "Invalid value: must be a map of strings"));
    }
  }
  for (const key of Object.keys(metadata)) {
    if (!OBJECT_META_FIELDS.has(key)) issues.push(issue(key, "unknown field"));
  }
  return issues;
}

/** `data` base64-decoded, then `stringData` per key over it, as the API server merges them. */
function decodeSecret(object: Record<string, unknown>): {
  values: Record<string, string>;
  issues: FieldIssue[];
} {
  const values: Record<string, string> = {};
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(object)) {
    if (!SECRET_FIELDS.has(key)) issues.push({ field: key, path: [key], message: "unknown field" });
  }
  for (const section of ["data", "stringData"] as const) {
    const map = object[section];
    if (map === undefined) continue;
    if (!isRecord(map)) {
      issues.push({ field: section, path: [section], message: "Invalid value: must be a map of strings" });
      continue;
    }
    for (const [key, value] of Object.entries(map)) {
      const path = [section, key];
      // the value itself is never quoted: it is a credential
      if (!SECRET_KEY.test(key))
        issues.push({
          field: fieldOf(path),
          path,
          message: "Invalid key: must consist of alphanumerics, '-', '_' or '.'",
        });
      else if (typeof value !== "string")
        issues.push({ field: fieldOf(path), path, message: "Invalid value: must be a string" });
      else if (section === "data" && !BASE64.test(value))
        issues.push({ field: fieldOf(path), path, message: "Invalid value: not valid base64" });
      else values[key] = section === "data" ? Buffer.from(value, "base64").toString("utf8") : value;
    }
  }
  return { values, issues };
}

/** The line of the deepest part of the path that exists in the document (a key's own line for a key). */
function lineOf(ctx: DocumentContext, path: readonly (string | number)[]): number {
  let node: unknown = ctx.doc.contents;
  let offset = ctx.doc.range[0];
  for (const step of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === step);
      if (pair === undefined) break;
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof step === "number" && step < node.items.length) {
      node = node.items[step];
      offset = (node as Node).range?.[0] ?? offset;
    } else {
      break;
    }
  }
  return ctx.lineCounter.linePos(offset).line;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}
