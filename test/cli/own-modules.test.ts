/**
 * The resolver of the command's own modules (src/cli/own-modules.ts): a relative `.js` or `.ts`
 * import from one of our modules to another is resolved without Node's checks; anything else is
 * Node's to resolve, as before. And the command runs with it, from the sources and from the build.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import type { ResolveFnOutput, ResolveHookContext } from "node:module";
import { describe, expect, it } from "vitest";
import { ownModuleResolver } from "../../src/cli/own-modules.ts";

const ROOT = "file:///opt/nsxv/dist/";
const resolve = ownModuleResolver(ROOT);
const NODE = { url: "node-resolved" };

/** what the resolver answers, Node's resolver answering NODE */
function resolved(specifier: string, parentURL: string | undefined): ResolveFnOutput {
  const context = { conditions: [], importAttributes: {}, parentURL } as ResolveHookContext;
  return resolve(specifier, context, () => NODE);
}

describe("ownModuleResolver", () => {
  const ours = (url: string, format: string) => ({ url, format, shortCircuit: true });
  const cases: { name: string; specifier: string; parent?: string; want: ResolveFnOutput; reason: string }[] =
    [
      {
        name: "SiblingModule",
        specifier: "./oneshot.js",
        parent: `${ROOT}cli/plan-apply.js`,
        want: ours(`${ROOT}cli/oneshot.js`, "module"),
        reason: "what tsc emits for an import of ./oneshot.ts",
      },
      {
        name: "ModuleOfAnotherFolder",
        specifier: "../api/manifests.js",
        parent: `${ROOT}cli/oneshot.js`,
        want: ours(`${ROOT}api/manifests.js`, "module"),
        reason: "up and down inside the root",
      },
      {
        name: "Source",
        specifier: "./program.ts",
        parent: `${ROOT}cli/main.ts`,
        want: ours(`${ROOT}cli/program.ts`, "module-typescript"),
        reason: "the sources, run with types stripped",
      },
      {
        name: "Package",
        specifier: "commander",
        parent: `${ROOT}cli/program.js`,
        want: NODE,
        reason: "a package is found in node_modules by Node",
      },
      {
        name: "Builtin",
        specifier: "node:fs",
        parent: `${ROOT}api/manifest-files.js`,
        want: NODE,
        reason: "a builtin is Node's",
      },
      {
        name: "FromADependency",
        specifier: "./index.js",
        parent: "file:///opt/nsxv/node_modules/commander/esm.mjs",
        want: NODE,
        reason: "a dependency's own imports may be CommonJS: its package.json says",
      },
      {
        name: "OutOfTheRoot",
        specifier: "../../node_modules/x/index.js",
        parent: `${ROOT}cli/main.js`,
        want: NODE,
        reason: "a file outside the program's root is not one of our modules",
      },
      {
        name: "OtherExtension",
        specifier: "./data.json",
        parent: `${ROOT}cli/main.js`,
        want: NODE,
        reason: "only modules tsc emits (or their sources) are ours",
      },
      {
        name: "CommonJsExtension",
        specifier: "./helper.cjs",
        parent: `${ROOT}cli/main.js`,
        want: NODE,
        reason: ".cjs is CommonJS whatever the package says",
      },
      {
        name: "NoExtension",
        specifier: "./oneshot",
        parent: `${ROOT}cli/main.js`,
        want: NODE,
        reason: "Node refuses an ESM import without its extension: that stays its error",
      },
      {
        name: "Query",
        specifier: "./oneshot.js?fresh",
        parent: `${ROOT}cli/main.js`,
        want: NODE,
        reason: "a query makes another module instance: Node's business",
      },
      {
        name: "EntryPoint",
        specifier: "/opt/nsxv/dist/cli/main.js",
        parent: undefined,
        want: NODE,
        reason: "the entry has no parent",
      },
      {
        name: "SameNamedRoot",
        specifier: "./x.js",
        parent: "file:///opt/nsxv/dist-old/cli/main.js",
        want: NODE,
        reason: "the root is a folder: a sibling folder that starts alike is not in it",
      },
    ];
  it.each(cases)("$name", ({ specifier, parent, want, reason }) => {
    expect(resolved(specifier, parent), reason).toEqual(want);
  });
});

describe("the command with its own modules resolved", () => {
  const version = (entry: string): Promise<string> =>
    new Promise((resolve, reject) => {
      execFile(process.execPath, [entry, "--version"], { timeout: 30_000 }, (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`${entry}: ${String(error)} ${stderr}`));
        else resolve(stdout.trim());
      });
    });

  it("runs from the sources", async () => {
    expect(await version("src/cli/main.ts")).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it.skipIf(!existsSync("dist/cli/main.js"))(
    "runs from the build (skipped before npm run build)",
    async () => {
      expect(await version("dist/cli/main.js")).toMatch(/^\d+\.\d+\.\d+$/);
    },
  );
});
