/**
 * A write that rewrites only the text of top-level leaves of a stored edge (the operator's tenant
 * PUT, a drift through the control API) is stored by replacing those texts in the stored text,
 * without a parse of it, a rendering or the PUT's whole rules (EdgeStore.storeLeaves). Each case
 * runs its writes twice, once with that path switched off, and every observable must be the same:
 * the text a GET sends (a stale or wrong text would differ), the version, the summary and the
 * list, the audit.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { EdgeStore } from "../../src/simulator/edge-store.ts";
import { handleApi, matchRoute } from "../../src/simulator/routes.ts";
import { SimulatorState, parseEdge, type StateOverrides } from "../../src/simulator/state.ts";
import type { SimulatorSettings, SimulatorStateInput } from "../../src/simulator/index.ts";
import { renderDocument } from "../../src/simulator/xml.ts";
import { TestSimulator, smallEdge } from "./helpers.ts";

afterEach(() => vi.restoreAllMocks());

const RULES =
  "<firewall><firewallRules><firewallRule><id>131073</id><ruleTag>131073</ruleTag><name>web</name>" +
  "<action>accept</action></firewallRule></firewallRules></firewall>";
/** an edge as the manager stores it: a PUT of its own document changes nothing but its version */
const STABLE = smallEdge("edge-7", RULES).replace(
  "<tenant>default</tenant>",
  '<tenant scope="site">default</tenant>',
);
/** without `<enableAesni>`, which a PUT fills in: not what the manager would store */
const UNSTABLE = STABLE.replace("<enableAesni>false</enableAesni>", "");

const EDGE = "/api/4.0/edges/edge-7";
const VSM_UUID = "420D3C54-5E36-8D1A-9F41-2C6B7A3E9B10";

type Step =
  | { put: (stored: string) => string; id?: string }
  | { change: Record<string, string>; id?: string }
  | { upsert: string }
  | { settings: Partial<SimulatorSettings> };

function apply(state: SimulatorState, step: Step): unknown {
  if ("settings" in step) return void state.updateSettings(step.settings);
  if ("upsert" in step) return void state.upsertEdge(parseEdge(step.upsert, "upsert"));
  const id = step.id ?? "edge-7";
  if ("change" in step) return void state.changeEdge(id, step.change);
  const segments = ["api", "4.0", "edges", id];
  const match = matchRoute("PUT", segments, state.manager.release);
  if (match.route === "unknown") throw new Error("no route");
  const body = Buffer.from(step.put(state.edge(id)!.text));
  const request = {
    method: "PUT",
    segments,
    query: new URLSearchParams(),
    contentType: "application/xml",
    authorization: undefined,
    body,
  };
  const { status, errors } = handleApi(state, match, request, { role: "enterpriseAdmin", username: "admin" });
  return { status, errors };
}

interface Observed {
  answers: unknown[];
  texts: string[];
  versions: number[];
  summaries: string[];
  audit: unknown;
}

function run(input: SimulatorStateInput, steps: Step[], overrides: StateOverrides = {}): Observed {
  // one manager: a vsmUuid of its own each time would differ in the summaries
  const state = new SimulatorState({ vsmUuid: VSM_UUID, ...input }, { nowMs: () => 0, ...overrides });
  const answers = steps.map((step) => apply(state, step));
  const edges = state.edges();
  return {
    answers,
    texts: edges.map((e) => e.text),
    versions: edges.map((e) => e.version),
    summaries: edges.map(
      (e) =>
        renderDocument(e.listing.summary, { pretty: false }) +
        JSON.stringify({ ...e.listing, summary: undefined }),
    ),
    audit: state.audit.snapshot(),
  };
}

/** the same run with rewrittenLeaves and storeLeaves switched off, and whether storeLeaves stored an edge */
function both(input: SimulatorStateInput, steps: Step[], overrides: StateOverrides = {}) {
  const leaves = vi.spyOn(EdgeStore.prototype, "storeLeaves");
  const fast = run(input, steps, overrides);
  const tookLeaves = leaves.mock.results.some((r) => r.value !== undefined);
  leaves.mockReturnValue(undefined);
  vi.spyOn(EdgeStore.prototype, "rewrittenLeaves").mockReturnValue(undefined);
  const whole = run(input, steps, overrides);
  return { fast, whole, tookLeaves };
}

const tenant = (to: string) => (s: string) => s.replace(/(<tenant[^>]*>)[^<]*</, `$1${to}<`);
const field = (name: string, to: string) => (s: string) =>
  s.replace(new RegExp(`(<${name}>)[^<]*<`), `$1${to}<`);

