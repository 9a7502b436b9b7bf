import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { loadManifests, ManifestError, type ManifestSet } from "../../src/api/manifests.ts";
import { ResourceValidator } from "../../src/api/schema.ts";
import { objectFor, type ValidationCase } from "./validation-cases.ts";

const root = mkdtempSync(join(tmpdir(), "nsxv-manifests-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const validator = ResourceValidator.load();

/** Writes files (path → text) under a fresh directory and returns its path. */
function tree(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const yaml = (...docs: unknown[]): string => docs.map((d) => stringify(d)).join("---\n");
const names = (set: ManifestSet): string[] =>
  set.objects.map((o) => `${o.object.kind}/${o.object.metadata.name}`);
const configMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "first" }, data: { a: "b" } };

interface ErrorCase extends ValidationCase {
  /** text on the line the error must point at */
  lineWith: string;
}

const errorCases: ErrorCase[] = [
  { name: "BadEdgeId", reason: "edge ids are edge-<n>", kind: "EdgeTenant", spec: { edgeId: "edge-x" }, field: "spec.edgeId", lineWith: "edgeId:" },
  { name: "BadAddress", reason: "an octet above 255", kind: "IPPoolAllocations", spec: { allowed: ["10.0.0.1", "10.0.0.300"] }, field: "spec.allowed[1]", lineWith: "- 10.0.0.300" },
  { name: "BadRange", reason: "a range that runs backwards", kind: "IPPoolAllocations", spec: { allowed: ["10.0.0.9-10.0.0.1"] }, field: "spec.allowed[0]", lineWith: "- 10.0.0.9-10.0.0.1" },
  { name: "BadCidr", reason: "a prefix longer than 32", kind: "IPPoolAllocations", spec: { allowed: ["10.0.0.1", "10.0.0.2", "10.0.0.0/40"] }, field: "spec.allowed[2]", lineWith: "- 10.0.0.0/40" },
  { name: "PoolIdAndName", reason: "both selectors", kind: "IPPoolAllocations", spec: { pool: { id: "ipaddresspool-1", name: "vteps" } }, field: "spec.pool", lineWith: "pool:" },
  { name: "PoolNeither", reason: "no selector", kind: "IPPoolAllocations", spec: { pool: { scope: "globalroot-0" } }, field: "spec.pool", lineWith: "pool:" },
  { name: "UnknownPolicy", reason: "not Enforce nor Observe", kind: "EdgeTenant", spec: { managementPolicy: "Sometimes" }, field: "spec.managementPolicy", lineWith: "managementPolicy:" },
  { name: "SyncTooOften", reason: "below the 10s floor", kind: "EdgeTenant", spec: { syncInterval: "2s" }, field: "spec.syncInterval", lineWith: "syncInterval:" },
  { name: "FtpUrl", reason: "neither https nor http", kind: "NSXManager", spec: { url: "ftp://nsx.example.com" }, field: "spec.url", lineWith: "url:" },
  { name: "UnknownField", reason: "strict decoding", kind: "NSXManager", spec: { timeoutSeconds: 5 }, field: "spec.timeoutSeconds", lineWith: "timeoutSeconds:" },
  { name: "MissingField", reason: "a required field points at its parent", kind: "EdgeTenant", spec: { tenant: undefined }, field: "spec.tenant", lineWith: "spec:" },
]; // prettier-ignore

describe("loadManifests: errors name file, line, document, object and field", async () => {
  const files = Object.fromEntries(
    errorCases.map((c, i) => [
      `${String(i).padStart(2, "0")}-${c.name}.yaml`,
      yaml(configMap, objectFor(c, c.name.toLowerCase())),
    ]),
  );
  const dir = tree("errors", files);
  const set = await loadManifests([dir], { validator });

  it.each(errorCases.map((c, i) => ({ ...c, file: join(dir, Object.keys(files)[i]!) })))("$name", (c) => {
    const errors = set.errors.filter((e) => e.file === c.file);
    expect(errors, c.reason).toHaveLength(1);
    const [error] = errors as [ManifestError];
    const lines = files[c.file.slice(dir.length + 1)]!.split("\n");
    const line = lines.findIndex((l) => l.includes(c.lineWith)) + 1;
    expect(error.message, c.reason).toContain(
      `${c.file}:${line}: document 2: ${c.kind} default/${c.name.toLowerCase()}: ${c.field}: `,
    );
    expect(error).toMatchObject({
      code: "INVALID_MANIFEST",
      documentIndex: 1,
      line,
      kind: c.kind,
      field: c.field,
    });
  });

  it("keeps no object that has an error, and skips the other kinds", () => {
    expect(set.objects).toEqual([]);
    expect(set.skipped).toHaveLength(errorCases.length);
    expect(set.skipped[0]).toMatchObject({
      kind: "ConfigMap",
      name: "first",
      namespace: "default",
      source: { documentIndex: 0, line: 1 },
    });
  });
});

describe("loadManifests: files and documents", () => {
  const tenant = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    ...objectFor({ name: "", reason: "", kind: "EdgeTenant" }, name),
    ...extra,
  });

  it("reads directories recursively in sorted order, .yaml, .yml and .json, several documents per file", async () => {
    const dir = tree("walk", {
      "b.yaml": yaml(tenant("b1"), tenant("b2")) + "---\n",
      "a/z.yml": yaml(tenant("a-z")),
      "a/c.json": JSON.stringify(tenant("a-c")),
      "notes.txt": yaml(tenant("ignored")),
      ".hidden/x.yaml": yaml(tenant("hidden")),
    });
    const set = await loadManifests([dir], { validator });
    expect(set.errors).toEqual([]);
    expect(names(set)).toEqual(["EdgeTenant/a-c", "EdgeTenant/a-z", "EdgeTenant/b1", "EdgeTenant/b2"]);
    expect(set.objects[3]?.source).toEqual({ file: join(dir, "b.yaml"), documentIndex: 1, line: 11 });
  });

  it("reads a file named explicitly whatever its extension", async () => {
    const dir = tree("explicit", { "tenant.txt": yaml(tenant("t")) });
    expect(names(await loadManifests([join(dir, "tenant.txt")], { validator }))).toEqual(["EdgeTenant/t"]);
  });

  it("returns objects with defaults applied and the namespace filled in", async () => {
    const dir = tree("defaults", {
      "x.yaml": yaml(tenant("d"), tenant("e", { metadata: { name: "e", namespace: "prod" } })),
    });
    const [d, e] = (await loadManifests([dir], { validator })).objects;
    expect(d?.object.metadata.namespace).toBe("default");
    expect(d?.object.spec).toMatchObject({ managementPolicy: "Enforce" });
    expect(e?.object.metadata.namespace).toBe("prod");
  });

  it("reports bad YAML with its line and still loads the file's other documents", async () => {
    const text = `${yaml(tenant("good"))}---\napiVersion: nsxv.io/v1alpha1\nkind: EdgeTenant\nmetadata:\n  name: bad\n spec: {}\n`;
    const dir = tree("badyaml", { "x.yaml": text });
    const set = await loadManifests([dir], { validator });
    expect(names(set)).toEqual(["EdgeTenant/good"]);
    expect(set.errors).toHaveLength(1);
    const line = text.split("\n").indexOf(" spec: {}") + 1;
    expect(set.errors[0]?.message).toMatch(
      new RegExp(`^${join(dir, "x.yaml")}:${line}: document 2: EdgeTenant default/bad: invalid YAML: `),
    );
  });

  it("refuses a document that expands aliases without bound", async () => {
    const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 10; i++)
      lines.push(
        `${"abcdefghij"[i]}: &${"abcdefghij"[i]} [${Array(10)
          .fill(`*${"abcdefghij"[i - 1]}`)
          .join(", ")}]`,
      );
    const dir = tree("aliases", { "x.yaml": `${lines.join("\n")}\n` });
    const set = await loadManifests([dir], { validator });
    expect(set.errors.map((e) => e.detail)).toEqual([expect.stringMatching(/^invalid YAML: .*alias/i)]);
  });

  it("collects every error of every file, and a missing path is one of them", async () => {
    const dir = tree("many", {
      "1.yaml": yaml(tenant("x", { spec: { edgeId: "e" } })),
      "2.yaml": yaml(
        ["a", "list"],
        { kind: "EdgeTenant" },
        { apiVersion: "nsxv.io/v1alpha1", kind: "Edge", metadata: { name: "y" } },
      ),
      "3.yaml": yaml(tenant("ok")),
    });
    const set = await loadManifests([join(root, "nowhere"), dir], { validator });
    expect(names(set)).toEqual(["EdgeTenant/ok"]);
    expect(set.errors.every((e) => e instanceof ManifestError)).toBe(true);
    expect(set.errors.map((e) => e.message.replaceAll(root, "ROOT"))).toEqual([
      expect.stringMatching(/^ROOT\/nowhere: cannot read: ENOENT/),
      "ROOT/many/1.yaml:5: document 1: EdgeTenant default/x: spec.managerRef: Required value",
      "ROOT/many/1.yaml:5: document 1: EdgeTenant default/x: spec.tenant: Required value",
      "ROOT/many/1.yaml:6: document 1: EdgeTenant default/x: spec.edgeId: Invalid value: \"e\": should match '^edge-[0-9]+$'",
      "ROOT/many/2.yaml:1: document 1: not an object with apiVersion and kind",
      "ROOT/many/2.yaml:4: document 2: apiVersion: Required value",
      "ROOT/many/2.yaml:7: document 3: Edge default/y: kind: nsxv.io/v1alpha1 has no kind Edge: want one of NSXManager, EdgeTenant, IPPoolAllocations",
    ]);
  });
});

