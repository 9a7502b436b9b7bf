/**
 * What a bad or merely large manifest file costs `plan`: wall time and peak RSS of the built CLI
 * in a child process, over a directory that holds our manifests (a paused NSXManager: no manager
 * call, so the figure is the reading alone) and other files. The hostile texts of
 * lib/hostile-manifests.ts must be refused (exit 1, the refusal named) at little cost over the
 * baseline, the directory without the extra file; unrelated ConfigMaps of 40 000 and 60 000 keys
 * must be read (exit 0) in linear time. A directory whose files are each within every per-file
 * cap but together over the bound on one read (issue 28: 30 files of 700 KB took 64 s and
 * 495 MB) must be refused as cheaply; ordinary trees (2000 EdgeTenants in one file, and in 2000
 * files) are read, and their CPU time per object over the baseline is the figure to compare
 * with a reference build.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { buildCli, runBuiltCli, type CliRun } from "./lib/cli-process.ts";
import { HOSTILE_TEXTS, largeMapping, type HostileText } from "./lib/hostile-manifests.ts";
import { atMost, exactly, ResultBuilder, type BenchResult } from "./lib/result.ts";

export interface ManifestInputOptions {
  hostile: readonly HostileText[];
  /** sizes of the unrelated ConfigMap that must be read */
  mappingKeys: readonly number[];
  /** refused texts may cost this much RSS over the baseline */
  refusedRssOverBaselineMiB: number;
  /** EdgeTenants of the ordinary trees: in one file, and one per file */
  ordinaryObjects: number;
  /** the directory over the bound on one read: this many unrelated ConfigMaps of about this many bytes each */
  overBound: { files: number; fileBytes: number };
}

export const MANIFEST_INPUT_FULL: ManifestInputOptions = {
  hostile: HOSTILE_TEXTS,
  mappingKeys: [40_000, 60_000],
  refusedRssOverBaselineMiB: 100,
  ordinaryObjects: 2000,
  overBound: { files: 30, fileBytes: 700_000 },
};

export const MANIFEST_INPUT_QUICK: ManifestInputOptions = {
  hostile: HOSTILE_TEXTS.filter((h) => ["NestedFlowSequences", "Keys120k"].includes(h.name)),
  mappingKeys: [40_000],
  refusedRssOverBaselineMiB: 100,
  ordinaryObjects: 2000,
  overBound: { files: 30, fileBytes: 700_000 },
};

