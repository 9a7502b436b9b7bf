/**
 * PowerNSX against the simulator, replayed byte for byte: each request as Windows PowerShell 5.1
 * puts PowerNSX's calls on the wire (Invoke-RestMethod and Invoke-WebRequest over .NET's
 * HttpWebRequest: the Authorization header PowerNSX builds from its credential, User-Agent,
 * `Content-Type: application/xml` on every call, GET included, no Accept, Host, Content-Length,
 * `Expect: 100-continue` before a body, `Connection: Keep-Alive`), with the bodies its cmdlets
 * build (XmlDocument.OuterXml: no declaration, no whitespace; a switch's text is `True`/`False`),
 * in the order its cmdlets make the calls; each answer read as PowerNSX reads it (the XPath
 * queries, the Location header's last segment, a pool id from the body). The cmdlets are those of
 * PowerNSX's master (the v3 branch's Connect-NsxServer makes the same three calls).
 */
import { connect } from "node:net";
import { XMLParser } from "fast-xml-parser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AuditSnapshot } from "../../src/simulator/index.ts";
import { TestSimulator } from "./helpers.ts";

const USER_AGENT = "Mozilla/5.0 (Windows NT; Windows NT 10.0; en-US) WindowsPowerShell/5.1.19041.1682";
/** PowerNSX: [convert]::ToBase64String([text.encoding]::ASCII.GetBytes("user:password")) */
const ADMIN = Buffer.from("admin:default", "ascii").toString("base64");

/** what PowerShell's [xml] cast gives PowerNSX to walk: elements by name, text as strings */
const reader = new XMLParser({
  parseTagValue: false,
  isArray: (name) => name === "edgeSummary" || name === "vnic",
});

let t: TestSimulator;
beforeEach(async () => {
  t = await TestSimulator.start({
    state: {
      vcenter: { ipAddress: "vcsa-01a.corp.local", userName: "administrator@vsphere.local" },
      edges: [{ generate: { count: 12, idStart: 1, firewallRules: 2 } }],
      pools: [
        {
          id: "ipaddresspool-1",
          name: "vtep",
          ranges: [{ start: "10.0.0.1", end: "10.0.0.9" }],
          allocations: [{ ip: "10.0.0.1" }],
        },
      ],
    },
  });
});
afterEach(() => t.close());

interface Answer {
  status: number;
  headers: Map<string, string>;
  text: string;
}

/**
 * One request as Windows PowerShell 5.1 sends it, its answer read whole. With a body, the headers
 * go first and the body only after the server's `100 Continue`, as HttpWebRequest does.
 */
async function powershell(
  method: string,
  path: string,
  options: { body?: string; credential?: string } = {},
): Promise<Answer> {
  const { port } = new URL(t.sim.url);
  const body = options.body === undefined ? undefined : Buffer.from(options.body, "utf8");
  const head =
    `${method} ${path} HTTP/1.1\r\n` +
    `Authorization: Basic ${options.credential ?? ADMIN}\r\n` +
    `User-Agent: ${USER_AGENT}\r\n` +
    "Content-Type: application/xml\r\n" +
    `Host: 127.0.0.1:${port}\r\n` +
    (body === undefined ? "" : `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n`) +
    "Connection: Keep-Alive\r\n\r\n";
  const socket = connect(Number(port), "127.0.0.1");
  return new Promise<Answer>((resolve, reject) => {
    let received = Buffer.alloc(0);
    let bodySent = body === undefined;
    socket.on("error", reject);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (!bodySent && received.toString("latin1").startsWith("HTTP/1.1 100 Continue\r\n\r\n")) {
        received = received.subarray("HTTP/1.1 100 Continue\r\n\r\n".length);
        bodySent = true;
        socket.write(body!);
      }
      const answer = bodySent ? parseAnswer(received) : undefined;
      if (answer !== undefined) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.write(head);
  });
}

