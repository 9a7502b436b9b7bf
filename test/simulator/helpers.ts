/**
 * Test helpers for the simulator: start one over real HTTP (in-process, or as `nsxv-operator
 * simulate`), call its API and control routes with undici (not the project's client), and read
 * its small XML documents.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { parseXmlObject } from "../../src/nsx/xml.ts";
import { startSimulator, type RunningSimulator, type SimulatorOptions } from "../../src/simulator/index.ts";

export const BASIC = `Basic ${Buffer.from("admin:default").toString("base64")}`;

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface CallOptions {
  /** Authorization header; default admin/default Basic; null sends none */
  auth?: string | null;
  body?: string | Buffer;
  contentType?: string;
  /** Accept header; default application/xml */
  accept?: string;
}

export class TestSimulator {
  readonly sim: RunningSimulator;
  constructor(sim: RunningSimulator) {
    this.sim = sim;
  }

  static async start(options: SimulatorOptions = {}): Promise<TestSimulator> {
    return new TestSimulator(await startSimulator(options));
  }

  get state() {
    return this.sim.state;
  }

  async api(method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { Accept: options.accept ?? "application/xml" };
    const auth = options.auth === undefined ? BASIC : options.auth;
    if (auth !== null) headers.Authorization = auth;
    if (options.body !== undefined) headers["Content-Type"] = options.contentType ?? "application/xml";
    const res = await request(`${this.sim.url}${path}`, {
      method: method as "GET",
      headers,
      ...(options.body !== undefined ? { body: options.body } : {}),
    });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  async control<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: T }> {
    const res = await request(`${this.sim.url}/_simulator/${path}`, {
      method: method as "GET",
      ...(body !== undefined
        ? { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } }
        : {}),
    });
    return { status: res.statusCode, json: (await res.body.json()) as T };
  }

  close(): Promise<void> {
    return this.sim.close();
  }
}

/** the root element's value of a small XML document, arrays forced for the named elements */
export function xml(text: string, arrays: string[] = []): Record<string, unknown> {
  return parseXmlObject(text, "test document", { arrays });
}

/** names of the child elements of the first element `name`, in order */
export function childNames(text: string, name: string): string[] {
  const start = text.indexOf(`<${name}>`);
  const end = text.indexOf(`</${name}>`, start);
  const inner = text.slice(start + name.length + 2, end);
  const names: string[] = [];
  let depth = 0;
  for (const m of inner.matchAll(/<(\/?)([A-Za-z0-9]+)(\/?)>/g)) {
    if (m[1] === "/") depth--;
    else {
      if (depth === 0) names.push(m[2]!);
      if (m[3] !== "/") depth++;
    }
  }
  return names;
}

export const POOL_V4 = {
  id: "ipaddresspool-1",
  name: "controller-pool",
  prefixLength: 24,
  gateway: "10.0.0.1",
  dnsSuffix: "corp.example.org",
  dnsServer1: "10.0.0.53",
  dnsServer2: "10.0.1.53",
  ranges: [{ start: "10.0.0.10", end: "10.0.0.12" }],
  allocations: [
    { ip: "10.0.0.10", note: "controller-1" },
    { ip: "10.0.0.11", note: "controller-2" },
  ],
};

export const POOL_V6 = {
  id: "ipaddresspool-2",
  name: "vtep-v6",
  prefixLength: 64,
  gateway: "2001:db8::1",
  allocationIds: "integer" as const,
  ranges: [{ start: "2001:db8::10", end: "2001:db8::1f" }],
  allocations: [{ ip: "2001:0db8:0:0:0:0:0:10", note: "vtep-host-19" }],
};

/** A small edge with every spec field and a description. */
export function smallEdge(id = "edge-7", extra = ""): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<edge><id>${id}</id><version>4</version><status>deployed</status>` +
    "<datacenterMoid>datacenter-21</datacenterMoid><datacenterName>dc-a</datacenterName><tenant>default</tenant>" +
    "<name>dlr-07</name><fqdn>dlr-07.example.org</fqdn><enableAesni>false</enableAesni><enableFips>false</enableFips>" +
    "<vseLogLevel>info</vseLogLevel><vnics/><appliances><applianceSize>compact</applianceSize></appliances>" +
    "<cliSettings><remoteAccess>false</remoteAccess><userName>admin</userName></cliSettings>" +
    `<features><featureConfig/>${extra}</features><autoConfiguration><enabled>true</enabled></autoConfiguration>` +
    "<type>distributedRouter</type><isUniversal>false</isUniversal><hypervisorAssist>false</hypervisorAssist>" +
    "<tunnels/><edgeSummary><objectId>edge-7</objectId></edgeSummary><description>tier 7</description></edge>"
  );
}

/**
 * smallEdge() as the simulator stores and serves it: in the manager's one format (the declaration
 * and `<edge>` on one line) and without the `<edgeSummary>`, which a GET of one edge carries only
 * with settings.edgeSummaryInEdge.
 */
export function storedSmallEdge(id = "edge-7", extra = ""): string {
  return smallEdge(id, extra)
    .replace("?>\n<edge>", "?><edge>")
    .replace(/<edgeSummary>.*<\/edgeSummary>/, "");
}

/** `nsxv-operator simulate ARGS` as a child process, stdout and stderr piped */
export function spawnSimulate(args: string[]): ChildProcess {
  return spawn(process.execPath, ["src/cli/main.ts", "simulate", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** the first stdout line, or the exit code and stderr if the process ends first; bounded by timeoutMs */
export function firstLine(
  proc: ChildProcess,
  timeoutMs = 20_000,
): Promise<{ line?: string; code?: number | null; stderr: string }> {
  return new Promise((resolve) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => resolve({ stderr: `timeout; stderr: ${err}` }), timeoutMs);
    proc.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const nl = out.indexOf("\n");
      if (nl !== -1) {
        clearTimeout(timer);
        resolve({ line: out.slice(0, nl), stderr: err });
      }
    });
    proc.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
    proc.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr: err });
    });
  });
}

/** `nsxv-operator simulate` on a free port with a state file of these YAML lines, for a client program to drive */
export interface SimulateProcess {
  url: string;
  /** a control API call, its JSON answer */
  control<T>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): void;
}

export async function startSimulateProcess(stateLines: string[]): Promise<SimulateProcess> {
  const dir = mkdtempSync(join(tmpdir(), "sim-client-"));
  const state = join(dir, "state.yaml");
  writeFileSync(state, stateLines.join("\n"));
  const child = spawnSimulate(["--port", "0", "--state", state]);
  const stop = () => {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  const { line, stderr } = await firstLine(child);
  const url = /listening on (http:\/\/\S+)$/.exec(line ?? "")?.[1];
  if (url === undefined) {
    stop();
    throw new Error(`simulate did not start: ${stderr}`);
  }
  return {
    url,
    stop,
    async control<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await request(`${url}/_simulator/${path}`, {
        method: method as "GET",
        ...(body !== undefined
          ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } }
          : {}),
      });
      return (await res.body.json()) as T;
    },
  };
}
