/**
 * crds/ and src/api/types.ts describe the same three kinds. A fixture typed so that it must set
 * every field of the types (DeepRequired: `npm run typecheck` fails when types.ts gains a field
 * the fixture lacks, or the fixture has one types.ts lacks) validates against the CRD schemas
 * with no unknown field, and covers every schema field: a field added to one side only fails.
 * Also: every schema field is described, the schemas are structural, defaults match SPEC_DEFAULTS,
 * and every CEL rule has its TypeScript counterpart.
 */
import { describe, expect, it } from "vitest";
import { CEL_COUNTERPARTS } from "../../src/api/cel-rules.ts";
import { DURATION_PATTERN } from "../../src/api/duration.ts";
import { DNS_SUBDOMAIN_MAX_LENGTH } from "../../src/api/names.ts";
import {
  EDGE_ID_MAX_LENGTH,
  EDGE_ID_PATTERN,
  POOL_ID_MAX_LENGTH,
  POOL_ID_PATTERN,
} from "../../src/nsx/ids.ts";
import { compileValidator, readCrds } from "../../src/api/crds.ts";
import { schemaEntries, type CrdInfo, type SchemaNode } from "../../src/api/schema.ts";
import {
  DEPENDENT_KINDS,
  KINDS,
  SPEC_DEFAULTS,
  UNOBSERVED_GENERATION,
  type EdgeTenant,
  type IPPoolAllocations,
  type Kind,
  type NSXManager,
  type ObjectMeta,
} from "../../src/api/types.ts";

type DeepRequired<T> = T extends (infer U)[]
  ? DeepRequired<U>[]
  : T extends object
    ? { [K in keyof T]-?: DeepRequired<T[K]> }
    : T;
type Fixture<T extends { metadata: ObjectMeta }> = Omit<DeepRequired<T>, "metadata"> & {
  metadata: ObjectMeta;
};

const condition = {
  type: "Ready",
  status: "True",
  reason: "Available",
  message: "ok",
  lastTransitionTime: "2024-05-01T10:00:00Z",
  observedGeneration: 3,
} as const;
const metadata = { name: "full", namespace: "default" };

const manager: Fixture<NSXManager> = {
  apiVersion: "nsxv.io/v1alpha1",
  kind: "NSXManager",
  metadata,
  spec: {
    url: "https://nsx.example.com",
    allowedNamespaces: {
      selector: {
        matchLabels: { "nsxv.io/manager": "nsx-prod" },
        matchExpressions: [{ key: "team", operator: "In", values: ["blue", "green"] }],
      },
    },
    credentialsSecretRef: { name: "nsx-credentials" },
    auth: "Token",
    tls: { insecureSkipVerify: false, caSecretRef: { name: "nsx-ca", key: "ca.crt" } },
    maxConcurrentRequests: 4,
    requestsPerSecond: 10,
    requestTimeoutSeconds: 60,
  },
  status: {
    observedGeneration: 3,
    conditions: [condition],
    reachable: true,
    authenticated: true,
    vsmUuid: "420D3C54-5E36-8D1A-9F41-2C6B7A3E9B10",
    edgeListError: "GET /api/4.0/edges?startIndex=0&pageSize=1024: HTTP 403",
    heldSecrets: ["nsx-ca", "nsx-credentials"],
  },
};

const edgeTenant: Fixture<EdgeTenant> = {
  apiVersion: "nsxv.io/v1alpha1",
  kind: "EdgeTenant",
  metadata,
  spec: {
    managerRef: { name: "nsx", namespace: "platform" },
    edgeId: "edge-7",
    tenant: "tenant-a",
    managementPolicy: "Observe",
    deletionPolicy: "Restore",
    syncInterval: "2m",
  },
  status: {
    observedGeneration: 3,
    conditions: [condition],
    edgeName: "esg-1",
    edgeVersion: 12,
    observedTenant: "tenant-a",
    originalTenant: "legacy",
    originalTenantOf: { edgeId: "edge-7", manager: "nsx", managerURL: "https://nsx.example.org" },
    lastCorrectionTime: "2024-05-01T10:00:00Z",
    observedVia: "EdgeList",
    lastFullReadTime: "2024-05-01T09:30:00Z",
    edgeShape: {
      edgeId: "edge-7",
      version: 12,
      sections: ["appliances", "features", "features/firewall", "vnics"],
      lists: [{ path: "vnics/vnic", count: 10 }],
    },
  },
};

