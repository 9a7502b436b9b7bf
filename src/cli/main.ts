#!/usr/bin/env node
/**
 * The nsxv-operator command's entry: on a Node.js too old for the dependencies it says so in one
 * line and exits 1, before anything loads them; otherwise it runs the program (program.ts).
 * Only node-version.ts may be imported statically here: every static import loads before this
 * check runs.
 *
 * Node's compile cache is on where only this user can write it (compile-cache.ts): a later run
 * of the same build compiles none of the modules again (a third of `apply`'s start-up). Our
 * modules find each other without Node's file-system checks (own-modules.ts).
 */
import { nodeTooOld } from "./node-version.ts";

const tooOld = nodeTooOld(process.versions.node);
if (tooOld === undefined) {
  (await import("./compile-cache.ts")).enableOwnCompileCache(process.env);
  const { registerHooks } = await import("node:module");
  const { ownModuleResolver } = await import("./own-modules.ts");
  registerHooks({ resolve: ownModuleResolver(new URL("../", import.meta.url).href) });
  await import("./program.ts");
} else {
  process.stderr.write(`${tooOld}\n`);
  process.exitCode = 1;
}
