/**
 * The manager's calls beyond edges and pools (version information, the 6.4 authentication
 * family, each from its release on) and content negotiation: XML in as application/xml or
 * text/xml, XML out labelled as the client accepts it, 406 when it accepts no XML.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SimulatorStateInput } from "../../src/simulator/index.ts";
import { POOL_V4, TestSimulator, basic, xml } from "./helpers.ts";

let t: TestSimulator;
async function start(state: SimulatorStateInput = {}): Promise<void> {
  t = await TestSimulator.start({
    state: { auditor: { username: "auditor", password: "read-only" }, pools: [POOL_V4], ...state },
  });
}
beforeEach(() => start());
afterEach(() => t.close());

const AUDITOR = basic("auditor", "read-only");
const POOLS = "/api/2.0/services/ipam/pools/scope/globalroot-0";
const INFO = "/api/1.0/appliance-management/global/info";
const AUTH = "/api/2.0/services/auth";

async function tokenOf(path: string, body?: string): Promise<string> {
  const reply = await t.api("POST", path, body === undefined ? {} : { body, auth: null });
  expect(reply.status, reply.text).toBe(200);
  return (xml(reply.text).authToken as { value: string }).value;
}

describe("PowerNSX's credential check and vCenter lookup", () => {
  it("GET /api/2.0/nwfabric/features: the fabric's features at the manager's release, for any account; 401 without", async () => {
    const reply = await t.api("GET", "/api/2.0/nwfabric/features", { auth: AUDITOR });
    expect(reply.status).toBe(200);
    const { featureInfo } = xml(reply.text, ["featureInfo"]).featureInfos as {
      featureInfo: Record<string, string>[];
    };
    expect(featureInfo.map((f) => f.featureId)).toEqual([
      "com.vmware.vshield.nsxmgr.nwfabric.hostPrep",
      "com.vmware.vshield.nsxmgr.vxlan",
      "com.vmware.vshield.nsxmgr.messagingInfra",
      "com.vmware.vshield.firewall",
    ]);
    expect(featureInfo.every((f) => f.version === "6.4.6" && f.name !== "")).toBe(true);
    const anonymous = await t.api("GET", "/api/2.0/nwfabric/features", { auth: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["www-authenticate"]).toBe('Basic realm="NSX Manager"');
  });

  it("GET /api/2.0/services/vcconfig: the state file's vCenter, an empty <vcInfo/> without one", async () => {
    expect((await t.api("GET", "/api/2.0/services/vcconfig")).text).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><vcInfo/>',
    );
    await t.close();
    await start({
      vcenter: {
        ipAddress: "vcsa-01a.corp.local",
        userName: "administrator@vsphere.local",
        certificateThumbprint: "D2:75:61",
      },
    });
    expect(xml((await t.api("GET", "/api/2.0/services/vcconfig")).text).vcInfo).toEqual({
      ipAddress: "vcsa-01a.corp.local",
      userName: "administrator@vsphere.local",
      certificateThumbprint: "D2:75:61",
      assignRoleToUser: "true",
    });
  });
});

describe("GET /api/1.0/appliance-management/global/info (PowerNSX's Connect-NsxServer)", () => {
  it("answers the manager's version and the caller, by Basic or by token", async () => {
    const reply = await t.api("GET", INFO);
    expect(reply.status).toBe(200);
    expect(xml(reply.text).globalInfo).toEqual({
      currentLoggedInUser: "admin",
      versionInfo: { majorVersion: "6", minorVersion: "4", patchVersion: "6", buildNumber: "15177041" },
    });
    const token = await tokenOf(`${AUTH}/token`);
    const byToken = await t.api("GET", INFO, { auth: `AUTHTOKEN ${token}` });
    expect(xml(byToken.text).globalInfo).toMatchObject({ currentLoggedInUser: "admin" });
    expect(xml((await t.api("GET", INFO, { auth: AUDITOR })).text).globalInfo).toMatchObject({
      currentLoggedInUser: "auditor",
    });
  });

  it("reports the release the state file gives, and needs credentials", async () => {
    await t.close();
    await start({ managerVersion: "6.3.7", managerBuild: 9000 });
    expect(xml((await t.api("GET", INFO)).text).globalInfo).toMatchObject({
      versionInfo: { majorVersion: "6", minorVersion: "3", patchVersion: "7", buildNumber: "9000" },
    });
    expect((await t.api("GET", INFO, { auth: null })).status).toBe(401);
  });
});

describe("the 6.4 authentication calls", () => {
  it("POST /api/3.0/services/auth/token takes the credentials in the body, with basic authentication disabled too", async () => {
    await t.control("PUT", "settings", { basicAuthEnabled: false });
    const body = "<credentials><username>admin</username><password>default</password></credentials>";
    const token = await tokenOf("/api/3.0/services/auth/token", body);
    expect((await t.api("GET", POOLS, { auth: `AUTHTOKEN ${token}` })).status).toBe(200);
    const wrong = await t.api("POST", "/api/3.0/services/auth/token", {
      body: body.replace("default", "nope"),
      auth: null,
    });
    expect(wrong.status).toBe(401);
  });

  it("tokenexpiration: reads and sets the default lifetime in minutes (1 to 1440); the Auditor may only read", async () => {
    const read = await t.api("GET", `${AUTH}/tokenexpiration`);
    expect(xml(read.text).authTokenExpiry).toEqual({ defaultExpiryInMinutes: "90" });
    const body = (n: number) =>
      `<authTokenExpiry><defaultExpiryInMinutes>${n}</defaultExpiryInMinutes></authTokenExpiry>`;
    expect((await t.api("PUT", `${AUTH}/tokenexpiration`, { body: body(180) })).status).toBe(204);
    expect(t.state.settings.tokenTtlMs).toBe(180 * 60_000);
    expect((await t.api("PUT", `${AUTH}/tokenexpiration`, { body: body(1441) })).status).toBe(400);
    expect((await t.api("PUT", `${AUTH}/tokenexpiration`, { body: body(5), auth: AUDITOR })).status).toBe(
      403,
    );
    expect(t.state.settings.tokenTtlMs).toBe(180 * 60_000);
  });

  it("tokeninvalidation: revokes one user's tokens, not the others'", async () => {
    const admin = await tokenOf(`${AUTH}/token`);
    const auditorReply = await t.api("POST", `${AUTH}/token`, { auth: AUDITOR });
    const auditor = (xml(auditorReply.text).authToken as { value: string }).value;
    expect((await t.api("POST", `${AUTH}/tokeninvalidation?userId=admin`)).status).toBe(204);
    expect((await t.api("GET", POOLS, { auth: `AUTHTOKEN ${admin}` })).status).toBe(401);
    expect((await t.api("GET", POOLS, { auth: `AUTHTOKEN ${auditor}` })).status).toBe(200);
    expect((await t.api("POST", `${AUTH}/tokeninvalidation`)).status).toBe(400);
  });

  it("basic: reads the switch, and sets it with credentials in the body, whatever the header says", async () => {
    expect(xml((await t.api("GET", `${AUTH}/basic`)).text).basicAuthStatus).toEqual({
      disableBasicAuth: "false",
    });
    const body = (user: string, password: string, disable: boolean) =>
      `<auth><username>${user}</username><password>${password}</password><disableBasicAuth>${disable}</disableBasicAuth></auth>`;
    expect((await t.api("PUT", `${AUTH}/basic`, { body: body("auditor", "read-only", true) })).status).toBe(
      403,
    );
    expect((await t.api("PUT", `${AUTH}/basic`, { body: body("admin", "nope", true) })).status).toBe(401);
    expect(
      (await t.api("PUT", `${AUTH}/basic`, { body: body("admin", "default", true), auth: null })).status,
    ).toBe(204);
    expect((await t.api("GET", POOLS)).status).toBe(401);
    expect(
      (await t.api("PUT", `${AUTH}/basic`, { body: body("admin", "default", false), auth: null })).status,
    ).toBe(204);
    expect((await t.api("GET", POOLS)).status).toBe(200);
  });

  it("POST /api/2.0/services/auth/token refuses an expiresInMinutes outside 1 to 1440", async () => {
    for (const value of ["0", "1441", "ten"]) {
      const reply = await t.api("POST", `${AUTH}/token?expiresInMinutes=${value}`);
      expect(reply.status, value).toBe(400);
      expect(xml(reply.text).error).toMatchObject({ errorCode: "210" });
    }
  });

  it.each([
    {
      version: "6.3.7",
      absent: ["token", "tokenexpiration", "tokeninvalidation", "basic"],
      reason: "before 6.4",
    },
    { version: "6.4.0", absent: ["tokeninvalidation", "basic"], reason: "invalidation came in 6.4.1" },
    { version: "6.4.1", absent: ["basic"], reason: "the basic switch and the 3.0 token came in 6.4.2" },
  ])("a $version manager has no $absent ($reason): 404, no such API", async ({ version, absent }) => {
    await t.close();
    await start({ managerVersion: version });
    const calls: Record<string, [string, string]> = {
      token: ["POST", `${AUTH}/token`],
      tokenexpiration: ["GET", `${AUTH}/tokenexpiration`],
      tokeninvalidation: ["POST", `${AUTH}/tokeninvalidation?userId=admin`],
      basic: ["GET", `${AUTH}/basic`],
    };
    for (const [name, [method, path]] of Object.entries(calls)) {
      const reply = await t.api(method, path);
      if (absent.includes(name)) {
        expect(reply.status, name).toBe(404);
        expect(xml(reply.text).error, name).toMatchObject({ errorCode: "213" });
      } else {
        expect(reply.status, name).not.toBe(404);
      }
    }
    // the 3.0 token call came in 6.4.2: after every release of this table
    expect((await t.api("POST", "/api/3.0/services/auth/token", { body: "<credentials/>" })).status).toBe(
      404,
    );
  });
});

describe("content negotiation", () => {
  it.each([
    { accept: "application/xml", status: 200, type: "application/xml", reason: "what the manager writes" },
    { accept: "text/xml", status: 200, type: "text/xml", reason: "the older XML type, labelled so" },
    { accept: "*/*", status: 200, type: "application/xml", reason: "anything" },
    { accept: "application/*;q=0.5, text/xml", status: 200, type: "text/xml", reason: "the higher q wins" },
    { accept: "application/json", status: 406, reason: "JSON is not served" },
    { accept: "text/plain", status: 406, reason: "not XML" },
    { accept: "application/xml;q=0, */*;q=0.1", status: 200, type: "text/xml", reason: "q=0 refuses a type" },
  ])("Accept: $accept answers $status ($reason)", async ({ accept, status, type }) => {
    const reply = await t.api("GET", POOLS, { accept });
    expect(reply.status).toBe(status);
    if (type !== undefined) expect(reply.headers["content-type"]).toBe(type);
    else expect(xml(reply.text).error).toMatchObject({ errorCode: "215", moduleName: "core-services" });
  });

  it("checks credentials before the Accept: a stranger learns nothing", async () => {
    expect((await t.api("GET", POOLS, { accept: "application/json", auth: null })).status).toBe(401);
  });

  it("takes an allocation request sent as text/xml", async () => {
    const reply = await t.api("POST", "/api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses", {
      body: "<ipAddressRequest><allocationMode>ALLOCATE</allocationMode></ipAddressRequest>",
      contentType: "text/xml; charset=utf-8",
    });
    expect(reply.status).toBe(200);
    expect(xml(reply.text).allocatedIpAddress).toMatchObject({ ipAddress: "10.0.0.12" });
  });
});
