/**
 * How the command's own modules import each other, resolved without asking the file system:
 * Node's resolver checks each relative import with a stat, a realpath of every directory above
 * it and a search for the package.json that gives its format, about 0.15 ms of CPU each, and
 * `apply` run from the sources makes ~95 of them before its first manager call (from the build,
 * whose program is bundled by scripts/build.ts, a dozen). Our modules are the files the build
 * emitted (or the sources, run with types stripped) of one ESM package: a relative `.js` or `.ts`
 * specifier from one of them, staying inside the program's root, is the file it names, an ES
 * module. Everything else (packages, builtins, any other file) goes to Node's resolver as before,
 * and a file that is missing still fails when it is loaded.
 */
import type { ResolveHookSync } from "node:module";

/** the format of each of our modules, by the extension tsc's output or the sources have */
const FORMATS: Readonly<Record<string, string>> = { ".js": "module", ".ts": "module-typescript" };

/** A resolve hook for the modules under `root` (a file: URL ending in `/`). */
export function ownModuleResolver(root: string): ResolveHookSync {
  return (specifier, context, nextResolve) => {
    const parent = context.parentURL;
    if (parent?.startsWith(root) && (specifier.startsWith("./") || specifier.startsWith("../"))) {
      const url = new URL(specifier, parent);
      const format = FORMATS[url.pathname.slice(url.pathname.lastIndexOf("."))];
      if (format !== undefined && url.search === "" && url.hash === "" && url.href.startsWith(root))
        return { url: url.href, format, shortCircuit: true };
    }
    return nextResolve(specifier, context);
  };
}