describe("loadManifests: what kubectl writes, and documents that attack the reader", () => {
  const tenant = (name: string, extra: { spec?: Record<string, unknown> } = {}) =>
    objectFor({ name: "", reason: "", kind: "EdgeTenant", spec: extra.spec ?? {} }, name);
  it("reads each item of a v1 List (kubectl get -o yaml) as an object of its own, with its line", async () => {
    const list = {
      apiVersion: "v1",
      kind: "List",
      items: [tenant("a"), tenant("b", { spec: { edgeId: "e" } })],
    };
    const dir = tree("list", { "x.yaml": yaml(list) });
    const set = await loadManifests([dir], { validator });
    expect(names(set)).toEqual(["EdgeTenant/a"]);
    expect(set.errors.map((e) => [e.objectName, e.field])).toEqual([["b", "spec.edgeId"]]);
    const text = yaml(list).split("\n");
    expect(set.errors[0]?.line, "the line of the item's field").toBe(
      text.findIndex((l) => /edgeId: e$/.test(l)) + 1,
    );
  });

  it("refuses a kind it reads under another apiVersion rather than skipping it", async () => {
    const dir = tree("version", { "x.yaml": yaml({ ...tenant("a"), apiVersion: "nsxv.io/v1" }) });
    const set = await loadManifests([dir], { validator });
    expect(set.objects).toEqual([]);
    expect(set.skipped).toEqual([]);
    expect(set.errors.map((e) => [e.field, e.detail])).toEqual([
      ["apiVersion", "EdgeTenant is nsxv.io/v1alpha1, not nsxv.io/v1"],
    ]);
  });

  it.each([
    {
      name: "AliasCycle",
      reason: "an alias to its own ancestor",
      text: "apiVersion: nsxv.io/v1alpha1\nkind: EdgeTenant\nmetadata: {name: a}\nspec: &a {tenant: *a}\n",
      detail: /cycle/,
    },
    {
      name: "DeepNesting",
      reason:
        "nesting no object needs, shallow enough to be parsed (deeper is refused unparsed: test/bad-input)",
      text: `apiVersion: nsxv.io/v1alpha1\nkind: EdgeTenant\nmetadata: {name: a}\nspec: ${"[".repeat(100)}${"]".repeat(100)}\n`,
      detail: /nest/,
    },
  ])(
    "turns $name ($reason) into an error naming file, line and object, and keeps the other files",
    async (c) => {
      const dir = tree(`attack-${c.name}`, { "bad.yaml": c.text, "good.yaml": yaml(tenant("ok")) });
      const set = await loadManifests([dir], { validator });
      expect(names(set)).toEqual(["EdgeTenant/ok"]);
      expect(set.errors).toHaveLength(1);
      expect(set.errors[0]).toMatchObject({
        file: join(dir, "bad.yaml"),
        kind: "EdgeTenant",
        objectName: "a",
      });
      expect(set.errors[0]?.detail).toMatch(c.detail);
    },
  );
});

