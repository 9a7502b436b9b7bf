/**
 * Keeps README.md and docs/ in step with the code: every condition reason, Event reason, metric,
 * client default and CLI command and flag that the code defines is documented (in the README or a
 * page of docs/: the README is the short way in, docs/ the reference), nothing is documented that
 * the code does not define, and every relative link (and its #anchor) resolves, in those and in
 * the READMEs of deploy/, gitops/, examples/, bench/ and src/simulator/. The README opens with
 * the two commands that set everything up, and CI runs its test command.
 */
import { COMMANDS } from "../../src/cli/commands.ts";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import { CLIENT_DEFAULTS } from "../../src/nsx/client-options.ts";
import { CHANGE_REASONS } from "../../src/reconcile/actions.ts";
import { EVENT_REASONS, REASONS } from "../../src/reconcile/conditions.ts";
import { cells } from "./markdown.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");
const README = "README.md";
const DOCS = readdirSync(join(ROOT, "docs"))
  .filter((n) => n.endsWith(".md"))
  .map((n) => `docs/${n}`);
/** The README and docs/ as one text: what a reader can find, wherever it moved. */
const DOCUMENTED = [README, ...DOCS].map(read).join("\n");
/** The READMEs kept beside what they describe, which link into docs/ and back. */
const FOLDER_READMES = [
  "deploy/README.md",
  "gitops/README.md",
  "examples/README.md",
  "bench/README.md",
  "src/simulator/README.md",
];

