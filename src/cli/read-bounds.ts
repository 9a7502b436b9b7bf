/**
 * The flags that bound what one read of manifests may hold (`plan`, `apply`, `run --manifests`):
 * one definition, so that the three commands and the errors that name the flags agree.
 */
import { InvalidArgumentError, Option } from "commander";
import { READ_BOUND_FLAGS, READ_BOUNDS, type ReadBounds } from "../api/manifest-files.ts";

const UNITS: Record<string, number> = { "": 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/** `16777216`, `16384Ki`, `16Mi`, `1Gi`: bytes, at least 1. */
export function parseByteSize(text: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(text.trim());
  const bytes = match === null ? NaN : Number(match[1]) * UNITS[match[2] ?? ""]!;
  if (!Number.isSafeInteger(bytes) || bytes < 1)
    throw new InvalidArgumentError("want a number of bytes, optionally with Ki, Mi or Gi (16Mi)");
  return bytes;
}

function documents(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new InvalidArgumentError("must be an integer >= 1");
  return Number(text);
}

/** The flags as commander hands them over: undefined when not given (`run` refuses them without --manifests). */
export interface ReadBoundFlags {
  maxManifestBytes?: number;
  maxManifestDocuments?: number;
}

/** The two flags; `scope` says what they apply to, in --help. */
export function readBoundOptions(scope: string): Option[] {
  const mib = READ_BOUNDS.maxBytes / 1024 ** 2;
  return [
    new Option(
      `${READ_BOUND_FLAGS.maxBytes} <size>`,
      `${scope}the bytes all manifest files of one read may hold together, Ki, Mi or Gi (default: ${mib}Mi)`,
    ).argParser(parseByteSize),
    new Option(
      `${READ_BOUND_FLAGS.maxDocuments} <n>`,
      `${scope}the YAML documents all manifest files of one read may hold together (default: ${READ_BOUNDS.maxDocuments})`,
    ).argParser(documents),
  ];
}

export function readBoundsOf(flags: ReadBoundFlags): ReadBounds {
  return {
    maxBytes: flags.maxManifestBytes ?? READ_BOUNDS.maxBytes,
    maxDocuments: flags.maxManifestDocuments ?? READ_BOUNDS.maxDocuments,
  };
}