const poolAllocations: Fixture<IPPoolAllocations> = {
  apiVersion: "nsxv.io/v1alpha1",
  kind: "IPPoolAllocations",
  metadata,
  spec: {
    managerRef: { name: "nsx", namespace: "platform" },
    // both, to cover both fields; the one-of rule is switched off for this test only
    pool: { id: "ipaddresspool-1", name: "vteps", scope: "globalroot-0" },
    allowed: ["10.0.0.1"],
    managementPolicy: "Enforce",
    release: { minStrayAge: "10m", maxPerSync: 5 },
    syncInterval: "5m",
  },
  status: {
    observedGeneration: 3,
    conditions: [condition],
    poolId: "ipaddresspool-1",
    poolName: "vteps",
    totalAddressCount: 254,
    usedAddressCount: 3,
    strayCount: 1,
    stray: [
      {
        ip: "10.0.0.9",
        allocationId: "allocatedipaddress-9",
        note: "controller-2",
        firstSeen: "2024-05-01T10:00:00Z",
      },
    ],
    missing: 0,
    released: [{ ip: "10.0.0.8", note: "old", time: "2024-05-01T10:00:00Z" }],
  },
};

const FIXTURES: Record<Kind, object> = {
  NSXManager: manager,
  EdgeTenant: edgeTenant,
  IPPoolAllocations: poolAllocations,
};

/** Short names that Kubernetes v1.36.3 itself serves (read from its discovery documents). */
const BUILTIN_SHORT_NAMES = [
  "cm", "cs", "ep", "ev", "limits", "no", "ns", "po", "pv", "pvc", "quota", "rc", "sa", "svc", "deploy", "ds",
  "rs", "sts", "hpa", "cj", "csr", "ing", "ip", "netpol", "pdb", "sc", "vac", "crd", "crds", "pc",
]; // prettier-ignore

const crds = readCrds();
const crdOf = (kind: Kind): CrdInfo => {
  const crd = crds.find((c) => c.kind === kind);
  if (crd === undefined) throw new Error(`no CRD for ${kind}`);
  return crd;
};
const nodeAt = (kind: Kind, path: string): SchemaNode | undefined =>
  schemaEntries(crdOf(kind).schema).find((e) => e.path === path)?.node;

/**
 * Every path in a value, `[*]` for array items, `{*}` for the values of the schema's maps (`maps`:
 * their paths), metadata left out (the schema leaves it open).
 */
function valuePaths(value: unknown, maps: ReadonlySet<string>, path = ""): string[] {
  if (path === "metadata") return [path];
  const here = path === "" ? [] : [path];
  if (Array.isArray(value))
    return [...here, ...value.flatMap((item) => valuePaths(item, maps, `${path}[*]`))];
  if (typeof value === "object" && value !== null) {
    const child = (k: string): string => (maps.has(path) ? `${path}{*}` : path === "" ? k : `${path}.${k}`);
    return [...here, ...Object.entries(value).flatMap(([k, v]) => valuePaths(v, maps, child(k)))];
  }
  return here;
}

