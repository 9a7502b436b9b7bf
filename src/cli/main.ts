#!/usr/bin/env node
/** The nsxv-operator command line: argument parsing and wiring only; each command lives in its own module. */
import { Command } from "commander";
import { VERSION } from "./version.ts";

/**
 * Each command's module, loaded only when it runs: `plan` need not load the operator's logger,
 * metrics and Kubernetes wiring (a third of a one-shot pass's start-up). Help loads them all.
 */
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  plan: async () => (await import("./plan-apply.ts")).planCommand(),
  apply: async () => (await import("./plan-apply.ts")).applyCommand(),
  demo: async () => (await import("./demo.ts")).demoCommand(),
  import: async () => (await import("./import.ts")).importCommand(),
  run: async () => (await import("./run.ts")).runCommand(),
  simulate: async () => (await import("./simulate.ts")).simulateCommand(),
};

const program = new Command("nsxv-operator")
  .description(
    "Keeps VMware NSX-v managers in the state declared in git: edge tenants and IP pool allocations.",
  )
  .version(VERSION, "-V, --version", "print the version and exit")
  .showHelpAfterError();
const args = process.argv.slice(2);
const named = args.find((arg) => !arg.startsWith("-"));
const versionOnly = named === undefined && (args.includes("-V") || args.includes("--version"));
const load =
  named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : versionOnly ? [] : Object.keys(COMMANDS);
for (const name of load) program.addCommand(await COMMANDS[name]!());

await program.parseAsync(process.argv);