/** The commands of a shell line: `npm ci && npm test` → ["npm ci", "npm test"]; a comment dropped. */
function commandsOf(line: string): string[] {
  return line
    .replace(/#.*$/, "")
    .split("&&")
    .map((c) => c.trim())
    .filter((c) => c !== "");
}

/** The rows (cells) of the first table after the heading `heading` in a Markdown text. */
function tableAfter(text: string, heading: string): string[][] {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, "") === heading);
  if (start === -1) throw new Error(`no heading "${heading}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#+ /.test(line)) break;
    if (line.startsWith("|")) rows.push(cells(line));
    else if (rows.length > 0) break;
  }
  return rows.slice(2); // header and separator
}

/** `` `Name` `` → Name; the names in a cell written as code spans. */
function codeNames(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of withoutCode(text).split("\n")) {
    const m = /^#{1,6} (.+)$/.exec(line);
    if (m === null) continue;
    const base = slug(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The text without fenced blocks and code spans, where `[x](y)` is not a link. */
function withoutCode(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** The commands `src/cli/program.ts` registers, built by their factories. */
async function registeredCommands(): Promise<Command[]> {
  const factories = Object.values(COMMANDS);
  expect(factories.length).toBeGreaterThan(0);
  return Promise.all(factories.map((factory) => factory()));
}

describe("docs/troubleshooting.md", () => {
  const text = read("docs/troubleshooting.md");

  it("has one row per reason of REASONS and of the kinds' CHANGE_REASONS, and no other", () => {
    const documented = tableAfter(text, "Reasons").map((row) => codeNames(row[0] ?? "")[0]);
    expect([...documented].sort()).toEqual([...REASONS, ...CHANGE_REASONS].sort());
  });

  it("says what each reason means and what to do", () => {
    for (const row of tableAfter(text, "Reasons")) {
      expect(row, row[0]).toHaveLength(4);
      expect(
        row.every((c) => c.length > 0),
        row[0],
      ).toBe(true);
    }
  });

  it("has one row per Event reason of EVENT_REASONS and of the kinds' CHANGE_REASONS, and no other, with its type", () => {
    const rows = tableAfter(text, "Events");
    const documented = rows.map((row) => codeNames(row[0] ?? "")[0]);
    expect([...documented].sort()).toEqual([...EVENT_REASONS, ...CHANGE_REASONS].sort());
    const changes: readonly string[] = CHANGE_REASONS;
    for (const row of rows) {
      const reason = codeNames(row[0] ?? "")[0] ?? "";
      expect(row[1], reason).toBe(changes.includes(reason) ? "Normal" : "Warning");
    }
  });
});

describe("docs/metrics.md", () => {
  const rows = tableAfter(read("docs/metrics.md"), "Metrics");
  const { registry } = createOperatorMetrics({ processMetrics: false });
  const registered = registry.getMetricsAsArray().map((m) => ({
    name: m.name,
    type: String(m.type),
    labels: [...((m as unknown as { labelNames?: readonly string[] }).labelNames ?? [])].sort(),
  }));

  it("lists every metric metrics.ts registers, and no other", () => {
    const documented = rows.map((row) => codeNames(row[0] ?? "")[0]);
    expect([...documented].sort()).toEqual(registered.map((m) => m.name).sort());
  });

  it.each(registered)("gives the type and labels of $name", ({ name, type, labels }) => {
    const row = rows.find((r) => codeNames(r[0] ?? "")[0] === name) ?? [];
    expect(row[1]).toBe(type);
    expect(codeNames(row[2] ?? "").sort()).toEqual(labels);
  });
});

describe("docs/client.md", () => {
  const rows = tableAfter(read("docs/client.md"), "Options and defaults");

  it.each(Object.entries(CLIENT_DEFAULTS))("shows the default of %s", (option, value) => {
    const row = rows.find((r) => codeNames(r[0] ?? "").includes(option));
    expect(row, `no row for ${option}`).toBeDefined();
    expect(codeNames(row?.[1] ?? "")).toContain(String(value));
  });
});

describe("README.md", () => {
  const text = read(README);
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(text)?.[1] ?? "";

  it("opens with the two set-up commands", () => {
    expect(firstBlock).toContain("npm ci && npm start");
    expect(firstBlock).toContain("npm ci && npm test");
  });

  it("has its test command run by CI (.ci/run), command by command", () => {
    const testLine = firstBlock.split("\n").find((line) => /\bnpm test\b/.test(line)) ?? "";
    const commands = commandsOf(testLine);
    expect(commands).toEqual(["npm ci", "npm test"]);
    const ciLines = read(".ci/run")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => !line.startsWith("#"));
    for (const command of commands) {
      const run = ciLines.some((line) => line === command || line.startsWith(`${command} `));
      expect(run, `.ci/run does not run "${command}"`).toBe(true);
    }
  });

  it("names every command the CLI registers (the ways to run it)", async () => {
    for (const command of await registeredCommands()) {
      const mentioned = new RegExp(`nsxv-operator (-- )?${command.name()}\\b`).test(text);
      expect(mentioned, `nsxv-operator ${command.name()} is not in the README`).toBe(true);
    }
  });
});

describe("README.md and docs/", () => {
  const text = DOCUMENTED;

  it("show only Event reasons of EVENT_REASONS and CHANGE_REASONS in their `kubectl get events` samples", () => {
    const samples = [...text.matchAll(/\$ kubectl get events\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
    expect(samples.length).toBeGreaterThan(0);
    for (const sample of samples) {
      const shown = sample
        .split("\n")
        .slice(1) // the header
        .filter((line) => line.trim() !== "")
        .map((line) => line.trim().split(/\s+/)[2]);
      expect(shown.length).toBeGreaterThan(0);
      for (const reason of shown) expect([...EVENT_REASONS, ...CHANGE_REASONS], reason).toContain(reason);
    }
  });

  it("say plainly that creating an IPPoolAllocations enables releases, and how to start in Observe", () => {
    expect(text).toContain("**Creating one enables releases.**");
    expect(text).toMatch(/managementPolicy: Observe +# strays appear in status\.stray/);
    const crd = parse(read("crds/nsxv.io_ippoolallocations.yaml")) as {
      spec: { versions: { schema: { openAPIV3Schema: { description: string } } }[] };
    };
    const description = crd.spec.versions[0]!.schema.openAPIV3Schema.description;
    expect(description).toContain("Creating this object is what enables releases");
    expect(description).toContain("create the object with managementPolicy Observe");
  });

  it("documents every command the CLI registers, with each of its long flags", async () => {
    for (const command of await registeredCommands()) {
      const mentioned = new RegExp(`nsxv-operator (-- )?${command.name()}\\b`).test(text);
      expect(mentioned, `nsxv-operator ${command.name()} is not in the README or docs/`).toBe(true);
      for (const option of command.options) {
        if (option.long === undefined) continue;
        expect(
          text.includes(option.long),
          `${command.name()} ${option.long} is not in the README or docs/`,
        ).toBe(true);
      }
    }
  });
});

describe("relative links", () => {
  const files = [README, ...DOCS, ...FOLDER_READMES];
  const links = files.flatMap((file) =>
    [...withoutCode(read(file)).matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1] as string)
      .filter((target) => !/^[a-z]+:/i.test(target))
      .map((target) => ({ file, target })),
  );

  it("are found in README.md, docs/ and the folders' READMEs", () => {
    expect(links.filter((l) => l.file === README).length).toBeGreaterThan(10);
    expect(links.length).toBeGreaterThan(100);
  });

  it.each(links)("$file → $target", ({ file, target }) => {
    const [path = "", anchor] = target.split("#");
    const resolved = path === "" ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
    expect(existsSync(resolved), `${target} from ${file}`).toBe(true);
    if (anchor !== undefined && resolved.endsWith(".md")) {
      expect([...anchorsOf(readFileSync(resolved, "utf8"))], `#${anchor} in ${path || file}`).toContain(
        anchor,
      );
    }
  });
});