describe("types.ts and crds/ agree", () => {
  it("crds/ defines exactly the three kinds", () => {
    expect(crds.map((c) => c.kind).sort()).toEqual([...KINDS].sort());
  });

  const permissive = compileValidator(
    crds,
    CEL_COUNTERPARTS.map((c) => (c.path === "spec.pool" ? { ...c, check: () => undefined } : c)),
  );

  it.each(Object.keys(FIXTURES) as Kind[])("%s: the full fixture validates with no unknown field", (kind) => {
    expect(permissive.validate(kind, FIXTURES[kind]).issues).toEqual([]);
  });

  it.each(Object.keys(FIXTURES) as Kind[])("%s: the fixture covers every field of the schema", (kind) => {
    const entries = schemaEntries(crdOf(kind).schema);
    const schemaPaths = entries.map((e) => e.path).filter((p) => p !== "");
    const maps = new Set(
      entries.filter((e) => typeof e.node.additionalProperties === "object").map((e) => e.path),
    );
    expect(new Set(valuePaths(FIXTURES[kind], maps))).toEqual(new Set(schemaPaths));
  });

  it("the schema's defaults are the values of SPEC_DEFAULTS, and there are no others", () => {
    const defaults = crds.flatMap((crd) =>
      schemaEntries(crd.schema)
        .filter((e) => e.node.default !== undefined && JSON.stringify(e.node.default) !== "{}")
        .map((e) => `${crd.kind} ${e.path}=${JSON.stringify(e.node.default)}`),
    );
    const d = SPEC_DEFAULTS;
    expect(defaults.sort()).toEqual(
      [
        `NSXManager spec.auth="${d.auth}"`,
        `NSXManager spec.tls.insecureSkipVerify=${d.insecureSkipVerify}`,
        `NSXManager spec.maxConcurrentRequests=${d.maxConcurrentRequests}`,
        `NSXManager spec.requestsPerSecond=${d.requestsPerSecond}`,
        `NSXManager spec.requestTimeoutSeconds=${d.requestTimeoutSeconds}`,
        `EdgeTenant spec.managementPolicy="${d.managementPolicy}"`,
        `EdgeTenant spec.deletionPolicy="${d.deletionPolicy}"`,
        `IPPoolAllocations spec.managementPolicy="${d.managementPolicy}"`,
        `IPPoolAllocations spec.pool.scope="${d.poolScope}"`,
        `IPPoolAllocations spec.release.minStrayAge="${d.minStrayAge}"`,
        `IPPoolAllocations spec.release.maxPerSync=${d.maxPerSync}`,
        ...KINDS.map((kind) => `${kind} status.observedGeneration=${UNOBSERVED_GENERATION}`),
      ].sort(),
    );
  });

  it("the syncInterval floor and the release history are the values of SPEC_DEFAULTS", () => {
    for (const kind of DEPENDENT_KINDS) {
      const rules = nodeAt(kind, "spec.syncInterval")?.["x-kubernetes-validations"] ?? [];
      expect(rules.map((r) => r.rule)).toEqual([
        `duration(self) >= duration('${SPEC_DEFAULTS.minSyncIntervalSeconds}s')`,
      ]);
    }
    expect(nodeAt("IPPoolAllocations", "status.released")?.description).toContain(
      `last ${SPEC_DEFAULTS.releasedHistory}`,
    );
  });

  it("every duration field uses the pattern parseDuration implements", () => {
    const durations = crds.flatMap((crd) =>
      schemaEntries(crd.schema)
        .filter((e) => /syncInterval|minStrayAge/.test(e.path))
        .map((e) => e.node.pattern),
    );
    expect(durations).toEqual([DURATION_PATTERN, DURATION_PATTERN, DURATION_PATTERN]);
  });
});

describe("identifiers: crds/ bounds them as the TypeScript that checks them does", () => {
  it.each([
    {
      name: "EdgeId",
      reason: "spec.edgeId is what resolveEdgeTenant accepts and the client puts in a path (isEdgeId)",
      kind: "EdgeTenant" as const,
      path: "spec.edgeId",
      want: { pattern: EDGE_ID_PATTERN, maxLength: EDGE_ID_MAX_LENGTH },
    },
    {
      name: "PoolId",
      reason: "spec.pool.id is what resolvePool accepts and the client puts in a path (isPoolId)",
      kind: "IPPoolAllocations" as const,
      path: "spec.pool.id",
      want: { pattern: POOL_ID_PATTERN, maxLength: POOL_ID_MAX_LENGTH },
    },
  ])("$name: $reason", ({ kind, path, want }) => {
    const node = nodeAt(kind, path);
    expect({ pattern: node?.pattern, maxLength: node?.maxLength }).toEqual(want);
  });

  it("every reference to an object by name is bounded as a DNS subdomain (an object's name) is", () => {
    const refs = crds.flatMap((crd) =>
      schemaEntries(crd.schema)
        .filter((e) => /Ref\.name$/.test(e.path))
        .map((e) => ({ at: `${crd.kind} ${e.path}`, maxLength: e.node.maxLength })),
    );
    expect(refs.map((r) => r.at).sort()).toEqual([
      "EdgeTenant spec.managerRef.name",
      "IPPoolAllocations spec.managerRef.name",
      "NSXManager spec.credentialsSecretRef.name",
      "NSXManager spec.tls.caSecretRef.name",
    ]);
    for (const ref of refs) expect(ref.maxLength, ref.at).toBe(DNS_SUBDOMAIN_MAX_LENGTH);
  });
});

