/**
 * `nsxv-operator apply -f PATH...`: one pass of the operator's reconcile over manifests on disk
 * that carries the plan out, and prints what it did. Exit 0 when everything converged, 1 on any
 * error. One pass cannot observe minStrayAge, so strays are released only with --release-strays
 * (still at most maxPerSync per pool).
 */
import type { Command } from "commander";
import { oneShotCommand, runOneShotCommand, type OneShotDeps, type OneShotFlags } from "./plan.ts";
import { processIo, type CliIo } from "./output.ts";

export function runApply(flags: OneShotFlags, io: CliIo, deps: OneShotDeps = {}): Promise<number> {
  return runOneShotCommand("apply", flags, io, deps);
}

export function applyCommand(): Command {
  return oneShotCommand(
    "apply",
    "Correct drifted edge tenants and release stray addresses (exit 0: converged, 1: error).",
    "release stray addresses now: one pass cannot wait out minStrayAge (maxPerSync still applies)",
  ).action(async (flags: OneShotFlags) => {
    process.exitCode = await runApply(flags, processIo());
  });
}
