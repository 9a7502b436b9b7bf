import { describe, expect, it } from "vitest";
import { EDGE_FIELD_ORDER, EdgeDocument } from "../../src/nsx/edge-document.ts";
import { generateEdgeXml } from "../../src/simulator/index.ts";
import { TestSimulator, childNames } from "./helpers.ts";

/** spec 2.1's elements up to `edgeSummary`; `description` is absent, as on an edge without one */
const SPEC_ORDER = EDGE_FIELD_ORDER.slice(0, EDGE_FIELD_ORDER.indexOf("edgeSummary") + 1);

describe("generateEdgeXml", () => {
  const text = generateEdgeXml({ edgeNumber: 12, tenant: "tenant-x", firewallRules: 7 });
  const doc = EdgeDocument.parse(text);

  it("has every element of spec 2.1 in order, plus the unknown ones real managers add", () => {
    const names = childNames(text, "edge");
    expect(names.filter((n) => SPEC_ORDER.includes(n))).toEqual(SPEC_ORDER);
    expect(names).toEqual([...SPEC_ORDER, "edgeAssistId", "queryDaemon"]);
    expect(doc).toMatchObject({
      id: "edge-12",
      version: 1,
      status: "deployed",
      tenant: "tenant-x",
      type: "gatewayServices",
    });
    expect(doc.description).toBeUndefined();
    expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<edge>\n  <id>edge-12</id>')).toBe(true);
  });

  it("has 10 vnics with address groups, cliSettings without a password, an empty tunnels element", () => {
    expect(childNames(text, "vnics")).toEqual(Array(10).fill("vnic"));
    expect(text.match(/<addressGroup>/g)?.length).toBe(3);
    expect(childNames(text, "cliSettings")).not.toContain("password");
    expect(text).toContain("<tunnels/>");
  });

  it("has firewall, routing (static, OSPF, BGP), IPsec, DHCP, NAT and stray empty featureConfigs in features", () => {
    expect(childNames(text, "features")).toEqual([
      "firewall",
      "routing",
      "highAvailability",
      "syslog",
      "ipsec",
      "dhcp",
      "featureConfig",
      "nat",
      "featureConfig",
    ]);
    expect(childNames(text, "firewallRules")).toEqual(Array(8).fill("firewallRule"));
    expect(childNames(text, "firewallRule")).toEqual(expect.arrayContaining(["source"]));
    expect(text).toMatch(
      /<firewallRule>\s*<id>131074<\/id>[\s\S]*?<source>[\s\S]*?<destination>[\s\S]*?<application>/,
    );
    expect(childNames(text, "routing")).toEqual([
      "version",
      "enabled",
      "routingGlobalConfig",
      "staticRouting",
      "ospf",
      "bgp",
    ]);
    expect(childNames(text, "staticRoutes").length).toBeGreaterThanOrEqual(3);
    expect(childNames(text, "natRules").length).toBeGreaterThanOrEqual(2);
  });

  it("is the same text for the same options and differs with the seed", () => {
    expect(generateEdgeXml({ edgeNumber: 12, tenant: "tenant-x", firewallRules: 7 })).toBe(text);
    expect(generateEdgeXml({ edgeNumber: 12, tenant: "tenant-x", firewallRules: 7, seed: 99 })).not.toBe(
      text,
    );
  });

  it("writes one line without indentation when pretty is false", () => {
    const compact = generateEdgeXml({ edgeNumber: 1, pretty: false });
    expect(compact).not.toContain("\n");
    expect(compact.startsWith('<?xml version="1.0" encoding="UTF-8"?><edge><id>edge-1</id>')).toBe(true);
    EdgeDocument.parse(compact);
  });

  it.each([
    { name: "OneMegabyte", targetBytes: 1_048_576, pretty: true, reason: "a large edge" },
    {
      name: "FiveMegabytes",
      targetBytes: 5_242_880,
      pretty: false,
      reason: "the largest edges seen in the field",
    },
  ])("$name: grows to targetBytes within 10 % ($reason)", ({ targetBytes, pretty }) => {
    const big = generateEdgeXml({ edgeNumber: 3, targetBytes, pretty });
    const bytes = Buffer.byteLength(big);
    expect(bytes).toBeGreaterThanOrEqual(targetBytes * 0.9);
    expect(bytes).toBeLessThanOrEqual(targetBytes * 1.1);
    expect(EdgeDocument.parse(big).id).toBe("edge-3");
  });
});

describe("generated edges served", () => {
  it("serves a 1 MB generated edge from the state file, the same text on every GET", async () => {
    const t = await TestSimulator.start({
      state: { edges: [{ generate: { idStart: 5, targetBytes: 1_048_576 } }] },
    });
    try {
      const first = await t.api("GET", "/api/4.0/edges/edge-5");
      const second = await t.api("GET", "/api/4.0/edges/edge-5");
      expect(first.status).toBe(200);
      expect(Buffer.byteLength(first.text)).toBeGreaterThan(943_000);
      expect(second.text).toBe(first.text);
      expect(first.text).toBe(t.state.edge("edge-5")?.text);
    } finally {
      await t.close();
    }
  });
});
