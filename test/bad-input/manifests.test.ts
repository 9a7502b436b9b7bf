/**
 * Manifests that are wrong, or odd but right: addresses in odd forms in spec.allowed (IPv4-mapped
 * IPv6, leading zeros, zone ids, white space, upper case), an empty list and lists at and over the
 * CRD's maxItems. A wrong one gets a clear error naming the file, the object and the field, from
 * the manifest loader and from the reconciler (for an object that skipped validation), and no
 * call reaches the manager; an odd but right one is compared by value.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { loadManifests } from "../../src/api/manifests.ts";
import type { IPPoolAllocations, NsxvObject, Secret } from "../../src/api/types.ts";
import { ManagerClient } from "../../src/nsx/client.ts";
import { ManagerConnections } from "../../src/reconcile/connections.ts";
import { createReconciler } from "../../src/reconcile/reconciler.ts";
import { memoryStore } from "../../src/reconcile/store.ts";
import { refOf } from "../../src/api/refs.ts";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { assertNoWrites } from "../faults/invariants.ts";
import { callsByRoute } from "../support/calls.ts";
import { KEPT, rigManifests, rigState, STRAYS } from "../faults/rig.ts";

interface EntryCase {
  name: string;
  reason: string;
  entry: unknown;
  /** the detail of the error on spec.allowed[1]; undefined: accepted */
  error?: string;
}

const ENTRIES: EntryCase[] = [
  {
    name: "IPv4-mapped IPv6",
    reason: "an IPv4 pool's addresses are written as IPv4; the mapped form would never match",
    entry: "::ffff:10.0.0.1",
    error: "is an IPv4-mapped IPv6 address: write the IPv4 address instead",
  },
  {
    name: "leading zeros",
    reason: "010 is octal to some parsers and decimal to others",
    entry: "010.0.0.1",
    error: "is not an IP address, a range a-b or a CIDR a/n",
  },
  {
    name: "zone id",
    reason: "a zone means nothing off the host",
    entry: "fe80::1%eth0",
    error: "has a zone id",
  },
  {
    name: "trailing space",
    reason: "white space is refused rather than trimmed",
    entry: "10.0.0.1 ",
    error: "contains white space",
  },
  {
    name: "spaces around a range's dash",
    reason: "ranges are written without spaces",
    entry: "10.0.0.1 - 10.0.0.5",
    error: "contains white space",
  },
  {
    name: "reversed range",
    reason: "a range whose start is above its end holds nothing: a typo",
    entry: "10.0.0.5-10.0.0.1",
    error: "start is above its end",
  },
  {
    name: "prefix too long",
    reason: "/33 does not exist for IPv4",
    entry: "10.0.0.0/33",
    error: 'has prefix length "33"',
  },
  {
    name: "mixed-family range",
    reason: "both ends of a range are of one family",
    entry: "2001:db8::1-10.0.0.1",
    error: "mixes IPv4 and IPv6",
  },
  { name: "empty string", reason: "an entry must say something", entry: "", error: "is not an IP address" },
  { name: "a number", reason: "entries are strings", entry: 5, error: "must be of type string" },
  { name: "upper-case IPv6", reason: "hex digits may be upper case, as in Go's netip", entry: "2001:DB8::1" },
  { name: "IPv6 written in full", reason: "any valid text form is accepted", entry: "2001:0db8:0:0:0:0:0:1" },
  {
    name: "CIDR with host bits",
    reason: "10.0.0.7/24 means 10.0.0.0/24, as CEL isCIDR accepts it",
    entry: "10.0.0.7/24",
  },
];

function poolObject(name: string, allowed: unknown[], extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "IPPoolAllocations",
    metadata: { name },
    spec: {
      managerRef: { name: "nsx" },
      pool: { id: "ipaddresspool-1" },
      allowed,
      release: { minStrayAge: "0s" },
      ...extra,
    },
  };
}

const dirs: string[] = [];
let sim: RunningSimulator | undefined;
let connections: ManagerConnections | undefined;
afterEach(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await connections?.close();
  await sim?.close();
  sim = undefined;
  connections = undefined;
});

function writeDir(documents: readonly object[]): string {
  const dir = mkdtempSync(join(tmpdir(), "nsxv-bad-input-"));
  dirs.push(dir);
  writeFileSync(join(dir, "objects.yaml"), documents.map((d) => stringify(d)).join("---\n"));
  return dir;
}

/** One reconcile pass of `object` (validated or not) against a fresh simulator (the rig's state by default). */
async function reconcileAgainstSimulator(object: IPPoolAllocations, state = rigState()) {
  sim = await startSimulator({ state });
  const documents = rigManifests(sim.url) as unknown as (NsxvObject | Secret)[];
  const store = memoryStore({
    objects: [...documents.filter((d): d is NsxvObject => d.kind === "NSXManager"), object],
    secrets: documents.filter((d): d is Secret => d.kind === "Secret"),
  });
  connections = new ManagerConnections({
    createClient: (options) => new ManagerClient({ ...options, maxRetries: 0 }),
  });
  const reconcile = createReconciler({ store, connections });
  return { sim, report: await reconcile(refOf(object)) };
}

