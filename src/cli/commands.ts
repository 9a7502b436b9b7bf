/**
 * Every command of the CLI, each module loaded only when asked for: `plan` need not load the
 * operator's logger, metrics and Kubernetes wiring (a third of a one-shot pass's start-up).
 */
import type { Command } from "commander";

export const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  plan: async () => (await import("./plan-apply.ts")).planCommand(),
  apply: async () => (await import("./plan-apply.ts")).applyCommand(),
  demo: async () => (await import("./demo.ts")).demoCommand(),
  import: async () => (await import("./import.ts")).importCommand(),
  run: async () => (await import("./run.ts")).runCommand(),
  simulate: async () => (await import("./simulate.ts")).simulateCommand(),
};
