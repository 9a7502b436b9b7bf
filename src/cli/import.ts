/**
 * `nsxv-operator import`: reads a live manager (every page of its edge list, each edge's tenant,
 * the pools of a scope and their allocations) with GETs only, and writes manifests that declare
 * what it found, observe-only unless asked otherwise. Importing never writes to the manager.
 */
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import { SPEC_DEFAULTS, type ManagementPolicy } from "../api/types.ts";
import { CLIENT_DEFAULTS, ManagerClient } from "../nsx/client.ts";
import { insecureTransport, type ManagerClientOptions } from "../nsx/client-options.ts";
import type { EdgeSummary } from "../nsx/types.ts";
import {
  importManifests,
  secretCommands,
  type ImportedEdge,
  type ImportedObject,
  type ImportedPool,
} from "./import-manifests.ts";
import { mapBounded } from "./oneshot.ts";
import { EXIT, processIo, type CliIo } from "./output.ts";
import { DNS_LABEL_MAX_LENGTH, isDnsLabel } from "../api/names.ts";

export interface ImportFlags {
  url: string;
  name: string;
  namespace: string;
  output: string;
  managementPolicy: ManagementPolicy;
  edgeName?: RegExp;
  datacenter?: string;
  poolName?: RegExp;
  scope: string;
  layout: "kind" | "object";
  force: boolean;
  caFile?: string;
  insecureSkipVerify: boolean;
  auth: "basic" | "token";
  /** the client's pace; default its own (CLIENT_DEFAULTS.requestsPerSecond) */
  requestsPerSecond?: number;
}

/** What tests replace: the client. */
export interface ImportDeps {
  createClient?: (
    options: ManagerClientOptions,
  ) => Pick<ManagerClient, "listEdges" | "getEdge" | "listPools" | "listAllocations" | "close">;
}

/** edges read at once; the client's own cap per manager (8 by default) bounds it again */
const EDGE_READS_AT_ONCE = 8;
/** a progress line on stderr every this many edges read */
const PROGRESS_EVERY = 100;
const FILE_OF_KIND = {
  NSXManager: "nsxmanager",
  EdgeTenant: "edgetenants",
  IPPoolAllocations: "ippoolallocations",
} as const;

/** Reads the manager and writes the manifests; returns the exit code, never throws. */
export async function runImport(flags: ImportFlags, io: CliIo, deps: ImportDeps = {}): Promise<number> {
  const username = io.env["NSX_USERNAME"];
  const password = io.env["NSX_PASSWORD"];
  if (!username || !password) {
    io.stderr.write("error: set NSX_USERNAME and NSX_PASSWORD to the manager's credentials\n");
    return EXIT.error;
  }
  let client;
  try {
    const ca = flags.caFile === undefined ? undefined : await readFile(flags.caFile, "utf8");
    client = (deps.createClient ?? ((o) => new ManagerClient(o)))({
      url: flags.url,
      username,
      password,
      auth: flags.auth,
      insecureSkipVerify: flags.insecureSkipVerify,
      ...(ca !== undefined ? { ca } : {}),
      ...(flags.requestsPerSecond !== undefined ? { requestsPerSecond: flags.requestsPerSecond } : {}),
    });
  } catch (error) {
    io.stderr.write(`error: ${messageOf(error)}\n`);
    return EXIT.error;
  }
  const insecure = insecureTransport(flags);
  if (insecure !== undefined) io.stderr.write(`warning: ${insecure.message}\n`);
  try {
    const edges = await readEdges(client, flags, io);
    const pools = await readPools(client, flags, io);
    const result = importManifests(edges, pools, {
      managerName: flags.name,
      namespace: flags.namespace,
      url: flags.url,
      scope: flags.scope,
      managementPolicy: flags.managementPolicy,
    });
    for (const line of result.skipped) io.stderr.write(`not imported: ${line}\n`);
    const files = await writeManifests(flags, result.objects);
    const count = (kind: string) => result.objects.filter((object) => object.kind === kind).length;
    io.stderr.write(
      `wrote ${files.length} files to ${flags.output}: 1 NSXManager, ${count("EdgeTenant")} EdgeTenants, ${count("IPPoolAllocations")} IPPoolAllocations\n`,
    );
    const commands = secretCommands({ managerName: flags.name, namespace: flags.namespace, url: flags.url });
    io.stderr.write(
      `in a cluster, create the Secret and bind it to the manager:\n${commands.map((c) => `  ${c}\n`).join("")}`,
    );
    return EXIT.ok;
  } catch (error) {
    io.stderr.write(`error: ${messageOf(error)}\n`);
    return EXIT.error;
  } finally {
    await client.close();
  }
}

type ImportClient = ReturnType<NonNullable<ImportDeps["createClient"]>>;

