/**
 * docs/adding-a-kind.md kept true: the files its recipe names are those of the kind it takes as
 * the model (src/reconcile/edge-tenant/), and the registry entries it names are where the kinds
 * are registered. test/reconcile/firewall-default/ follows the recipe for a test-only kind.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const page = readFileSync(join(ROOT, "docs/adding-a-kind.md"), "utf8");
const section = (title: string) =>
  new RegExp(`^## ${title}\\n([\\s\\S]*?)(?=^## |$(?![\\s\\S]))`, "m").exec(page)?.[1] ?? "";

describe("docs/adding-a-kind.md", () => {
  const files = [...section("The folder").matchAll(/^- \*\*`([a-z-]+\.ts)`/gm)].map((m) => m[1] as string);

  it("names the files of a kind's folder (the check has something to check)", () => {
    expect(files).toEqual([
      "actions.ts",
      "spec.ts",
      "plan.ts",
      "handler.ts",
      "state.ts",
      "claim.ts",
      "manager-check.ts",
      "kind.ts",
    ]);
  });

  it.each(files)("its model, src/reconcile/edge-tenant/, has %s", (file) => {
    expect(existsSync(join(ROOT, "src/reconcile/edge-tenant", file))).toBe(true);
  });

  it("names the registry entries where the kinds are registered", () => {
    const entries = [...section("The registry entries").matchAll(/^- \[`(src\/[^`]+)`\]/gm)].map(
      (m) => m[1] as string,
    );
    expect(entries).toEqual(["src/reconcile/actions.ts", "src/reconcile/kinds.ts"]);
    const registered = {
      "src/reconcile/actions.ts": "export const KIND_EFFECTS",
      "src/reconcile/kinds.ts": "export const KIND_MODULES",
    };
    for (const entry of entries)
      expect(readFileSync(join(ROOT, entry), "utf8")).toContain(registered[entry as keyof typeof registered]);
  });

  it("names, in what a new kind touches, files that exist", () => {
    const touched = [...section("What a new kind touches").matchAll(/`((?:src|test)\/[^`<]+)`/g)].map(
      (m) => m[1] as string,
    );
    expect(touched).toEqual(["src/reconcile/actions.ts", "src/reconcile/kinds.ts", "src/api/types.ts"]);
    for (const file of touched) expect(existsSync(join(ROOT, file)), file).toBe(true);
  });

  it("is linked from docs/README.md", () => {
    expect(readFileSync(join(ROOT, "docs/README.md"), "utf8")).toContain("](adding-a-kind.md)");
  });
});
