/**
 * A partial PUT (govnsx's and terraform's install spec, gonsx's documents) behaves as on a
 * manager: what the manager owns stays (appliances' runtime fields, edgeAssistId, isUniversal),
 * left-out settings take their defaults, a PUT without a name keeps the name, and new rules get
 * an id and a rule tag. What a manager does with other left-out sections is not recorded: they
 * are replaced, and the audit says so (README, not modelled).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import type { AuditSnapshot } from "../../src/simulator/index.ts";
import { TestSimulator, xml } from "./helpers.ts";

let t: TestSimulator;
beforeEach(async () => {
  t = await TestSimulator.start({
    state: { edges: [{ generate: { count: 1, idStart: 4, tenant: "tenant-a", firewallRules: 2 } }] },
  });
});
afterEach(() => t.close());

const EDGE = "/api/4.0/edges/edge-4";

/** govnsx's EdgeInstallSpec as its Edge.Put marshals it: name, description, tenant, appliances without runtime fields */
const GOVNSX_SPEC =
  "<edge><name>esg-04</name><tenant>tenant-a</tenant><appliances><applianceSize>large</applianceSize>" +
  "<appliance><resourcePoolId>domain-c7</resourcePoolId><datastoreId>datastore-15</datastoreId></appliance>" +
  "</appliances></edge>";

async function text(): Promise<string> {
  const reply = await t.api("GET", EDGE);
  expect(reply.status).toBe(200);
  return reply.text;
}

async function put(body: string): Promise<void> {
  expect((await t.api("PUT", EDGE, { body })).status).toBe(204);
}

describe("a partial PUT", () => {
  it("keeps the appliance's runtime fields, edgeAssistId and isUniversal; the summary still shows the VM", async () => {
    const before = EdgeDocument.parse(await text());
    await put(GOVNSX_SPEC);
    const after = await text();
    for (const field of [
      "vmId",
      "vcUuid",
      "hostId",
      "hostName",
      "vmName",
      "vmHostname",
      "deployed",
      "edgeId",
    ]) {
      const value = new RegExp(`<${field}>([^<]*)</${field}>`).exec(before.serialize())?.[1];
      expect(value, field).toBeDefined();
      expect(after, field).toContain(`<${field}>${value}</${field}>`);
    }
    expect(after).toContain("<edgeAssistId>5004</edgeAssistId>");
    expect(after).toContain("<isUniversal>false</isUniversal>");
    const summary = xml((await t.api("GET", `${EDGE}/summary`)).text).edgeSummary as {
      appliancesSummary: Record<string, string>;
    };
    expect(summary.appliancesSummary).toMatchObject({
      vmMoidOfActiveVse: "vm-1004",
      numberOfDeployedVms: "1",
    });
  });

  it("gives left-out enableAesni, enableFips and vseLogLevel their defaults instead of dropping them", async () => {
    await put(GOVNSX_SPEC);
    const edge = EdgeDocument.parse(await text());
    expect(edge.getField("enableAesni")).toBe("true");
    expect(edge.getField("enableFips")).toBe("false");
    expect(edge.getField("vseLogLevel")).toBe("info");
  });

  it("keeps the name when the PUT has no <name>; the summary and the list keep it too", async () => {
    await put(GOVNSX_SPEC.replace("<name>esg-04</name>", ""));
    expect(EdgeDocument.parse(await text()).name).toBe("esg-04");
    const summary = xml((await t.api("GET", `${EDGE}/summary`)).text).edgeSummary as Record<string, unknown>;
    expect(summary.name).toBe("esg-04");
  });

  it("gives a new firewall rule the edge's next id and that id as its rule tag; sent ids stay", async () => {
    const doc = await text();
    const rule = "<firewallRule><name>ssh-in</name><action>accept</action></firewallRule>";
    await put(doc.replace("</firewallRules>", `${rule}</firewallRules>`));
    const after = await text();
    // the generated edge has rules 131073 (internal) to 131075
    expect(after).toContain("<firewallRule><id>131076</id><ruleTag>131076</ruleTag><name>ssh-in</name>");
    expect(after).toContain("<id>131074</id><ruleTag>131074</ruleTag>");
    const [violation] = (await t.control<AuditSnapshot>("GET", "audit")).json.violations;
    expect(violation).toMatchObject({
      kind: "changedContent",
      lost: [],
      added: ["edge.features.firewall.firewallRules.firewallRule[3]"],
    });
  });

  it("still replaces the sections a partial document leaves out, and the audit names them", async () => {
    await put(GOVNSX_SPEC);
    const after = await text();
    expect(after).not.toContain("<vnics>");
    const [violation] = (await t.control<AuditSnapshot>("GET", "audit")).json.violations;
    expect(violation?.lost).toEqual(
      expect.arrayContaining(["edge.vnics", "edge.features", "edge.cliSettings"]),
    );
    expect(violation?.lost.join(" "), "what the manager keeps is not lost").not.toMatch(
      /vmId|edgeAssistId|enableAesni/,
    );
  });

  it("keeps a sent CLI password to itself", async () => {
    const doc = await text();
    await put(
      doc.replace(
        "<userName>admin</userName>",
        "<userName>admin</userName><password>S3cret-S3cret!</password>",
      ),
    );
    expect(await text()).not.toContain("S3cret");
    expect((await t.control<AuditSnapshot>("GET", "audit")).json.violations).toEqual([]);
  });
});
