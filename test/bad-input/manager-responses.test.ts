/**
 * Manager answers that are wrong, through the real client and reconciler: a proxy in front of the
 * simulator rewrites the bodies (huge documents, DOCTYPEs and entities, wrong types, duplicated
 * elements, addresses in odd forms). Each gets a clear error naming the document and the field,
 * no crash, and nothing is written (the simulator counts every PUT and DELETE that reaches it);
 * an address the manager writes oddly is compared by value and never released unless it parses.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { IPPoolAllocations, NsxvObject, Secret } from "../../src/api/types.ts";
import { ManagerClient, type ManagerClientOptions } from "../../src/nsx/client.ts";
import { ManagerConnections } from "../../src/reconcile/connections.ts";
import { createReconciler } from "../../src/reconcile/reconciler.ts";
import type { ReconcileReport } from "../../src/reconcile/report.ts";
import { memoryStore } from "../../src/reconcile/store.ts";
import { refOf } from "../../src/api/refs.ts";
import { generateEdgeXml, startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { assertNoAllowedReleased, assertNoWrites } from "../faults/invariants.ts";
import { callsByRoute } from "../support/calls.ts";
import { startRewritingProxy, type Rewrite, type RewritingProxy } from "../faults/rewriting-proxy.ts";
import { ALLOWED, rigManifests, rigState, STRAYS } from "../faults/rig.ts";

const V6_POOL = "ipaddresspool-2";
const V6_ALLOWED = ["2001:db8::1-2001:db8::4"];
const V6_KEPT = ["2001:db8::1", "2001:db8::2", "2001:db8::3", "2001:db8::4"];
const V6_STRAYS = ["2001:db8::a", "2001:db8::b"];

const EDGE = /^\/api\/4\.0\/edges\/edge-1$/;
const POOLS = /^\/api\/2\.0\/services\/ipam\/pools\/scope\/globalroot-0$/;
const ALLOCATIONS = /^\/api\/2\.0\/services\/ipam\/pools\/ipaddresspool-1\/ipaddresses$/;
const V6_ALLOCATIONS = /^\/api\/2\.0\/services\/ipam\/pools\/ipaddresspool-2\/ipaddresses$/;

type Target = "EdgeTenant" | "IPPoolAllocations" | "V6Pool";

interface ResponseCase {
  name: string;
  reason: string;
  target: Target;
  rewrites: Rewrite[];
  client?: Partial<ManagerClientOptions>;
  /** replaces the simulator's edge-1 */
  edgeXml?: string;
  /** the pass fails with Synced=False whose message has these parts, and nothing is written */
  error?: string[];
  /** the pass succeeds and releases exactly these (canonical), nothing else */
  released?: string[];
}

/** replaces `from` by `to` in the body, failing loudly when `from` is not there */
function replace(from: string, to: string): (text: string) => string {
  return (text) => {
    if (!text.includes(from)) throw new Error(`rewrite: ${from} not in the answer`);
    return text.replace(from, to);
  };
}

const address = (from: string, to: string) =>
  replace(`<ipAddress>${from}</ipAddress>`, `<ipAddress>${to}</ipAddress>`);
const afterDeclaration = (insert: string) => (text: string) =>
  text.replace(/^(<\?xml[^>]*\?>)?/, `$1${insert}`);