describe("a write that rewrites leaves' texts stores what the whole rules store", () => {
  it.each<{
    name: string;
    reason: string;
    input?: SimulatorStateInput;
    steps: Step[];
    overrides?: StateOverrides;
    leaves: boolean;
  }>([
    {
      name: "Tenant",
      reason: "the operator's PUT",
      steps: [
        { put: tenant("blue") },
        { put: tenant("green") },
        { put: field("name", "a name longer than before") },
        { change: { description: "d" } },
      ],
      leaves: true,
    },
    {
      name: "NameAndDescription",
      reason: "changed content, audited in the document's order",
      steps: [{ put: (s) => field("description", "tier seven")(field("name", "dlr-seven")(s)) }],
      leaves: true,
    },
    {
      name: "ManagerFields",
      reason: "status, datacenterName and an older version sent: the manager keeps its own",
      steps: [
        {
          put: (s) =>
            field(
              "version",
              "1",
            )(field("datacenterName", "x")(field("status", "undeployed")(tenant("b")(s)))),
        },
      ],
      leaves: true,
    },
    {
      name: "Escaped",
      reason: "text written escaped, non-ASCII text",
      steps: [{ put: tenant("a&amp;b&lt;c&gt;&#13;é€") }, { put: field("name", "d&amp;") }],
      leaves: true,
    },
    {
      name: "Emptied",
      reason: "an emptied leaf is written <name/>: the whole rules",
      steps: [{ put: field("description", "") }],
      leaves: false,
    },
    {
      name: "LeafToElement",
      reason: "another shape",
      steps: [
        { put: (s) => s.replace(/<description>[^<]*<\/description>/, "<description><x/></description>") },
      ],
      leaves: false,
    },
    {
      name: "AfterWholeRules",
      reason: "an edge stored by the whole rules, then a leaf: the texts' places are the new edge's",
      steps: [
        { put: (s) => s.replace("<name>web</name>", "<name>web-2</name>") },
        { put: tenant("t2") },
        { change: { tenant: "t3" } },
      ],
      leaves: true,
    },
    {
      name: "Pretty",
      reason: "the indented format",
      input: undefined,
      steps: [
        { settings: { prettyXml: true } },
        { put: tenant("p") },
        { change: { tenant: "q", name: "n" } },
      ],
      leaves: true,
    },
    {
      name: "FormatChanged",
      reason: "a format change renders every edge again, and the places with it",
      steps: [
        { put: tenant("a") },
        { settings: { prettyXml: true } },
        { put: tenant("b") },
        { settings: { prettyXml: false } },
        { change: { tenant: "c" } },
      ],
      leaves: true,
    },
    {
      name: "SummaryInEdge",
      reason: "the summary in the edge changes with its fields",
      steps: [{ settings: { edgeSummaryInEdge: true } }, { put: tenant("s") }, { change: { tenant: "u" } }],
      leaves: false,
    },
    {
      name: "Drift",
      reason: "the control API's change, then the PUT back",
      steps: [{ change: { tenant: "drifted" } }, { put: tenant("default") }],
      leaves: true,
    },
    {
      name: "DriftAddsAField",
      reason: "a field the edge lacks is added by the whole rules",
      steps: [
        { change: { localEgressEnabled: "true" } },
        { put: tenant("x") },
        { change: { version: "abc" } },
        { put: tenant("y") },
      ],
      leaves: true,
    },
    {
      name: "Unstable",
      reason: "a PUT fills in <enableAesni>: the whole rules, and the audit says so",
      input: { edges: [{ xml: UNSTABLE }] },
      steps: [{ put: tenant("blue") }, { change: { tenant: "c" } }, { put: tenant("d") }],
      leaves: true,
    },
    {
      name: "ReplacedByUnstable",
      reason: "what was known of a stored edge is not taken over by its replacement",
      steps: [{ put: tenant("blue") }, { upsert: UNSTABLE }, { put: tenant("green") }],
      leaves: true,
    },
    {
      name: "Refused",
      reason: "what a parse refuses in a leaf's text is refused alike, with the same answer",
      steps: [
        { put: tenant("a&bogus;") },
        { put: tenant("a]]>b") },
        { put: tenant("a\u0001b") },
        { put: field("id", "edge-8") },
        { put: field("id", "") },
        { put: tenant("&#97;&amp;b") },
      ],
      leaves: true,
    },
    {
      name: "StaleRefused",
      reason: "rejectStaleVersion: an older version sent is 409 either way",
      steps: [
        { settings: { rejectStaleVersion: true } },
        { put: (s) => field("version", "3")(tenant("x")(s)) },
        { put: (s) => field("version", "v")(tenant("y")(s)) },
      ],
      leaves: true,
    },
    {
      name: "AnotherClientsFormat",
      reason: "the same content written otherwise",
      steps: [{ put: (s) => tenant("z")(s).replaceAll("><", ">\n<") }],
      leaves: false,
    },
    {
      name: "TenantAudited",
      reason: "no sanctioned field: the tenant is changed content",
      steps: [{ put: tenant("blue") }, { put: (s) => tenant("c")(field("name", "m")(s)) }],
      overrides: { sanctionedEdgeFields: [] },
      leaves: true,
    },
  ])("$name ($reason)", ({ input, steps, overrides, leaves }) => {
    const { fast, whole, tookLeaves } = both(input ?? { edges: [{ xml: STABLE }] }, steps, overrides);
    expect(fast).toEqual(whole);
    expect(tookLeaves, "storeLeaves stored an edge").toBe(leaves);
  });
});

describe("GET after such a write", () => {
  it("sends the new text, its bytes counted in UTF-8, never the version before", async () => {
    const t = await TestSimulator.start({ state: { edges: [{ xml: STABLE }] } });
    try {
      const before = (await t.api("GET", EDGE)).text;
      const sent = before.replace(
        '<tenant scope="site">default</tenant>',
        '<tenant scope="site">blå &amp; grün</tenant>',
      );
      expect((await t.api("PUT", EDGE, { body: sent })).status).toBe(204);
      const after = await t.api("GET", EDGE);
      expect(after.text).toBe(sent.replace("<version>4</version>", "<version>5</version>"));
      expect(Number(after.headers["content-length"])).toBe(Buffer.byteLength(after.text));
      await t.control("PATCH", "edges/edge-7", { tenant: "drifted" });
      expect((await t.api("GET", EDGE)).text).toBe(
        before.replace(">default<", ">drifted<").replace("<version>4</version>", "<version>6</version>"),
      );
    } finally {
      await t.close();
    }
  });
});
