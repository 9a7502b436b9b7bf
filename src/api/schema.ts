/**
 * Validates custom resources without a cluster, as the API server would: against the
 * openAPIV3Schema of the CRDs in crds/ (ajv's validators, generated from them at build time:
 * crd-validators.generated.ts), with `default:` values applied, unknown fields rejected (as
 * `fieldValidation=Strict` does), null fields pruned before defaulting, list-type uniqueness
 * checked, and each CEL rule evaluated through its TypeScript counterpart (cel-rules.ts).
 * Messages follow the API server's wording: `Invalid value: "x": ...`. crds.ts reads the CRDs and
 * compiles them at run time, for tests and the generator.
 */
import type { ErrorObject } from "ajv";
import { CodedError } from "../util/errors.ts";
import { CEL_COUNTERPARTS, type CelCounterpart } from "./cel-rules.ts";
import { CRD_KINDS } from "./crd-validators.generated.ts";
import type { Kind } from "./types.ts";

/** One node of an openAPIV3Schema, the keywords this project uses. */
export interface SchemaNode {
  type?: string;
  description?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  required?: string[];
  default?: unknown;
  enum?: unknown[];
  pattern?: string;
  "x-kubernetes-validations"?: CelRuleSpec[];
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  [keyword: string]: unknown;
}

export interface CelRuleSpec {
  rule: string;
  message?: string;
  /** FieldValueForbidden: the refusal does not quote the value (the API server's `Forbidden: ...`) */
  reason?: string;
}

type Refusal = (value: unknown, detail: string) => string;
const invalidValue: Refusal = (value, detail) => `Invalid value: ${shown(value)}${detail}`;

/** The rule reasons evaluated here, with the API server's wording of each refusal. */
const RULE_REFUSALS: Readonly<Record<string, Refusal>> = {
  FieldValueInvalid: invalidValue,
  FieldValueForbidden: (_value, detail) => `Forbidden: ${detail}`,
};

/** One CRD of crds/, the served version's schema. */
export interface CrdInfo {
  file: string;
  kind: Kind;
  plural: string;
  /** the whole CustomResourceDefinition document */
  definition: Record<string, unknown>;
  schema: SchemaNode;
}

/** A problem with one field; `path` locates it in the document (for line numbers). */
export interface FieldIssue {
  /** `spec.allowed[3]` */
  field: string;
  path: (string | number)[];
  message: string;
}

/** A node of the schema tree with the path that reaches it: `spec.allowed[*]`. */
export interface SchemaEntry {
  path: string;
  node: SchemaNode;
}

/** crds/ cannot be used: unreadable, no schema, or a CEL rule this module cannot evaluate. */
export class CrdError extends CodedError {
  constructor(message: string) {
    super("INVALID_CRD", message);
  }
}

/** Every node of a schema, depth first, with its path (`[*]` for array items). */
export function schemaEntries(node: SchemaNode, path = ""): SchemaEntry[] {
  const entries: SchemaEntry[] = [{ path, node }];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    entries.push(...schemaEntries(child, path === "" ? name : `${path}.${name}`));
  }
  if (node.items !== undefined) entries.push(...schemaEntries(node.items, `${path}[*]`));
  if (typeof node.additionalProperties === "object") {
    entries.push(...schemaEntries(node.additionalProperties, `${path}{*}`));
  }
  return entries;
}

interface BoundRule {
  path: string;
  spec: CelRuleSpec;
  counterpart: CelCounterpart;
}

/** An ajv validator of one kind's schema: true or false, the problems in `errors`, defaults applied to the value. */
export interface SchemaValidate {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** What the validator knows of one kind: its schema's validator, and what it checks besides. */
export interface KindSchema {
  kind: Kind;
  /** the CRD's file, for errors */
  file: string;
  /** the schema's validator, made (or compiled) on first use: a pass over one edge never needs the others */
  validate: () => SchemaValidate;
  /** the lists whose items must be unique (`x-kubernetes-list-type` set or map), by schema path */
  lists: SchemaEntry[];
  /** the CEL rules, by schema path */
  rules: { path: string; spec: CelRuleSpec }[];
}

interface KindValidator {
  validate: () => SchemaValidate;
  rules: BoundRule[];
  lists: SchemaEntry[];
}

export class ResourceValidator {
  readonly #kinds: Map<Kind, KindValidator>;

  private constructor(kinds: Map<Kind, KindValidator>) {
    this.#kinds = kinds;
  }

