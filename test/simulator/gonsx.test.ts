/**
 * A second real Go client against `nsxv-operator simulate`: github.com/sky-uk/gonsx (the client of
 * sky-uk's terraform nsx provider, at the one version the module proxy serves), through
 * test/gonsx/main.go, built by test/controlplane/build.sh beside govnsx. gonsx's NSXClient makes
 * every call: Basic credentials, Content-Type application/xml on every request, no Accept; an
 * answer is decoded only when it is a 200 labelled XML, anything else comes back as text. What it
 * does with edges and pools: the list with lower-case `pagesize`/`startindex` (its edge branch's
 * URL), a partial edge document sent back on update, creation without seeing the Location header,
 * pools created from the id in the body. Outside CI the tests skip when the program is missing or
 * built from another source; in CI they fail.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AuditSnapshot } from "../../src/simulator/index.ts";
import { findProgram } from "../controlplane/binaries.ts";
import { IN_CI } from "../deploy/tools.ts";
import { startSimulateProcess, type SimulateProcess } from "./helpers.ts";

const run = promisify(execFile);

/** what the program prints: the status and gonsx's decoded object, or its text of the answer */
interface Outcome<T = unknown> {
  status: number;
  object: T | string;
}

interface EdgeList {
  PagingInfo: { PageSize: number; StartIndex: number; TotalCount: number };
  Summaries: { ID: string; Name: string }[] | null;
}

const gonsx = findProgram("gonsx");

if ("reason" in gonsx) {
  if (!IN_CI) console.warn(`[skipped] the gonsx tests: ${gonsx.reason}`);
  describe("gonsx against simulate", () => {
    it("needs the gonsx program", (ctx) => {
      // CI must run them: there a missing program is a failure
      if (IN_CI) throw new Error(gonsx.reason);
      ctx.skip(gonsx.reason);
    });
  });
} else {
  const binary = gonsx.path;
  describe("gonsx (sky-uk's terraform nsx provider's client) against simulate", () => {
    let sim: SimulateProcess;

    beforeAll(async () => {
      sim = await startSimulateProcess([
        "auditor: { username: auditor, password: read-only }",
        "edges:",
        "  - generate: { count: 260, idStart: 1, tenant: tenant-a, firewallRules: 1 }",
        "pools:",
        "  - { id: ipaddresspool-1, name: vtep, ranges: [{ start: 10.0.0.1, end: 10.0.0.5 }], allocations: [{ ip: 10.0.0.1 }] }",
      ]);
    });
    afterAll(() => sim?.stop());
    beforeEach(async () => {
      await sim.control("DELETE", "audit");
    });

    async function gonsxRun<T = unknown>(
      args: string[],
      user = { name: "admin", password: "default" },
    ): Promise<Outcome<T>> {
      const { stdout } = await run(binary, args, {
        env: { NSX_URL: sim.url, NSX_USERNAME: user.name, NSX_PASSWORD: user.password },
        timeout: 20_000,
      });
      return JSON.parse(stdout) as Outcome<T>;
    }

    it("lists with lower-case pagesize/startindex: the manager ignores them, gonsx gets the first 256 of 260", async () => {
      const { status, object } = await gonsxRun<EdgeList>([
        "list",
        "-pagesize",
        "1024",
        "-startindex",
        "256",
      ]);
      expect(status).toBe(200);
      const list = object as EdgeList;
      expect(list.PagingInfo).toEqual({ PageSize: 256, StartIndex: 0, TotalCount: 260 });
      expect(list.Summaries).toHaveLength(256);
      expect(list.Summaries?.[0]).toEqual({ ID: "edge-1", Name: "esg-01" });
    });

    it("updates with a partial document: the tenant is stored, the version rises, the manager keeps what it owns", async () => {
      const updated = await gonsxRun(["update", "edge-2", "-tenant", "tenant-b"]);
      expect(updated).toEqual({ status: 204, object: "" });
      const { object } = await gonsxRun<Record<string, string>>(["get", "edge-2"]);
      expect(object).toMatchObject({
        ID: "edge-2",
        Version: "2",
        Tenant: "tenant-b",
        Name: "esg-02",
        Status: "deployed",
      });
      const { violations } = await sim.control<AuditSnapshot>("GET", "audit");
      // gonsx's document has no vnics, appliances or features: a manager replaces the edge's with nothing
      expect(violations[0]?.lost).toEqual(
        expect.arrayContaining(["edge.vnics", "edge.appliances", "edge.features"]),
      );
      expect(violations[0]?.lost, "the manager's own fields stay").not.toContain("edge.edgeAssistId");
    });

    it("creates an edge without seeing its id (gonsx drops the Location header), then finds it in the list", async () => {
      const created = await gonsxRun(["create", "esg-gonsx", "-tenant", "tenant-g"]);
      expect(created).toEqual({ status: 201, object: "" });
      const { object } = await gonsxRun<EdgeList>(["list"]);
      // the 261st edge is past the page of 256 that gonsx's lower-case parameters always get
      expect((object as EdgeList).PagingInfo.TotalCount).toBe(261);
      const { objects } = await sim.control<AuditSnapshot>("GET", "audit");
      expect(objects).toMatchObject([{ action: "created", kind: "edge", id: "edge-261", name: "esg-gonsx" }]);
      expect((await gonsxRun(["get", "edge-261"])).object).toMatchObject({
        Tenant: "tenant-g",
        Version: "1",
      });
    });

    it("deletes an edge; its id then answers gonsx a 404 with errorCode 202", async () => {
      expect(await gonsxRun(["delete", "edge-3"])).toEqual({ status: 204, object: "" });
      const after = await gonsxRun(["get", "edge-3"]);
      expect(after.status).toBe(404);
      expect(after.object).toContain("<errorCode>202</errorCode>");
    });

    it("creates a pool from the id in the body, renames it, and deletes a pool only with force when it has allocations", async () => {
      const created = await gonsxRun(["pool-create", "gonsx-pool", "-start", "10.1.0.1", "-end", "10.1.0.9"]);
      expect(created).toEqual({ status: 201, object: "ipaddresspool-2" });
      expect((await gonsxRun(["pool-update", "ipaddresspool-2", "-name", "gonsx-pool-2"])).status).toBe(204);
      expect((await gonsxRun(["pool-get", "ipaddresspool-2"])).object).toMatchObject({
        ObjectID: "ipaddresspool-2",
        Name: "gonsx-pool-2",
        Revision: "2",
        TotalAddressCount: "9",
      });
      const refused = await gonsxRun(["pool-delete", "ipaddresspool-1"]);
      expect(refused.status).toBe(400);
      expect(refused.object).toContain("<errorCode>120060</errorCode>");
      expect((await gonsxRun(["pool-delete", "ipaddresspool-1", "-force"])).status).toBe(204);
      expect((await gonsxRun(["pool-get", "ipaddresspool-1"])).status).toBe(404);
    });

    it("gets 403 for the Auditor's writes and 401 for a bad password, as text with the manager's error", async () => {
      const auditor = { name: "auditor", password: "read-only" };
      const refused = await gonsxRun(["update", "edge-1", "-tenant", "x"], auditor);
      expect(refused.status).toBe(403);
      expect(refused.object).toContain("<errorCode>229</errorCode>");
      expect((await gonsxRun(["get", "edge-1"], { name: "admin", password: "wrong" })).status).toBe(401);
    });
  });
}
