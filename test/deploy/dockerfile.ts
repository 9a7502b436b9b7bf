/**
 * The Dockerfile as the deploy checks read it, for the static checks (dockerfile.test.ts) and the
 * assembly without an engine (image.test.ts): stages with their base image and WORKDIR, and the
 * instructions of each with continuation lines joined and comments dropped, as Docker reads them.
 */
import { posix } from "node:path";

export interface Instruction {
  /** upper case: `RUN`, `COPY`, ... */
  keyword: string;
  /** the rest of the instruction, continuation lines joined */
  text: string;
}

export interface Stage {
  /** the `AS` name, else the stage's index */
  name: string;
  /** the FROM image, `${ARG}` resolved from the global ARG defaults */
  image: string;
  /** the last WORKDIR, resolved; "/" without one */
  workdir: string;
  instructions: Instruction[];
}

export interface Copy {
  /** `--from` when it copies from another stage; undefined: from the build context */
  from: string | undefined;
  sources: string[];
  destination: string;
}

/** Lines as Docker reads them: comments dropped (also inside a continuation), `\` lines joined. */
function logicalLines(source: string): string[] {
  const lines: string[] = [];
  let pending = "";
  for (const line of source.split("\n")) {
    if (/^\s*#/.test(line)) continue;
    const continued = /\\\s*$/.test(line);
    pending += (pending === "" ? "" : " ") + line.replace(/\\\s*$/, "").trim();
    if (!continued) {
      if (pending !== "") lines.push(pending);
      pending = "";
    }
  }
  return lines;
}

/** Splits a Dockerfile into stages. */
export function parseDockerfile(source: string): Stage[] {
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logicalLines(source)) {
    const [keyword = "", ...rest] = line.split(/\s+/);
    const text = rest.join(" ");
    const upper = keyword.toUpperCase();
    if (upper === "FROM") {
      const [image = "", as, name] = text.split(/\s+/);
      const resolved = image.replace(/\$\{(\w+)\}/g, (_, arg: string) => globalArgs.get(arg) ?? "");
      stages.push({
        name: as?.toUpperCase() === "AS" && name ? name : String(stages.length),
        image: resolved,
        workdir: "/",
        instructions: [],
      });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) {
      if (upper === "ARG") {
        const [arg = "", value = ""] = text.split("=");
        globalArgs.set(arg, value);
      }
      continue;
    }
    if (upper === "WORKDIR") stage.workdir = posix.resolve(stage.workdir, text);
    stage.instructions.push({ keyword: upper, text });
  }
  return stages;
}

/** The texts of one kind of instruction of a stage, in order. */
export function instructions(stage: Stage | undefined, keyword: string): string[] {
  return (stage?.instructions ?? []).filter((i) => i.keyword === keyword).map((i) => i.text);
}

/** COPY's sources and destination, with `--from` when it copies from another stage. */
export function copies(stage: Stage | undefined): Copy[] {
  return instructions(stage, "COPY").map((text) => {
    const words = text.split(/\s+/);
    const from = words.find((word) => word.startsWith("--from="))?.slice("--from=".length);
    const paths = words.filter((word) => !word.startsWith("--"));
    return { from, sources: paths.slice(0, -1), destination: paths.at(-1) ?? "" };
  });
}

/** Exec-form JSON array of the last ENTRYPOINT or CMD. */
export function execForm(stage: Stage | undefined, keyword: "ENTRYPOINT" | "CMD"): string[] {
  const text = instructions(stage, keyword).at(-1) ?? "";
  return JSON.parse(text) as string[];
}

/** `ENV A=1 B=2` of a stage, as an environment (values without quotes). */
export function envOf(stage: Stage | undefined): Record<string, string> {
  return Object.fromEntries(
    instructions(stage, "ENV").flatMap((text) =>
      [...text.matchAll(/(\w+)=("[^"]*"|\S+)/g)].map((m) => [m[1]!, m[2]!.replace(/^"|"$/g, "")]),
    ),
  );
}
