/**
 * Every way of writing a file is seen at once by `run --manifests` (issue 28), on the real file
 * system: a rename over a file and its removal after, rm, create, a move in and out, a directory
 * created or moved away, the root directory swapped, and a ConfigMap volume's update (its
 * `..data` symlink moved to a new timestamped directory). The periodic rescan is a minute away
 * in every case, so what is seen is what the watches saw; removals wait for no quiet period here.
 * How soon each is seen is measured in bench/ (manifest-source), not here.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NsxvObject } from "../../src/api/types.ts";
import { nopLogger } from "../../src/controller/controller.ts";
import { DirectorySource } from "../../src/source/directory.ts";
import { waitFor } from "../support/wait.ts";

const EDGE = (name: string, tenant: string) => `apiVersion: nsxv.io/v1alpha1
kind: EdgeTenant
metadata: { name: ${name} }
spec: { managerRef: { name: nsx }, edgeId: edge-1, tenant: ${tenant} }
`;

interface Layout {
  /** files under the root (path → text); a value { link } is a symlink */
  files: Record<string, string | { link: string }>;
}

interface Case {
  name: string;
  reason: string;
  before: Layout;
  /** what a tool does, given the test's root (the manifests are in `root/m`) */
  act: (root: string) => void | Promise<void>;
  /** tenant of each object after, undefined: gone */
  after: Record<string, string | undefined>;
  /** act as soon as the first read is done (otherwise a moment later, once any watch would be running) */
  atOnce?: true;
}

const m = (root: string, ...path: string[]) => join(root, "m", ...path);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** what a ConfigMap volume looks like: each key a symlink through ..data to a timestamped directory */
const configMapVolume = (text: string): Layout => ({
  files: {
    "..2026_01_01_00_00_00.1/edges.yaml": text,
    "..data": { link: "..2026_01_01_00_00_00.1" },
    "edges.yaml": { link: "..data/edges.yaml" },
  },
});

/** kubelet's atomic writer: the new version in a new directory, ..data moved over to it, the old one removed */
function configMapUpdate(root: string, files: Record<string, string>): void {
  const fresh = "..2026_01_01_00_00_00.2";
  mkdirSync(m(root, fresh));
  for (const [name, text] of Object.entries(files)) writeFileSync(m(root, fresh, name), text);
  symlinkSync(fresh, m(root, "..data_tmp"));
  renameSync(m(root, "..data_tmp"), m(root, "..data"));
  rmSync(m(root, "..2026_01_01_00_00_00.1"), { recursive: true });
}