  /**
   * The kinds' validators with each CEL rule bound to its TypeScript counterpart; throws CrdError
   * when a rule has none (or sits under a map's values, which this module does not walk).
   */
  static fromKinds(
    kinds: readonly KindSchema[],
    counterparts: readonly CelCounterpart[] = CEL_COUNTERPARTS,
  ): ResourceValidator {
    return new ResourceValidator(
      new Map(
        kinds.map((k) => [
          k.kind,
          {
            validate: k.validate,
            lists: k.lists,
            rules: k.rules.map((rule) => bindRule(k, rule, counterparts)),
          },
        ]),
      ),
    );
  }

  /** The CRDs of crds/, as generated into crd-validators.generated.ts (test/api/crd-validators.test.ts keeps it current). */
  static load(): ResourceValidator {
    // generated code is not type-checked: the test compares it with what crds/ compile to
    return ResourceValidator.fromKinds(CRD_KINDS as readonly KindSchema[]);
  }

  /** Validates a copy of the object; returns the copy with defaults applied, and every issue. */
  validate(kind: Kind, object: unknown): { value: unknown; issues: FieldIssue[] } {
    const validator = this.#kinds.get(kind);
    if (validator === undefined) throw new CrdError(`no CRD loaded for kind ${kind}`);
    const value = copyWithoutNulls(object);
    const validate = validator.validate();
    const issues = validate(value) ? [] : (validate.errors ?? []).map((e) => issueOf(e, value));
    // like the API server, rules are not evaluated on values that already failed the schema
    const failed = (field: string): boolean =>
      issues.some((i) => nested(i.field, field) || nested(field, i.field));
    for (const { path, node } of validator.lists) {
      for (const at of instancesAt(value, path)) issues.push(...duplicatesIn(at, node));
    }
    for (const rule of validator.rules) {
      for (const at of instancesAt(value, rule.path)) {
        if (issues.length > 0 && failed(fieldOf(at.path))) continue;
        const verdict = rule.counterpart.check(at.value);
        if (verdict === undefined) continue;
        const field = fieldOf(at.path);
        const detail = verdict === true ? (rule.spec.message ?? `failed rule: ${rule.spec.rule}`) : verdict;
        const refusal = RULE_REFUSALS[rule.spec.reason ?? "FieldValueInvalid"] ?? invalidValue;
        issues.push({ field, path: at.path, message: refusal(at.value, detail) });
      }
    }
    return { value, issues };
  }
}

/** A rule of a kind with its TypeScript counterpart; throws CrdError for a rule without one. */
function bindRule(
  kind: KindSchema,
  { path, spec }: { path: string; spec: CelRuleSpec },
  counterparts: readonly CelCounterpart[],
): BoundRule {
  const where = `${kind.file}: ${kind.kind} ${path}`;
  if (path.includes("{*}")) throw new CrdError(`${where}: CEL rules under a map are not evaluated here`);
  if (spec.reason !== undefined && RULE_REFUSALS[spec.reason] === undefined) {
    throw new CrdError(`${where}: CEL rule reason ${spec.reason} is not evaluated here`);
  }
  const counterpart = counterparts.find(
    (c) => c.kind === kind.kind && c.path === path && c.rule === spec.rule,
  );
  if (counterpart === undefined) {
    throw new CrdError(`${where}: CEL rule without a TypeScript counterpart: ${spec.rule}`);
  }
  return { path, spec, counterpart };
}

/**
 * A copy of the object without its null fields: the API server prunes them before defaulting
 * (none of ours is nullable); a list's items stay, null or not. Plain objects and arrays (what a
 * manifest parses to) are copied here in one walk; anything else as structuredClone copies it.
 */
function copyWithoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyWithoutNulls);
  if (typeof value !== "object" || value === null) return value;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    if (child === null) continue;
    // defined, not assigned: a `__proto__` key stays a key, never the copy's prototype
    if (key === "__proto__") {
      const field = { value: copyWithoutNulls(child), enumerable: true, writable: true, configurable: true };
      Object.defineProperty(copy, key, field);
    } else copy[key] = copyWithoutNulls(child);
  }
  return copy;
}

interface Instance {
  path: (string | number)[];
  value: unknown;
}

/** each schema path's steps (`spec.allowed[*]` → spec, allowed, [*]), split once: every object walks them */
const PATH_STEPS = new Map<string, readonly string[]>();

function stepsOf(schemaPath: string): readonly string[] {
  let steps = PATH_STEPS.get(schemaPath);
  if (steps === undefined) {
    steps = schemaPath.match(/[^.[\]]+|\[\*\]/g) ?? [];
    PATH_STEPS.set(schemaPath, steps);
  }
  return steps;
}

/** The values at a schema path (`spec.allowed[*]`) in an object, with their concrete paths. */
function instancesAt(root: unknown, schemaPath: string): Instance[] {
  const found: Instance[] = [];
  collectInstances(root, stepsOf(schemaPath), [], found);
  return found;
}

