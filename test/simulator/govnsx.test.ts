/**
 * A real third-party client against `nsxv-operator simulate`: github.com/IBM-tfproviders/govnsx
 * v1.0.2, the library behind the terraform nsxv provider, through test/govnsx/main.go (built by
 * test/controlplane/build.sh beside the control plane binaries). Its edge GET, its `Edge.Put`
 * update as the provider does it (read, copy name, description, tenant and appliances into an
 * install spec, PUT that: no `<id>`, every other section left out), its `Edge.Post` create (the
 * id from the Location header) and `Edge.Delete`, and how it reports a manager's errors. Outside
 * CI the tests skip when the program is missing or built from another source; in CI they fail.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AuditSnapshot } from "../../src/simulator/index.ts";
import { findProgram } from "../controlplane/binaries.ts";
import { IN_CI } from "../deploy/tools.ts";
import { startSimulateProcess, type SimulateProcess } from "./helpers.ts";

const run = promisify(execFile);

/** govnsx's nsxtypes.Edge as the program prints it (Go field names) */
interface GovnsxEdge {
  Id: string;
  Version: string;
  Description: string;
  Status: string;
  Tenant: string;
  Name: string;
  Type: string;
  Appliances: { ApplianceSize: string; AppliancesList: { ResourcePoolId: string; DatastoreId: string }[] };
  Vnics: { Index: string; PortgroupId: string; IsConnected: boolean }[] | null;
}

interface Outcome {
  edge?: GovnsxEdge;
  updated?: boolean;
  /** govnsx's EdgePostResp */
  created?: { EdgeId: string; Location: string };
  deleted?: boolean;
  error?: string;
}

const govnsx = findProgram("govnsx");

