/**
 * Fuzzed manager documents: random mutations (insertions of XML's special pieces, deletions,
 * duplications, truncations) of a real edge document and of the pool, allocation, release, token
 * and error documents the simulator serves, fed to EdgeDocument.parse and to the client's
 * document readers. Whatever the input: either a value or an NsxError subclass, never another
 * exception, never a hang (each call is timed; sizes are bounded); and an edge that parses stays
 * lossless (serialize gives the input back, setTenant changes nothing else).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  parseAllocationList,
  parseAuthToken,
  parseErrorBody,
  parsePoolList,
  parseReleaseBody,
} from "../../src/nsx/documents.ts";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import { NsxError } from "../../src/nsx/errors.ts";
import { generateEdgeXml, startSimulator, type RunningSimulator } from "../../src/simulator/index.ts";
import { rigState } from "../faults/rig.ts";

/** per call, generous for a loaded 2-core machine: a regex gone quadratic takes seconds here */
const CALL_BUDGET_MS = 250;
const NUM_RUNS = 300;

/** The pieces that trip XML readers. */
const PIECES = [
  "<",
  ">",
  "&",
  "&amp;",
  "&lt;",
  "&#0;",
  "&#x110000;",
  "&#xD800;",
  "&lol;",
  "&nbsp;",
  "]]>",
  "<![CDATA[",
  "<![CDATA[x]]>",
  "<!--",
  "-->",
  "<!-- - -- -->",
  "<?pi data?>",
  "<?xml version='1.0'?>",
  '<!DOCTYPE edge [<!ENTITY t "x">]>',
  '<!ENTITY e SYSTEM "file:///etc/passwd">',
  "<!ELEMENT a ANY>",
  "<a>",
  "</a>",
  "<a/>",
  "</edge>",
  "<edge>",
  "<tenant>x</tenant>",
  "<ipAddress>10.0.0.1</ipAddress>",
  "<objectId>ipaddresspool-9</objectId>",
  '<a b="1" b="2">',
  "<a b=<>",
  "\u0000",
  "\uFFFE",
  "\uD800",
  "\r\n",
  '"',
  "'",
  "=",
  ":",
  "xmlns:a='urn:x'",
  "<a:b xmlns:a='urn:x'/>",
  "<1a>",
  "<-a>",
  "é",
  "\u{1F600}",
];

/** Pieces that keep a document well-formed when put between two tags (some still change its meaning). */
const BENIGN = [
  "text",
  " ",
  "\r\n",
  "&amp;",
  "&lt;",
  "&#233;",
  "&#x1F600;",
  "é",
  "\u{1F600}",
  "<![CDATA[x<y]]>",
  "<!-- note -->",
  "<?pi data?>",
  "<a/>",
  "<a b='1'/>",
  "<a:b xmlns:a='urn:x'/>",
  "<tenant>x</tenant>",
  "<id>edge-9</id>",
  "<ipAddress>10.0.0.99</ipAddress>",
  "<ipAddress>010.0.0.1</ipAddress>",
  "<objectId>ipaddresspool-9</objectId>",
  "<totalAddressCount>x</totalAddressCount>",
];

type Mutation =
  | { op: "insert"; at: number; text: string; betweenTags: boolean }
  | { op: "delete"; at: number; length: number }
  | { op: "duplicate"; at: number; length: number; to: number }
  | { op: "truncate"; at: number }
  | { op: "nest"; at: number; depth: number };

const position = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
const anyPiece = fc.oneof(
  fc.constantFrom(...PIECES),
  fc.constantFrom(...BENIGN),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 6 }),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("insert" as const),
      at: position,
      text: fc.constantFrom(...BENIGN),
      betweenTags: fc.constant(true),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("insert" as const),
      at: position,
      text: anyPiece,
      betweenTags: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("delete" as const),
      at: position,
      length: fc.integer({ min: 1, max: 64 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("duplicate" as const),
      at: position,
      length: fc.integer({ min: 1, max: 256 }),
      to: position,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("truncate" as const), at: position }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("nest" as const),
      at: position,
      depth: fc.constantFrom(10, 300, 5_000),
    }),
  },
);