describe("loadManifests: metadata", () => {
  it.each([
    {
      name: "MissingName",
      reason: "every object needs a name",
      metadata: {},
      field: "metadata.name",
      message: "Required value",
    },
    {
      name: "UppercaseName",
      reason: "names are DNS subdomains",
      metadata: { name: "Web" },
      field: "metadata.name",
      message: "RFC 1123 subdomain",
    },
    {
      name: "BadNamespace",
      reason: "namespaces are DNS labels",
      metadata: { name: "w", namespace: "a.b" },
      field: "metadata.namespace",
      message: "RFC 1123 label",
    },
    {
      name: "UnknownMetadataField",
      reason: "strict decoding covers metadata",
      metadata: { name: "w", tags: ["x"] },
      field: "metadata.tags",
      message: "unknown field",
    },
    {
      name: "LabelNotString",
      reason: "label values are strings",
      metadata: { name: "w", labels: { a: 1 } },
      field: "metadata.labels",
      message: "map of strings",
    },
  ])("$name", async ({ name, reason, metadata, field, message }) => {
    const dir = tree(`meta-${name}`, {
      "x.yaml": yaml({ ...objectFor({ name: "", reason: "", kind: "EdgeTenant" }), metadata }),
    });
    const set = await loadManifests([dir], { validator });
    expect(set.objects, reason).toEqual([]);
    expect(
      set.errors.map((e) => e.field),
      reason,
    ).toEqual([field]);
    expect(set.errors[0]?.detail, reason).toContain(message);
  });

  it("refuses a second object of one kind, namespace and name, and names the first", async () => {
    const et = (name: string, namespace?: string): unknown => ({
      ...objectFor({ name: "", reason: "", kind: "EdgeTenant" }),
      metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
    });
    const manager = { ...objectFor({ name: "", reason: "", kind: "NSXManager" }), metadata: { name: "a" } };
    const dir = tree("dupes", {
      "1.yaml": yaml(et("a"), manager),
      "2.yaml": yaml(et("a", "default"), et("a", "other")),
    });
    const set = await loadManifests([dir], { validator });
    expect(names(set)).toEqual(["EdgeTenant/a", "NSXManager/a", "EdgeTenant/a"]);
    expect(set.errors).toHaveLength(1);
    expect(set.errors[0]?.message).toBe(
      `${join(dir, "2.yaml")}:4: document 1: EdgeTenant default/a: metadata.name: Duplicate value: "a": already defined at ${join(dir, "1.yaml")}:1 (document 1)`,
    );
  });
});