if ("reason" in govnsx) {
  if (!IN_CI) console.warn(`[skipped] the govnsx tests: ${govnsx.reason}`);
  describe("govnsx against simulate", () => {
    it("needs the govnsx program", (ctx) => {
      // CI must run them: there a missing program is a failure
      if (IN_CI) throw new Error(govnsx.reason);
      ctx.skip(govnsx.reason);
    });
  });
} else {
  const binary = govnsx.path;
  describe("govnsx (the terraform nsxv provider's client) against simulate", () => {
    let sim: SimulateProcess;
    let url: string;

    beforeAll(async () => {
      sim = await startSimulateProcess([
        "auditor: { username: auditor, password: read-only }",
        "edges:",
        "  - generate: { count: 3, idStart: 1, tenant: tenant-a, firewallRules: 10 }",
      ]);
      url = sim.url;
    });
    afterAll(() => sim?.stop());
    beforeEach(async () => {
      await control("DELETE", "audit");
      await control("DELETE", "faults");
    });

    function control<T>(method: string, path: string, body?: unknown): Promise<T> {
      return sim.control<T>(method, path, body);
    }

    async function fetchEdgeText(id: string): Promise<string> {
      const res = await fetch(`${url}/api/4.0/edges/${id}`, {
        headers: { authorization: `Basic ${Buffer.from("admin:default").toString("base64")}` },
      });
      return res.text();
    }

    async function govnsxRun(
      args: string[],
      user = { name: "admin", password: "default" },
    ): Promise<Outcome> {
      const { stdout } = await run(binary, args, {
        env: { NSX_URL: url, NSX_USERNAME: user.name, NSX_PASSWORD: user.password },
        timeout: 20_000,
      });
      return JSON.parse(stdout) as Outcome;
    }

    it("reads an edge", async () => {
      const { edge, error } = await govnsxRun(["get", "edge-1"]);
      expect(error).toBeUndefined();
      expect(edge).toMatchObject({
        Id: "edge-1",
        Version: "1",
        Status: "deployed",
        Tenant: "tenant-a",
        Name: "esg-01",
        Type: "gatewayServices",
        Appliances: { ApplianceSize: "large", AppliancesList: [{ ResourcePoolId: "domain-c7" }] },
      });
      expect(edge?.Vnics).toHaveLength(10);
    });

    it("GET → Edge.Put as terraform does it → GET: the rename is stored, what the manager owns stays, the audit names what the PUT lost", async () => {
      expect(await govnsxRun(["update", "edge-2", "-name", "esg-renamed"])).toEqual({ updated: true });
      const { edge } = await govnsxRun(["get", "edge-2"]);
      expect(edge).toMatchObject({
        Id: "edge-2",
        Version: "2",
        Name: "esg-renamed",
        Tenant: "tenant-a",
        Status: "deployed",
        Type: "gatewayServices",
        Appliances: { ApplianceSize: "large" },
      });
      // govnsx's install spec has no vnics, firewall, NAT or routing: a real manager replaces the
      // edge's configuration with it, and so does the simulator, saying so in the audit
      expect(edge?.Vnics ?? []).toEqual([]);
      const { violations } = await control<AuditSnapshot>("GET", "audit");
      expect(violations).toHaveLength(1);
      expect(violations[0]).toMatchObject({ kind: "lostContent", edgeId: "edge-2", storedVersion: 1 });
      expect(violations[0], "govnsx sends no <version>").not.toHaveProperty("sentVersion");
      expect(violations[0]?.changed).toContain("edge.name");
      expect(violations[0]?.lost).toEqual(
        expect.arrayContaining([
          "edge.features.firewall",
          "edge.features.nat",
          "edge.features.routing",
          "edge.cliSettings",
        ]),
      );
      // its <dhcp> holds less than the one the manager has: the rest of it is lost too
      expect(violations[0]?.lost).toContain("edge.features.dhcp.staticBindings");
    });

    it("creates an edge as the provider does (Edge.Post): the id from Location, in the datacenter it names", async () => {
      const { created, error } = await govnsxRun([
        "create",
        "esg-tf",
        "-tenant",
        "tenant-tf",
        "-datacenter",
        "dc-site-w",
        "-size",
        "large",
      ]);
      expect(error).toBeUndefined();
      expect(created).toEqual({ EdgeId: "edge-4", Location: "/api/4.0/edges/edge-4" });
      const { edge } = await govnsxRun(["get", "edge-4"]);
      expect(edge).toMatchObject({
        Id: "edge-4",
        Version: "1",
        Status: "deployed",
        Tenant: "tenant-tf",
        Name: "esg-tf",
        Type: "gatewayServices",
        Appliances: {
          ApplianceSize: "large",
          DeployAppliances: true,
          AppliancesList: [{ ResourcePoolId: "domain-c7", DatastoreId: "datastore-15", Deployed: true }],
        },
      });
      expect(edge?.Vnics, "a services gateway has ten vnics").toHaveLength(10);
      const state = await control<{ edges: { id: string }[] }>("GET", "state");
      expect(state.edges.map((e) => e.id)).toContain("edge-4");
      const got = await fetchEdgeText("edge-4");
      // govnsx names the datacenter; edge-1 (datacenter-22) is in the one of that name
      expect(got).toContain(
        "<datacenterMoid>datacenter-22</datacenterMoid><datacenterName>dc-site-w</datacenterName>",
      );
    });

    it("deletes an edge (Edge.Delete); its id then answers 404, and a second delete is govnsx's 404 error", async () => {
      const { created } = await govnsxRun(["create", "esg-gone"]);
      const id = created?.EdgeId ?? "";
      expect(await govnsxRun(["delete", id])).toEqual({ deleted: true });
      expect((await govnsxRun(["get", id])).error).toBe("[ERROR] 404 : 404 Not Found");
      expect((await govnsxRun(["delete", id])).error?.startsWith("[ERROR] 404 : 404 Not Found")).toBe(true);
      const { objects } = await control<AuditSnapshot>("GET", "audit");
      expect(objects.map((o) => `${o.action} ${o.id}`)).toEqual([`created ${id}`, `deleted ${id}`]);
    });

    it("stores a description the provider sets", async () => {
      expect(await govnsxRun(["update", "edge-3", "-description", "Created by Terraform"])).toEqual({
        updated: true,
      });
      expect((await govnsxRun(["get", "edge-3"])).edge).toMatchObject({
        Description: "Created by Terraform",
      });
    });

    it.each([
      {
        name: "UnknownEdge",
        args: ["get", "edge-404"],
        error: "[ERROR] 404 : 404 Not Found",
        reason: "a missing edge",
      },
      {
        name: "BadPassword",
        args: ["get", "edge-1"],
        user: { name: "admin", password: "wrong" },
        error: "[ERROR] 401 : 401 Unauthorized",
        reason: "Basic credentials refused",
      },
      {
        name: "AuditorWrites",
        args: ["update", "edge-1", "-name", "x"],
        user: { name: "auditor", password: "read-only" },
        error: "[ERROR] 403 : 403 Forbidden,",
        reason: "the Auditor role may only read; govnsx adds the XML it sent and the URI",
      },
      {
        name: "Unreachable",
        args: ["get", "edge-1"],
        fault: { route: "getEdge", kind: "status", status: 503, count: 1 },
        error: "[ERROR] 503 : 503 Service Unavailable",
        reason: "a manager's 503",
      },
      {
        name: "Conflict",
        args: ["update", "edge-1", "-name", "x"],
        fault: { route: "putEdge", kind: "conflict" },
        error: "[ERROR] 409 : 409 Conflict,",
        reason: "a concurrent change",
      },
    ])("$name: govnsx reports $error ($reason)", async ({ args, user, fault, error }) => {
      if (fault !== undefined) await control("POST", "faults", fault);
      const outcome = await govnsxRun(args, user);
      expect(outcome.error?.startsWith(error), outcome.error).toBe(true);
      if (args[0] === "update") expect(outcome.error).toContain(`URI:${url}/api/4.0/edges/edge-1`);
    });
  });
}
