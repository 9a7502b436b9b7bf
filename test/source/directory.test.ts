/**
 * The directory desired-state source (`run --manifests DIR`): generations that follow the spec,
 * the keys a change enqueues, the last good version of a broken file, removals only once their
 * absence has lasted the quiet period, watches, the bounds on what the directory holds, status
 * logged and kept in a status file across restarts, and the whole loop with the operator and the
 * simulator.
 */
import { KINDS } from "../../src/api/types.ts";
import { concernedBy } from "../../src/reconcile/routing.ts";
import type { DesiredStateChange } from "../../src/reconcile/store.ts";
import type { DesiredStateSource } from "../../src/source/source.ts";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ResourceValidator } from "../../src/api/schema.ts";
import type { IPPoolAllocations, NsxvObject } from "../../src/api/types.ts";
import type { Logger } from "../../src/controller/controller.ts";
import { DirectorySource, loggingEventRecorder } from "../../src/source/directory.ts";
import { createOperatorMetrics } from "../../src/operator/metrics.ts";
import { Operator } from "../../src/operator/operator.ts";
import { objectKey } from "../../src/api/refs.ts";
import type { ObjectRef } from "../../src/api/refs.ts";
import { startSimulator } from "../../src/simulator/index.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { advance, advanceUntil } from "../support/operator-time.ts";
import { waitFor } from "../support/wait.ts";

const QUIET_MS = 5_000;

