/**
 * What a bad or merely large manifest file costs `plan`: wall time and peak RSS of the built CLI
 * in a child process, over a directory that holds our manifests (a paused NSXManager: no manager
 * call, so the figure is the reading alone) and one other file. The hostile texts of
 * lib/hostile-manifests.ts must be refused (exit 1, the refusal named) at little cost over the
 * baseline, the directory without the extra file; unrelated ConfigMaps of 40 000 and 60 000 keys
 * must be read (exit 0) in linear time.
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
}

export const MANIFEST_INPUT_FULL: ManifestInputOptions = {
  hostile: HOSTILE_TEXTS,
  mappingKeys: [40_000, 60_000],
  refusedRssOverBaselineMiB: 100,
};

export const MANIFEST_INPUT_QUICK: ManifestInputOptions = {
  hostile: HOSTILE_TEXTS.filter((h) => ["NestedFlowSequences", "Keys120k"].includes(h.name)),
  mappingKeys: [40_000],
  refusedRssOverBaselineMiB: 100,
};

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
  const plan = async (extra?: string): Promise<CliRun> => {
    const dir = join(root, String(n++));
    mkdirSync(dir);
    writeFileSync(join(dir, "ours.yaml"), OURS.map((d) => stringify(d)).join("---\n"));
    if (extra !== undefined) writeFileSync(join(dir, "other.yaml"), extra);
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
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  result.note(
    "`node dist/cli/main.js plan -f DIR` in a child process, peak RSS from /proc/self/status (VmHWM) at exit; " +
      "DIR holds a paused NSXManager and its Secret (no manager call) and the case's file. " +
      "Refused texts are about 2 MB each (Keys400k: 7 MB, refused by its size unread).",
  );
  return result.build();
}
