#!/usr/bin/env node
/**
 * The nsxv-operator command's entry: on a Node.js too old for the dependencies it says so in one
 * line and exits 1, before anything loads them; otherwise it runs the program (program.ts).
 * Only node-version.ts may be imported statically here: every static import loads before this
 * check runs.
 */
import { nodeTooOld } from "./node-version.ts";

const tooOld = nodeTooOld(process.versions.node);
if (tooOld === undefined) {
  await import("./program.ts");
} else {
  process.stderr.write(`${tooOld}\n`);
  process.exitCode = 1;
}