describe("loadManifests: Secrets", () => {
  const secret = (extra: Record<string, unknown>): unknown => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "creds" },
    ...extra,
  });

  it("decodes data and lets stringData win per key, as Kubernetes merges them", async () => {
    const data = {
      username: Buffer.from("admin").toString("base64"),
      password: Buffer.from("old").toString("base64"),
    };
    const dir = tree("secret", {
      "s.yaml": yaml(secret({ type: "Opaque", data, stringData: { password: "new" } })),
    });
    const set = await loadManifests([dir], { validator });
    expect(set.errors).toEqual([]);
    expect(set.secrets).toHaveLength(1);
    expect(set.secrets[0]?.values).toEqual({ username: "admin", password: "new" });
    expect(set.secrets[0]?.secret.metadata).toEqual({ name: "creds", namespace: "default" });
  });

  it.each([
    {
      name: "BadBase64",
      reason: "data values are base64",
      extra: { data: { password: "not base64!" } },
      field: "data.password",
      message: "Invalid value: not valid base64",
    },
    {
      name: "BadKey",
      reason: "keys are alphanumerics, '-', '_' and '.'",
      extra: { stringData: { "pass word": "x" } },
      field: "stringData.pass word",
      message: "Invalid key",
    },
    {
      name: "NumberValue",
      reason: "stringData values are strings",
      extra: { stringData: { port: 443 } },
      field: "stringData.port",
      message: "Invalid value: must be a string",
    },
    {
      name: "UnknownField",
      reason: "strict decoding",
      extra: { strinData: { a: "b" } },
      field: "strinData",
      message: "unknown field",
    },
  ])("rejects $name without quoting the value", async ({ name, reason, extra, field, message }) => {
    const dir = tree(`secret-${name}`, { "s.yaml": yaml(secret(extra)) });
    const set = await loadManifests([dir], { validator });
    expect(set.secrets, reason).toEqual([]);
    expect(
      set.errors.map((e) => e.field),
      reason,
    ).toEqual([field]);
    expect(set.errors[0]?.message, reason).toContain(`Secret default/creds: ${field}: ${message}`);
    expect(set.errors[0]?.message, reason).not.toContain("not base64!");
  });
});
