/**
 * `nsxv-operator plan -f PATH...`: one read-only pass of the operator's reconcile over manifests
 * on disk, printed like terraform's plan. Exit 0: nothing pending; 2: changes pending; 1: an
 * error or bad input. Also the command body shared with `apply` (runOneShotCommand).
 */
import { Command, Option } from "commander";
import type { ExecutionMode } from "../reconcile/index.ts";
import { CliInputError, parseManagerUrls, runOneShot, type OneShotOptions } from "./oneshot.ts";
import { EXIT, processIo, renderInvalidJson, renderJson, viewOf, type CliIo } from "./output.ts";
import { renderManifestErrors, renderSkipped, renderText, useColour } from "./output-text.ts";

/** The flags of `plan` and `apply`, as commander parses them. */
export interface OneShotFlags {
  filename: string[];
  output?: "text" | "json";
  /** `NAME=URL`, repeatable */
  managerUrl?: string[];
  releaseStrays?: boolean;
}

/** What tests and the demo replace: the client factory, the clock, an abort signal. */
export type OneShotDeps = Pick<OneShotOptions, "createClient" | "clock" | "signal">;

export function runPlan(flags: OneShotFlags, io: CliIo, deps: OneShotDeps = {}): Promise<number> {
  return runOneShotCommand("plan", flags, io, deps);
}

/** Runs one pass, prints it (text or JSON) and returns the exit code; never throws. */
export async function runOneShotCommand(
  mode: ExecutionMode,
  flags: OneShotFlags,
  io: CliIo,
  deps: OneShotDeps = {},
): Promise<number> {
  const json = flags.output === "json";
  let result;
  try {
    result = await runOneShot({
      ...deps,
      paths: flags.filename,
      mode,
      releaseStrays: flags.releaseStrays ?? false,
      managerUrls: parseManagerUrls(flags.managerUrl ?? []),
      env: io.env,
    });
  } catch (error) {
    const message = error instanceof CliInputError ? error.message : String(error);
    io.stderr.write(`error: ${message}\n`);
    return EXIT.error;
  }
  if (result.type === "invalid") {
    if (json)
      io.stdout.write(renderInvalidJson(mode, flags.releaseStrays ?? false, result.errors, result.skipped));
    else io.stderr.write(renderManifestErrors(result.errors, { colour: useColour(io.stderr, io.env) }));
    return EXIT.error;
  }
  const view = viewOf(result);
  if (json) io.stdout.write(renderJson(view));
  else {
    io.stderr.write(renderSkipped(result.skipped));
    io.stdout.write(renderText(view, { colour: useColour(io.stdout, io.env) }));
  }
  return view.exitCode;
}

/** The options `plan` and `apply` share. */
export function oneShotCommand(name: string, description: string, releaseStraysHelp: string): Command {
  return new Command(name)
    .description(description)
    .requiredOption("-f, --filename <paths...>", "manifest files or directories (YAML or JSON, recursive)")
    .addOption(
      new Option("-o, --output <format>", "text for people, json for machines")
        .choices(["text", "json"])
        .default("text"),
    )
    .option(
      "--manager-url <name=url>",
      "replace spec.url of the NSXManager named NAME (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option("--release-strays", releaseStraysHelp, false)
    .addHelpText(
      "after",
      "\nCredentials come from the Secret manifests; NSX_USERNAME and NSX_PASSWORD, when set, win.",
    );
}

export function planCommand(): Command {
  return oneShotCommand(
    "plan",
    "Show what apply would change on the managers (exit 0: nothing, 2: changes pending, 1: error).",
    "plan as apply --release-strays would run (releases are planned either way; this drops the hint)",
  ).action(async (flags: OneShotFlags) => {
    process.exitCode = await runPlan(flags, processIo());
  });
}
