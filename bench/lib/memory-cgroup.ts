/**
 * A memory cgroup with a limit, to run a benchmark child as a container runs the operator. Node
 * reads the limit (process.constrainedMemory()) and sizes V8's heap from it by itself, with no
 * flag: a process under 512Mi gets a heap limit of about 260 MB (under 1Gi, 560 MB) and a small young
 * generation, where on a 24 GB machine without a limit V8 lets the young generation alone take
 * 128 MB. Creating a cgroup needs write access to the process's own (cgroup v1's memory
 * controller, or v2 with the memory controller delegated); a run without it is told why.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const DEPLOYMENT = fileURLToPath(new URL("../../deploy/core/deployment.yaml", import.meta.url));

export interface MemoryCgroup {
  limitBytes: number;
  /** a `node` that moves itself into the cgroup before it starts: fork()'s execPath */
  execPath: string;
  /** removes the cgroup (its processes must have exited) and the wrapper */
  remove(): Promise<void>;
}

export type MemoryCgroupResult = { cgroup: MemoryCgroup } | { unavailable: string };

/** resources.limits.memory of the operator's container in deploy/core/deployment.yaml, in bytes */
export function deploymentMemoryLimitBytes(): number {
  const docs = parseAllDocuments(readFileSync(DEPLOYMENT, "utf8"));
  for (const doc of docs) {
    const value = doc.getIn(["spec", "template", "spec", "containers", 0, "resources", "limits", "memory"]);
    if (typeof value === "string") return quantityBytes(value);
  }
  throw new Error(`${DEPLOYMENT}: no resources.limits.memory on the first container`);
}

const SUFFIX: Record<string, number> = {
  "": 1,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  K: 1e3,
  M: 1e6,
  G: 1e9,
};

/** a Kubernetes memory quantity ("512Mi", "1G", "268435456") in bytes */
export function quantityBytes(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi|K|M|G)?$/.exec(quantity);
  if (match === null)
    throw new Error(`not a memory quantity this benchmark reads: ${JSON.stringify(quantity)}`);
  return Number(match[1]) * (SUFFIX[match[2] ?? ""] ?? 1);
}

/** The directory of this process's memory cgroup, and which version's files it has. */
function ownMemoryCgroup(): { dir: string; version: 1 | 2 } | { unavailable: string } {
  let lines: string[];
  try {
    lines = readFileSync("/proc/self/cgroup", "utf8").split("\n");
  } catch {
    return { unavailable: "no /proc/self/cgroup (not Linux)" };
  }
  for (const line of lines) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers?.split(",").includes("memory"))
      return { dir: `/sys/fs/cgroup/memory${path}`, version: 1 };
  }
  const unified = lines.find((l) => l.startsWith("0::"));
  if (unified !== undefined) return { dir: `/sys/fs/cgroup${unified.slice(3)}`, version: 2 };
  return { unavailable: "no memory cgroup in /proc/self/cgroup" };
}

export async function createMemoryCgroup(limitBytes: number): Promise<MemoryCgroupResult> {
  const own = ownMemoryCgroup();
  if ("unavailable" in own) return own;
  const dir = join(own.dir, `nsxv-bench-${randomUUID().slice(0, 8)}`);
  try {
    await mkdir(dir);
  } catch (error) {
    return { unavailable: `cannot create a cgroup under ${own.dir}: ${(error as Error).message}` };
  }
  try {
    const limitFile = own.version === 1 ? "memory.limit_in_bytes" : "memory.max";
    await writeFile(join(dir, limitFile), String(limitBytes));
    const set = Number((await readFile(join(dir, limitFile), "utf8")).trim());
    if (set !== limitBytes) throw new Error(`${limitFile} reads ${set} after writing ${limitBytes}`);
  } catch (error) {
    await rmdir(dir).catch(() => undefined);
    return { unavailable: `cannot set a memory limit on ${dir}: ${(error as Error).message}` };
  }
  const wrapperDir = await mkdtemp(join(tmpdir(), "nsxv-bench-cgroup-"));
  const execPath = join(wrapperDir, "node");
  // the shell's pid is the pid node keeps after exec, so the limit is in place before V8 starts
  await writeFile(
    execPath,
    `#!/bin/sh\necho $$ > '${join(dir, "cgroup.procs")}' || exit 97\nexec '${process.execPath}' "$@"\n`,
    { mode: 0o755 },
  );
  return {
    cgroup: {
      limitBytes,
      execPath,
      remove: async () => {
        await rm(wrapperDir, { recursive: true, force: true });
        await rmdir(dir);
      },
    },
  };
}