/** the whole answer once it has arrived (Content-Length or chunked), else undefined */
function parseAnswer(bytes: Buffer): Answer | undefined {
  const end = bytes.indexOf("\r\n\r\n");
  if (end === -1) return undefined;
  const [statusLine = "", ...lines] = bytes.subarray(0, end).toString("latin1").split("\r\n");
  const headers = new Map(
    lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
  );
  const status = Number(statusLine.split(" ")[1]);
  const rest = bytes.subarray(end + 4);
  if (headers.get("transfer-encoding") === "chunked") {
    const text = rest.toString("utf8");
    if (!text.endsWith("0\r\n\r\n")) return undefined;
    return { status, headers, text: dechunk(text) };
  }
  const length = Number(headers.get("content-length") ?? 0);
  if (rest.length < length) return undefined;
  return { status, headers, text: rest.subarray(0, length).toString("utf8") };
}

function dechunk(text: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const lineEnd = text.indexOf("\r\n", at);
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (size === 0) return out;
    out += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** Invoke-RestMethod's result for an XML answer: the document (of the shape the caller reads); it throws on a status >= 400 */
function restMethod<T>(answer: Answer): T {
  if (answer.status >= 400) throw new Error(`NSX API response indicates failure: (${answer.status})`);
  return reader.parse(answer.text) as T;
}

/** an element as PowerShell's [xml] cast shows it: children by name, leaves as text */
type Element = Record<string, unknown>;
interface EdgeSummary extends Element {
  objectId: string;
}
interface EdgePage {
  pagedEdgeList: { edgePage: { pagingInfo: Record<string, string>; edgeSummary: EdgeSummary[] } };
}

/** Connect-NsxServer -NsxServer ... -Username U -Password P: its three calls and what it makes of them */
async function connectNsxServer(credential = ADMIN) {
  const features = await powershell("GET", "/api/2.0/nwfabric/features", { credential });
  // "Connection to NSX server $NsxServer failed": any failure of the credential check throws
  restMethod(features);
  const info = restMethod<{ globalInfo: { versionInfo: Record<string, string> } }>(
    await powershell("GET", "/api/1.0/appliance-management/global/info", { credential }),
  );
  const versionInfo = info.globalInfo.versionInfo;
  // child::globalInfo/versionInfo, then descendant::vcInfo/ipAddress (absent: only a warning)
  const vcInfo = restMethod<{ vcInfo: { ipAddress?: string } | "" }>(
    await powershell("GET", "/api/2.0/services/vcconfig", { credential }),
  );
  return {
    version: `${versionInfo.majorVersion}.${versionInfo.minorVersion}.${versionInfo.patchVersion}`,
    buildNumber: versionInfo.buildNumber,
    registeredVcenter: vcInfo.vcInfo === "" ? undefined : vcInfo.vcInfo.ipAddress,
  };
}

/** an edge as Get-NsxEdge returns it: the edge's elements and the summary PowerNSX appends */
type PowerNsxEdge = Element & { edgeSummary: EdgeSummary };

/** Get-NsxEdge -objectId: the edge, with its summary appended as PowerNSX imports it */
async function getNsxEdgeById(id: string) {
  const { edge } = restMethod<{ edge: Element }>(await powershell("GET", `/api/4.0/edges/${id}`));
  const { edgeSummary } = restMethod<{ edgeSummary: EdgeSummary[] }>(
    await powershell("GET", `/api/4.0/edges/${id}/summary`),
  );
  const result: PowerNsxEdge = { ...edge, edgeSummary: edgeSummary[0]! };
  return result;
}

/** Get-NsxEdge -Name: pages of 10 (startIndex=00 first), a GET per edge, services gateways of that name */
async function getNsxEdgeByName(name: string) {
  const pageSize = 10;
  let list = restMethod<EdgePage>(
    await powershell("GET", `/api/4.0/edges?pageSize=${pageSize}&startIndex=00`),
  );
  const summaries: EdgeSummary[] = [];
  let startingIndex = 0;
  let itemIndex = 0;
  let pagingInfo = list.pagedEdgeList.edgePage.pagingInfo;
  if (Number(pagingInfo.totalCount) !== 0) {
    do {
      while (
        itemIndex < Number(pagingInfo.pageSize) + startingIndex &&
        itemIndex < Number(pagingInfo.totalCount)
      ) {
        summaries.push(list.pagedEdgeList.edgePage.edgeSummary[itemIndex - startingIndex]!);
        itemIndex += 1;
      }
      if (Number(pagingInfo.totalCount) > itemIndex) {
        startingIndex += pageSize;
        list = restMethod(
          await powershell("GET", `/api/4.0/edges?pageSize=${pageSize}&startIndex=${startingIndex}`),
        );
        pagingInfo = list.pagedEdgeList.edgePage.pagingInfo;
      }
    } while (!(Number(pagingInfo.totalCount) <= itemIndex));
  }
  const edges: PowerNsxEdge[] = [];
  for (const summary of summaries) {
    const { edge } = restMethod<{ edge: Element }>(
      await powershell("GET", `/api/4.0/edges/${summary.objectId}`),
    );
    edges.push({ ...edge, edgeSummary: summary });
  }
  return edges.filter((e) => e.type === "gatewayServices" && e.name === name);
}

/** New-NsxEdge's body: -Name -Hostname -Tenant -Cluster -Datastore -Password -Interface (one spec) -EnableSSH:$false */
const NEW_EDGE_BODY =
  "<edge><name>esg-pnsx</name><fqdn>esg-pnsx.corp.local</fqdn><type>gatewayServices</type><tenant>tenant-p</tenant>" +
  "<appliances><applianceSize>compact</applianceSize><appliance><resourcePoolId>domain-c7</resourcePoolId>" +
  "<datastoreId>datastore-15</datastoreId></appliance></appliances><features><syslog><enabled>false</enabled></syslog>" +
  "<firewall><enabled>true</enabled><defaultPolicy><loggingEnabled>false</loggingEnabled><action>deny</action></defaultPolicy>" +
  "</firewall></features><autoConfiguration><enabled>true</enabled></autoConfiguration><cliSettings><userName>admin</userName>" +
  "<password>VMware1!VMware1!</password><remoteAccess>false</remoteAccess></cliSettings><vnics><vnic><name>uplink</name>" +
  "<index>0</index><type>uplink</type><mtu>1500</mtu><enableProxyArp>False</enableProxyArp>" +
  "<enableSendRedirects>True</enableSendRedirects><isConnected>True</isConnected><portgroupId>dvportgroup-40</portgroupId>" +
  "<addressGroups><addressGroup><primaryAddress>192.168.100.1</primaryAddress><subnetPrefixLength>24</subnetPrefixLength>" +
  "</addressGroup></addressGroups></vnic></vnics></edge>";

describe("PowerNSX, replayed byte for byte", () => {
  it("Connect-NsxServer: the credential check passes, the release and the registered vCenter are read", async () => {
    expect(await connectNsxServer()).toEqual({
      version: "6.4.6",
      buildNumber: "15177041",
      registeredVcenter: "vcsa-01a.corp.local",
    });
    const features = reader.parse((await powershell("GET", "/api/2.0/nwfabric/features")).text);
    expect(features.featureInfos.featureInfo.map((f: { featureId: string }) => f.featureId)).toContain(
      "com.vmware.vshield.nsxmgr.vxlan",
    );
  });

  it("Connect-NsxServer with a wrong password fails at its first call, the credential check", async () => {
    const wrong = Buffer.from("admin:wrong", "ascii").toString("base64");
    await expect(connectNsxServer(wrong)).rejects.toThrow("(401)");
    const counters = (await t.control<Record<string, Record<string, number>>>("GET", "counters")).json;
    expect(counters).toEqual({ fabricFeatures: { "401": 1 } });
  });

  it("New-NsxEdge → Get-NsxEdge -Name → Set-NsxEdge → Remove-NsxEdge", async () => {
    await connectNsxServer();
    // New-NsxEdge: POST, the id from the Location header's last segment, then Get-NsxEdge -objectId
    const created = await powershell("POST", "/api/4.0/edges", { body: NEW_EDGE_BODY });
    expect(created.status).toBe(201);
    const location = created.headers.get("location") ?? "";
    const edgeId = location.split("/")[location.split("/").length - 1]!;
    expect(edgeId).toBe("edge-13");
    const edge = await getNsxEdgeById(edgeId);
    expect(edge).toMatchObject({
      id: "edge-13",
      name: "esg-pnsx",
      tenant: "tenant-p",
      type: "gatewayServices",
    });
    const { vnic } = edge.vnics as { vnic: Element[] };
    expect(vnic).toHaveLength(10);
    expect(vnic[0]).toMatchObject({
      isConnected: "true",
      enableProxyArp: "false",
      enableSendRedirects: "true",
    });
    expect(edge.edgeSummary).toMatchObject({
      objectId: "edge-13",
      numberOfConnectedVnics: "1",
      localEgressEnabled: "false",
    });

    // Get-NsxEdge -Name pages through the 13 edges ten at a time and reads each one
    const found = await getNsxEdgeByName("esg-pnsx");
    expect(found.map((e) => e.edgeSummary.objectId)).toEqual(["edge-13"]);

    // Set-NsxEdge -remoteAccess $true: the GET's edge, its summary removed, sent back whole
    const read = await powershell("GET", `/api/4.0/edges/${edgeId}`);
    const body = read.text
      .replace(/^<\?xml[^>]*\?>/, "")
      .replace("<remoteAccess>false</remoteAccess>", "<remoteAccess>true</remoteAccess>");
    expect((await powershell("PUT", `/api/4.0/edges/${edgeId}`, { body })).status).toBe(204);
    const after = await getNsxEdgeById(edgeId);
    expect(after).toMatchObject({ version: "2", cliSettings: { remoteAccess: "true" } });
    const audit = (await t.control<AuditSnapshot>("GET", "audit")).json;
    expect(audit.violations).toMatchObject([
      { kind: "changedContent", lost: [], changed: ["edge.cliSettings.remoteAccess"] },
    ]);

    // Remove-NsxEdge: DELETE by the attached summary's objectId
    expect((await powershell("DELETE", `/api/4.0/edges/${after.edgeSummary.objectId}`)).status).toBe(204);
    expect((await powershell("GET", `/api/4.0/edges/${edgeId}`)).status).toBe(404);
  });

  it("New-NsxIpPool → Get-NsxIpPool → Remove-NsxIpPool (refused with allocations unless -force)", async () => {
    await connectNsxServer();
    const body =
      "<ipamAddressPool><name>pnsx-pool</name><prefixLength>24</prefixLength><gateway>10.5.0.1</gateway><ipRanges>" +
      "<ipRangeDto><startAddress>10.5.0.10</startAddress><endAddress>10.5.0.20</endAddress></ipRangeDto></ipRanges>" +
      "<dnsServer1>10.5.0.53</dnsServer1></ipamAddressPool>";
    // New-NsxIpPool: Invoke-NsxWebRequest; the new pool's id is the response's content
    const created = await powershell("POST", "/api/2.0/services/ipam/pools/scope/globalroot-0", { body });
    expect(created.status).toBe(201);
    const objectId = created.text;
    // Get-NsxIpPool -ObjectId: [xml]$response.content, child::ipamAddressPool
    const pool = reader.parse(
      (await powershell("GET", `/api/2.0/services/ipam/pools/${objectId}`)).text,
    ).ipamAddressPool;
    expect(pool).toMatchObject({
      objectId: "ipaddresspool-2",
      name: "pnsx-pool",
      totalAddressCount: "11",
      usedAddressCount: "0",
    });
    // Get-NsxIpPool by name lists the scope
    const all = reader.parse(
      (await powershell("GET", "/api/2.0/services/ipam/pools/scope/globalroot-0")).text,
    );
    expect(all.ipamAddressPools.ipamAddressPool.map((p: { name: string }) => p.name)).toEqual([
      "vtep",
      "pnsx-pool",
    ]);
    // Remove-NsxIpPool: a pool with usedAddressCount != 0 is not sent without -force; with it, ?force=true
    expect((await powershell("DELETE", `/api/2.0/services/ipam/pools/${objectId}?force=false`)).status).toBe(
      204,
    );
    const used = await powershell("DELETE", "/api/2.0/services/ipam/pools/ipaddresspool-1?force=false");
    expect(used.status).toBe(400);
    expect(
      (await powershell("DELETE", "/api/2.0/services/ipam/pools/ipaddresspool-1?force=true")).status,
    ).toBe(204);
    expect(t.state.pools()).toEqual([]);
  });
});
