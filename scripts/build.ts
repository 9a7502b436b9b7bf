/**
 * `npm run build`: tsc emits dist/ file by file, then the command's program (dist/cli/program.js,
 * what main.js imports once the Node version is checked) is bundled over itself with our modules
 * inside it. Node loads a module graph a module at a time (a resolve, a cache file and a link
 * each): the ~100 of `apply` cost more CPU than their code does (`apply` of 1000 edges: 754 ms of
 * CPU file by file, 728 bundled). Each command's own part (run, demo, import, ...) is split off
 * and loaded when that command runs, as the dynamic imports did; the dependencies stay in
 * node_modules. Split files are named `bundle-*.js` and sit beside program.js, at the depth of the
 * modules they hold, so that paths made from `import.meta.url` (../../crds/, ../../package.json)
 * still find what they name; those a former build left behind are removed.
 * `npm run build -- --outDir DIR` builds into DIR instead of dist/ (tsc's option, passed on).
 */
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const { values } = parseArgs({ options: { outDir: { type: "string" } } });
const OUT_DIR = resolve(values.outDir ?? join(ROOT, "dist"));
const CLI_DIR = join(OUT_DIR, "cli");
const PROGRAM = join(CLI_DIR, "program.js");
const SPLIT_PREFIX = "bundle-";

const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
const tsc = spawnSync(process.execPath, [TSC, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", OUT_DIR], {
  stdio: "inherit",
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

const bundled = await build({
  entryPoints: [PROGRAM],
  outdir: CLI_DIR,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  packages: "external",
  chunkNames: `${SPLIT_PREFIX}[name]-[hash]`,
  sourcemap: "linked",
  metafile: true,
  logLevel: "warning",
});

const written = new Set(Object.keys(bundled.metafile.outputs).map((path) => basename(path)));
for (const name of readdirSync(CLI_DIR)) {
  if (name.startsWith(SPLIT_PREFIX) && !written.has(name)) rmSync(join(CLI_DIR, name));
}
