/**
 * Bad input costs little: a manifest file, ours or an unrelated one in the same directory, costs
 * what its size allows and never hangs a reader. Texts that made the YAML parser take seconds to
 * minutes or gigabytes are refused before it runs (nesting, token count, size) with an error
 * naming the file and the line; a large but ordinary mapping is read in linear time, and a key
 * given twice in our objects is still an error naming file, line and field; a FIFO named
 * `*.yaml` in a directory is skipped with a note instead of blocking `plan` and the directory
 * source. The times and memory of each case are measured in bench/manifest-input.ts; here the
 * bounds are generous (several times the measured figure, a fraction of the old one), so that a
 * loaded machine does not fail them.
 */
import { execFileSync, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { loadManifests } from "../../src/api/manifests.ts";
import { ResourceValidator } from "../../src/api/schema.ts";
import { MANIFEST_LIMITS } from "../../src/api/manifest-limits.ts";
import { runOneShotCommand } from "../../src/cli/plan-apply.ts";
import type { Logger } from "../../src/controller/controller.ts";
import { DirectorySource } from "../../src/source/directory.ts";
import { HOSTILE_TEXTS, largeMapping } from "../../bench/lib/hostile-manifests.ts";
import { captureIo, edgeTenant, manager, secret } from "../cli/helpers.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PEAK_RSS = join(ROOT, "bench/lib/peak-rss.cjs");
const validator = ResourceValidator.load();
const root = mkdtempSync(join(tmpdir(), "nsxv-cost-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;

/** a directory with our manifests in `ours.yaml` and these other files */
function directory(files: Record<string, string> = {}): string {
  const dir = join(root, String(dirs++));
  execFileSync("mkdir", ["-p", dir]);
  const ours = [manager("https://nsx.example.org"), secret(), edgeTenant("web", "edge-1", "blue")];
  writeFileSync(join(dir, "ours.yaml"), ours.map((d) => stringify(d)).join("---\n"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** rejects when `promise` takes longer than `ms`: a reader that hangs fails the test instead of stalling it */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const names = (set: Awaited<ReturnType<typeof loadManifests>>) =>
  set.objects.map((o) => `${o.object.kind}/${o.object.metadata.name}`);

describe("texts the parser would pay dearly for are refused before it runs", () => {
  it.each([...HOSTILE_TEXTS])("$name: $reason", async (c) => {
    const dir = directory({ "hostile.yaml": c.text() });
    const set = await within(20_000, "loading", loadManifests([dir], { validator }));
    expect(names(set), "the other file's objects are read").toEqual(["NSXManager/lab", "EdgeTenant/web"]);
    expect(set.errors.map((e) => e.file)).toEqual([join(dir, "hostile.yaml")]);
    expect(set.errors[0]?.detail).toContain(c.refusal);
    if (c.unread !== true) expect(set.errors[0]?.line, "names the line").toBeGreaterThanOrEqual(1);
  });

  it("2 MB of nested flow sequences: plan refuses it within a small fraction of the 1.24 GB it took", async () => {
    const dir = directory({ "nested.yaml": "[".repeat(1_000_000) + "]".repeat(1_000_000) });
    const rssFile = join(dir, "..", `rss-${dirs}`);
    const child = spawn(process.execPath, ["--require", PEAK_RSS, "src/cli/main.ts", "plan", "-f", dir], {
      cwd: ROOT,
      env: { ...process.env, NSXV_BENCH_PEAK_RSS_FILE: rssFile, NO_COLOR: "1" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code, stderr).toBe(1);
    expect(stderr).toContain(`nested.yaml:1: nested deeper than ${MANIFEST_LIMITS.maxNesting} levels`);
    const peakMiB =
      (JSON.parse(readFileSync(rssFile, "utf8")) as { peakRssBytes: number }).peakRssBytes / 2 ** 20;
    // measured: about 120 MiB, of which ~105 are the CLI's own start (bench manifest-input)
    expect(peakMiB, "peak RSS of plan, MiB").toBeLessThan(300);
  });

  it("a file larger than the cap is refused unread", async () => {
    const dir = directory();
    const big = join(dir, "big.yaml");
    writeFileSync(big, "");
    truncateSync(big, MANIFEST_LIMITS.maxFileBytes + 1);
    const set = await loadManifests([dir], { validator });
    expect(set.errors.map((e) => [e.file, e.detail])).toEqual([
      [
        big,
        `larger than ${MANIFEST_LIMITS.maxFileBytes} bytes, the cap on a manifest file: refused unread; split it`,
      ],
    ]);
  });
});

describe("a large ordinary mapping is read in linear time", () => {
  it("60 000 keys in an unrelated ConfigMap beside our manifests: read well within 15 s (quadratic: over 30 s)", async () => {
    const dir = directory({ "configmap.yaml": largeMapping(60_000) });
    const started = performance.now();
    const set = await loadManifests([dir], { validator });
    const ms = performance.now() - started;
    expect(set.errors).toEqual([]);
    expect(set.skipped.map((s) => s.kind)).toEqual(["ConfigMap"]);
    expect(names(set)).toEqual(["NSXManager/lab", "EdgeTenant/web"]);
    // measured: about 3.5 s; the library's own duplicate check made it about 35 s
    expect(ms).toBeLessThan(15_000);
  });

  it.each([
    {
      name: "OurObject",
      reason: "a key twice in our object: which value is meant is a guess",
      text: "apiVersion: nsxv.io/v1alpha1\nkind: EdgeTenant\nmetadata: {name: twice}\nspec:\n  managerRef: {name: lab}\n  edgeId: edge-2\n  tenant: blue\n  tenant: red\n",
      field: "spec.tenant",
      line: 8,
      first: 7,
    },
    {
      name: "FlowMapping",
      reason: "the same in flow style",
      text: 'apiVersion: nsxv.io/v1alpha1\nkind: EdgeTenant\nmetadata: {name: twice, name: "again"}\nspec: {managerRef: {name: lab}, edgeId: edge-2, tenant: blue}\n',
      field: "metadata.name",
      line: 3,
      first: 3,
    },
    {
      name: "UnrelatedKind",
      reason: "kubectl refuses a duplicate key in any object; so does this reader",
      text: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata:\n  a: '1'\n  b: '2'\n  a: '3'\n",
      field: "data.a",
      line: 7,
      first: 5,
    },
  ])("a duplicate key is still an error naming file, line and field: $name ($reason)", async (c) => {
    const dir = directory({ "twice.yaml": c.text });
    const set = await loadManifests([dir], { validator });
    expect(set.errors.map((e) => [e.file, e.line, e.field])).toEqual([
      [join(dir, "twice.yaml"), c.line, c.field],
    ]);
    expect(set.errors[0]?.detail).toContain(`(first at line ${c.first})`);
  });
});

describe("a FIFO named *.yaml in a manifest directory", () => {
  const withFifo = (): { dir: string; fifo: string } => {
    const dir = directory();
    const fifo = join(dir, "pipe.yaml");
    execFileSync("mkfifo", [fifo]);
    return { dir, fifo };
  };

  it("plan skips it with a note instead of hanging", async () => {
    const { dir, fifo } = withFifo();
    const io = captureIo();
    const code = await within(
      20_000,
      "plan",
      runOneShotCommand("plan", { filename: [dir], output: "text" }, io, {}),
    );
    expect(io.err()).toContain(`note: ${fifo}: not a regular file (a FIFO): skipped`);
    expect(io.out()).toContain("NSXManager default/lab");
    expect(code, "the manager is unreachable: that is the only error").toBe(1);
    const json = captureIo();
    await within(
      20_000,
      "plan -o json",
      runOneShotCommand("plan", { filename: [dir], output: "json" }, json),
    );
    expect((JSON.parse(json.out()) as { skippedFiles: unknown }).skippedFiles).toEqual([
      { file: fifo, reason: "not a regular file (a FIFO): skipped" },
    ]);
  });

  it("run --manifests' directory source skips it with a log line and reads the rest", async () => {
    const { dir, fifo } = withFifo();
    const warnings: string[] = [];
    const quiet = (): void => {};
    const logger: Logger = {
      debug: quiet,
      info: quiet,
      error: quiet,
      warn: (_f, message) => void warnings.push(message),
    };
    const source = new DirectorySource({ dir, logger });
    await within(20_000, "reload", source.reload());
    expect(warnings).toContain(`${fifo}: not a regular file (a FIFO): skipped`);
    const tenants = await source.store.list("EdgeTenant");
    expect(tenants.map((o) => o.metadata.name)).toEqual(["web"]);
  });

  it("named on the command line, it is read: plan -f <(kustomize build) works", async () => {
    const { fifo } = withFifo();
    const writer = createWriteStream(fifo);
    writer.end([manager("https://nsx.example.org"), secret()].map((d) => stringify(d)).join("---\n"));
    const set = await within(20_000, "reading the pipe", loadManifests([fifo], { validator }));
    expect(set.errors).toEqual([]);
    expect(names(set)).toEqual(["NSXManager/lab"]);
  });
});