/** A ConfigMap of about `bytes` bytes (an unrelated kind: read, parsed, skipped). */
function configMapOf(name: string, bytes: number): string {
  const lines = ["apiVersion: v1", "kind: ConfigMap", `metadata: {name: ${name}}`, "data:"];
  for (let i = 0, size = 0; size < bytes; i++) {
    const line = `  k${i}: v${i}`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

/** EdgeTenant `i` of the paused manager, as `import` writes one */
const edgeTenant = (i: number): string =>
  stringify({
    apiVersion: "nsxv.io/v1alpha1",
    kind: "EdgeTenant",
    metadata: { name: `edge-${i}` },
    spec: { managerRef: { name: "nsx" }, edgeId: `edge-${i}`, tenant: "tenant-blue" },
  });

/** our manifests: a paused manager (no call is made) and its Secret */
const OURS = [
  {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "NSXManager",
    metadata: { name: "nsx", annotations: { "nsxv.io/paused": "true" } },
    spec: { url: "https://nsx.example.org", credentialsSecretRef: { name: "nsx-credentials" } },
  },
  {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "nsx-credentials" },
    stringData: { username: "admin", password: "default" },
  },
];

export async function benchManifestInput(options: ManifestInputOptions): Promise<BenchResult> {
  const result = new ResultBuilder("manifest-input");
  await buildCli();
  const root = mkdtempSync(join(tmpdir(), "nsxv-manifest-input-"));
  let n = 0;
  /** plan of our manifests and `extra` (one file's text, or files by name) */
  const plan = async (extra?: string | Record<string, string>): Promise<CliRun> => {
    const dir = join(root, String(n++));
    mkdirSync(dir);
    writeFileSync(join(dir, "ours.yaml"), OURS.map((d) => stringify(d)).join("---\n"));
    const files = typeof extra === "string" ? { "other.yaml": extra } : (extra ?? {});
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const run = await runBuiltCli(["plan", "-f", dir]);
    rmSync(dir, { recursive: true, force: true });
    return run;
  };
  const add = (
    label: string,
    metric: string,
    value: number,
    unit: string,
    target?: ReturnType<typeof atMost>,
  ) => result.add({ case: label, metric, value, unit, ...(target ? { target } : {}) });
  try {
    const baseline = await plan();
    if (baseline.code !== 0)
      throw new Error(`plan of the baseline exited ${baseline.code}: ${baseline.output}`);
    const baselineMiB = baseline.peakRssKiB / 1024;
    add("baseline (our manifests only)", "peak RSS", baselineMiB, "MiB");
    add("baseline (our manifests only)", "wall", baseline.wallMs, "ms");
    for (const h of options.hostile) {
      const run = await plan(h.text());
      const rssMiB = run.peakRssKiB / 1024;
      const refused = run.code === 1 && run.output.includes(h.refusal) ? 1 : 0;
      add(h.name, "refused before parsing", refused, "files", exactly(refused, 1));
      add(h.name, "peak RSS", rssMiB, "MiB");
      const over = rssMiB - baselineMiB;
      add(
        h.name,
        "peak RSS over baseline",
        over,
        "MiB",
        atMost(over, options.refusedRssOverBaselineMiB, " MiB"),
      );
      add(h.name, "wall", run.wallMs, "ms");
    }
    for (const keys of options.mappingKeys) {
      const label = `ConfigMap of ${keys} keys`;
      const run = await plan(largeMapping(keys));
      const read = run.code === 0 ? 1 : 0;
      add(label, "read", read, "files", exactly(read, 1));
      add(label, "peak RSS", run.peakRssKiB / 1024, "MiB");
      add(label, "wall", run.wallMs, "ms");
    }
    const { files, fileBytes } = options.overBound;
    const overLabel = `${files} files of ${Math.round(fileBytes / 1000)} KB`;
    const large = Object.fromEntries(
      Array.from({ length: files }, (_, i) => [`big-${i}.yaml`, configMapOf(`big-${i}`, fileBytes)]),
    );
    const over = await plan(large);
    const refused = over.code === 1 && over.output.includes("--max-manifest-bytes raises it") ? 1 : 0;
    add(overLabel, "refused unread, the bound named", refused, "directories", exactly(refused, 1));
    add(overLabel, "peak RSS over baseline", over.peakRssKiB / 1024 - baselineMiB, "MiB");
    add(overLabel, "wall", over.wallMs, "ms");
    const objects = options.ordinaryObjects;
    const trees = {
      [`${objects} EdgeTenants in one file`]: {
        "edges.yaml": Array.from({ length: objects }, (_, i) => edgeTenant(i + 1)).join("---\n"),
      },
      [`${objects} EdgeTenants in ${objects} files`]: Object.fromEntries(
        Array.from({ length: objects }, (_, i) => [`edge-${i + 1}.yaml`, edgeTenant(i + 1)]),
      ),
    };
    for (const [label, tree] of Object.entries(trees)) {
      const run = await plan(tree);
      const read = run.code === 0 ? 1 : 0;
      add(label, "read", read, "trees", exactly(read, 1));
      add(label, "CPU per object over baseline", (run.cpuMs - baseline.cpuMs) / objects, "ms");
      add(label, "wall", run.wallMs, "ms");
      add(label, "peak RSS", run.peakRssKiB / 1024, "MiB");
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  result.note(
    "`node dist/cli/main.js plan -f DIR` in a child process, peak RSS from /proc/self/status (VmHWM) at exit; " +
      "DIR holds a paused NSXManager and its Secret (no manager call) and the case's files. " +
      "Refused texts are about 2 MB each (Keys400k: 7 MB, refused by its size unread). " +
      "The directory over the bound holds unrelated ConfigMaps (each within the per-file caps); the ordinary trees " +
      "are EdgeTenants of the paused manager as `import` writes them: compare their CPU per object with a reference build's.",
  );
  return result.build();
}