describe("odd addresses in spec.allowed", () => {
  it.each(ENTRIES)("manifest loader: $name", async ({ entry, error, reason }) => {
    const dir = writeDir([poolObject("pool-1", ["10.0.0.1", entry])]);
    const set = await loadManifests([dir]);
    if (error === undefined) {
      expect(
        set.errors.map((e) => e.message),
        reason,
      ).toEqual([]);
      expect(set.objects).toHaveLength(1);
      return;
    }
    expect(set.objects, `${reason}: the object is not loaded`).toEqual([]);
    expect(set.errors).toHaveLength(1);
    const [problem] = set.errors;
    expect(problem?.field, reason).toBe("spec.allowed[1]");
    expect(problem?.message).toContain("objects.yaml");
    expect(problem?.message).toContain("IPPoolAllocations default/pool-1");
    expect(problem?.message).toContain(error);
  });

  const refused = ENTRIES.filter((c) => c.error !== undefined && typeof c.entry === "string");
  it.each(refused)("reconciler, for an object that skipped validation: $name", async ({ entry, reason }) => {
    const object = poolObject("pool-1", ["10.0.0.1", entry]) as IPPoolAllocations;
    const { sim, report } = await reconcileAgainstSimulator(object);
    expect(report.outcome, reason).toMatchObject({
      type: "failed",
      error: { terminal: true, reason: "InvalidSpec" },
    });
    const synced = report.status?.conditions?.find((c) => c.type === "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "InvalidSpec" });
    expect(synced?.message).toContain(`spec.allowed[1]: ${JSON.stringify(entry)}`);
    expect(report.status?.conditions?.find((c) => c.type === "Stalled")?.status, "a person must act").toBe(
      "True",
    );
    expect(callsByRoute(sim), "no call reached the manager").toEqual({});
  });

  it("compares upper-case and full IPv6 forms by value: nothing allowed is released", async () => {
    const state = rigState();
    state.pools = [
      {
        id: "ipaddresspool-1",
        name: "v6",
        ranges: [{ start: "2001:db8::1", end: "2001:db8::ff" }],
        allocations: ["2001:db8::1", "2001:db8::2", "2001:db8::a"].map((ip) => ({ ip, note: ip })),
      },
    ];
    const object = poolObject("pool-1", ["2001:DB8::1", "2001:0db8:0:0:0:0:0:2"]) as IPPoolAllocations;
    const { sim, report } = await reconcileAgainstSimulator(object, state);
    expect(report.outcome.type).toBe("done");
    expect(sim.state.audit.snapshot().releases.map((r) => r.ip)).toEqual(["2001:db8::a"]);
  });
});

describe("empty and enormous allowed lists", () => {
  it("an empty list makes every allocation a stray; none is released within the grace period", async () => {
    const object = poolObject("pool-1", [], { release: { minStrayAge: "5m" } }) as IPPoolAllocations;
    const { sim, report } = await reconcileAgainstSimulator(object);
    expect(report.outcome.type).toBe("done");
    const status = report.status as IPPoolAllocations["status"];
    expect(status?.stray?.map((s) => s.ip).sort()).toEqual([...KEPT, ...STRAYS].sort());
    expect(status?.missing).toBe(0);
    expect(status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "ReleasesPending",
    });
    assertNoWrites(sim);
  });

  const entries = (n: number) => Array.from({ length: n }, (_, i) => `10.0.${i >> 8}.${i & 0xff}`);

  it("5000 entries (the most the CRD admits) load, validate and reconcile quickly, and keep every allocation they allow", async () => {
    const dir = writeDir([poolObject("pool-1", entries(5_000))]);
    const loadStarted = performance.now();
    const set = await loadManifests([dir]);
    const loadMs = performance.now() - loadStarted;
    expect(set.errors).toEqual([]);
    expect(loadMs, "manifest loading").toBeLessThan(5_000);
    const object = set.objects[0]?.object as IPPoolAllocations;
    const passStarted = performance.now();
    const { sim, report } = await reconcileAgainstSimulator(object);
    expect(performance.now() - passStarted, "one reconcile pass").toBeLessThan(2_000);
    expect(report.outcome.type).toBe("done");
    expect(report.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "InSync",
    });
    // 10.0.0.1-10.0.0.50 are all allowed; 8 of them are allocated
    expect((report.status as IPPoolAllocations["status"])?.missing).toBe(50 - KEPT.length - STRAYS.length);
    assertNoWrites(sim);
  });

  it("5001 entries are refused with the CRD's limit, naming the field", async () => {
    const dir = writeDir([poolObject("pool-1", entries(5_001))]);
    const set = await loadManifests([dir]);
    expect(set.objects).toEqual([]);
    expect(set.errors).toHaveLength(1);
    expect(set.errors[0]?.field).toBe("spec.allowed");
    expect(set.errors[0]?.message).toContain(
      "IPPoolAllocations default/pool-1: spec.allowed: Too many: 5001",
    );
    expect(set.errors[0]?.message).toContain("must have at most 5000 items");
  });
});
