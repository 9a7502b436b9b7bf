/**
 * The CRDs of crds/, read and compiled at run time: for the tests and scripts that look at them,
 * a validator of CRDs other than ours (a doctored copy, in a test), and the generator of
 * crd-validators.generated.ts (scripts/crd-validators.ts), which holds the same validators as
 * code written at build time. The CLI and the operator use those, so that neither ajv's compiler
 * nor the yaml library is loaded to validate a manifest (a tenth of a one-shot pass's start-up).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type Options } from "ajv";
import { parseAllDocuments } from "yaml";
import { CEL_COUNTERPARTS, type CelCounterpart } from "./cel-rules.ts";
import { CRD_FORMATS } from "./crd-formats.ts";
import {
  CrdError,
  ResourceValidator,
  schemaEntries,
  type CrdInfo,
  type KindSchema,
  type SchemaNode,
  type SchemaValidate,
} from "./schema.ts";
import { GROUP, KINDS, VERSION, type Kind } from "./types.ts";

export function defaultCrdDir(): string {
  return fileURLToPath(new URL("../../crds/", import.meta.url));
}

/** The nsxv.io CRDs in a directory (other YAML there, such as a kustomization, is ignored). */
export function readCrds(dir: string = defaultCrdDir()): CrdInfo[] {
  const crds: CrdInfo[] = [];
  for (const name of readdirSync(dir)
    .filter((n) => /\.ya?ml$/.test(n))
    .sort()) {
    const file = join(dir, name);
    for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
      if (doc.errors.length > 0) throw new CrdError(`${file}: ${doc.errors[0]?.message ?? "invalid YAML"}`);
      const definition = doc.toJS() as Record<string, unknown> | null;
      const crd = crdOf(definition);
      if (crd !== undefined && definition !== null) crds.push({ file, definition, ...crd });
    }
  }
  return crds;
}

function crdOf(definition: Record<string, unknown> | null): Omit<CrdInfo, "file" | "definition"> | undefined {
  if (definition?.["kind"] !== "CustomResourceDefinition") return undefined;
  const spec = definition["spec"] as
    | {
        group?: string;
        names?: { kind?: string; plural?: string };
        versions?: { name: string; schema?: { openAPIV3Schema?: SchemaNode } }[];
      }
    | undefined;
  const kind = spec?.names?.kind as Kind | undefined;
  if (spec?.group !== GROUP || kind === undefined || !KINDS.includes(kind)) return undefined;
  const schema = spec.versions?.find((v) => v.name === VERSION)?.schema?.openAPIV3Schema;
  if (schema === undefined) throw new CrdError(`CRD for ${kind} has no ${VERSION} schema`);
  return { kind, plural: spec.names?.plural ?? "", schema };
}

/**
 * A validator of the CRDs' schemas, compiled here (each kind on its first object); throws
 * CrdError when a CEL rule has no TypeScript counterpart (or sits under a map's values, which the
 * validator does not walk).
 */
export function compileValidator(
  crds: readonly CrdInfo[],
  counterparts: readonly CelCounterpart[] = CEL_COUNTERPARTS,
): ResourceValidator {
  const ajv = kubernetesAjv();
  const kinds = crds.map((crd): KindSchema => {
    const schema = validatedSchema(crd.schema);
    let validate: SchemaValidate | undefined;
    return { ...checksBesidesTheSchema(crd), validate: () => (validate ??= ajv.compile(schema)) };
  });
  return ResourceValidator.fromKinds(kinds, counterparts);
}

/** What the validator checks of a kind besides its schema: list-type uniqueness and the CEL rules, by path. */
export function checksBesidesTheSchema(crd: CrdInfo): Omit<KindSchema, "validate"> {
  const entries = schemaEntries(crd.schema);
  return {
    kind: crd.kind,
    file: crd.file,
    lists: entries
      .filter(({ node }) => ["set", "map"].includes(node["x-kubernetes-list-type"] ?? ""))
      .map(({ path, node }) => ({
        path,
        node: {
          "x-kubernetes-list-type": node["x-kubernetes-list-type"],
          ...(node["x-kubernetes-list-map-keys"] !== undefined
            ? { "x-kubernetes-list-map-keys": node["x-kubernetes-list-map-keys"] }
            : {}),
        },
      })),
    rules: entries.flatMap(({ path, node }) =>
      (node["x-kubernetes-validations"] ?? []).map((spec) => ({ path, spec })),
    ),
  };
}

/** ajv that knows the OpenAPI formats and `x-kubernetes-*` keywords the CRDs use; `code` for the generator. */
export function kubernetesAjv(code?: Options["code"]): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    strict: true,
    ...(code !== undefined ? { code } : {}),
  });
  ajv.addVocabulary([
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-preserve-unknown-fields",
  ]);
  for (const [name, format] of Object.entries(CRD_FORMATS)) ajv.addFormat(name, format);
  return ajv;
}

/**
 * The schema as ajv checks it: objects with declared properties accept no others (strict decoding,
 * as `fieldValidation=Strict`), and without the descriptions, which check nothing (and would make
 * the generated validators four times their size).
 */
export function validatedSchema(node: SchemaNode): SchemaNode {
  const { description: _description, ...copy } = node;
  if (node.properties !== undefined) {
    copy.properties = Object.fromEntries(
      Object.entries(node.properties).map(([k, v]) => [k, validatedSchema(v)]),
    );
    if (node.additionalProperties === undefined && node["x-kubernetes-preserve-unknown-fields"] !== true) {
      copy.additionalProperties = false;
    }
  }
  if (node.items !== undefined) copy.items = validatedSchema(node.items);
  return copy;
}
