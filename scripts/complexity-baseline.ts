/**
 * The complexity baseline, per function: complexity-baseline.json lists each function of src/ still
 * over the limit (15) by file and name with its complexity, and the eslint rule here (eslint's own
 * `complexity`, whose reports it sorts against the list) fails when
 * - a function not listed goes over the limit,
 * - a listed function grows past its entry,
 * - a listed function comes down (lower its entry) or to the limit or below (remove its entry),
 * so the baseline only shrinks. Entries are keyed by file and name, not by line, so an edit
 * elsewhere in the file leaves them alone; a file moved (git mv) or a function renamed takes its
 * entry along by hand, as the messages say. eslint.config.js loads the list with loadBaseline,
 * which fails on an entry whose file is gone.
 */
import type { Rule } from "eslint";
import { builtinRules } from "eslint/use-at-your-own-risk";
import { existsSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

export const BASELINE_FILE = "complexity-baseline.json";

export interface BaselineEntry {
  /** the file, relative to the repository's root, with forward slashes */
  file: string;
  /** the function's name as this rule spells it: `name`, `Class.method`, `Class.#method` */
  function: string;
  complexity: number;
  /** why it stays rather than being split, for an entry kept on purpose */
  reason?: string;
}

interface Options {
  max: number;
  /** the directory files are keyed relative to (the repository's root) */
  root: string;
  baseline: BaselineEntry[];
}

/** Reads and checks the baseline: one entry per file and name, over the limit, its file present. */
export function loadBaseline(root: string, max: number): BaselineEntry[] {
  const entries = JSON.parse(readFileSync(join(root, BASELINE_FILE), "utf8")) as BaselineEntry[];
  const seen = new Set<string>();
  for (const entry of entries) {
    const where = `${BASELINE_FILE}: ${entry.file} ${entry.function}`;
    if (!existsSync(join(root, entry.file))) {
      throw new Error(
        `${where}: the file does not exist; if it moved (git mv), change the entry's file to its new path`,
      );
    }
    if (!Number.isInteger(entry.complexity) || entry.complexity <= max) {
      throw new Error(`${where}: complexity must be an integer over ${max}, not ${entry.complexity}`);
    }
    const key = `${entry.file}\0${entry.function}`;
    if (seen.has(key)) throw new Error(`${where}: listed twice`);
    seen.add(key);
  }
  return entries;
}

type FunctionNode = Rule.Node & {
  type: "FunctionDeclaration" | "FunctionExpression" | "ArrowFunctionExpression";
};

/** A key's text: an identifier, a private name (`#x`) or a literal; undefined when computed. */
function keyName(
  key: { type: string; name?: string; value?: unknown },
  computed: boolean,
): string | undefined {
  if (computed) return undefined;
  if (key.type === "PrivateIdentifier") return `#${key.name}`;
  if (key.type === "Identifier") return key.name;
  if (key.type === "Literal") return String(key.value);
  return undefined;
}

/** The name of the class a method belongs to, when it has one. */
function className(classBody: Rule.Node): string | undefined {
  const owner = classBody.parent as Rule.Node & { id?: { name: string } | null };
  if (owner.id) return owner.id.name;
  const holder = owner.parent;
  if (holder?.type === "VariableDeclarator" && holder.id.type === "Identifier") return holder.id.name;
  return undefined;
}

/**
 * A function's name, stable across edits: its own name, `Class.method` for a method (private
 * ones `Class.#method`), the variable or property it is assigned to; a function without one is
 * named after the function it is in (`outer>anonymous`).
 */
export function functionName(node: FunctionNode): string {
  if (node.type !== "ArrowFunctionExpression" && node.id) return node.id.name;
  const parent = node.parent;
  if (parent.type === "MethodDefinition" || parent.type === "PropertyDefinition") {
    const name = keyName(parent.key, parent.computed) ?? "[computed]";
    const kind = parent.type === "MethodDefinition" && (parent.kind === "get" || parent.kind === "set");
    const owner = className(parent.parent);
    return `${kind ? `${parent.kind} ` : ""}${owner ? `${owner}.` : ""}${name}`;
  }
  if (parent.type === "Property") {
    const name = keyName(parent.key, parent.computed);
    if (name) return name;
  }
  if (parent.type === "VariableDeclarator" && parent.id.type === "Identifier") return parent.id.name;
  for (let up: Rule.Node | null = parent; up; up = up.parent) {
    if (
      up.type === "FunctionDeclaration" ||
      up.type === "FunctionExpression" ||
      up.type === "ArrowFunctionExpression"
    ) {
      return `${functionName(up as FunctionNode)}>anonymous`;
    }
  }
  return "anonymous";
}

const complexity = builtinRules.get("complexity") as Rule.RuleModule;

export const complexityBaselineRule: Rule.RuleModule = {
  meta: {
    type: "suggestion",
    docs: { description: "eslint's complexity, with a per-function baseline that only shrinks" },
    schema: [
      {
        type: "object",
        properties: {
          max: { type: "integer", minimum: 0 },
          root: { type: "string" },
          baseline: { type: "array" },
        },
        required: ["max", "root", "baseline"],
        additionalProperties: false,
      },
    ],
    messages: {
      unlisted:
        "{{name}} has a complexity of {{complexity}} (limit {{max}}): split it. If it moved here from " +
        "another file or was renamed, change its entry in " +
        BASELINE_FILE +
        ' to file "{{file}}", function "{{name}}".',
      grew:
        "{{name}} has a complexity of {{complexity}}, over its baseline of {{listed}} in " +
        BASELINE_FILE +
        ": split it (the baseline only shrinks).",
      lower:
        "{{name}} came down to a complexity of {{complexity}} from {{listed}}: lower its entry in " +
        BASELINE_FILE +
        " to {{complexity}}.",
      gone:
        BASELINE_FILE +
        " lists {{name}} in {{file}} at {{listed}}, but no function of that name here is over {{max}}: " +
        "remove the entry (if the function was renamed or moved, change the entry to its new name or file).",
    },
  },
  create(context) {
    const { max, root, baseline } = context.options[0] as Options;
    const file = relative(root, context.filename).split(sep).join("/");
    const listed = new Map(baseline.filter((e) => e.file === file).map((e) => [e.function, e.complexity]));
    // per name, the highest complexity over the limit and where
    const worst = new Map<string, { complexity: number; node: Rule.Node }>();

    const report = (descriptor: Rule.ReportDescriptor): void => {
      if (!("node" in descriptor) || !descriptor.data) return;
      const node = descriptor.node as Rule.Node;
      const value = Number(descriptor.data.complexity);
      // class field initializers and static blocks have no function node: eslint's own name
      const name = "params" in node ? functionName(node as FunctionNode) : String(descriptor.data.name);
      const data = { name, file, max: String(max), complexity: String(value) };
      const entry = listed.get(name);
      if (entry === undefined) context.report({ ...descriptor, messageId: "unlisted", data });
      else if (value > entry)
        context.report({ ...descriptor, messageId: "grew", data: { ...data, listed: String(entry) } });
      const before = worst.get(name);
      if (!before || value > before.complexity) worst.set(name, { complexity: value, node });
    };
    // eslint's rule reports through this context; the rest is the real one's
    const inner = complexity.create(
      Object.create(context, { options: { value: [max] }, report: { value: report } }) as Rule.RuleContext,
    );

    return {
      ...inner,
      "Program:exit"() {
        for (const [name, entry] of listed) {
          const found = worst.get(name);
          const data = { name, file, max: String(max), listed: String(entry) };
          if (!found) context.report({ loc: { line: 1, column: 0 }, messageId: "gone", data });
          else if (found.complexity < entry) {
            context.report({
              node: found.node,
              messageId: "lower",
              data: { ...data, complexity: String(found.complexity) },
            });
          }
        }
      },
    };
  },
};
