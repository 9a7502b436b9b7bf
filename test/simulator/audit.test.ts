/**
 * The audit of edge PUTs says what happened, by path: content lost (gone), changed (edited) and
 * added, so that a client's test can assert either; formatting and the manager's own order are
 * no finding at all.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { diffModels } from "../../src/simulator/edge-diff.ts";
import { edgeModelOf } from "../../src/simulator/edge-model.ts";
import type { AuditSnapshot } from "../../src/simulator/index.ts";
import { TestSimulator, smallEdge } from "./helpers.ts";

const RULES =
  "<firewall><firewallRules>" +
  ["web", "app", "db"]
    .map((n, i) => `<firewallRule><id>${i + 1}</id><name>${n}</name><action>accept</action></firewallRule>`)
    .join("") +
  '</firewallRules></firewall><nat enabled="true" xmlns:x="urn:x"><natRules/></nat>';
const STORED = smallEdge("edge-7", RULES);

let t: TestSimulator;
beforeAll(async () => {
  t = await TestSimulator.start({ state: { edges: [{ xml: STORED }] } });
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.control("PUT", "edges/edge-7", { xml: STORED });
  await t.control("DELETE", "audit");
});

const RULE = "edge.features.firewall.firewallRules.firewallRule";

describe("the audit of a PUT", () => {
  it.each([
    {
      name: "TenantOnly",
      edit: (s: string) => s.replace("<tenant>default</tenant>", "<tenant>t</tenant>"),
      want: undefined,
      reason: "the tenant is the change this project makes",
    },
    {
      name: "Rename",
      edit: (s: string) => s.replace("<name>dlr-07</name>", "<name>dlr-seven</name>"),
      want: { kind: "changedContent", lost: [], changed: ["edge.name"], added: [] },
      reason: "an edited text is changed, nothing lost",
    },
    {
      name: "AddedRule",
      edit: (s: string) =>
        s.replace(
          "</firewallRules>",
          "<firewallRule><name>ssh</name><action>deny</action></firewallRule></firewallRules>",
        ),
      want: { kind: "changedContent", lost: [], changed: [], added: [`${RULE}[3]`] },
      reason: "an added rule is added content, not lost",
    },
    {
      name: "FirstRuleRemoved",
      edit: (s: string) =>
        s.replace("<firewallRule><id>1</id><name>web</name><action>accept</action></firewallRule>", ""),
      want: { kind: "lostContent", lost: [`${RULE}[0]`], changed: [], added: [] },
      reason: "the rule that disappeared is named, not the ones that moved up",
    },
    {
      name: "SectionRemoved",
      edit: (s: string) => s.replace(/<firewall>.*<\/firewall>/, ""),
      want: { kind: "lostContent", lost: ["edge.features.firewall"], changed: [], added: [] },
      reason: "a removed element is reported once, not rule by rule",
    },
    {
      name: "AttributeRemoved",
      edit: (s: string) => s.replace('<nat enabled="true" xmlns:x="urn:x">', "<nat>"),
      want: { kind: "lostContent", lost: ["edge.features.nat@enabled"], changed: [], added: [] },
      reason: "an attribute is content; a namespace declaration is not",
    },
    {
      name: "AttributeChanged",
      edit: (s: string) => s.replace('enabled="true"', 'enabled="false"'),
      want: { kind: "changedContent", lost: [], changed: ["edge.features.nat@enabled"], added: [] },
      reason: "an edited attribute value is changed",
    },
    {
      name: "NamespaceDeclarationDropped",
      edit: (s: string) => s.replace(' xmlns:x="urn:x"', ""),
      want: undefined,
      reason: "a manager keeps no namespace declarations",
    },
    {
      name: "DifferentNamesReordered",
      edit: (s: string) =>
        s.replace(
          "<enableAesni>false</enableAesni><enableFips>false</enableFips>",
          "<enableFips>false</enableFips><enableAesni>false</enableAesni>",
        ),
      want: undefined,
      reason: "the manager writes its own order",
    },
    {
      name: "LostAndChanged",
      edit: (s: string) =>
        s.replace("<vnics/>", "").replace("<userName>admin</userName>", "<userName>root</userName>"),
      want: { kind: "lostContent", lost: ["edge.vnics"], changed: ["edge.cliSettings.userName"], added: [] },
      reason: "both lists filled in one PUT",
    },
  ])("$name ($reason)", async ({ edit, want }) => {
    expect((await t.api("PUT", "/api/4.0/edges/edge-7", { body: edit(STORED) })).status).toBe(204);
    const { violations } = (await t.control<AuditSnapshot>("GET", "audit")).json;
    if (want === undefined) expect(violations).toEqual([]);
    else expect(violations).toEqual([expect.objectContaining({ ...want, omitted: 0, edgeId: "edge-7" })]);
  });
});

describe("diffModels", () => {
  it("lists at most 100 paths per list and counts the rest", () => {
    const rules = (n: number) =>
      `<edge><rules>${Array.from({ length: n }, (_, i) => `<rule>${i}</rule>`).join("")}</rules></edge>`;
    const diff = diffModels(
      edgeModelOf(rules(5)),
      edgeModelOf(rules(5).replace(/<rule>(\d)<\/rule>/g, "<rule>x$1</rule>")),
      new Set(),
    );
    expect(diff.changed).toEqual([0, 1, 2, 3, 4].map((i) => `edge.rules.rule[${i}]`));
    const big = diffModels(edgeModelOf(rules(150)), edgeModelOf("<edge><rules/></edge>"), new Set());
    expect(big.lost).toHaveLength(100);
    expect(big.omitted).toBe(50);
  });
});