interface Line {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

function recordingLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void =>
      void lines.push({ level, fields, message });
  return { logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") }, lines };
}

const MANAGER = (url: string, password = "default") => `
apiVersion: nsxv.io/v1alpha1
kind: NSXManager
metadata: { name: nsx }
spec: { url: "${url}", credentialsSecretRef: { name: creds } }
---
apiVersion: v1
kind: Secret
metadata: { name: creds }
stringData: { username: admin, password: ${password} }
`;

const EDGE = (name: string, tenant: string, extra = "") => `
apiVersion: nsxv.io/v1alpha1
kind: EdgeTenant
metadata: { name: ${name}${extra} }
spec: { managerRef: { name: nsx }, edgeId: edge-1, tenant: ${tenant} }
`;

const ref = (kind: ObjectRef["kind"], name: string): ObjectRef => ({ kind, namespace: "default", name });

/** The keys the operator queues for a change a source reports (routing.ts). */
function routed(source: DesiredStateSource, change: DesiredStateChange): string[] {
  const everything = () => KINDS.flatMap((kind) => source.store.list(kind));
  return concernedBy(change, everything).map(objectKey);
}

describe("DirectorySource", () => {
  let dir = "";
  const stops: AbortController[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "nsxv-dir-"));
  });
  afterEach(async () => {
    for (const s of stops.splice(0)) s.abort();
    await rm(dir, { recursive: true, force: true });
  });

  async function open(options: Partial<ConstructorParameters<typeof DirectorySource>[0]> = {}) {
    const { logger, lines } = recordingLogger();
    const source = new DirectorySource({
      dir: join(dir, "manifests"),
      rescanIntervalMs: 60_000,
      removalQuietMs: QUIET_MS,
      logger,
      ...options,
    });
    const enqueued: string[] = [];
    // what the operator queues for the changes the source reports (the queue holds a key once)
    source.subscribe((change) => {
      for (const key of routed(source, change)) if (!enqueued.includes(key)) enqueued.push(key);
    });
    const stop = new AbortController();
    stops.push(stop);
    const running = source.start(stop.signal);
    expect(source.notReady()).toMatch(/not read yet/);
    expect(await source.synced(stop.signal)).toBe(true);
    return { source, enqueued, lines, stop, running };
  }

  async function files(content: Record<string, string>): Promise<void> {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(join(dir, "manifests"), { recursive: true });
    for (const [name, text] of Object.entries(content)) await writeFile(join(dir, "manifests", name), text);
  }

  it("gives each object a generation that follows its spec, and enqueues what a change concerns", async () => {
    await files({
      "manager.yaml": MANAGER("https://nsx.example"),
      "edges.yaml": EDGE("web", "blue") + "---" + EDGE("app", "red"),
    });
    // the watches stay out of it: the reads are the test's own
    const clock = new FakeClock();
    const { source, enqueued } = await open({ debounceMs: 60_000, clock });
    expect(source.notReady()).toBeUndefined();
    expect(enqueued.sort(), "everything is new").toEqual([
      "EdgeTenant/default/app",
      "EdgeTenant/default/web",
      "NSXManager/default/nsx",
    ]);
    const web = (await source.store.get(ref("EdgeTenant", "web"))) as NsxvObject;
    expect(web.metadata.generation).toBe(1);
    expect(web.metadata.namespace).toBe("default");

    const cases: {
      name: string;
      reason: string;
      files: Record<string, string>;
      enqueued: string[];
      generations: Record<string, number | undefined>;
      /** a removal is acted on once the file has stayed unchanged for the quiet period (a file caught half-written is not a removal) */
      quiet?: true;
    }[] = [
      {
        name: "SpecChange",
        reason: "a new tenant is a new generation",
        files: { "edges.yaml": EDGE("web", "green") + "---" + EDGE("app", "red") },
        enqueued: ["EdgeTenant/default/web"],
        generations: { web: 2, app: 1 },
      },
      {
        name: "AnnotationOnly",
        reason: "pausing changes no spec, but is acted on",
        files: {
          "edges.yaml":
            EDGE("web", "green") + "---" + EDGE("app", "red", `, annotations: { nsxv.io/paused: "true" }`),
        },
        enqueued: ["EdgeTenant/default/app"],
        generations: { web: 2, app: 1 },
      },
      {
        name: "SecretChange",
        reason: "new credentials concern the manager and everything that uses it",
        files: { "manager.yaml": MANAGER("https://nsx.example", "rotated") },
        enqueued: ["EdgeTenant/default/app", "EdgeTenant/default/web", "NSXManager/default/nsx"],
        generations: { web: 2, app: 1 },
      },
      {
        name: "Removed",
        reason: "a removed object is reconciled once more (orphan: nothing is deleted on the manager)",
        files: { "edges.yaml": EDGE("web", "green") },
        enqueued: ["EdgeTenant/default/app"],
        generations: { web: 2, app: undefined },
        quiet: true,
      },
    ];
    for (const c of cases) {
      enqueued.length = 0;
      await files(c.files);
      await source.reload();
      if (c.quiet) {
        expect(enqueued, `${c.name}: one read does not remove`).toEqual([]);
        await clock.advance(QUIET_MS);
        await source.reload();
      }
      expect(enqueued.sort(), `${c.name}: ${c.reason}`).toEqual(c.enqueued);
      for (const [name, generation] of Object.entries(c.generations)) {
        const object = (await source.store.get(ref("EdgeTenant", name))) as NsxvObject | undefined;
        expect(object?.metadata.generation, `${c.name}: ${name}`).toBe(generation);
      }
    }
  });

  it("keeps its revision across status writes and moves it when the manifests are read again", async () => {
    await files({ "manager.yaml": MANAGER("https://nsx.example"), "edges.yaml": EDGE("web", "blue") });
    const { source } = await open();
    const revision = source.store.revision?.("EdgeTenant");
    expect(revision, "the source offers a revision").toBeTypeOf("number");
    expect(await source.writeStatus(ref("EdgeTenant", "web"), { observedGeneration: 1 })).toBe("written");
    expect(source.store.revision?.("EdgeTenant"), "a status write lists nothing anew").toBe(revision);
    await files({ "edges.yaml": EDGE("web", "green") });
    await source.reload();
    expect(source.store.revision?.("EdgeTenant"), "a read of the manifests does").not.toBe(revision);
  });

  it("keeps the last good version of a file that does not load, marks its objects uncertain, and clears that once it loads", async () => {
    await files({ "manager.yaml": MANAGER("https://nsx.example"), "edges.yaml": EDGE("web", "blue") });
    const { source, enqueued, lines } = await open();
    expect(source.store.writesBlockedBy?.(ref("EdgeTenant", "web"))).toBeUndefined();
    enqueued.length = 0;
    await files({ "edges.yaml": EDGE("web", "green") + "\n  bad: [indent\n" });
    await source.reload();
    // queued so that its status says at once why nothing is written for it
    expect(enqueued).toEqual(["EdgeTenant/default/web"]);
    const kept = (await source.store.get(ref("EdgeTenant", "web"))) as NsxvObject & {
      spec: { tenant: string };
    };
    expect(kept.spec.tenant).toBe("blue");
    const uncertain = source.store.writesBlockedBy?.(ref("EdgeTenant", "web"));
    expect(uncertain?.reason).toBe("SourceInvalid");
    expect(uncertain?.message).toContain(`${join(dir, "manifests", "edges.yaml")}:`);
    expect(
      source.store.writesBlockedBy?.(ref("NSXManager", "nsx")),
      "other files are certain",
    ).toBeUndefined();
    const error = lines.find((l) => l.level === "error");
    expect(error?.fields.file).toBe(join(dir, "manifests", "edges.yaml"));
    expect(error?.message).toMatch(/invalid YAML.*last good version/);

    enqueued.length = 0;
    await files({ "edges.yaml": EDGE("web", "green") });
    await source.reload();
    expect(enqueued).toEqual(["EdgeTenant/default/web"]);
    expect(source.store.writesBlockedBy?.(ref("EdgeTenant", "web"))).toBeUndefined();
  });

  it("reads files again when they change (fs.watch)", async () => {
    await files({ "manager.yaml": MANAGER("https://nsx.example"), "edges.yaml": EDGE("web", "blue") });
    const { enqueued } = await open({ debounceMs: 20 });
    enqueued.length = 0;
    await files({ "edges.yaml": EDGE("web", "yellow") });
    await waitFor("the change to be read", () => enqueued.length > 0);
    expect(enqueued).toEqual(["EdgeTenant/default/web"]);
  });

  it("reads only the file fs.watch names: others keep what was read, a deleted file takes its objects", async () => {
    await files({
      "manager.yaml": MANAGER("https://nsx.example"),
      "a.yaml": EDGE("web", "blue"),
      "b.yaml": EDGE("app", "red"),
    });
    // counts the objects validated, i.e. read from files
    const base = ResourceValidator.load();
    let validated = 0;
    const validator = Object.assign(Object.create(base) as ResourceValidator, {
      validate: (...args: Parameters<ResourceValidator["validate"]>) => {
        validated++;
        return base.validate(...args);
      },
    });
    const { source, enqueued } = await open({ debounceMs: 20, removalQuietMs: 100, validator });
    const tenantOf = async (name: string) =>
      ((await source.store.get(ref("EdgeTenant", name))) as { spec: { tenant: string } } | undefined)?.spec
        .tenant;
    const { writeFileSync, unlinkSync } = await import("node:fs");
    enqueued.length = 0;
    validated = 0;
    writeFileSync(join(dir, "manifests", "a.yaml"), EDGE("web", "yellow"));
    await waitFor("a.yaml read again", async () => (await tenantOf("web")) === "yellow");
    expect(await tenantOf("web"), "the named file is read again").toBe("yellow");
    expect(await tenantOf("app"), "the other file's object stays as read").toBe("red");
    expect(enqueued).toEqual(["EdgeTenant/default/web"]);
    expect(validated, "only a.yaml's one object was read again").toBe(1);

    enqueued.length = 0;
    unlinkSync(join(dir, "manifests", "b.yaml"));
    await waitFor("b.yaml's object gone", async () => (await tenantOf("app")) === undefined);
    expect(await tenantOf("app"), "a deleted file's objects are gone").toBeUndefined();
    expect(await tenantOf("web")).toBe("yellow");
    expect(enqueued, "a removed object is reconciled once more").toEqual(["EdgeTenant/default/app"]);
  });

  it("removes an object only once its file has stayed unchanged for the quiet period: a file being rewritten deletes nothing", async () => {
    await files({
      "manager.yaml": MANAGER("https://nsx.example"),
      "edges.yaml": EDGE("web", "blue") + "---" + EDGE("app", "red"),
    });
    const clock = new FakeClock();
    const { source, enqueued } = await open({ debounceMs: 60_000, clock });
    expect(await source.setFinalizer(ref("EdgeTenant", "app"), "nsxv.io/restore", true)).toBe("written");
    const deletionOfApp = async () =>
      ((await source.store.get(ref("EdgeTenant", "app"))) as NsxvObject | undefined)?.metadata
        .deletionTimestamp;
    enqueued.length = 0;
    // a writer truncated the file and has written the first document so far
    await files({ "edges.yaml": EDGE("web", "blue") });
    await source.reload();
    await clock.advance(QUIET_MS - 1);
    await source.reload();
    const app = (await source.store.get(ref("EdgeTenant", "app"))) as NsxvObject | undefined;
    expect(app?.metadata.deletionTimestamp, "not being deleted before the quiet period").toBeUndefined();
    expect(app?.metadata.generation).toBe(1);
    expect(enqueued).toEqual([]);
    // the writer finishes: found again, nothing moved
    await files({ "edges.yaml": EDGE("web", "blue") + "---" + EDGE("app", "red") });
    await source.reload();
    await clock.advance(QUIET_MS);
    await source.reload();
    expect(await deletionOfApp()).toBeUndefined();
    expect(enqueued, "nothing to reconcile").toEqual([]);

    // a slow writer: each change to the file starts the quiet period again
    await files({ "edges.yaml": "" });
    await source.reload();
    await clock.advance(QUIET_MS - 1_000);
    await files({ "edges.yaml": EDGE("web", "blue") });
    await source.reload();
    await clock.advance(2_000);
    await source.reload();
    expect(await deletionOfApp(), "the file changed 2 s ago").toBeUndefined();
    expect(enqueued).toEqual([]);

    // really removed: unchanged for the quiet period, and its finalizer makes it one being deleted
    await clock.advance(QUIET_MS - 2_000);
    await source.reload();
    expect(await deletionOfApp()).toBeTypeOf("string");
    expect(enqueued).toEqual(["EdgeTenant/default/app"]);
  });

  it("lets a missing object go by itself once the quiet period has passed, with one read of its file", async () => {
    await files({
      "manager.yaml": MANAGER("https://nsx.example"),
      "edges.yaml": EDGE("web", "blue") + "---" + EDGE("app", "red"),
    });
    const clock = new FakeClock();
    const base = ResourceValidator.load();
    const validated: string[] = [];
    const validator = Object.assign(Object.create(base) as ResourceValidator, {
      validate: (...args: Parameters<ResourceValidator["validate"]>) => {
        validated.push(args[0]);
        return base.validate(...args);
      },
    });
    const { source, enqueued } = await open({ clock, validator });
    enqueued.length = 0;
    await files({ "edges.yaml": EDGE("web", "blue") });
    await source.reload();
    validated.length = 0;
    // the watch's own read of edges.yaml, and the one that lets app go
    await clock.advance(QUIET_MS + 200);
    await waitFor("app let go", () => enqueued.length > 0, { timeoutMs: 5_000 });
    expect(enqueued).toEqual(["EdgeTenant/default/app"]);
    expect(await source.store.get(ref("EdgeTenant", "app"))).toBeUndefined();
    expect(validated.length, "edges.yaml was read again").toBeGreaterThan(0);
    expect(new Set(validated), "only edges.yaml: the manager's file was not read").toEqual(
      new Set(["EdgeTenant"]),
    );
  });

  it("after a restart, keeps what the status file remembers through a file caught empty, and lets it go once that lasts", async () => {
    const statusFile = join(dir, "state", "status.json");
    await files({ "manager.yaml": MANAGER("https://nsx.example"), "edges.yaml": EDGE("web", "blue") });
    const web = ref("EdgeTenant", "web");
    const status = { observedGeneration: 1, originalTenant: "legacy" };
    const first = await open({ statusFile });
    expect(await first.source.setFinalizer(web, "nsxv.io/restore-tenant", true)).toBe("written");
    expect(await first.source.writeStatus(web, status)).toBe("written");
    first.stop.abort();
    await first.running;

    // the operator starts while a generator has truncated the file
    await files({ "edges.yaml": "" });
    const clock = new FakeClock();
    const second = await open({ statusFile, clock });
    expect(
      await second.source.store.get(web),
      "not known yet: neither live nor being deleted",
    ).toBeUndefined();
    expect(second.enqueued).toEqual(["NSXManager/default/nsx"]);
    await files({ "edges.yaml": EDGE("web", "blue") });
    await clock.advance(QUIET_MS - 1_000);
    await second.source.reload();
    const back = (await second.source.store.get(web)) as NsxvObject;
    expect(back.metadata.deletionTimestamp).toBeUndefined();
    expect(back.metadata.finalizers, "its memory kept").toEqual(["nsxv.io/restore-tenant"]);
    expect(back.status).toEqual(status);
    second.stop.abort();
    await second.running;

    // removed while it was down: once the quiet period has passed, it is being deleted
    await files({ "edges.yaml": "" });
    const third = await open({ statusFile, clock });
    expect(await third.source.store.get(web)).toBeUndefined();
    third.enqueued.length = 0;
    await clock.advance(QUIET_MS + 200);
    await waitFor("web's deletion queued", () => third.enqueued.length > 0, { timeoutMs: 5_000 });
    expect(third.enqueued, "queued to act on its deletion").toContain("EdgeTenant/default/web");
    const going = (await third.source.store.get(web)) as NsxvObject;
    expect(going.metadata.deletionTimestamp).toBeTypeOf("string");
    expect(going.status).toEqual(status);
    third.stop.abort();
    await third.running;
  });

  it("after a restart, forgets an object without finalizers the files lost meanwhile, once that has lasted", async () => {
    const statusFile = join(dir, "state", "status.json");
    await files({ "manager.yaml": MANAGER("https://nsx.example"), "edges.yaml": EDGE("web", "blue") });
    const first = await open({ statusFile });
    expect(await first.source.writeStatus(ref("EdgeTenant", "web"), { observedGeneration: 1 })).toBe(
      "written",
    );
    first.stop.abort();
    await first.running;
    await files({ "edges.yaml": "" });
    const clock = new FakeClock();
    const second = await open({ statusFile, clock });
    const remembered = async () =>
      (JSON.parse(await readFile(statusFile, "utf8")) as { objects: Record<string, unknown> }).objects[
        "EdgeTenant/default/web"
      ];
    expect(await remembered(), "kept while not known to be gone").toBeDefined();
    second.enqueued.length = 0;
    await clock.advance(QUIET_MS + 200);
    await waitFor("web forgotten", async () => (await remembered()) === undefined, { timeoutMs: 5_000 });
    expect(second.enqueued, "nothing to reconcile: it never was live in this run").toEqual([]);
    second.stop.abort();
    await second.running;
  });

  it("writes the status file once per burst, with every status of the burst in it", async () => {
    const statusFile = join(dir, "state", "status.json");
    const edges = Array.from({ length: 50 }, (_, i) => EDGE(`e${i}`, "blue")).join("---");
    await files({ "manager.yaml": MANAGER("https://nsx.example"), "edges.yaml": edges });
    const { source } = await open({ statusFile });
    const writes = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        source.writeStatus(ref("EdgeTenant", `e${i}`), { observedGeneration: 1, observedTenant: `t${i}` }),
      ),
    );
    expect(writes.every((w) => w === "written")).toBe(true);
    const saved = JSON.parse(await readFile(statusFile, "utf8")) as {
      objects: Record<string, { status?: { observedTenant?: string } }>;
    };
    for (let i = 0; i < 50; i++)
      expect(saved.objects[`EdgeTenant/default/e${i}`]?.status?.observedTenant, `e${i}`).toBe(`t${i}`);
  });

  it("keeps status, with generations, in the status file across restarts, and logs it at debug", async () => {
    const statusFile = join(dir, "state", "status.json");
    await files({ "manager.yaml": MANAGER("https://nsx.example"), "edges.yaml": EDGE("web", "blue") });
    const first = await open({ statusFile });
    await files({ "edges.yaml": EDGE("web", "green") });
    await first.source.reload();
    const ready = {
      type: "Ready",
      status: "True",
      reason: "InSync",
      message: "m",
      lastTransitionTime: "t",
    } as const;
    const status = { observedGeneration: 2, observedTenant: "green", conditions: [ready] };
    expect(await first.source.writeStatus(ref("EdgeTenant", "web"), status)).toBe("written");
    expect(await first.source.writeStatus(ref("EdgeTenant", "gone"), status)).toBe("gone");
    // the operator logs the change in one line; the source logs the whole status at debug
    expect(first.lines.find((l) => l.message === "status")).toMatchObject({
      level: "debug",
      fields: { status },
    });
    first.stop.abort();
    await first.running;
    const saved = JSON.parse(await readFile(statusFile, "utf8")) as { objects: Record<string, unknown> };
    expect(saved.objects["EdgeTenant/default/web"]).toMatchObject({ generation: 2, status });

    const second = await open({ statusFile });
    const web = (await second.source.store.get(ref("EdgeTenant", "web"))) as NsxvObject;
    expect(web.metadata.generation).toBe(2);
    expect(web.status).toEqual(status);
  });

  it("keeps an object removed from the files while it holds a finalizer, as being deleted, across restarts, until the finalizer goes", async () => {
    const statusFile = join(dir, "state", "status.json");
    await files({ "manager.yaml": MANAGER("https://nsx.example"), "edges.yaml": EDGE("web", "blue") });
    const clock = new FakeClock();
    const first = await open({ statusFile, clock });
    const web = ref("EdgeTenant", "web");
    expect(await first.source.setFinalizer(web, "nsxv.io/restore-tenant", true)).toBe("written");
    expect((await first.source.store.get(web))?.metadata.finalizers).toEqual(["nsxv.io/restore-tenant"]);
    first.enqueued.length = 0;
    await files({ "edges.yaml": "" });
    await first.source.reload();
    await clock.advance(QUIET_MS);
    await first.source.reload();
    expect(first.enqueued, "queued to act on its deletion").toContain("EdgeTenant/default/web");
    const going = (await first.source.store.get(web)) as NsxvObject;
    expect(going.metadata.deletionTimestamp).toBeTypeOf("string");
    expect(going.metadata.finalizers).toEqual(["nsxv.io/restore-tenant"]);
    expect((going as { spec: { tenant: string } }).spec.tenant, "the last spec it had").toBe("blue");
    expect((await first.source.store.list("EdgeTenant")).map((o) => o.metadata.name)).toEqual(["web"]);
    first.stop.abort();
    await first.running;

    const second = await open({ statusFile });
    const still = (await second.source.store.get(web)) as NsxvObject;
    expect(still.metadata.deletionTimestamp, "a restart keeps it being deleted").toBe(
      going.metadata.deletionTimestamp,
    );
    expect(await second.source.setFinalizer(web, "nsxv.io/restore-tenant", false)).toBe("written");
    expect(await second.source.store.get(web), "the last finalizer gone: the object is gone").toBeUndefined();
    second.stop.abort();
    await second.running;
    const saved = JSON.parse(await readFile(statusFile, "utf8")) as { objects: Record<string, unknown> };
    expect(saved.objects["EdgeTenant/default/web"]).toBeUndefined();
  });

  it("forgets an object removed from the files that holds no finalizer", async () => {
    await files({ "manager.yaml": MANAGER("https://nsx.example"), "edges.yaml": EDGE("web", "blue") });
    const clock = new FakeClock();
    const { source } = await open({ clock });
    await files({ "edges.yaml": "" });
    await source.reload();
    await clock.advance(QUIET_MS);
    await source.reload();
    expect(await source.store.get(ref("EdgeTenant", "web"))).toBeUndefined();
  });

  it("logs events, naming the object", () => {
    const { logger, lines } = recordingLogger();
    const events = loggingEventRecorder(logger);
    const object = { kind: "EdgeTenant", metadata: { name: "web", namespace: "default" } };
    events.normal(object, "UpdatedEdgeTenant", "tenant of edge-1 changed");
    events.warning(object, "ManagerNotReady", "no Secret");
    expect(lines.map((l) => [l.level, l.fields.kind, l.fields.name, l.fields.reason, l.message])).toEqual([
      ["info", "EdgeTenant", "web", "UpdatedEdgeTenant", "tenant of edge-1 changed"],
      ["warn", "EdgeTenant", "web", "ManagerNotReady", "no Secret"],
    ]);
  });

  it("runs the operator without a cluster; a restart in a grace period keeps firstSeen", async () => {
    // on a fake clock, which the simulator's records follow: the grace period passes without waiting
    const clock = new FakeClock();
    const sim = await startSimulator({
      state: {
        pools: [
          {
            id: "ipaddresspool-1",
            name: "apps",
            ranges: [{ start: "10.0.0.1", end: "10.0.0.9" }],
            allocations: [{ ip: "10.0.0.1" }, { ip: "10.0.0.5", note: "stray" }],
          },
        ],
      },
      nowMs: () => clock.now(),
    });
    try {
      const pool = `
apiVersion: nsxv.io/v1alpha1
kind: IPPoolAllocations
metadata: { name: apps }
spec: { managerRef: { name: nsx }, pool: { id: ipaddresspool-1 }, allowed: [10.0.0.1], release: { minStrayAge: 3s } }
`;
      await files({ "manager.yaml": MANAGER(sim.url), "pool.yaml": pool });
      const statusFile = join(dir, "status.json");
      const runOnce = () => {
        const { logger } = recordingLogger();
        const source = new DirectorySource({ dir: join(dir, "manifests"), statusFile, logger, clock });
        const metrics = createOperatorMetrics({ processMetrics: false });
        const operator = new Operator({
          source,
          clock,
          metrics,
          metricsBindAddress: "0",
          healthProbeBindAddress: "0",
          logger,
        });
        const stop = new AbortController();
        const until = <T>(what: string, check: () => T | undefined | false) =>
          advanceUntil(what, clock, metrics.registry, check, { stepMs: 100, limitMs: 10_000 });
        return { source, stop, exit: operator.start(stop.signal), registry: metrics.registry, until };
      };
      const poolStatus = (source: DirectorySource) =>
        (source.store.get(ref("IPPoolAllocations", "apps")) as IPPoolAllocations | undefined)?.status;

      const first = runOnce();
      const firstSeen = await first.until(
        "the stray seen",
        () => poolStatus(first.source)?.stray?.[0]?.firstSeen,
      );
      await advance(clock, first.registry, 1_000, 100);
      first.stop.abort();
      expect(await first.exit).toBe("stopped");

      const restartedMs = clock.now();
      const second = runOnce();
      stops.push(second.stop);
      const released = await second.until("the stray released", () => {
        const releases = sim.state.audit.snapshot().releases;
        return releases.length > 0 && releases;
      });
      expect(released.map((r) => r.ip)).toEqual(["10.0.0.5"]);
      const releasedMs = Date.parse(released[0]!.time);
      expect(releasedMs).toBeGreaterThanOrEqual(Date.parse(firstSeen) + 3_000);
      expect(releasedMs, "not a grace period started over").toBeLessThan(restartedMs + 3_000 - 300);
      second.stop.abort();
      expect(await second.exit).toBe("stopped");
    } finally {
      await sim.close();
    }
  });
});
