import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SimulatorInputError,
  SimulatorState,
  loadStateFile,
  startSimulator,
  validateStateInput,
} from "../../src/simulator/index.ts";
import { POOL_V4, smallEdge, storedSmallEdge } from "./helpers.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sim-state-"));
  mkdirSync(join(dir, "edges"));
  writeFileSync(join(dir, "edges", "edge-7.xml"), smallEdge());
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("loadStateFile", () => {
  it("reads YAML, with xmlFile relative to the state file, and the fixture in the repository", async () => {
    const path = write(
      "state.yaml",
      [
        "credentials: { username: ops, password: pw }",
        "edges:",
        "  - xmlFile: edges/edge-7.xml",
        "  - generate: { count: 2, idStart: 10, firewallRules: 1 }",
        "pools:",
        "  - id: ipaddresspool-3",
        "    name: p",
        "    ranges: [{ start: 10.1.0.1, end: 10.1.0.4 }]",
        "    allocations: [{ ip: 10.1.0.2, note: n }]",
      ].join("\n"),
    );
    const state = new SimulatorState(await loadStateFile(path));
    expect(state.edges().map((e) => e.id)).toEqual(["edge-7", "edge-10", "edge-11"]);
    expect(state.edge("edge-7")?.text).toBe(storedSmallEdge());
    expect(state.pool("ipaddresspool-3")?.usedAddressCount).toBe(1);
    expect(state.auth.username).toBe("ops");
    const fixture = new SimulatorState(await loadStateFile("test/simulator/fixtures/state.yaml"));
    expect(fixture.dump().pools.map((p) => p.id)).toEqual(["ipaddresspool-1", "ipaddresspool-2"]);
  });

  it("reads JSON", async () => {
    const path = write("state.json", JSON.stringify({ pools: [POOL_V4], settings: { latencyMs: 5 } }));
    const state = new SimulatorState(await loadStateFile(path));
    expect(state.settings.latencyMs).toBe(5);
    expect(state.pool("ipaddresspool-1")?.totalAddressCount).toBe(3);
  });

  it("reads an empty file as an empty state", async () => {
    const state = new SimulatorState(await loadStateFile(write("empty.yaml", "")));
    expect(state.dump()).toMatchObject({ edges: [], pools: [] });
  });

  it.each([
    {
      name: "Missing",
      file: "nope.yaml",
      error: /state file .*nope\.yaml: ENOENT/,
      reason: "the file does not exist",
    },
    { name: "BadYaml", text: "pools: [", error: /state file/, reason: "not YAML" },
    {
      name: "MissingXmlFile",
      text: "edges: [{ xmlFile: gone.xml }]",
      error: /^edges\[0\]\.xmlFile: cannot read gone\.xml/,
      reason: "a file named but absent",
    },
    { name: "NotAnObject", text: "- 1", error: /must be an object/, reason: "a list at the top" },
  ])("$name: fails clearly ($reason)", async ({ file, text, error }) => {
    const path = file ? join(dir, file) : write("bad.yaml", text ?? "");
    await expect(loadStateFile(path)).rejects.toThrow(error);
  });
});

const range = { start: "10.0.0.1", end: "10.0.0.9" };
const pool = (extra: Record<string, unknown>) => ({
  id: "ipaddresspool-1",
  name: "p",
  ranges: [range],
  ...extra,
});

