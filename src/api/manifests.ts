/**
 * Loads the manifests the cluster-less CLI works from (`plan -f PATH...`): YAML or JSON files
 * and directories (recursively, `*.yaml`, `*.yml`, `*.json`, in sorted order; manifest-files.ts),
 * several documents per file. Keeps NSXManager, EdgeTenant and IPPoolAllocations objects
 * (validated and defaulted as the API server would) and v1 Secrets (decoded); notes other kinds
 * as skipped. Every problem is collected as a ManifestError naming the file, line, document,
 * object and field, so one run shows them all. A file costs what its size allows, never more:
 * read under a size cap, scanned before parsing (yaml-guard.ts), duplicate keys found in linear
 * time.
 */
import { isMap, isSeq, LineCounter, parseAllDocuments, type Document, type Node } from "yaml";
import { CodedError } from "../util/errors.ts";
import { listManifestFiles, readManifestFile, ReadLedger, type SkippedFile } from "./manifest-files.ts";
import { fieldOf, ResourceValidator, type FieldIssue } from "./schema.ts";
import { duplicateKey, MANIFEST_LIMITS, scanYamlText, type ManifestLimits } from "./yaml-guard.ts";
import {
  API_VERSION,
  GROUP,
  KINDS,
  type Kind,
  type NsxvObject,
  type ObjectMeta,
  type Secret,
} from "./types.ts";
import { DNS_LABEL_MAX_LENGTH, DNS_SUBDOMAIN_MAX_LENGTH, isDnsLabel, isDnsSubdomain } from "./names.ts";

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
  /** files of a directory left unread (not regular files), for a note */
  skippedFiles: SkippedFile[];
  errors: ManifestError[];
}

export type { SkippedFile } from "./manifest-files.ts";
export { isManifestFile } from "./manifest-files.ts";

export interface LoadManifestsOptions {
  /** default: the CRDs shipped in crds/ */
  validator?: ResourceValidator;
  /** skip every file that is not a regular file, named ones too (default: a named file is read whatever it is) */
  regularFilesOnly?: boolean;
  /** default MANIFEST_LIMITS */
  limits?: ManifestLimits;
  /** what bounds the read as a whole (manifest-files.ts); default: a fresh one, READ_BOUNDS, naming the paths */
  ledger?: ReadLedger;
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
  const limits = options.limits ?? MANIFEST_LIMITS;
  const ledger = options.ledger ?? new ReadLedger(paths.join(", "));
  const listed = await listManifestFiles(paths);
  const result: ManifestSet = {
    objects: [],
    secrets: [],
    skipped: [],
    skippedFiles: listed.skipped,
    errors: listed.problems.map((p) => new ManifestError(p)),
  };
  const seen = new Map<string, ManifestSource>();
  const readOptions = { maxBytes: limits.maxFileBytes, regularOnly: options.regularFilesOnly ?? false };
  // the listing's sizes already over the bound: nothing is opened
  const tooLarge = ledger.refusesListed(listed.files, limits.maxFileBytes);
  if (tooLarge !== undefined) result.errors.push(new ManifestError({ file: ledger.root, detail: tooLarge }));
  for (const listedFile of tooLarge === undefined ? listed.files : []) {
    const file = listedFile.path;
    const read = await readManifestFile(listedFile, readOptions);
    if ("skipped" in read) {
      result.skippedFiles.push({ file, reason: read.skipped });
      continue;
    }
    if ("problem" in read) {
      result.errors.push(new ManifestError({ file, detail: read.problem }));
      continue;
    }
    const { text } = read;
    const refused = scanYamlText(text, limits);
    if (refused !== undefined) {
      const line = text.slice(0, refused.offset).split("\n").length;
      result.errors.push(new ManifestError({ file, line, detail: refused.detail }));
      continue;
    }
    // what the read as a whole may hold, before the parser pays for this file
    const overBound = ledger.charge(file, text);
    if (overBound !== undefined) {
      result.errors.push(new ManifestError({ file: ledger.root, detail: overBound }));
      break;
    }
    const lineCounter = new LineCounter();
    let docs: Document.Parsed[];
    try {
      // duplicate keys are found by readDocument, in linear time (yaml-guard.ts)
      docs = parseAllDocuments(text, { lineCounter, uniqueKeys: false }) as Document.Parsed[];
    } catch (error) {
      // the parser's own failure (a stack overflow, say) is the file's, not the tool's
      result.errors.push(new ManifestError({ file, line: 1, detail: `invalid YAML: ${problemOf(error)}` }));
      continue;
    }
    for (const [documentIndex, doc] of docs.entries()) {
      const start = doc.contents?.range?.[0] ?? doc.range[0];
      const source = { file, documentIndex, line: lineCounter.linePos(start).line };
      try {
        loadDocument({ doc, source, lineCounter, validator, result, seen });
      } catch (error) {
        // whatever a document does to the reader, it is that document's error, never a crash
        result.errors.push(
          new ManifestError({ ...source, ...objectOf(doc), detail: `cannot be read: ${problemOf(error)}` }),
        );
      }
    }
  }
  return result;
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
  // what `kubectl get -o yaml` writes: each item is read as a document of its own
  if (object["apiVersion"] === "v1" && object["kind"] === "List") {
    const items = object["items"];
    if (!Array.isArray(items)) {
      const line = lineOf(ctx, ["items"]);
      ctx.result.errors.push(
        new ManifestError({ ...ctx.source, line, field: "items", detail: "a List needs items" }),
      );
      return;
    }
    items.forEach((item: unknown, i) => {
      const path = ["items", i];
      const source = { ...ctx.source, line: lineOf(ctx, path) };
      if (isRecord(item)) loadObject({ ...ctx, source }, item, path);
      else
        ctx.result.errors.push(
          new ManifestError({ ...source, field: `items[${i}]`, detail: "not an object" }),
        );
    });
    return;
  }
  loadObject(ctx, object, []);
}