/**
 * Follows the steps from `value` (reached by `path`), adding what is at their end to `found`. A
 * path is copied only where a list forks it: most objects walk steps that end at nothing.
 */
function collectInstances(
  value: unknown,
  steps: readonly string[],
  path: (string | number)[],
  found: Instance[],
): void {
  let at = value;
  // each step takes one element of the path: a key, or a list's index
  for (let i = path.length; i < steps.length; i++) {
    const token = steps[i] as string;
    if (token === "[*]") {
      if (Array.isArray(at)) at.forEach((item, n) => collectInstances(item, steps, [...path, n], found));
      return;
    }
    if (typeof at !== "object" || at === null || Array.isArray(at) || !(token in at)) return;
    path.push(token);
    at = (at as Record<string, unknown>)[token];
  }
  found.push({ path, value: at });
}
function duplicatesIn(list: Instance, node: SchemaNode): FieldIssue[] {
  if (!Array.isArray(list.value)) return [];
  const keys = node["x-kubernetes-list-map-keys"];
  const seen = new Set<string>();
  const issues: FieldIssue[] = [];
  list.value.forEach((item: unknown, i) => {
    const identity =
      node["x-kubernetes-list-type"] === "map" &&
      keys !== undefined &&
      typeof item === "object" &&
      item !== null
        ? keys.map((k) => (item as Record<string, unknown>)[k])
        : item;
    const key = JSON.stringify(identity);
    if (seen.has(key)) {
      const path = [...list.path, i];
      issues.push({ field: fieldOf(path), path, message: `Duplicate value: ${key}` });
    }
    seen.add(key);
  });
  return issues;
}

function issueOf(error: ErrorObject, root: unknown): FieldIssue {
  const path = pointerPath(error.instancePath, root);
  const value = valueAt(root, path);
  const params = error.params as Record<string, unknown>;
  const at = (child: string, message: string): FieldIssue => {
    const childPath = [...path, child];
    return { field: fieldOf(childPath), path: childPath, message };
  };
  switch (error.keyword) {
    case "required":
      return at(String(params["missingProperty"]), "Required value");
    case "additionalProperties":
      return at(String(params["additionalProperty"]), "unknown field");
  }
  const messages: Record<string, () => string> = {
    enum: () =>
      `Unsupported value: ${JSON.stringify(value)}: supported values: ${(params["allowedValues"] as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`,
    pattern: () => `Invalid value: ${JSON.stringify(value)}: should match '${String(params["pattern"])}'`,
    type: () => `Invalid value: ${JSON.stringify(value)}: must be of type ${String(params["type"])}`,
    maxLength: () => `Too long: may not be more than ${String(params["limit"])} characters`,
    minLength: () =>
      `Invalid value: ${JSON.stringify(value)}: should be at least ${String(params["limit"])} chars long`,
    minimum: () =>
      `Invalid value: ${String(value)}: should be greater than or equal to ${String(params["limit"])}`,
    maximum: () =>
      `Invalid value: ${String(value)}: should be less than or equal to ${String(params["limit"])}`,
    maxItems: () =>
      `Too many: ${(value as unknown[]).length}: must have at most ${String(params["limit"])} items`,
    format: () => `Invalid value: ${JSON.stringify(value)}: must be of format ${String(params["format"])}`,
  };
  const message =
    messages[error.keyword]?.() ??
    `Invalid value: ${JSON.stringify(value)}: ${error.message ?? error.keyword}`;
  return { field: fieldOf(path), path, message };
}

/** `/spec/allowed/3` → ["spec", "allowed", 3], numbers where the parent is an array */
function pointerPath(pointer: string, root: unknown): (string | number)[] {
  const path: (string | number)[] = [];
  let value = root;
  for (const raw of pointer.split("/").slice(1)) {
    const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    const step = Array.isArray(value) ? Number(token) : token;
    path.push(step);
    value = valueAt(value, [step]);
  }
  return path;
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let value = root;
  for (const step of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<string | number, unknown>)[step];
  }
  return value;
}

/** `spec.allowed[3]` is the same as or inside `spec.allowed` */
function nested(field: string, ancestor: string): boolean {
  return field === ancestor || (field.startsWith(ancestor) && ".[".includes(field[ancestor.length] ?? "-"));
}

/** ["spec", "allowed", 3] → `spec.allowed[3]` */
export function fieldOf(path: readonly (string | number)[]): string {
  return path
    .map((step, i) => (typeof step === "number" ? `[${step}]` : i === 0 ? step : `.${step}`))
    .join("");
}

/** `"x": ` for scalars, nothing for objects and lists (the API server prints no value for them) */
function shown(value: unknown): string {
  return typeof value === "object" && value !== null ? "" : `${JSON.stringify(value)}: `;
}
