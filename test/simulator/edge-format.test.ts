/**
 * One format per manager: every edge is stored as the manager's model and answered in the
 * manager's format, whatever a client sent or the state file wrote; whether `<edge>` carries its
 * `<edgeSummary>` is the setting edgeSummaryInEdge.
 */
import { DEFAULT_VSM_UUID } from "../../src/simulator/manager.ts";
import { afterEach, describe, expect, it } from "vitest";
import { generateEdgeXml, type AuditSnapshot, type SimulatorStateInput } from "../../src/simulator/index.ts";
import { TestSimulator, childNames, smallEdge, storedSmallEdge, xml } from "./helpers.ts";

let t: TestSimulator;
afterEach(() => t.close());

const EDGE = "/api/4.0/edges/edge-7";
const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

async function start(state: SimulatorStateInput = { edges: [{ xml: smallEdge() }] }): Promise<void> {
  t = await TestSimulator.start({ state });
}

async function text(path = EDGE): Promise<string> {
  const reply = await t.api("GET", path);
  expect(reply.status).toBe(200);
  return reply.text;
}

async function put(body: string, path = EDGE): Promise<void> {
  expect((await t.api("PUT", path, { body })).status).toBe(204);
}

async function violations(): Promise<AuditSnapshot["violations"]> {
  return (await t.control<AuditSnapshot>("GET", "audit")).json.violations;
}

/** the same information as `text` in another client's formatting */
function reformatted(text: string): string {
  return text
    .replaceAll("><", ">\n  <")
    .replace(`${DECLARATION}\n`, "<?xml version='1.0'?>\n<!-- sent by another client -->\n")
    .replace("<name>dlr-07</name>", "<name><![CDATA[dlr-07]]></name>")
    .replace("<tunnels/>", "<tunnels ></tunnels >");
}

describe("seeded edges", () => {
  it("are served in the manager's format, however the state file or control API wrote them", async () => {
    const namespaced = reformatted(smallEdge("edge-8")).replace(
      "<edge>",
      '<edge xmlns="urn:vmware:nsx" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
    );
    await start({ edges: [{ xml: reformatted(smallEdge()) }, { xml: namespaced }] });
    expect(await text()).toBe(storedSmallEdge());
    expect(await text("/api/4.0/edges/edge-8")).toBe(storedSmallEdge("edge-8"));
    await t.control("PUT", "edges/edge-9", { xml: reformatted(smallEdge("edge-9")) });
    expect(await text("/api/4.0/edges/edge-9")).toBe(storedSmallEdge("edge-9"));
  });

  it("keep their format across a PUT that changes only the tenant: one format before and after", async () => {
    await start();
    const before = await text();
    await put(before.replace("<tenant>default</tenant>", "<tenant>t</tenant>"));
    const after = await text();
    expect(after).toBe(
      before.replace("<tenant>default</tenant>", "<tenant>t</tenant>").replace("<version>4", "<version>5"),
    );
  });

  it("generated ones are served exactly as generated in the manager's format, so targetBytes is what a GET sends", async () => {
    await start({ edges: [{ generate: { idStart: 3, firewallRules: 4 } }] });
    expect(await text("/api/4.0/edges/edge-3")).toBe(
      generateEdgeXml({ edgeNumber: 3, firewallRules: 4, pretty: false, edgeSummary: false }),
    );
  });
});

describe("PUT edge: stored as the manager's model", () => {
  it("a formatting-only change is no finding, and the GET answers in the manager's format", async () => {
    await start();
    await put(reformatted(smallEdge()).replace("<tenant>default</tenant>", "<tenant>t-fmt</tenant>"));
    expect(await violations()).toEqual([]);
    const after = await text();
    expect(after.startsWith(`${DECLARATION}<edge><id>edge-7</id><version>5</version>`)).toBe(true);
    expect(after).not.toContain("another client");
    expect(after).not.toContain("CDATA");
    expect(after).not.toContain("\n");
    expect(after).toContain("<name>dlr-07</name>");
    expect(after).toContain("<tenant>t-fmt</tenant>");
  });

  it("does not echo the client's element order or namespace declarations", async () => {
    await start({
      edges: [{ xml: smallEdge("edge-7", "<nat><enabled>true</enabled><version>2</version></nat>") }],
    });
    const before = await text();
    const sent = smallEdge("edge-7", "<nat><version>2</version><enabled>true</enabled></nat>")
      .replace("<tenant>default</tenant><name>dlr-07</name>", "<name>dlr-07</name><tenant>t-order</tenant>")
      .replace("<features><featureConfig/>", "<features>")
      .replace("</nat></features>", "</nat><featureConfig/></features>")
      .replace("<edge>", '<edge xmlns:vmw="urn:vmware:nsx" xmlns="urn:vmware:nsx">');
    await put(sent);
    expect(await violations()).toEqual([]);
    expect(await text()).toBe(
      before
        .replace("<tenant>default</tenant>", "<tenant>t-order</tenant>")
        .replace("<version>4", "<version>5"),
    );
  });

  it("keeps the order of same-named siblings as sent: a list's order is content", async () => {
    const rules = (a: string, b: string) =>
      `<firewall><firewallRules><firewallRule><id>1</id><name>${a}</name></firewallRule><firewallRule><id>2</id><name>${b}</name></firewallRule></firewallRules></firewall>`;
    await start({ edges: [{ xml: smallEdge("edge-7", rules("allow-web", "deny-all")) }] });
    await put(smallEdge("edge-7", rules("deny-all", "allow-web")));
    expect(childNames(await text(), "firewallRules")).toEqual(["firewallRule", "firewallRule"]);
    expect(await text()).toContain(rules("deny-all", "allow-web"));
    const [violation] = await violations();
    expect(violation).toMatchObject({
      kind: "changedContent",
      changed: [
        "edge.features.firewall.firewallRules.firewallRule[0].name",
        "edge.features.firewall.firewallRules.firewallRule[1].name",
      ],
    });
  });

  it("keeps attributes, compares them as a set, and escapes text it writes back", async () => {
    await start();
    const before = smallEdge("edge-7", '<nat a="1" b="x &amp; y"><enabled>a &lt; b</enabled></nat>');
    await t.control("PUT", "edges/edge-7", { xml: before });
    const sent = before
      .replace('<nat a="1" b="x &amp; y">', "<nat b='x &#38; y'  a='1' >")
      .replace("<tenant>default</tenant>", "<tenant>t-attr</tenant>");
    await put(sent);
    expect(await violations()).toEqual([]);
    expect(await text()).toContain('<nat a="1" b="x &amp; y"><enabled>a &lt; b</enabled></nat>');
  });

  it("refuses text beside child elements with a vShield Edge error, storing nothing", async () => {
    await start();
    const reply = await t.api("PUT", EDGE, {
      body: smallEdge().replace("<vnics/>", "<vnics>stray<vnic/></vnics>"),
    });
    expect(reply.status).toBe(400);
    expect(xml(reply.text).error).toMatchObject({ errorCode: "10001", moduleName: "vShield Edge" });
    expect(await text()).toContain("<version>4</version>");
  });
});

