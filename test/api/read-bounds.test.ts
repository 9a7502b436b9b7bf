/**
 * A directory's total cost is bounded (issue 28): what one read of manifests may hold in all its
 * files (bytes, YAML documents), the error that names what was read, the bound and the flag, in
 * loadManifests, in `plan` (the flags), and in the directory source, whose bound is the
 * directory's total across reads. What ordinary trees cost per object is measured in
 * bench/manifest-input.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { countDocuments, READ_BOUNDS, ReadLedger } from "../../src/api/manifest-files.ts";
import { loadManifests } from "../../src/api/manifests.ts";
import { ResourceValidator } from "../../src/api/schema.ts";
import { runOneShotCommand } from "../../src/cli/plan-apply.ts";
import type { Logger } from "../../src/controller/controller.ts";
import { DirectorySource } from "../../src/source/directory.ts";
import { captureIo } from "../cli/helpers.ts";
import { waitFor } from "../support/wait.ts";

const root = mkdtempSync(join(tmpdir(), "nsxv-read-bounds-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let trees = 0;

/** Writes files (path → text) under a fresh directory and returns its path. */
function tree(files: Record<string, string>): string {
  const dir = join(root, String(trees++));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const edge = (i: number) => ({
  apiVersion: "nsxv.io/v1alpha1",
  kind: "EdgeTenant",
  metadata: { name: `e${i}` },
  spec: { managerRef: { name: "nsx" }, edgeId: `edge-${i}`, tenant: "blue" },
});
const edges = (from: number, count: number): string =>
  Array.from({ length: count }, (_, i) => stringify(edge(from + i))).join("---\n");

/** counts the objects validated: what was parsed */
function countingValidator(): { validator: ResourceValidator; validated: () => number } {
  const base = ResourceValidator.load();
  let validated = 0;
  const validator = Object.assign(Object.create(base) as ResourceValidator, {
    validate: (...args: Parameters<ResourceValidator["validate"]>) => {
      validated++;
      return base.validate(...args);
    },
  });
  return { validator, validated: () => validated };
}

describe("countDocuments", () => {
  const cases: { name: string; text: string; documents: number }[] = [
    { name: "Empty", text: "", documents: 0 },
    { name: "CommentsOnly", text: "# nothing\n\n# here\n", documents: 0 },
    { name: "One", text: "a: 1\n", documents: 1 },
    { name: "LeadingMarker", text: "---\na: 1\n", documents: 1 },
    { name: "Three", text: "a: 1\n---\nb: 2\n--- \nc: 3\n", documents: 3 },
    { name: "MarkerWithContent", text: "--- {a: 1}\n--- [b]\n", documents: 2 },
    { name: "EmptyDocuments", text: "---\n---\n---\n", documents: 3 },
    { name: "EndMarker", text: "a: 1\n...\nb: 2\n", documents: 2 },
    { name: "EndMarkersAlone", text: "...\n...\n# c\n...\n", documents: 3 },
    { name: "EndMarkerAfterMarker", text: "---\n...\n...\n", documents: 2 },
    { name: "DirectiveThenMarker", text: "%YAML 1.2\n---\na: 1\n", documents: 1 },
    { name: "DashesInAScalar", text: "a: |\n  ---\n  x\nb: ---x\n", documents: 1 },
    { name: "NotAMarker", text: "a: 1\n---x: 2\n", documents: 1 },
    { name: "IndentedFirstDocument", text: "  a: 1\n", documents: 1 },
    { name: "MarkerThenTab", text: "a: 1\n---\tb: 2\n", documents: 2 },
    { name: "MarkerAtTheEnd", text: "a: 1\n---", documents: 2 },
    { name: "CarriageReturns", text: "a: 1\r---\r\nb: 2\r...\r# c\r...", documents: 3 },
    { name: "UnicodeLineBreaks", text: "a: 1\u2028---\u2029b: 2\u2028...\u2028c: 3", documents: 3 },
    { name: "MarkerSplitByACarriageReturn", text: "a: 1\n--\r-\n", documents: 1 },
  ];
  it.each(cases)("$name", ({ text, documents }) => {
    expect(countDocuments(text)).toBe(documents);
  });
});

describe("the bounds on one read of manifests", () => {
  it("refuses a directory whose files' sizes are over the bound before opening any, naming it, the bound and the flag", async () => {
    const dir = tree({ "a.yaml": edges(1, 20), "b.yaml": edges(21, 20) });
    const { validator, validated } = countingValidator();
    const set = await loadManifests([dir], {
      validator,
      ledger: new ReadLedger(dir, { maxBytes: 2_000, maxDocuments: 1_000 }),
    });
    expect(set.objects).toEqual([]);
    expect(validated(), "nothing parsed").toBe(0);
    expect(set.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${dir}: holds \\d+ bytes of manifests, over the bound of 2000 per read \\(--max-manifest-bytes raises it\\): not read$`,
        ),
      ),
    ]);
  });

  it("stops at the file that takes the documents over the bound, before parsing it", async () => {
    const dir = tree({ "a.yaml": edges(1, 3), "b.yaml": edges(4, 3), "c.yaml": edges(7, 3) });
    const { validator, validated } = countingValidator();
    const set = await loadManifests([dir], {
      validator,
      ledger: new ReadLedger(dir, { maxBytes: READ_BOUNDS.maxBytes, maxDocuments: 5 }),
    });
    expect(validated(), "a.yaml only: b.yaml was counted, not parsed").toBe(3);
    expect(set.errors.map((e) => e.message)).toEqual([
      `${dir}: holds more than 5 YAML documents, the bound per read (--max-manifest-documents raises it): not read`,
    ]);
  });

  it("reads a tree at the bounds, and counts documents as the parser does", async () => {
    const dir = tree({ "a.yaml": edges(1, 3), "sub/b.yaml": `---\n${edges(4, 2)}\n...\n` });
    const set = await loadManifests([dir], {
      ledger: new ReadLedger(dir, { maxBytes: READ_BOUNDS.maxBytes, maxDocuments: 5 }),
    });
    expect(set.errors).toEqual([]);
    expect(set.objects).toHaveLength(5);
  });

  it("bounds the whole of a pass over several paths", async () => {
    const a = tree({ "a.yaml": edges(1, 4) });
    const b = tree({ "b.yaml": edges(5, 4) });
    const set = await loadManifests([a, b], {
      ledger: new ReadLedger(`${a}, ${b}`, { maxBytes: READ_BOUNDS.maxBytes, maxDocuments: 6 }),
    });
    expect(set.errors.map((e) => e.file)).toEqual([`${a}, ${b}`]);
  });
});

describe("plan's bounds", () => {
  it("refuses a directory over --max-manifest-bytes with exit 1, and reads it when the flag raises the bound", async () => {
    const dir = tree({ "a.yaml": edges(1, 10) });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir], maxManifestBytes: 1024 }, io)).toBe(1);
    expect(io.err()).toContain(`${dir}: holds`);
    expect(io.err()).toContain("over the bound of 1024 per read (--max-manifest-bytes raises it)");
    const raised = captureIo();
    // read now: the bound is no longer what stops it (its EdgeTenants name a manager it lacks)
    await runOneShotCommand("plan", { filename: [dir], maxManifestBytes: 1024 * 1024 }, raised);
    expect(raised.err()).not.toContain("--max-manifest-bytes");
    expect(raised.err()).toContain("e1");
  });

  it("refuses a directory over --max-manifest-documents", async () => {
    const dir = tree({ "a.yaml": edges(1, 10) });
    const io = captureIo();
    expect(await runOneShotCommand("plan", { filename: [dir], maxManifestDocuments: 9 }, io)).toBe(1);
    expect(io.err()).toContain(
      "holds more than 9 YAML documents, the bound per read (--max-manifest-documents raises it)",
    );
  });
});

describe("the directory source's bound: the directory's total, across reads", () => {
  it("keeps what it has while the directory is over a bound, says why, and reads it again once it is back under", async () => {
    const dir = tree({ "a.yaml": edges(1, 2), "b.yaml": edges(3, 2) });
    const errors: string[] = [];
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (_fields, message) => void errors.push(message),
    };
    const source = new DirectorySource({
      dir,
      readBounds: { maxBytes: READ_BOUNDS.maxBytes, maxDocuments: 4 },
      removalQuietMs: 0,
      debounceMs: 20,
      rescanIntervalMs: 60_000,
      logger,
    });
    const stop = new AbortController();
    const running = source.start(stop.signal);
    expect(await source.synced(stop.signal)).toBe(true);
    const names = () =>
      source.store
        .list("EdgeTenant")
        .map((o) => o.metadata.name)
        .sort();
    expect(names()).toEqual(["e1", "e2", "e3", "e4"]);

    // one file grows: the read of it alone is under the bound, the directory is over it
    writeFileSync(join(dir, "b.yaml"), edges(3, 3));
    await waitFor("the refusal logged", () => errors.length > 0, { timeoutMs: 5_000 });
    expect(errors.at(-1)).toContain(
      `${dir}: holds more than 4 YAML documents, the bound per read (--max-manifest-documents raises it)`,
    );
    expect(names(), "what was read is kept").toEqual(["e1", "e2", "e3", "e4"]);

    writeFileSync(join(dir, "a.yaml"), edges(1, 1));
    const back = ["e1", "e3", "e4", "e5"];
    await waitFor("the directory read again", () => names().join() === back.join(), { timeoutMs: 5_000 });
    expect(names(), "back under: read, the file that grew too").toEqual(back);
    stop.abort();
    await running;
  });
});