describe("validation", () => {
  it.each([
    { name: "UnknownTop", input: { pool: [] }, error: "pool: unknown field", reason: "a typo at the top" },
    { name: "PoolsNotList", input: { pools: {} }, error: "pools: must be a list", reason: "pools is a list" },
    {
      name: "ControlCharInNote",
      input: { pools: [pool({ allocations: [{ ip: "10.0.0.1", note: "ctl\u001b[31m" }] })] },
      error: "pools[0].allocations[0].note: has a character XML cannot carry (U+001B at offset 3)",
      reason: "every answer listing the note would be invalid XML",
    },
    {
      name: "VcenterWithoutUser",
      input: { vcenter: { ipAddress: "vcsa.corp.local" } },
      error: "vcenter.userName: is required",
      reason: "vcconfig answers the registration's user",
    },
    {
      name: "VcenterBadThumbprint",
      input: { vcenter: { ipAddress: "vc", userName: "u", certificateThumbprint: "D2-75" } },
      error: "vcenter.certificateThumbprint: must be colon-delimited hexadecimal",
      reason: "the RAML's form of a thumbprint",
    },
    {
      name: "AuditorWithoutPassword",
      input: { auditor: { username: "auditor" } },
      error: "auditor.password: is required",
      reason: "the Auditor account logs in like the other",
    },
    {
      name: "NoPoolId",
      input: { pools: [{ name: "p", ranges: [range] }] },
      error: "pools[0].id: is required",
      reason: "pools are found by id",
    },
    {
      name: "BadPoolId",
      input: { pools: [pool({ id: "a/b" })] },
      error: "pools[0].id: may hold only",
      reason: "ids go in paths",
    },
    {
      name: "DuplicatePool",
      input: { pools: [pool({}), pool({})] },
      error: "pools[1].id: same id as pools[0]",
      reason: "ids are unique",
    },
    {
      name: "NoRanges",
      input: { pools: [pool({ ranges: [] })] },
      error: "pools[0].ranges: needs at least one range",
      reason: "a pool holds addresses",
    },
    {
      name: "BadStart",
      input: {
        pools: [
          pool({}),
          pool({ id: "ipaddresspool-2", ranges: [{ start: "10.0.0.300", end: "10.0.0.9" }] }),
        ],
      },
      error: "pools[1].ranges[0].start: not an IP address",
      reason: "the example of the issue",
    },
    {
      name: "EndBeforeStart",
      input: { pools: [pool({ ranges: [{ start: "10.0.0.9", end: "10.0.0.1" }] })] },
      error: "pools[0].ranges[0].end: is before start",
      reason: "ranges go upwards",
    },
    {
      name: "MixedRange",
      input: { pools: [pool({ ranges: [{ start: "10.0.0.1", end: "::1" }] })] },
      error: "pools[0].ranges[0].end: not of the same family",
      reason: "one family per range",
    },
    {
      name: "MixedPool",
      input: { pools: [pool({ ranges: [range, { start: "::1", end: "::2" }] })] },
      error: "pools[0].ranges[1]: IPv6 in a pool whose ranges[0] is IPv4",
      reason: "one family per pool",
    },
    {
      name: "Overlap",
      input: { pools: [pool({ ranges: [range, { start: "10.0.0.9", end: "10.0.0.12" }] })] },
      error: "pools[0].ranges[1]: overlaps ranges[0]",
      reason: "an address belongs to one range",
    },
    {
      name: "TypeMismatch",
      input: { pools: [pool({ ipPoolType: "ipv6" })] },
      error: "pools[0].ipPoolType: is ipv6 but ranges[0] is IPv4",
      reason: "type and ranges agree",
    },
    {
      name: "BadGateway",
      input: { pools: [pool({ gateway: "gw" })] },
      error: "pools[0].gateway: not an IP address",
      reason: "an address",
    },
    {
      name: "GatewayFamily",
      input: { pools: [pool({ gateway: "::1" })] },
      error: "pools[0].gateway: not an IPv4 address",
      reason: "same family",
    },
    {
      name: "BadDns",
      input: { pools: [pool({ dnsServer2: "dns" })] },
      error: "pools[0].dnsServer2: not an IP address",
      reason: "an address",
    },
    {
      name: "BadPrefix",
      input: { pools: [pool({ prefixLength: 33 })] },
      error: "pools[0].prefixLength: must be between 0 and 32",
      reason: "IPv4 has 32 bits",
    },
    {
      name: "BadIdStyle",
      input: { pools: [pool({ allocationIds: "uuid" })] },
      error: "pools[0].allocationIds: must be one of integer, prefixed",
      reason: "two styles",
    },
    {
      name: "BadAllocation",
      input: { pools: [pool({ allocations: [{ ip: "x" }] })] },
      error: "pools[0].allocations[0].ip: not an IP address",
      reason: "an address",
    },
    {
      name: "AllocationNote",
      input: { pools: [pool({ allocations: [{ ip: "10.0.0.1", note: 3 }] })] },
      error: "pools[0].allocations[0].note: must be a string",
      reason: "free text",
    },
    {
      name: "BadScope",
      input: { pools: [pool({ scope: { name: "x" } })] },
      error: "pools[0].scope.id: is required",
      reason: "a scope has an id",
    },
    {
      name: "BadEdgeEntry",
      input: { edges: [{ xml: "<edge/>", generate: {} }] },
      error: "edges[0]: must have exactly one of xml, xmlFile, generate",
      reason: "one source",
    },
    {
      name: "BadGenerate",
      input: { edges: [{ generate: { count: -1 } }] },
      error: "edges[0].generate.count: must be between 0 and 10000",
      reason: "a count",
    },
    {
      name: "GenerateTypo",
      input: { edges: [{ generate: { rules: 3 } }] },
      error: "edges[0].generate.rules: unknown field",
      reason: "a typo",
    },
    {
      name: "BadSettings",
      input: { settings: { latencyMs: "1s" } },
      error: "settings.latencyMs: must be a number",
      reason: "milliseconds",
    },
    {
      name: "BadCredentials",
      input: { credentials: { username: "a" } },
      error: "credentials.password: is required",
      reason: "both are needed",
    },
  ])("$name: $error ($reason)", ({ input, error }) => {
    expect(() => validateStateInput(input)).toThrow(error);
    try {
      validateStateInput(input);
    } catch (e) {
      expect(e).toBeInstanceOf(SimulatorInputError);
      expect((e as SimulatorInputError).code).toBe("SIMULATOR_BAD_INPUT");
    }
  });

  it.each([
    {
      name: "AllocationOutside",
      input: { pools: [pool({ allocations: [{ ip: "10.0.1.1" }] })] },
      error: "pools[0].allocations[0].ip: not inside any range",
      reason: "allocations come from the ranges",
    },
    {
      name: "AllocationTwice",
      input: { pools: [pool({ allocations: [{ ip: "10.0.0.1" }, { ip: "10.0.0.1" }] })] },
      error: "pools[0].allocations[1].ip: allocated twice",
      reason: "one allocation per address",
    },
    {
      name: "BadEdgeXml",
      input: { edges: [{ xml: "<edge><id>edge-1</id>" }] },
      error: /^edges\[0\]\.xml: edge document: not well-formed/,
      reason: "not XML",
    },
    {
      name: "EdgeRoot",
      input: { edges: [{ xml: "<router><id>edge-1</id></router>" }] },
      error: "edges[0].xml: edge document: root element is <router>",
      reason: "an edge",
    },
    {
      name: "EdgeId",
      input: { edges: [{ xml: "<edge><id>router-1</id></edge>" }] },
      error: 'edges[0].xml: id "router-1" is not edge-<n>',
      reason: "spec 2.5",
    },
    {
      name: "EdgeVersion",
      input: { edges: [{ xml: "<edge><id>edge-1</id><version>v2</version></edge>" }] },
      error: "edges[0].xml: version",
      reason: "an integer",
    },
    {
      name: "EdgeTwice",
      input: { edges: [{ xml: smallEdge("edge-1") }, { generate: { idStart: 1 } }] },
      error: "edges[1].generate: a second edge with id edge-1",
      reason: "ids are unique",
    },
  ])("$name: building the state fails with $error ($reason)", async ({ input, error }) => {
    expect(() => new SimulatorState(input)).toThrow(error);
    await expect(startSimulator({ state: input })).rejects.toThrow(SimulatorInputError);
  });

  it("gives an edge without a version version 1", () => {
    const state = new SimulatorState({ edges: [{ xml: "<edge><id>edge-3</id><tenant>t</tenant></edge>" }] });
    expect(state.edge("edge-3")?.text).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><edge><id>edge-3</id><version>1</version><tenant>t</tenant></edge>',
    );
  });
});
