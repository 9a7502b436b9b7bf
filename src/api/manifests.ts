/**
 * Loads the manifests the cluster-less CLI works from (`plan -f PATH...`): YAML or JSON files
 * and directories (recursively, `*.yaml`, `*.yml`, `*.json`, in sorted order; manifest-files.ts),
 * several documents per file. Keeps NSXManager, EdgeTenant and IPPoolAllocations objects
 * (validated and defaulted as the API server would) and v1 Secrets (decoded); notes other kinds
 * as skipped. Every problem is collected as a ManifestError naming the file, line, document,
 * object and field, so one run shows them all. A file costs what its size allows, never more:
 * read under a size cap; the block YAML that manifests are written in is read by block-yaml.ts
 * (linear, a tenth of the library's cost), anything else, and any file with a problem, by the
 * yaml library behind the guards of yaml-guard.ts (scanned before parsing, duplicate keys found
 * in linear time), loaded only then.
 */
import { CodedError } from "../util/errors.ts";
import { readBlockYaml } from "./block-yaml.ts";
import type { ManifestProblem } from "./yaml-guard.ts";
import { MANIFEST_LIMITS, problemOf, type ManifestLimits } from "./manifest-limits.ts";
import { listManifestFiles, readManifestFile, ReadLedger, type SkippedFile } from "./manifest-files.ts";
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

  constructor(init: ManifestProblem & { file: string; documentIndex?: number }) {
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
    const context = { file, limits, validator, seen, ledger };
    const loaded = loadBlockYaml(read.text, context) ?? (await loadWithLibrary(read.text, context));
    if ("overBound" in loaded) {
      result.errors.push(new ManifestError({ file: ledger.root, detail: loaded.overBound }));
      break;
    }
    addSet(result, loaded.documents);
  }
  return result;
}

/** Where the documents of one file go, and what they are checked against. */
interface FileContext {
  file: string;
  limits: ManifestLimits;
  validator: ResourceValidator;
  /** kind/namespace/name → where it was first defined, over the files read so far */
  seen: Map<string, ManifestSource>;
  /** what the read as a whole may hold: charged once the file passed its own caps, before it is built */
  ledger: ReadLedger;
}

/** What documents add to: the whole set, or one file's before it is kept. */
type DocumentResults = Pick<ManifestSet, "objects" | "secrets" | "skipped" | "errors">;

/** One file read: its documents (and their errors), or why the read as a whole stops here. */
type FileLoad = { documents: DocumentResults } | { overBound: string };

interface DocumentContext {
  source: ManifestSource;
  /** the line of the deepest part of a path that exists in the document */
  lineOf: (path: readonly (string | number)[]) => number;
  validator: ResourceValidator;
  result: DocumentResults;
  seen: Pick<Map<string, ManifestSource>, "get" | "set">;
}

const noDocuments = (): DocumentResults => ({ objects: [], secrets: [], skipped: [], errors: [] });

/**
 * The file as the block reader reads it (block-yaml.ts): undefined when the reader leaves the text
 * to the library, or when a document of it has a problem: the library then reads the file again,
 * so that every error is worded and placed as it has always been. A text the reader takes is
 * within its file's caps (under half the token cap, shallow): the ledger is charged then, before
 * any object is built (the reader's own pass, linear, is all the file that crosses the bound costs).
 */
function loadBlockYaml(text: string, context: FileContext): FileLoad | undefined {
  const read = readBlockYaml(text, context.limits);
  if (read === undefined) return undefined;
  // the reader's documents are the ones countDocuments counts (test/api/block-yaml.test.ts)
  const overBound = context.ledger.charge(context.file, text, read.documents.length);
  if (overBound !== undefined) return { overBound };
  const documents = noDocuments();
  // the names this file defines, kept only with the file: checked against the earlier files' too
  const own = new Map<string, ManifestSource>();
  const seen = { get: (key: string) => own.get(key) ?? context.seen.get(key), set: own.set.bind(own) };
  for (const [documentIndex, doc] of read.documents.entries()) {
    if (doc.value === null) continue; // an empty document, as after a trailing `---`
    const source = { file: context.file, documentIndex, line: doc.line };
    const ctx = { source, lineOf: doc.lineOf, validator: context.validator, result: documents, seen };
    loadValue(ctx, doc.value);
    if (documents.errors.length > 0) return undefined;
  }
  for (const [key, source] of own) context.seen.set(key, source);
  return { documents };
}

/**
 * The file as the yaml library reads it, behind the guards of yaml-guard.ts (loaded here, once
 * needed): refused on its own before it is parsed (nesting, tokens), then charged to the ledger,
 * then parsed.
 */
