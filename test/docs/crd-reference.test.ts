/**
 * docs/crd-reference.md is generated from crds/ by scripts/crd-reference.ts: the committed file
 * must equal what the script renders now (so the reference cannot go stale), and the rendering
 * must show every field, default and CEL rule as well-formed Markdown tables.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fieldRows, REFERENCE_PATH, renderCrdReference } from "../../scripts/crd-reference.ts";
import { readCrds } from "../../src/api/crds.ts";
import { schemaEntries, type CrdInfo } from "../../src/api/schema.ts";
import { cells } from "./markdown.ts";

const crds = readCrds();
const rendered = renderCrdReference(crds);

/** The section of the reference that belongs to one kind. */
function sectionOf(kind: string): string {
  const start = rendered.indexOf(`\n## ${kind}\n`);
  const next = rendered.indexOf("\n## ", start + 1);
  return rendered.slice(start, next === -1 ? undefined : next);
}

interface Case {
  name: string;
  reason: string;
  check: (crd: CrdInfo, section: string) => void;
}

const cases: Case[] = [
  {
    name: "EveryFieldHasARow",
    reason: "A reader looks a field up by its path; a field without a row is undocumented.",
    check: (crd, section) => {
      for (const { path } of schemaEntries(crd.schema).filter((e) => e.path !== "")) {
        expect(section, path).toContain(`| \`${path}\` |`);
      }
    },
  },
  {
    name: "EveryDefaultIsShown",
    reason: "Defaults decide behaviour (minStrayAge 5m, maxPerSync 10): the table must show each one.",
    check: (crd, section) => {
      for (const { path, node } of schemaEntries(crd.schema).filter((e) => e.node.default !== undefined)) {
        const row = section.split("\n").find((l) => l.startsWith(`| \`${path}\` |`)) ?? "";
        expect(cells(row)[2], path).toContain(JSON.stringify(node.default).replace(/^"(.*)"$/, "$1"));
      }
    },
  },
  {
    name: "EveryCelRuleIsListed",
    reason: "CEL rules say what OpenAPI cannot; their messages are what kubectl apply prints.",
    check: (crd, section) => {
      for (const { node } of schemaEntries(crd.schema)) {
        for (const rule of node["x-kubernetes-validations"] ?? []) {
          expect(section).toContain(rule.message ?? "");
          expect(section.replaceAll("\\|", "|")).toContain(rule.rule.trim());
        }
      }
    },
  },
  {
    name: "TablesAreWellFormed",
    reason: "An unescaped pipe in a pattern or rule would split a cell and shift every column after it.",
    check: (_crd, section) => {
      let width = 0;
      for (const line of section.split("\n")) {
        if (!line.startsWith("|")) {
          width = 0;
          continue;
        }
        const count = cells(line).length;
        if (width === 0) width = count;
        expect(count, line).toBe(width);
      }
    },
  },
  {
    name: "AngleBracketsAreEscaped",
    reason: "GitHub drops `<n>` in edge-<n> as an unknown HTML tag; descriptions must escape it.",
    check: (_crd, section) => {
      const outsideCode = section.replace(/`[^`]*`/g, "");
      expect(outsideCode).not.toMatch(/<[a-z]/);
    },
  },
];

describe("docs/crd-reference.md", () => {
  it("equals what `node scripts/crd-reference.ts` writes now", () => {
    const committed = readFileSync(REFERENCE_PATH, "utf8");
    // on failure: run `node scripts/crd-reference.ts` and commit docs/crd-reference.md
    expect(committed).toBe(rendered);
  });

  it("has a section for each of the three kinds", () => {
    expect(crds.map((c) => c.kind).sort()).toEqual(["EdgeTenant", "IPPoolAllocations", "NSXManager"]);
    for (const crd of crds) expect(rendered).toContain(`\n## ${crd.kind}\n`);
  });

  for (const crd of crds) {
    describe(crd.kind, () => {
      it.each(cases)("$name", ({ check }) => check(crd, sectionOf(crd.kind)));
    });
  }

  it("marks required fields from the parent's required list", () => {
    const manager = crds.find((c) => c.kind === "NSXManager") as CrdInfo;
    const rows = new Map(fieldRows(manager.schema).map((r) => [r.path, r]));
    expect(rows.get("spec.url")?.validation).toContain("required");
    expect(rows.get("spec.tls")?.validation).not.toContain("required");
  });
});
