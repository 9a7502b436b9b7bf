/**
 * The nsxv-operator command line, loaded by main.ts once the Node.js version is known to be recent
 * enough: argument parsing and wiring only; each command lives in its own module.
 */
import { Command } from "commander";
import { COMMANDS } from "./commands.ts";
import { VERSION } from "./version.ts";

const program = new Command("nsxv-operator")
  .description(
    "Keeps VMware NSX-v managers in the state declared in git: edge tenants and IP pool allocations.",
  )
  .version(VERSION, "-V, --version", "print the version and exit")
  .showHelpAfterError();
const args = process.argv.slice(2);
const named = args.find((arg) => !arg.startsWith("-"));
const versionOnly = named === undefined && (args.includes("-V") || args.includes("--version"));
// only the command named is loaded; help (no command) lists them all
const load =
  named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : versionOnly ? [] : Object.keys(COMMANDS);
for (const name of load) program.addCommand(await COMMANDS[name]!());

await program.parseAsync(process.argv);