async function loadWithLibrary(text: string, context: FileContext): Promise<FileLoad> {
  const { file } = context;
  const documents = noDocuments();
  const yaml = await import("./yaml-guard.ts");
  const refused = yaml.refusedBeforeParsing(text, context.limits);
  if (refused !== undefined) {
    documents.errors.push(new ManifestError({ file, ...refused }));
    return { documents };
  }
  const overBound = context.ledger.charge(file, text);
  if (overBound !== undefined) return { overBound };
  const read = yaml.readYamlDocuments(text);
  if ("problem" in read) {
    documents.errors.push(new ManifestError({ file, ...read.problem }));
    return { documents };
  }
  for (const [documentIndex, doc] of read.documents.entries()) {
    const source = { file, documentIndex, line: doc.line };
    if (doc.problem !== undefined) {
      const line = doc.problem.line ?? source.line;
      documents.errors.push(new ManifestError({ ...source, ...doc.problem, line }));
    } else if (doc.value !== undefined) {
      loadValue({ ...context, result: documents, source, lineOf: doc.lineOf }, doc.value);
    }
  }
  return { documents };
}

/** a file's documents, and their errors */
function addSet(result: ManifestSet, set: DocumentResults): void {
  result.objects.push(...set.objects);
  result.secrets.push(...set.secrets);
  result.skipped.push(...set.skipped);
  result.errors.push(...set.errors);
}

/** One document's object: whatever it does to the reader, it is that document's error, never a crash. */
function loadValue(ctx: DocumentContext, object: Record<string, unknown>): void {
  try {
    loadDocument(ctx, object);
  } catch (error) {
    const metadata = isRecord(object["metadata"]) ? object["metadata"] : {};
    const declared = {
      ...(typeof object["kind"] === "string" ? { kind: object["kind"] } : {}),
      ...(typeof metadata["name"] === "string" ? { name: metadata["name"] } : {}),
      ...(typeof metadata["namespace"] === "string" ? { namespace: metadata["namespace"] } : {}),
    };
    ctx.result.errors.push(
      new ManifestError({ ...ctx.source, ...declared, detail: `cannot be read: ${problemOf(error)}` }),
    );
  }
}

function loadDocument(ctx: DocumentContext, object: Record<string, unknown>): void {
  // what `kubectl get -o yaml` writes: each item is read as a document of its own
  if (object["apiVersion"] === "v1" && object["kind"] === "List") {
    const items = object["items"];
    if (!Array.isArray(items)) {
      const line = ctx.lineOf(["items"]);
      ctx.result.errors.push(
        new ManifestError({ ...ctx.source, line, field: "items", detail: "a List needs items" }),
      );
      return;
    }
    items.forEach((item: unknown, i) => {
      const path = ["items", i];
      const source = { ...ctx.source, line: ctx.lineOf(path) };
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
  const where = (field: string): { field: string; line: number } => ({
    field: fieldOf([...at, field]),
    line: ctx.lineOf([...at, field]),
  });
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== "string" || apiVersion === "" || typeof kind !== "string" || kind === "") {
    const field = typeof apiVersion !== "string" || apiVersion === "" ? "apiVersion" : "kind";
    result.errors.push(new ManifestError({ ...source, ...where(field), detail: "Required value" }));
    return;
  }
  const metadata = isRecord(object["metadata"]) ? object["metadata"] : {};
  const name = typeof metadata["name"] === "string" ? metadata["name"] : undefined;
  const namespace = typeof metadata["namespace"] === "string" ? metadata["namespace"] : "default";
  const named = { kind, namespace, name };
  const refusal = kindRefusal(apiVersion, kind);
  if (refusal === "skip") result.skipped.push({ source, apiVersion, kind, namespace, name });
  else if (refusal !== undefined)
    result.errors.push(
      new ManifestError({ ...source, ...where(refusal.field), ...named, detail: refusal.detail }),
    );
  else loadKnown(ctx, { object, at, named, metadata });
}

/**
 * Whether a document's kind is one this tool reads: skipped when it is another API's; an error
 * (the field and why) when it is ours but no kind of ours, or a kind we read under another
 * apiVersion: a mistake, never a document to skip.
 */
function kindRefusal(
  apiVersion: string,
  kind: string,
): "skip" | { field: string; detail: string } | undefined {
  if (!READ_KINDS.has(kind)) {
    if (apiVersion.split("/")[0] !== GROUP) return "skip";
    return { field: "kind", detail: `${apiVersion} has no kind ${kind}: want one of ${KINDS.join(", ")}` };
  }
  const wanted = kind === "Secret" ? "v1" : API_VERSION;
  return apiVersion === wanted
    ? undefined
    : { field: "apiVersion", detail: `${kind} is ${wanted}, not ${apiVersion}` };
}

/** A document of a kind this tool reads: validated (a Secret decoded), or its errors, each at its line. */
function loadKnown(
  ctx: DocumentContext,
  doc: {
    object: Record<string, unknown>;
    at: (string | number)[];
    named: { kind: string; namespace: string; name: string | undefined };
    metadata: Record<string, unknown>;
  },
): void {
  const { source, result } = ctx;
  const { object, at, named, metadata } = doc;
  const { kind, namespace, name } = named;
  const report = (issues: FieldIssue[]): boolean => {
    for (const { field, path, message } of issues) {
      const line = ctx.lineOf([...at, ...path]);
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