describe("CEL rules and their TypeScript counterparts", () => {
  const rules = crds.flatMap((crd) =>
    schemaEntries(crd.schema).flatMap((e) =>
      (e.node["x-kubernetes-validations"] ?? []).map((r) => `${crd.kind} ${e.path}: ${r.rule}`),
    ),
  );

  it("every rule in crds/ has a counterpart and every counterpart has its rule", () => {
    expect(rules.sort()).toEqual(CEL_COUNTERPARTS.map((c) => `${c.kind} ${c.path}: ${c.rule}`).sort());
  });

  it("every rule carries a message for people", () => {
    for (const crd of crds) {
      for (const { node } of schemaEntries(crd.schema)) {
        for (const rule of node["x-kubernetes-validations"] ?? [])
          expect(rule.message, rule.rule).toBeTruthy();
      }
    }
  });

  it("the validator refuses a CRD whose rule has no counterpart", () => {
    const doctored = crds.map((crd) => structuredClone(crd));
    const edge = doctored.find((c) => c.kind === "EdgeTenant") as CrdInfo;
    edge.schema.properties!["spec"]!["x-kubernetes-validations"] = [{ rule: "self.tenant != 'root'" }];
    expect(() => compileValidator(doctored)).toThrow(
      /EdgeTenant spec: CEL rule without a TypeScript counterpart/,
    );
  });
});

describe("crds/ are valid, explained apiextensions.k8s.io/v1 definitions", () => {
  it.each(crds.map((c) => [c.kind, c] as const))("%s: every field has a description", (_kind, crd) => {
    const undescribed = schemaEntries(crd.schema)
      .filter((e) => e.path !== "metadata" && (e.node.description ?? "").trim().length < 10)
      .map((e) => e.path || "(root)");
    expect(undescribed).toEqual([]);
  });

  it.each(crds.map((c) => [c.kind, c] as const))("%s: the schema is structural", (_kind, crd) => {
    expect(crd.schema.properties?.["metadata"]).toEqual({ type: "object" });
    for (const { path, node } of schemaEntries(crd.schema)) {
      expect(node.type, `${path} has a type`).toMatch(/^(object|array|string|integer|number|boolean)$/);
      expect(node, `${path} is not nullable`).not.toHaveProperty("nullable");
      expect(node, `${path} keeps no unknown fields`).not.toHaveProperty(
        "x-kubernetes-preserve-unknown-fields",
      );
      if (node.properties !== undefined) expect(node, path).not.toHaveProperty("additionalProperties");
      if (node.type === "array") expect(node.items, `${path} declares its items`).toBeDefined();
      if (node["x-kubernetes-list-type"] === "map") {
        for (const key of node["x-kubernetes-list-map-keys"] ?? [])
          expect(node.items?.required).toContain(key);
      }
      if (node["x-kubernetes-validations"] !== undefined && node.type === "string") {
        expect(node, `${path}: a CEL rule on a string needs maxLength for its cost estimate`).toHaveProperty(
          "maxLength",
        );
      }
    }
  });

  it.each(crds.map((c) => [c.kind, c] as const))(
    "%s: names, scope, version and printer columns",
    (_kind, crd) => {
      const spec = crd.definition["spec"] as {
        group: string;
        scope: string;
        names: { plural: string; shortNames: string[]; categories: string[] };
        versions: {
          name: string;
          served: boolean;
          storage: boolean;
          subresources: unknown;
          additionalPrinterColumns: { jsonPath: string }[];
        }[];
      };
      expect((crd.definition["metadata"] as { name: string }).name).toBe(`${spec.names.plural}.nsxv.io`);
      expect(spec.group).toBe("nsxv.io");
      expect(spec.scope).toBe("Namespaced");
      expect(spec.names.categories).toEqual(["nsxv"]);
      expect(spec.names.shortNames.filter((s) => BUILTIN_SHORT_NAMES.includes(s))).toEqual([]);
      expect(spec.versions).toHaveLength(1);
      const [version] = spec.versions;
      expect(version).toMatchObject({
        name: "v1alpha1",
        served: true,
        storage: true,
        subresources: { status: {} },
      });
      const paths = new Set(schemaEntries(crd.schema).map((e) => e.path));
      for (const { jsonPath } of version!.additionalPrinterColumns) {
        if (jsonPath === ".metadata.creationTimestamp") continue;
        // `.status.conditions[?(@.type=="Ready")].status` → status.conditions[*].status
        const path = jsonPath.slice(1).replace(/\[\?\(.*?\)\]/g, "[*]");
        expect(paths, `printer column ${jsonPath}`).toContain(path);
      }
    },
  );

  it("short names are unique across the three kinds", () => {
    const all = crds.flatMap(
      (c) => (c.definition["spec"] as { names: { shortNames: string[] } }).names.shortNames,
    );
    expect(new Set(all).size).toBe(all.length);
  });
});