async function readEdges(client: ImportClient, flags: ImportFlags, io: CliIo): Promise<ImportedEdge[]> {
  const summaries = await client.listEdges({
    onPage: (fetched, total) => io.stderr.write(`listing edges: ${fetched} of ${total}\n`),
  });
  const wanted = summaries.filter(
    (s: EdgeSummary) =>
      (flags.datacenter === undefined || s.datacenterMoid === flags.datacenter) &&
      (flags.edgeName === undefined || flags.edgeName.test(s.name ?? "")),
  );
  let read = 0;
  return mapBounded(wanted, EDGE_READS_AT_ONCE, async (summary) => {
    // the document's <tenant>, which plan compares; the summary's tenantId is only a copy
    const doc = await client.getEdge(summary.id);
    read++;
    if (read % PROGRESS_EVERY === 0 || read === wanted.length) {
      io.stderr.write(`reading edges: ${read} of ${wanted.length}\n`);
    }
    return { summary, tenant: doc.tenant };
  });
}

async function readPools(client: ImportClient, flags: ImportFlags, io: CliIo): Promise<ImportedPool[]> {
  const pools = (await client.listPools(flags.scope)).filter(
    (p) => flags.poolName === undefined || flags.poolName.test(p.name),
  );
  io.stderr.write(`reading pools: ${pools.length} in ${flags.scope}\n`);
  return mapBounded(pools, EDGE_READS_AT_ONCE, async (pool) => ({
    pool,
    allocations: await client.listAllocations(pool.objectId),
  }));
}

/** Writes every file, or none when one exists already (unless --force). */
async function writeManifests(flags: ImportFlags, objects: readonly ImportedObject[]): Promise<string[]> {
  const files = new Map<string, string[]>();
  for (const object of objects) {
    const file =
      flags.layout === "kind"
        ? `${FILE_OF_KIND[object.kind]}.yaml`
        : `${FILE_OF_KIND[object.kind]}-${object.name}.yaml`;
    files.set(file, [...(files.get(file) ?? []), object.text]);
  }
  const paths = [...files.keys()].map((file) => join(flags.output, file));
  if (!flags.force) {
    const existing = (await Promise.all(paths.map(async (p) => ((await exists(p)) ? p : undefined)))).filter(
      (p) => p !== undefined,
    );
    if (existing.length > 0) {
      throw new Error(`${existing.join(", ")} exist already: nothing was written (--force overwrites)`);
    }
  }
  await mkdir(flags.output, { recursive: true });
  for (const [file, texts] of files) await writeFile(join(flags.output, file), texts.join("---\n"));
  return paths;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return false;
      throw error;
    },
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function regex(text: string): RegExp {
  try {
    return new RegExp(text, "u");
  } catch (error) {
    throw new InvalidArgumentError(`not a regular expression: ${messageOf(error)}`);
  }
}

function positiveInteger(text: string): number {
  if (!/^[1-9][0-9]*$/.test(text)) throw new InvalidArgumentError("must be a whole number above 0");
  return Number(text);
}

function dnsLabel(text: string): string {
  if (!isDnsLabel(text))
    throw new InvalidArgumentError(`must be a DNS label: a-z, 0-9 and -, at most ${DNS_LABEL_MAX_LENGTH}`);
  return text;
}

export function importCommand(): Command {
  return new Command("import")
    .description(
      "Read a live manager (GETs only) and write manifests for what it has: an NSXManager, an EdgeTenant per edge, an IPPoolAllocations per pool.",
    )
    .requiredOption("--url <url>", "the manager, https://host[:port]")
    .requiredOption("--name <name>", "name of the NSXManager to write", dnsLabel)
    .option("--namespace <namespace>", "namespace of every object written", dnsLabel, "default")
    .requiredOption("--output <dir>", "directory to write into (created when missing)")
    .addOption(
      new Option("--management-policy <policy>", "policy of the objects written: Observe never writes")
        .choices(["Observe", "Enforce"])
        .default("Observe"),
    )
    .option("--edge-name <regex>", "import only edges whose name matches", regex)
    .option("--datacenter <moid>", "import only edges of this datacenter (datacenter-21)")
    .option("--pool-name <regex>", "import only pools whose name matches", regex)
    .option("--scope <scope>", "scope whose pools are read", SPEC_DEFAULTS.poolScope)
    .addOption(
      new Option("--layout <layout>", "one file per kind, or one per object")
        .choices(["kind", "object"])
        .default("kind"),
    )
    .option("--force", "overwrite files that exist", false)
    .option(
      "--requests-per-second <n>",
      `calls per second at most (default ${CLIENT_DEFAULTS.requestsPerSecond}, as the operator's own pace)`,
      positiveInteger,
    )
    .option("--ca-file <file>", "PEM bundle of CAs to trust (self-signed managers)")
    .option(
      "--insecure-skip-verify",
      "do not verify the manager's certificate (test managers only: anyone on the path can pose as the manager)",
      false,
    )
    .addOption(
      new Option("--auth <scheme>", "Basic on every call, or the 6.4 token")
        .choices(["basic", "token"])
        .default("basic"),
    )
    .addHelpText(
      "after",
      "\nCredentials: NSX_USERNAME and NSX_PASSWORD. Exit 0: written; 1: an error (nothing written).",
    )
    .action(async (flags: ImportFlags) => {
      process.exitCode = await runImport(flags, processIo());
    });
}
