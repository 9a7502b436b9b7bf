/**
 * Regenerating the files of `run --manifests` never deletes what they declare (issue 28): random
 * sequences of the ways tools write a file (truncate then write later, write in chunks, rename a
 * new file over it, rm then create, move it out and back, swap its directory) run on the real
 * file system, against the operator and the simulator. Sequences that end with the content they
 * started from make no manager write; a sequence that ends with an object really gone restores
 * its edge (deletionPolicy Restore) within the quiet period and a few seconds. The directory
 * source runs on a fake clock (its debounce, quiet period and rescan), the operator and the
 * simulator in real time: a step's pause is the fake clock moved on, once the file system's
 * events for the step are in.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { NsxvObject } from "../../src/api/types.ts";
import { nopLogger } from "../../src/controller/controller.ts";
import { Operator } from "../../src/operator/operator.ts";
import { startSimulator } from "../../src/simulator/index.ts";
import { DirectorySource } from "../../src/source/directory.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { waitFor } from "../support/wait.ts";

const QUIET_MS = 5_000;
const DEBOUNCE_MS = 200;
const EDGES = 4;

const MANAGER = (url: string) => `apiVersion: nsxv.io/v1alpha1
kind: NSXManager
metadata: { name: nsx }
spec: { url: "${url}", credentialsSecretRef: { name: creds } }
---
apiVersion: v1
kind: Secret
metadata: { name: creds }
stringData: { username: admin, password: default }
`;

/** one line per object's spec: a writer that stops at a line end leaves whole fields */
const EDGE = (i: number) => `apiVersion: nsxv.io/v1alpha1
kind: EdgeTenant
metadata: { name: e${i} }
spec: { managerRef: { name: nsx }, edgeId: edge-${i}, tenant: blue, deletionPolicy: Restore }
`;

/** edges 1-3 in edges.yaml, edge 4 in sub/more.yaml */
const FILES = { edges: "edges.yaml", more: join("sub", "more.yaml") } as const;
type Target = keyof typeof FILES;
const contentOf = (target: Target, without?: number): string =>
  (target === "edges" ? [1, 2, 3] : [4])
    .filter((i) => i !== without)
    .map(EDGE)
    .join("---\n");

/** One way a tool writes a file, ending with `text` in it. Pauses in ms of the source's clock. */
type Write =
  | { way: "truncateThenWrite"; pauseMs: number }
  | { way: "chunks"; cuts: number[]; pauseMs: number }
  | { way: "renameOver" }
  | { way: "rmThenCreate"; pauseMs: number }
  | { way: "moveOutAndBack"; pauseMs: number }
  | { way: "directorySwap"; pauseMs: number };

interface Step {
  target: Target;
  write: Write;
  /** the fake clock moved on after the step */
  afterMs: number;
}