const cases: Case[] = [
  {
    name: "RenameOverThenRemove",
    reason: "sed -i, vim, git checkout: a new file renamed over the old, which is removed later",
    before: { files: { "web.yaml": EDGE("web", "blue"), "app.yaml": EDGE("app", "red") } },
    act: async (root) => {
      writeFileSync(m(root, ".web.yaml.swp"), EDGE("web", "blue"));
      renameSync(m(root, ".web.yaml.swp"), m(root, "web.yaml"));
      // the rename is read before the removal
      await sleep(400);
      unlinkSync(m(root, "web.yaml"));
    },
    after: { web: undefined, app: "red" },
  },
  {
    name: "RenameOverChanged",
    reason: "an editor's save with a new tenant",
    before: { files: { "web.yaml": EDGE("web", "blue") } },
    act: (root) => {
      writeFileSync(m(root, "web.yaml.tmp"), EDGE("web", "green"));
      renameSync(m(root, "web.yaml.tmp"), m(root, "web.yaml"));
    },
    after: { web: "green" },
  },
  {
    name: "ChangedAsItStarts",
    reason: "a change made as the first read ends is seen (the watches run before the first read)",
    before: { files: { "web.yaml": EDGE("web", "blue") } },
    act: (root) => writeFileSync(m(root, "web.yaml"), EDGE("web", "green")),
    after: { web: "green" },
    atOnce: true,
  },
  {
    name: "Remove",
    reason: "rm",
    before: { files: { "web.yaml": EDGE("web", "blue"), "app.yaml": EDGE("app", "red") } },
    act: (root) => unlinkSync(m(root, "web.yaml")),
    after: { web: undefined, app: "red" },
  },
  {
    name: "Create",
    reason: "a new file",
    before: { files: { "app.yaml": EDGE("app", "red") } },
    act: (root) => writeFileSync(m(root, "web.yaml"), EDGE("web", "blue")),
    after: { web: "blue", app: "red" },
  },
  {
    name: "MoveIn",
    reason: "mv from elsewhere into the directory",
    before: { files: { "app.yaml": EDGE("app", "red") } },
    act: (root) => {
      writeFileSync(join(root, "web.yaml"), EDGE("web", "blue"));
      renameSync(join(root, "web.yaml"), m(root, "web.yaml"));
    },
    after: { web: "blue", app: "red" },
  },
  {
    name: "MoveOut",
    reason: "mv out of the directory",
    before: { files: { "web.yaml": EDGE("web", "blue"), "app.yaml": EDGE("app", "red") } },
    act: (root) => renameSync(m(root, "web.yaml"), join(root, "web.yaml")),
    after: { web: undefined, app: "red" },
  },
  {
    name: "SubdirectoryCreated",
    reason: "mkdir, then a file in it: the new directory is watched too",
    before: { files: { "app.yaml": EDGE("app", "red") } },
    act: async (root) => {
      mkdirSync(m(root, "team"));
      await sleep(300);
      writeFileSync(m(root, "team", "web.yaml"), EDGE("web", "blue"));
    },
    after: { web: "blue", app: "red" },
  },
  {
    name: "SubdirectoryRenameOverThenRemove",
    reason: "a rename over a file in a subdirectory, then its removal",
    before: { files: { "team/web.yaml": EDGE("web", "blue"), "app.yaml": EDGE("app", "red") } },
    act: async (root) => {
      writeFileSync(m(root, "team", "web.new"), EDGE("web", "blue"));
      renameSync(m(root, "team", "web.new"), m(root, "team", "web.yaml"));
      await sleep(400);
      unlinkSync(m(root, "team", "web.yaml"));
    },
    after: { web: undefined, app: "red" },
  },
  {
    name: "SubdirectoryMovedOut",
    reason: "a directory moved away takes its files' objects",
    before: { files: { "team/web.yaml": EDGE("web", "blue"), "app.yaml": EDGE("app", "red") } },
    act: (root) => renameSync(m(root, "team"), join(root, "team")),
    after: { web: undefined, app: "red" },
  },
  {
    name: "RootSwapped",
    reason: "the whole directory built anew and renamed into place",
    before: { files: { "web.yaml": EDGE("web", "blue") } },
    act: (root) => {
      mkdirSync(join(root, "m.new"));
      writeFileSync(join(root, "m.new", "web.yaml"), EDGE("web", "green"));
      renameSync(m(root), join(root, "m.old"));
      renameSync(join(root, "m.new"), m(root));
    },
    after: { web: "green" },
  },
  {
    name: "RootSwappedThenEdited",
    reason: "after a swap, the new directory is the one watched",
    before: { files: { "web.yaml": EDGE("web", "blue") } },
    act: async (root) => {
      mkdirSync(join(root, "m.new"));
      writeFileSync(join(root, "m.new", "web.yaml"), EDGE("web", "green"));
      renameSync(m(root), join(root, "m.old"));
      renameSync(join(root, "m.new"), m(root));
      await sleep(400);
      writeFileSync(m(root, "web.yaml"), EDGE("web", "yellow"));
    },
    after: { web: "yellow" },
  },
  {
    name: "ConfigMapUpdate",
    reason: "a ConfigMap volume's update: ..data swapped to a new timestamped directory",
    before: configMapVolume(EDGE("web", "blue")),
    act: (root) => configMapUpdate(root, { "edges.yaml": EDGE("web", "green") }),
    after: { web: "green" },
  },
  {
    name: "ConfigMapKeyRemoved",
    reason: "a key gone from the ConfigMap: its symlink dangles, then kubelet removes it",
    before: configMapVolume(EDGE("web", "blue")),
    act: (root) => {
      configMapUpdate(root, {});
      unlinkSync(m(root, "edges.yaml"));
    },
    after: { web: undefined },
  },
];

describe("watching the manifests of run --manifests", () => {
  let root = "";
  const stops: AbortController[] = [];

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "nsxv-watch-"));
  });
  afterEach(() => {
    for (const stop of stops.splice(0)) stop.abort();
    rmSync(root, { recursive: true, force: true });
  });

  it.each(cases)("$name: $reason", async (c) => {
    for (const [path, content] of Object.entries(c.before.files)) {
      mkdirSync(dirname(m(root, path)), { recursive: true });
      if (typeof content === "string") writeFileSync(m(root, path), content);
      else symlinkSync(content.link, m(root, path));
    }
    const source = new DirectorySource({
      dir: m(root),
      rescanIntervalMs: 60_000,
      debounceMs: 50,
      removalQuietMs: 0,
      logger: nopLogger,
    });
    const stop = new AbortController();
    stops.push(stop);
    const running = source.start(stop.signal);
    expect(await source.synced(stop.signal)).toBe(true);
    if (c.atOnce !== true) await sleep(300);
    const tenants = () =>
      Object.fromEntries(
        Object.keys(c.after).map((name) => {
          const object = source.store.get({ kind: "EdgeTenant", namespace: "default", name }) as
            (NsxvObject & { spec: { tenant: string } }) | undefined;
          return [name, object?.spec.tenant];
        }),
      );
    await c.act(root);
    const seen = () => JSON.stringify(tenants()) === JSON.stringify(c.after);
    await waitFor("the change seen", seen, { timeoutMs: 5_000 }).catch(() => undefined);
    expect(tenants(), "seen well before the rescan").toEqual(c.after);
    stop.abort();
    await running;
  });
});