/** Positions right after a `>` inside the root element: where text and elements may go. */
function boundaries(text: string): number[] {
  const out: number[] = [];
  const rootStart = text.search(/<[A-Za-z_]/);
  const rootEnd = text.lastIndexOf("</");
  if (rootStart === -1) return out;
  for (let i = text.indexOf(">", rootStart); i !== -1 && i < rootEnd; i = text.indexOf(">", i + 1))
    out.push(i + 1);
  return out;
}

/**
 * Applies the mutations in turn. Positions are fractions (of the length, or of the tag boundaries
 * for `betweenTags` and `nest`), so any list applies to any text.
 */
function mutate(seed: string, mutations: readonly Mutation[]): string {
  let text = seed;
  const at = (fraction: number) => Math.floor(fraction * (text.length + 1));
  const boundary = (fraction: number) => {
    const list = boundaries(text);
    return list.length === 0 ? at(fraction) : (list[Math.floor(fraction * list.length)] ?? 0);
  };
  for (const m of mutations) {
    switch (m.op) {
      case "insert": {
        const i = m.betweenTags ? boundary(m.at) : at(m.at);
        text = text.slice(0, i) + m.text + text.slice(i);
        break;
      }
      case "delete": {
        const i = at(m.at);
        text = text.slice(0, i) + text.slice(i + m.length);
        break;
      }
      case "duplicate": {
        const i = at(m.at);
        const piece = text.slice(i, i + m.length);
        const to = at(m.to);
        text = text.slice(0, to) + piece + text.slice(to);
        break;
      }
      case "truncate":
        text = text.slice(0, at(m.at));
        break;
      case "nest": {
        const i = boundary(m.at);
        text = text.slice(0, i) + "<a>".repeat(m.depth) + "</a>".repeat(m.depth) + text.slice(i);
        break;
      }
    }
  }
  return text;
}

const mutations = fc.array(mutation, { minLength: 1, maxLength: 4 });

/** How many inputs each reader accepted and refused: both must happen, or the fuzzing proves little. */
const outcomes = new Map<string, { accepted: number; refused: number }>();

/** Milliseconds `read` takes, whatever it returns or throws. */
function timed(read: () => unknown): number {
  const started = performance.now();
  try {
    read();
  } catch {
    // what it throws was judged on the first run
  }
  return performance.now() - started;
}

/** Runs `read`, which must return or throw an NsxError, within the call budget (a second run confirms a miss). */
function survives<T>(what: string, read: () => T, input: string): T | undefined {
  const started = performance.now();
  let value: T | undefined;
  const tally = outcomes.get(what) ?? { accepted: 0, refused: 0 };
  outcomes.set(what, tally);
  try {
    value = read();
    tally.accepted++;
  } catch (error) {
    tally.refused++;
    if (!(error instanceof NsxError)) {
      throw new Error(
        `${what} threw ${(error as Error)?.name}: ${(error as Error)?.message} on ${JSON.stringify(input.slice(0, 200))}`,
        {
          cause: error,
        },
      );
    }
  }
  const elapsedMs = performance.now() - started;
  // a pause of a loaded machine happens once; a quadratic path takes as long again
  if (elapsedMs > CALL_BUDGET_MS && timed(read) > CALL_BUDGET_MS) {
    throw new Error(`${what} took ${Math.round(elapsedMs)} ms on ${input.length} characters, twice`);
  }
  return value;
}

const seeds: Record<string, string> = {};
let sim: RunningSimulator | undefined;

