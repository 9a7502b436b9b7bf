/**
 * `nsxv-operator plan -f PATH...`: one read-only pass of the operator's reconcile over manifests
 * on disk, printed like terraform's plan. Exit 0: nothing pending; 2: changes pending; 1: an
 * error or bad input. `apply` is the same command in the other mode (oneShotCommand).
 */
import { Command, Option } from "commander";
import type { ExecutionMode } from "../reconcile/index.ts";
import { CliInputError, parseManagerUrls, runOneShot, type OneShotOptions } from "./oneshot.ts";
import { EXIT, processIo, renderInvalidJson, renderJson, viewOf, type CliIo } from "./output.ts";
import { renderManifestErrors, renderSkipped, renderText, useColour } from "./output-text.ts";
import { readBoundOptions, readBoundsOf, type ReadBoundFlags } from "./read-bounds.ts";

/** The flags of `plan` and `apply`, as commander parses them. */
export interface OneShotFlags extends ReadBoundFlags {
  filename: string[];
  output?: "text" | "json";
  /** `NAME=URL`, repeatable */
  managerUrl?: string[];
  releaseStrays?: boolean;
  fullRead?: boolean;
}

/** What tests and the demo replace: the client factory, the clock, an abort signal. */
export type OneShotDeps = Pick<OneShotOptions, "createClient" | "clock" | "signal">;

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
      fullRead: flags.fullRead ?? false,
      managerUrls: parseManagerUrls(flags.managerUrl ?? []),
      env: io.env,
      readBounds: readBoundsOf(flags),
    });
  } catch (error) {
    const message = error instanceof CliInputError ? error.message : String(error);
    io.stderr.write(`error: ${message}\n`);
    return EXIT.error;
  }
  if (result.type === "invalid") {
    const { errors, skippedFiles } = result;
    if (json)
      io.stdout.write(
        renderInvalidJson(
          { command: mode, releaseStrays: flags.releaseStrays ?? false, fullRead: flags.fullRead ?? false },
          result,
        ),
      );
    else {
      io.stderr.write(renderSkipped([], skippedFiles));
      io.stderr.write(renderManifestErrors(errors, { colour: useColour(io.stderr, io.env) }));
    }
    return EXIT.error;
  }
  const view = viewOf(result);
  if (json) io.stdout.write(renderJson(view));
  else {
    io.stderr.write(renderSkipped(result.skipped, result.skippedFiles));
    io.stdout.write(renderText(view, { colour: useColour(io.stdout, io.env) }));
  }
  return view.exitCode;
}

/** What tells `plan` and `apply` apart in --help; everything else they share. */
const ONE_SHOT_HELP: Record<ExecutionMode, { description: string; releaseStrays: string }> = {
  plan: {
    description:
      "Show what apply would change on the managers (exit 0: nothing, 2: changes pending, 1: error).",
    releaseStrays:
      "plan as apply --release-strays would run (releases are planned either way; this drops the hint)",
  },
  apply: {
    description:
      "Correct drifted edge tenants and release stray addresses (exit 0: converged, 2: something held back, e.g. strays without --release-strays or maxPerSync reached, 1: error).",
    releaseStrays:
      "release stray addresses now: one pass cannot wait out minStrayAge (maxPerSync still applies)",
  },
};

/** `plan` or `apply`: the same flags, one pass of the same reconcile. */
export function oneShotCommand(mode: ExecutionMode): Command {
  const help = ONE_SHOT_HELP[mode];
  const command = new Command(mode)
    .description(help.description)
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
    .option("--release-strays", help.releaseStrays, false)
    .option(
      "--full-read",
      "read every edge in full instead of taking the manager's edge list for what it shows (audits, a list that cannot be trusted)",
      false,
    );
  for (const option of readBoundOptions("")) command.addOption(option);
  return command
    .addHelpText(
      "after",
      "\nCredentials come from the Secret manifests; NSX_USERNAME and NSX_PASSWORD, when set, win.",
    )
    .action(async (flags: OneShotFlags) => {
      process.exitCode = await runOneShotCommand(mode, flags, processIo());
    });
}

export const planCommand = (): Command => oneShotCommand("plan");
export const applyCommand = (): Command => oneShotCommand("apply");