const LAUGHS = `<!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from(
  { length: 9 },
  (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? "" : i};`.repeat(10)}">`,
).join("")}]>`;

const CASES: ResponseCase[] = [
  {
    name: "edge larger than maxResponseBytes, with Content-Length",
    reason: "a declared length over the cap is refused before the body is read",
    target: "EdgeTenant",
    edgeXml: generateEdgeXml({ edgeNumber: 1, tenant: "default", targetBytes: 256 * 1024 }),
    client: { maxResponseBytes: 64 * 1024 },
    rewrites: [],
    error: ["GET /api/4.0/edges/edge-1: response larger than maxResponseBytes (65536 bytes)"],
  },
  {
    name: "edge larger than maxResponseBytes, streamed without Content-Length",
    reason: "the cap holds on the bytes read too, when no length is declared",
    target: "EdgeTenant",
    edgeXml: generateEdgeXml({ edgeNumber: 1, tenant: "default", targetBytes: 256 * 1024 }),
    client: { maxResponseBytes: 64 * 1024 },
    rewrites: [{ method: "GET", path: EDGE, body: (t) => t, chunked: true }],
    error: ["GET /api/4.0/edges/edge-1: response larger than maxResponseBytes (65536 bytes)"],
  },
  {
    name: "DOCTYPE with an internal entity in the edge",
    reason: "a DTD could redefine what the operator reads; it is refused, never expanded nor written back",
    target: "EdgeTenant",
    rewrites: [
      {
        method: "GET",
        path: EDGE,
        body: (t) =>
          afterDeclaration(`<!DOCTYPE edge [<!ENTITY t "blue">]>`)(
            replace("<tenant>default</tenant>", "<tenant>&t;</tenant>")(t),
          ),
      },
    ],
    error: ["edge document: DOCTYPE declarations are refused"],
  },
  {
    name: "entity reference without a DTD in the edge",
    reason: "only the five predefined entities exist without a DTD",
    target: "EdgeTenant",
    rewrites: [
      { method: "GET", path: EDGE, body: replace("<tenant>default</tenant>", "<tenant>&nbsp;</tenant>") },
    ],
    error: ["edge document: not well-formed XML", "undefined entity reference &nbsp;"],
  },
  {
    name: "external entity (XXE) in an allocation list",
    reason: "SYSTEM entities would read local files: refused before any parsing",
    target: "IPPoolAllocations",
    rewrites: [
      {
        method: "GET",
        path: ALLOCATIONS,
        body: afterDeclaration(`<!DOCTYPE a [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>`),
      },
    ],
    error: ["allocation list: DOCTYPE declarations are refused"],
  },
  {
    name: "billion laughs in a pool list",
    reason: "nested entities are refused at the DOCTYPE, so nothing expands",
    target: "IPPoolAllocations",
    rewrites: [{ method: "GET", path: POOLS, body: afterDeclaration(LAUGHS) }],
    error: ["pool list: DOCTYPE declarations are refused"],
  },
  {
    name: "totalAddressCount that is not a number",
    reason: "a count the operator decides on is checked, never guessed",
    target: "IPPoolAllocations",
    rewrites: [
      {
        method: "GET",
        path: POOLS,
        body: (t) => t.replace(/<totalAddressCount>\d+</, "<totalAddressCount>lots<"),
      },
    ],
    error: ['pool list: pool "ipaddresspool-1": totalAddressCount is not a number: "lots"'],
  },
  {
    name: "negative usedAddressCount",
    reason: "counts are non-negative integers",
    target: "IPPoolAllocations",
    rewrites: [
      {
        method: "GET",
        path: POOLS,
        body: (t) => t.replace(/<usedAddressCount>\d+</, "<usedAddressCount>-1<"),
      },
    ],
    error: ['pool list: pool "ipaddresspool-1": usedAddressCount is not a number: "-1"'],
  },
  {
    name: "pool without objectId",
    reason: "a pool that cannot be named cannot be selected",
    target: "IPPoolAllocations",
    rewrites: [{ method: "GET", path: POOLS, body: replace("<objectId>ipaddresspool-1</objectId>", "") }],
    error: ["pool list: pool #1: objectId is missing"],
  },
  {
    name: "allocation without ipAddress",
    reason: "an allocation without an address is refused with the list",
    target: "IPPoolAllocations",
    rewrites: [{ method: "GET", path: ALLOCATIONS, body: replace("<ipAddress>10.0.0.10</ipAddress>", "") }],
    error: ["allocation list: allocation #", "ipAddress is missing"],
  },
  {
    name: "two <tenant> in the edge, neither the declared one",
    reason: "which one the manager reads is unknown: setTenant refuses rather than guess",
    target: "EdgeTenant",
    rewrites: [
      {
        method: "GET",
        path: EDGE,
        body: replace("<tenant>default</tenant>", "<tenant>default</tenant><tenant>red</tenant>"),
      },
    ],
    error: ["<tenant> appears 2 times in <edge>"],
  },
  {
    name: "two <tenant> in the edge, the first the declared one",
    reason: "the edge is not known to hold the declared tenant: no InSync on a guess (and no write)",
    target: "EdgeTenant",
    rewrites: [
      {
        method: "GET",
        path: EDGE,
        body: replace("<tenant>default</tenant>", "<tenant>blue</tenant><tenant>red</tenant>"),
      },
    ],
    error: ["<tenant> appears 2 times in <edge>"],
  },
  {
    name: "two <ipAddress> in one allocation",
    reason:
      "which address the allocation holds is unknown: the list is refused rather than one guessed and released",
    target: "IPPoolAllocations",
    rewrites: [
      {
        method: "GET",
        path: ALLOCATIONS,
        body: address("10.0.0.1", "10.0.0.30</ipAddress><ipAddress>10.0.0.1"),
      },
    ],
    error: ["allocation list:", "ipAddress"],
  },
  {
    name: "allocation address with leading zeros",
    reason: "010.0.0.10 is octal to some parsers: refused, with the allocation named",
    target: "IPPoolAllocations",
    rewrites: [{ method: "GET", path: ALLOCATIONS, body: address("10.0.0.10", "010.0.0.10") }],
    error: ['allocation list: allocation "010.0.0.10": ipAddress is not an IP address: "010.0.0.10"'],
  },
  {
    name: "allocation address with a zone id",
    reason: "a zone means nothing off the host: refused, never released",
    target: "V6Pool",
    rewrites: [{ method: "GET", path: V6_ALLOCATIONS, body: address("2001:db8::a", "2001:db8::a%eth0") }],
    error: ['allocation list: allocation "2001:db8::a%eth0": ipAddress is not an IP address'],
  },
  {
    name: "allocation address with an embedded space",
    reason: "not an address: refused, never released",
    target: "IPPoolAllocations",
    rewrites: [{ method: "GET", path: ALLOCATIONS, body: address("10.0.0.10", "10.0.0. 10") }],
    error: ['allocation list: allocation "10.0.0. 10": ipAddress is not an IP address'],
  },
  {
    name: "allocation addresses padded with white space",
    reason: "white space around an element's text is not part of it: compared and released as usual",
    target: "IPPoolAllocations",
    rewrites: [
      {
        method: "GET",
        path: ALLOCATIONS,
        body: (t) => address("10.0.0.10", " 10.0.0.10\n")(address("10.0.0.1", "\t10.0.0.1 ")(t)),
      },
    ],
    released: STRAYS,
  },
  {
    name: "allocation of an allowed address written IPv4-mapped",
    reason: "::ffff:10.0.0.1 is the allowed 10.0.0.1 by value: never released, no DELETE for it",
    target: "IPPoolAllocations",
    rewrites: [{ method: "GET", path: ALLOCATIONS, body: address("10.0.0.1", "::ffff:10.0.0.1") }],
    released: STRAYS,
  },
  {
    name: "IPv6 allocations in upper case",
    reason: "compared by value: allowed ones kept, strays released",
    target: "V6Pool",
    rewrites: [
      {
        method: "GET",
        path: V6_ALLOCATIONS,
        body: (t) => t.replace(/<ipAddress>([^<]*)</g, (_m, ip: string) => `<ipAddress>${ip.toUpperCase()}<`),
      },
    ],
    released: V6_STRAYS,
  },
  {
    name: "IPv6 allocations written in full",
    reason: "2001:0db8:0000:...:0001 is 2001:db8::1: kept; strays released",
    target: "V6Pool",
    rewrites: [
      {
        method: "GET",
        path: V6_ALLOCATIONS,
        body: (t) =>
          address(
            "2001:db8::1",
            "2001:0db8:0000:0000:0000:0000:0000:0001",
          )(address("2001:db8::a", "2001:0DB8:0:0:0:0:0:A")(t)),
      },
    ],
    released: V6_STRAYS,
  },
];

interface Setup {
  sim: RunningSimulator;
  proxy: RewritingProxy;
  connections: ManagerConnections;
}
let setup: Setup | undefined;
afterEach(async () => {
  await setup?.connections.close();
  await setup?.proxy.close();
  await setup?.sim.close();
  setup = undefined;
});

function v6Pool(): IPPoolAllocations {
  return {
    apiVersion: "nsxv.io/v1alpha1",
    kind: "IPPoolAllocations",
    metadata: { name: "pool-2" },
    spec: {
      managerRef: { name: "nsx" },
      pool: { id: V6_POOL },
      allowed: V6_ALLOWED,
      release: { minStrayAge: "0s", maxPerSync: 10 },
    },
  };
}

/** One reconcile pass of the case's target, through the proxy, with the real client. */
async function pass(
  c: ResponseCase,
): Promise<{ sim: RunningSimulator; report: ReconcileReport; proxy: RewritingProxy }> {
  const state = rigState();
  if (c.edgeXml !== undefined) state.edges = [{ xml: c.edgeXml }];
  state.pools.push({
    id: V6_POOL,
    name: "vteps-v6",
    ranges: [{ start: "2001:db8::1", end: "2001:db8::ff" }],
    allocations: [...V6_KEPT, ...V6_STRAYS].map((ip) => ({ ip, note: `host ${ip}` })),
  });
  const sim = await startSimulator({ state });
  const proxy = await startRewritingProxy(sim.url, c.rewrites);
  const connections = new ManagerConnections({
    createClient: (options) => new ManagerClient({ ...options, maxRetries: 0, ...c.client }),
  });
  setup = { sim, proxy, connections };
  const documents = rigManifests(proxy.url, { requestTimeoutSeconds: 10 }) as unknown as (
    NsxvObject | Secret
  )[];
  const store = memoryStore({
    objects: [...documents.filter((d): d is NsxvObject => d.kind !== "Secret"), v6Pool()],
    secrets: documents.filter((d): d is Secret => d.kind === "Secret"),
  });
  const reconcile = createReconciler({
    store,
    connections,
    kinds: { IPPoolAllocations: { poolListTtlMs: 0 } },
  });
  const object = store.list(c.target === "EdgeTenant" ? "EdgeTenant" : "IPPoolAllocations") as NsxvObject[];
  const name = c.target === "EdgeTenant" ? "edge-1" : c.target === "V6Pool" ? "pool-2" : "pool-1";
  const target = object.find((o) => o.metadata.name === name) as NsxvObject;
  const report = await reconcile(refOf(target));
  return { sim, report, proxy };
}

describe("wrong manager answers", () => {
  it.each(CASES)("$name", async (c) => {
    const startedMs = performance.now();
    const { sim, report, proxy } = await pass(c);
    expect(performance.now() - startedMs, "bounded: no hang, no expansion").toBeLessThan(5_000);
    if (c.rewrites.length > 0) expect(proxy.rewritten(), "the rewrite was served").toBeGreaterThan(0);
    const synced = report.status?.conditions?.find((cond) => cond.type === "Synced");
    if (c.error !== undefined) {
      expect(report.outcome.type, c.reason).toBe("failed");
      expect(synced?.status, c.reason).toBe("False");
      for (const part of c.error) expect(synced?.message, c.reason).toContain(part);
      assertNoWrites(sim);
      return;
    }
    expect(report.outcome.type, `${c.reason}: ${synced?.message}`).toBe("done");
    const released = sim.state.audit.snapshot().releases.map((r) => r.ip);
    expect(released.sort(), c.reason).toEqual([...(c.released ?? [])].sort());
    const deletes = callsByRoute(sim).releaseAddress;
    expect(deletes, `${c.reason}: one DELETE per stray, each answered 200`).toEqual({
      total: c.released?.length ?? 0,
      byStatus: c.released?.length ? { "200": c.released.length } : {},
    });
    assertNoAllowedReleased(sim, c.target === "V6Pool" ? V6_ALLOWED : ALLOWED);
  });
});