describe("the manager's format as settings", () => {
  it("prettyXml: two-space indentation for every edge, stored ones included, without a PUT", async () => {
    await start();
    await t.control("PUT", "settings", { prettyXml: true });
    const pretty = await text();
    expect(pretty).toContain(`${DECLARATION}\n<edge>\n  <id>edge-7</id>\n  <version>4</version>`);
    await put(pretty.replace("<tenant>default</tenant>", "<tenant>p</tenant>"));
    expect(await text()).toContain("\n  <version>5</version>\n");
    expect(await violations()).toEqual([]);
  });

  it("edgeSummaryInEdge: the summary inside <edge> (as the API guide shows), following the edge", async () => {
    await start({
      // the UUID generateEdgeXml writes into its summary (a simulator's own is random)
      vsmUuid: DEFAULT_VSM_UUID,
      settings: { edgeSummaryInEdge: true },
      edges: [{ xml: smallEdge() }, { generate: { idStart: 1, tenant: "tenant-a", firewallRules: 3 } }],
    });
    const generated = await text("/api/4.0/edges/edge-1");
    expect(generated).toBe(
      generateEdgeXml({ edgeNumber: 1, tenant: "tenant-a", firewallRules: 3, pretty: false }),
    );
    await put(
      generated.replace("<tenant>tenant-a</tenant>", "<tenant>tenant-followed</tenant>"),
      "/api/4.0/edges/edge-1",
    );
    expect(await violations()).toEqual([]);
    await t.control("PATCH", "edges/edge-1", { name: "renamed" });
    const edge = xml(await text("/api/4.0/edges/edge-1")).edge as Record<string, unknown>;
    const expected = { id: "edge-1", tenantId: "tenant-followed", name: "renamed", revision: "3" };
    expect(edge.edgeSummary).toMatchObject(expected);
    expect(xml(await text("/api/4.0/edges/edge-1/summary")).edgeSummary).toEqual(edge.edgeSummary);
    expect(childNames(await text(), "edge").slice(-3)).toEqual(["tunnels", "edgeSummary", "description"]);
  });

  it("edgeSummaryInEdge off (the default, as the RAML and a real capture): no summary in <edge>, the summary route still has it", async () => {
    await start();
    expect(await text()).not.toContain("edgeSummary");
    expect(xml(await text("/api/4.0/edges/edge-7/summary")).edgeSummary).toMatchObject({
      id: "edge-7",
      tenantId: "default",
    });
    await t.control("PUT", "settings", { edgeSummaryInEdge: true });
    expect(await text()).toContain("<edgeSummary><objectId>edge-7</objectId>");
  });

  it("a summary the seeded document carried supplies the manager's own fields; derived ones follow the edge", async () => {
    const seeded = smallEdge().replace(
      "<edgeSummary><objectId>edge-7</objectId></edgeSummary>",
      "<edgeSummary><objectId>edge-7</objectId><name>stale-name</name><edgeStatus>YELLOW</edgeStatus>" +
        "<allowedActions><string>Redeploy</string></allowedActions></edgeSummary>",
    );
    await start({ edges: [{ xml: seeded }] });
    const summary = xml(await text("/api/4.0/edges/edge-7/summary")).edgeSummary;
    expect(summary).toMatchObject({
      name: "dlr-07",
      edgeStatus: "YELLOW",
      allowedActions: { string: "Redeploy" },
    });
  });
});