const pause = fc.integer({ min: 0, max: QUIET_MS - 1_000 });
const write: fc.Arbitrary<Write> = fc.oneof(
  fc.record({ way: fc.constant("truncateThenWrite" as const), pauseMs: pause }),
  fc.record({
    way: fc.constant("chunks" as const),
    cuts: fc.uniqueArray(fc.double({ min: 0.05, max: 0.95, noNaN: true }), { minLength: 1, maxLength: 4 }),
    pauseMs: pause,
  }),
  fc.record({ way: fc.constant("renameOver" as const) }),
  fc.record({ way: fc.constant("rmThenCreate" as const), pauseMs: pause }),
  fc.record({ way: fc.constant("moveOutAndBack" as const), pauseMs: pause }),
  fc.record({ way: fc.constant("directorySwap" as const), pauseMs: pause }),
);
const step: fc.Arbitrary<Step> = fc.record({
  target: fc.constantFrom<Target>("edges", "more"),
  write,
  afterMs: fc.integer({ min: 0, max: 3_000 }),
});

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A directory of manifests, the simulator, and the operator on it, all edges corrected. */
async function rig() {
  const root = mkdtempSync(join(tmpdir(), "nsxv-regenerate-"));
  roots.push(root);
  const dir = join(root, "m");
  const sim = await startSimulator({
    state: { edges: [{ generate: { count: EDGES, idStart: 1, tenant: "legacy" } }] },
  });
  mkdirSync(join(dir, "sub"), { recursive: true });
  writeFileSync(join(dir, "manager.yaml"), MANAGER(sim.url));
  writeFileSync(join(dir, FILES.edges), contentOf("edges"));
  writeFileSync(join(dir, FILES.more), contentOf("more"));
  const clock = new FakeClock(Date.now());
  const source = new DirectorySource({
    dir,
    statusFile: join(root, "status.json"),
    clock,
    debounceMs: DEBOUNCE_MS,
    removalQuietMs: QUIET_MS,
    logger: nopLogger,
  });
  /** fake time at which each object was seen being deleted */
  const deletedAt = new Map<string, number>();
  source.subscribe((change) => {
    if (change.type !== "object") return;
    const after = change.after as NsxvObject | undefined;
    const name = after?.metadata.name ?? (change.before as NsxvObject | undefined)?.metadata.name;
    if (name !== undefined && (after === undefined || after.metadata.deletionTimestamp !== undefined))
      if (!deletedAt.has(name)) deletedAt.set(name, clock.now());
  });
  const operator = new Operator({ source, metricsBindAddress: "0", healthProbeBindAddress: "0" });
  const stop = new AbortController();
  const exit = operator.start(stop.signal);
  const tenant = (i: number) => sim.state.edge(`edge-${i}`)?.doc.tenant;
  const puts = () => sim.state.counters.snapshot().putEdge?.["204"] ?? 0;
  await waitFor(
    "every edge corrected",
    () => puts() === EDGES && [1, 2, 3, 4].every((i) => tenant(i) === "blue"),
  );
  // the originals are recorded before the corrections: settled once the status file says so
  await realSleep(100);
  return {
    root,
    dir,
    clock,
    sim,
    tenant,
    puts,
    deletedAt,
    close: async () => {
      stop.abort();
      await exit;
      await sim.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

const realSleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Rig = Awaited<ReturnType<typeof rig>>;

/** The file system's events for what was just done are in; then the source's clock moves on. */
async function after(r: Rig, ms: number): Promise<void> {
  await realSleep(15);
  await r.clock.advance(ms);
  // the reads the clock set off
  await realSleep(15);
}

/** Writes `text` to the target the way `write` says. */
async function apply(r: Rig, target: Target, w: Write, text: string): Promise<void> {
  const file = join(r.dir, FILES[target]);
  switch (w.way) {
    case "truncateThenWrite":
      writeFileSync(file, "");
      await after(r, w.pauseMs);
      writeFileSync(file, text);
      return;
    case "chunks": {
      // a line-buffered writer: it may pause at a line end; inside a line it writes on at once
      writeFileSync(file, "");
      const ends = [...w.cuts.map((c) => Math.floor(c * text.length)), text.length].sort((a, b) => a - b);
      let from = 0;
      for (const end of ends) {
        writeFileSync(file, text.slice(from, end), { flag: "a" });
        from = end;
        if (text[end - 1] === "\n") await after(r, w.pauseMs);
      }
      return;
    }
    case "renameOver":
      writeFileSync(join(dirname(file), `.${target}.tmp`), text);
      renameSync(join(dirname(file), `.${target}.tmp`), file);
      return;
    case "rmThenCreate":
      unlinkSync(file);
      await after(r, w.pauseMs);
      writeFileSync(file, text);
      return;
    case "moveOutAndBack": {
      const outside = join(r.root, "outside.yaml");
      writeFileSync(file, text);
      renameSync(file, outside);
      await after(r, w.pauseMs);
      renameSync(outside, file);
      return;
    }
    case "directorySwap": {
      // the directory that holds the file is built anew beside it and renamed into place
      const holder = target === "edges" ? r.dir : join(r.dir, "sub");
      const fresh = `${holder}.new`;
      cpSync(holder, fresh, { recursive: true });
      writeFileSync(join(fresh, target === "edges" ? FILES.edges : "more.yaml"), text);
      renameSync(holder, `${holder}.old`);
      await after(r, w.pauseMs);
      renameSync(fresh, holder);
      rmSync(`${holder}.old`, { recursive: true, force: true });
      return;
    }
  }
}

describe("regenerating the manifests of run --manifests", () => {
  it("writes nothing to the manager when a sequence of writes ends with the same content", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 4 }), async (steps) => {
        const r = await rig();
        try {
          const before = r.puts();
          for (const s of steps) {
            await apply(r, s.target, s.write, contentOf(s.target));
            await after(r, s.afterMs);
          }
          // long past every quiet period, and a rescan
          await after(r, QUIET_MS + 30_000);
          await realSleep(200);
          expect(r.deletedAt, "nothing seen as deleted").toEqual(new Map());
          expect(r.puts() - before, "no manager write").toBe(0);
          for (let i = 1; i <= EDGES; i++) expect(r.tenant(i)).toBe("blue");
        } finally {
          await r.close();
        }
      }),
      { numRuns: 10 },
    );
  }, 120_000);

  it("restores an object really gone within the quiet period and a few seconds, whatever the writes before", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 2 }),
        step,
        fc.integer({ min: 1, max: EDGES }),
        async (steps, last, gone) => {
          const r = await rig();
          try {
            const before = r.puts();
            for (const s of steps) {
              await apply(r, s.target, s.write, contentOf(s.target));
              await after(r, s.afterMs);
            }
            const target: Target = gone === 4 ? "more" : "edges";
            await apply(r, target, last.write, contentOf(target, gone));
            const removedAt = r.clock.now();
            for (let waited = 0; waited < QUIET_MS + 3_000; waited += 500) await after(r, 500);
            await waitFor(`edge-${gone} restored`, () => r.tenant(gone) === "legacy");
            const seenAt = r.deletedAt.get(`e${gone}`);
            expect(seenAt, "seen as deleted").toBeDefined();
            expect(seenAt! - removedAt, "within the quiet period and a few seconds").toBeLessThanOrEqual(
              QUIET_MS + 3_000,
            );
            expect([...r.deletedAt.keys()], "only that one").toEqual([`e${gone}`]);
            await realSleep(100);
            expect(r.puts() - before, "one write: the restore").toBe(1);
          } finally {
            await r.close();
          }
        },
      ),
      { numRuns: 6 },
    );
  }, 120_000);
});