/** The kinds this tool reads, by kind name: any document naming one is read, or an error. */
const READ_KINDS: ReadonlySet<string> = new Set([...KINDS, "Secret"]);

/** One object (a document, or an item of a List at `at`): validated into the set, skipped, or an error. */
function loadObject(ctx: DocumentContext, object: Record<string, unknown>, at: (string | number)[]): void {
  const { source, result } = ctx;
  const apiVersion = object["apiVersion"];
  const kind = object["kind"];
  const where = (field: string): { field: string; line: number } => ({
    field: fieldOf([...at, field]),
    line: lineOf(ctx, [...at, field]),
  });
  if (typeof apiVersion !== "string" || apiVersion === "" || typeof kind !== "string" || kind === "") {
    const field = typeof apiVersion !== "string" || apiVersion === "" ? "apiVersion" : "kind";
    result.errors.push(new ManifestError({ ...source, ...where(field), detail: "Required value" }));
    return;
  }
  const metadata = isRecord(object["metadata"]) ? object["metadata"] : {};
  const name = typeof metadata["name"] === "string" ? metadata["name"] : undefined;
  const namespace = typeof metadata["namespace"] === "string" ? metadata["namespace"] : "default";
  const named = { kind, namespace, name };
  const isOurs = apiVersion.split("/")[0] === GROUP;
  if (!isOurs && !READ_KINDS.has(kind)) {
    result.skipped.push({ source, apiVersion, kind, namespace, name });
    return;
  }
  // a kind this tool reads under another apiVersion is a mistake, never a document to skip
  const wanted = kind === "Secret" ? "v1" : API_VERSION;
  if (READ_KINDS.has(kind) && apiVersion !== wanted) {
    const detail = `${kind} is ${wanted}, not ${apiVersion}`;
    result.errors.push(new ManifestError({ ...source, ...where("apiVersion"), ...named, detail }));
    return;
  }
  if (!READ_KINDS.has(kind)) {
    const detail = `${apiVersion} has no kind ${kind}: want one of ${KINDS.join(", ")}`;
    result.errors.push(new ManifestError({ ...source, ...where("kind"), ...named, detail }));
    return;
  }
  const report = (issues: FieldIssue[]): boolean => {
    for (const { field, path, message } of issues) {
      const line = lineOf(ctx, [...at, ...path]);
      result.errors.push(new ManifestError({ ...source, line, ...named, field, detail: message }));
    }
    return issues.length === 0;
  };
  const issues = [
    ...metadataIssues(object["metadata"]),
    ...duplicateIssues(ctx, `${kind}/${namespace}`, name),
  ];
  const withNamespace = { ...object, metadata: { ...metadata, namespace } };
  if (kind === "Secret") {
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
function readDocument(ctx: DocumentContext): Record<string, unknown> | undefined {
  const { doc, source, result } = ctx;
  const [error] = doc.errors;
  if (error !== undefined) {
    // the first error is the mistake; the parser's next ones are mostly its consequences
    const line = error.linePos?.[0].line ?? source.line;
    const detail = `invalid YAML: ${yamlProblem(error.message)}`;
    result.errors.push(new ManifestError({ ...source, line, ...objectOf(doc), detail }));
    return undefined;
  }
  const duplicate = duplicateKey(doc);
  if (duplicate !== undefined) {
    const { line } = ctx.lineCounter.linePos(duplicate.offset);
    const first = ctx.lineCounter.linePos(duplicate.firstOffset).line;
    const detail = `duplicate key ${JSON.stringify(duplicate.key)} (first at line ${first}): which one is meant is a guess`;
    const field = fieldOf(duplicate.path);
    result.errors.push(new ManifestError({ ...source, line, ...objectOf(doc), field, detail }));
    return undefined;
  }
  let value: unknown;
  try {
    value = doc.toJS(); // throws on too many aliases (a "billion laughs" document)
  } catch (error) {
    result.errors.push(
      new ManifestError({ ...source, ...objectOf(doc), detail: `invalid YAML: ${problemOf(error)}` }),
    );
    return undefined;
  }
  const shape = shapeProblem(value);
  if (shape !== undefined) {
    const field = fieldOf(shape.path);
    const line = lineOf(ctx, shape.path);
    result.errors.push(new ManifestError({ ...source, line, ...objectOf(doc), field, detail: shape.detail }));
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
  else if (!isDnsSubdomain(name)) {
    issues.push(
      issue(
        "name",
        `Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain of at most ${DNS_SUBDOMAIN_MAX_LENGTH} characters`,
      ),
    );
  }
  if (namespace !== undefined && !isDnsLabel(namespace)) {
    issues.push(
      issue(
        "namespace",
        `Invalid value: ${JSON.stringify(namespace)}: a lowercase RFC 1123 label of at most ${DNS_LABEL_MAX_LENGTH} characters`,
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
  // where the document's content starts (not its `---`), for a field it does not have
  let offset = ctx.doc.contents?.range?.[0] ?? ctx.doc.range[0];
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

/**
 * The yaml library's message as one line: its first line, without the position it appends (the
 * line is said separately) and the trailing colon before the excerpt; a stack overflow said as
 * what it means.
 */
function yamlProblem(message: string): string {
  if (/call stack/i.test(message)) return problemOf(new RangeError(message));
  const first = message.split("\n")[0] ?? message;
  return first.replace(/ at line \d+, column \d+:?\s*$/, "").replace(/:\s*$/, "");
}

/** How deep a manifest may nest: far beyond any real object, far below what could exhaust the stack. */
export const MAX_MANIFEST_DEPTH = 64;

/** A cycle (an alias to its own ancestor) or nesting deeper than MAX_MANIFEST_DEPTH: where, and what. */
function shapeProblem(value: unknown): { path: (string | number)[]; detail: string } | undefined {
  const ancestors = new Set<object>();
  const visit = (
    node: unknown,
    path: (string | number)[],
  ): { path: (string | number)[]; detail: string } | undefined => {
    if (node === null || typeof node !== "object") return undefined;
    if (ancestors.has(node))
      return { path, detail: "a YAML alias refers to an object that contains it (a cycle)" };
    if (path.length > MAX_MANIFEST_DEPTH)
      return { path, detail: `nested deeper than ${MAX_MANIFEST_DEPTH} levels` };
    ancestors.add(node);
    const entries: [string | number, unknown][] = Array.isArray(node)
      ? node.map((v, i) => [i, v])
      : Object.entries(node);
    for (const [step, child] of entries) {
      const problem = visit(child, [...path, step]);
      if (problem !== undefined) return problem;
    }
    ancestors.delete(node);
    return undefined;
  };
  return visit(value, []);
}

/** The kind, namespace and name a document declares, as far as they can be read without converting it. */
function objectOf(doc: Document.Parsed): { kind?: string; namespace?: string; name?: string } {
  const text = (path: string[]): string | undefined => {
    let value: unknown;
    try {
      value = doc.getIn(path);
    } catch {
      return undefined; // a document broken enough that even this fails names no object
    }
    return typeof value === "string" ? value : undefined;
  };
  const kind = text(["kind"]);
  const name = text(["metadata", "name"]);
  const namespace = text(["metadata", "namespace"]);
  return {
    ...(kind !== undefined ? { kind } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
  };
}

/** An exception's message, with the engine's stack overflow said as what it means for a manifest. */
function problemOf(error: unknown): string {
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return `nested too deeply to read (more than ${MAX_MANIFEST_DEPTH} levels are never needed)`;
  }
  return error instanceof Error ? error.message : String(error);
}
