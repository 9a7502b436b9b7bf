#!/usr/bin/env node
/** The nsxv-operator command line: argument parsing and wiring only; each command lives in its own module. */
import { Command } from "commander";
import { demoCommand } from "./demo.ts";
import { importCommand } from "./import.ts";
import { applyCommand, planCommand } from "./plan-apply.ts";
import { runCommand } from "./run.ts";
import { simulateCommand } from "./simulate.ts";
import { VERSION } from "./version.ts";

const program = new Command("nsxv-operator")
  .description(
    "Keeps VMware NSX-v managers in the state declared in git: edge tenants and IP pool allocations.",
  )
  .version(VERSION, "-V, --version", "print the version and exit")
  .showHelpAfterError();
program.addCommand(planCommand());
program.addCommand(applyCommand());
program.addCommand(demoCommand());
program.addCommand(importCommand());
program.addCommand(runCommand());
program.addCommand(simulateCommand());

await program.parseAsync(process.argv);