beforeAll(async () => {
  sim = await startSimulator({ state: rigState() });
  const get = async (path: string, method = "GET") => {
    const res = await fetch(`${sim!.url}${path}`, {
      method,
      headers: { authorization: `Basic ${Buffer.from("admin:first-password").toString("base64")}` },
    });
    return res.text();
  };
  seeds.pools = await get("/api/2.0/services/ipam/pools/scope/globalroot-0");
  seeds.allocations = await get("/api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses");
  seeds.release = await get("/api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses/10.0.0.10", "DELETE");
  seeds.token = await get("/api/2.0/services/auth/token", "POST");
  seeds.error = await get("/api/2.0/services/ipam/pools/ipaddresspool-77/ipaddresses");
});

afterAll(async () => {
  await sim?.close();
});

describe("fuzzed edge documents", () => {
  const edges = [
    generateEdgeXml({ edgeNumber: 7, tenant: "tenant-a", firewallRules: 3 }),
    generateEdgeXml({ edgeNumber: 8, tenant: "tenant-b", firewallRules: 3, pretty: false }),
  ];

  it.each(edges.map((xml, i) => ({ name: i === 0 ? "indented" : "one line", xml })))(
    "$name: parses losslessly or refuses with an NsxError",
    ({ xml }) => {
      fc.assert(
        fc.property(mutations, fc.string({ maxLength: 20 }), (ms, tenant) => {
          const input = mutate(xml, ms);
          const doc = survives("EdgeDocument.parse", () => EdgeDocument.parse(input), input);
          if (doc === undefined) return;
          expect(doc.serialize(), "lossless").toBe(input);
          const changed = survives("setTenant", () => doc.clone().setTenant(tenant), input);
          if (changed === undefined) return;
          const again = survives(
            "parse after setTenant",
            () => EdgeDocument.parse(changed.serialize()),
            input,
          );
          expect(again, "what setTenant writes parses again").toBeDefined();
          expect(again?.tenant).toBe(tenant);
          expect(EdgeDocument.equalExcept(doc, again!, ["tenant"]), "only the tenant changed").toBe(true);
        }),
        { numRuns: NUM_RUNS },
      );
      expect(outcomes.get("EdgeDocument.parse")?.accepted, "mutations that still parse").toBeGreaterThan(10);
      expect(outcomes.get("EdgeDocument.parse")?.refused, "mutations refused").toBeGreaterThan(10);
    },
  );

  it("refuses nesting far deeper than any edge, without exhausting the stack", () => {
    const input = mutate(edges[0]!, [{ op: "nest", at: 0.5, depth: 200_000 }]);
    expect(input.length).toBeGreaterThan(1_000_000);
    expect(() => EdgeDocument.parse(input)).toThrow(NsxError);
  });
});

describe("fuzzed pool, allocation, release, token and error documents", () => {
  const readers = [
    { name: "pool list", seed: "pools", read: parsePoolList },
    { name: "allocation list", seed: "allocations", read: parseAllocationList },
    { name: "release answer", seed: "release", read: parseReleaseBody },
    { name: "auth token", seed: "token", read: parseAuthToken },
  ] as const;

  it.each(readers)("$name: a value or an NsxError, within the budget", ({ name, seed, read }) => {
    const text = seeds[seed]!;
    expect(() => read(text), "the seed itself reads").not.toThrow();
    fc.assert(
      fc.property(mutations, (ms) => {
        const input = mutate(text, ms);
        survives(name, () => read(input), input);
      }),
      { numRuns: NUM_RUNS },
    );
    expect(outcomes.get(name)?.accepted, "mutations still read").toBeGreaterThan(5);
    expect(outcomes.get(name)?.refused, "mutations refused").toBeGreaterThan(5);
  });

  it("error bodies never throw: they only ever explain a status", () => {
    const text = seeds.error!;
    expect(parseErrorBody(text)[0]?.errorCode).toBe("120054");
    fc.assert(
      fc.property(mutations, (ms) => {
        const input = mutate(text, ms);
        const errors = survives("parseErrorBody", () => parseErrorBody(input), input);
        expect(Array.isArray(errors), "always a list").toBe(true);
        for (const e of errors ?? []) expect((e.details ?? "").length).toBeLessThanOrEqual(input.length);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
