/**
 * What a manager fills into an edge document it is sent, on a create (POST) and on an update
 * (PUT): defaults for the top-level settings a document leaves out (VMware's RAML gives them:
 * enableAesni true, enableFips false, vseLogLevel info), an id and a rule tag for every new
 * firewall and NAT rule, and, for each appliance, the runtime fields only the manager knows (the
 * VM it deployed, the host it runs on...), which partial documents (govnsx, terraform, gonsx)
 * never carry. A PUT without `<name>` keeps the stored name. A vnic's booleans are written
 * lower-case, whatever case they were sent in. What a manager does with a PUT that
 * leaves out other sections is not recorded; the simulator replaces them (README, not modelled).
 */
import { child, childText, leaf, setChildText, type EdgeModel } from "./edge-model.ts";

/** top-level settings a manager defaults when a document leaves them out (RAML, nsxEdgesCreate) */
export const SETTING_DEFAULTS: readonly (readonly [name: string, text: string])[] = [
  ["enableAesni", "true"],
  ["enableFips", "false"],
  ["vseLogLevel", "info"],
];

/**
 * An appliance's fields that the manager sets when it deploys the VM (edge GET examples of the
 * RAML and real captures): a sent appliance without them keeps the deployed VM's.
 */
export const APPLIANCE_RUNTIME_FIELDS: readonly string[] = [
  "highAvailabilityIndex",
  "vcUuid",
  "vmId",
  "resourcePoolName",
  "datastoreName",
  "hostId",
  "hostName",
  "vmFolderName",
  "vmHostname",
  "vmName",
  "deployed",
  "edgeId",
];

/** the first ids a manager gives (RAML and real captures): firewall rules from 131073, NAT rules from 196609 */
const FIRST_FIREWALL_RULE_ID = 131073;
const FIRST_NAT_RULE_ID = 196609;

/** a vnic's boolean fields: PowerNSX's interface specs send `True`/`False` (PowerShell's text of a switch) */
const VNIC_BOOLEANS: ReadonlySet<string> = new Set(["isConnected", "enableProxyArp", "enableSendRedirects"]);

/**
 * A manager reads a vnic's booleans into its model and writes them as `true`/`false`: PowerNSX's
 * `True`/`False` (which managers accept: its New-NsxEdge works) come back lower-case.
 */
export function normalizeVnicBooleans(model: EdgeModel): void {
  for (const vnic of child(model, "vnics")?.children ?? []) {
    vnic.children = vnic.children.map((c) => {
      const lower = c.text?.trim().toLowerCase();
      return VNIC_BOOLEANS.has(c.name) && (lower === "true" || lower === "false") && c.text !== lower
        ? { ...c, text: lower }
        : c;
    });
  }
}

/** Sets each default the model lacks. */
export function fillSettingDefaults(model: EdgeModel): void {
  for (const [name, text] of SETTING_DEFAULTS)
    if (child(model, name) === undefined) setChildText(model, name, text);
}

/** Keeps the stored `<name>` when the sent model has none. */
export function keepName(model: EdgeModel, stored: EdgeModel): void {
  const name = childText(stored, "name");
  if (child(model, "name") === undefined && name !== undefined) setChildText(model, "name", name);
}

/**
 * Each sent appliance gets the runtime fields it lacks from the stored appliance it stands for:
 * the one with the same `highAvailabilityIndex`, else the one at the same position.
 */
export function keepApplianceRuntime(model: EdgeModel, stored: EdgeModel): void {
  const sent = child(model, "appliances")?.children.filter((c) => c.name === "appliance") ?? [];
  const known = child(stored, "appliances")?.children.filter((c) => c.name === "appliance") ?? [];
  sent.forEach((appliance, position) => {
    const index = childText(appliance, "highAvailabilityIndex");
    const counterpart =
      (index === undefined
        ? undefined
        : known.find((k) => childText(k, "highAvailabilityIndex") === index)) ?? known[position];
    if (counterpart === undefined) return;
    for (const name of APPLIANCE_RUNTIME_FIELDS) {
      const value = child(counterpart, name);
      if (value !== undefined && child(appliance, name) === undefined) appliance.children.push(value);
    }
  });
}

/**
 * Gives every firewall rule without an `<id>` the next id of the edge and that id as its
 * `<ruleTag>`, and every NAT rule without a `<ruleId>` likewise; ids already used by `stored`
 * (the edge before this call) are never given again.
 */
export function assignRuleIds(model: EdgeModel, stored: EdgeModel | undefined): void {
  const features = child(model, "features");
  if (features === undefined) return;
  const storedFeatures = stored === undefined ? undefined : child(stored, "features");
  numberRules(rulesOf(features, "firewall", "firewallRules", "firewallRule"), "id", {
    first: FIRST_FIREWALL_RULE_ID,
    used: rulesOf(storedFeatures, "firewall", "firewallRules", "firewallRule"),
  });
  numberRules(rulesOf(features, "nat", "natRules", "natRule"), "ruleId", {
    first: FIRST_NAT_RULE_ID,
    used: rulesOf(storedFeatures, "nat", "natRules", "natRule"),
  });
}

function rulesOf(features: EdgeModel | undefined, section: string, list: string, item: string): EdgeModel[] {
  const container = features === undefined ? undefined : child(features, section);
  const rules = container === undefined ? undefined : child(container, list);
  return rules?.children.filter((c) => c.name === item) ?? [];
}

function numberRules(
  rules: readonly EdgeModel[],
  idField: string,
  { first, used }: { first: number; used: readonly EdgeModel[] },
): void {
  const ids = [...rules, ...used].map((r) => Number(childText(r, idField)?.trim())).filter(Number.isInteger);
  let next = Math.max(first - 1, ...ids) + 1;
  for (const rule of rules) {
    if ((childText(rule, idField)?.trim() ?? "") !== "") continue;
    const id = String(next++);
    replaceOrPrepend(rule, idField, id);
    if (child(rule, "ruleTag") === undefined) rule.children.splice(1, 0, leaf("ruleTag", id));
  }
}

/** sets a rule's id leaf in place, or first when it has none (ids come first in a rule) */
function replaceOrPrepend(rule: EdgeModel, name: string, text: string): void {
  const index = rule.children.findIndex((c) => c.name === name);
  if (index === -1) rule.children.unshift(leaf(name, text));
  else rule.children[index] = { ...leaf(name, text), attributes: rule.children[index]!.attributes };
}
