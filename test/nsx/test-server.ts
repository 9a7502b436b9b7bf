/**
 * A tiny scripted HTTP(S) server on a free loopback port for the client tests: records every
 * request (with its body) and lets each test answer as a manager, a broken proxy or a black hole
 * would. `close()` drops every open connection, so a test that never answers leaves nothing behind.
 */
import { readFileSync } from "node:fs";
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Handler = (request: RecordedRequest, res: ServerResponse, raw: IncomingMessage) => void;

export interface TestServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** requests being handled right now, and the most ever at once */
  inFlight: { now: number; max: number };
  /** TCP connections accepted so far */
  connections(): number;
  /** TLS connections that resumed an earlier session rather than a full handshake (0 over plain HTTP) */
  resumedSessions(): number;
  close(): Promise<void>;
}

const TLS_DIR = new URL("../fixtures/tls/", import.meta.url);
export const TEST_CA = readFileSync(new URL("ca.pem", TLS_DIR), "utf8");
const TEST_TLS = {
  cert: readFileSync(new URL("server.pem", TLS_DIR), "utf8"),
  key: readFileSync(new URL("server.key", TLS_DIR), "utf8"),
};

export async function startServer(
  handler: Handler,
  options: { tls?: boolean; port?: number } = {},
): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const inFlight = { now: 0, max: 0 };
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const recorded = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(recorded);
      inFlight.now++;
      inFlight.max = Math.max(inFlight.max, inFlight.now);
      res.on("close", () => inFlight.now--);
      handler(recorded, res, req);
    });
  };
  const server = options.tls ? https.createServer(TEST_TLS, listener) : http.createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  let connections = 0;
  let resumed = 0;
  server.on("connection", () => connections++);
  server.on("secureConnection", (socket: TLSSocket) => void (resumed += socket.isSessionReused() ? 1 : 0));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    requests,
    inFlight,
    connections: () => connections,
    resumedSessions: () => resumed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** answers with a status, optional XML body and headers */
export function reply(
  res: ServerResponse,
  status: number,
  body = "",
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/xml", ...headers });
  res.end(body);
}

/** a port that was free a moment ago and has nothing listening on it */
export async function closedPort(): Promise<number> {
  const server = await startServer(() => undefined);
  await server.close();
  return server.port;
}

/** A small whole ESG: what every one carries (nsx/edge-shape.ts), ten vNICs and the features, little else. */
export const EDGE_XML = (id = "edge-1", tenant = "t1"): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<edge>\n  <id>${id}</id>\n  <version>4</version>\n  <tenant>${tenant}</tenant>\n  <name>e</name>\n` +
  `  <vnics>${Array.from({ length: 10 }, (_, i) => `<vnic><index>${i}</index></vnic>`).join("")}</vnics>\n` +
  `  <appliances><applianceSize>compact</applianceSize></appliances>\n  <cliSettings><userName>admin</userName></cliSettings>\n` +
  `  <features>${["firewall", "routing", "highAvailability", "syslog", "ipsec", "dhcp", "nat"].map((f) => `<${f}><enabled>false</enabled></${f}>`).join("")}<featureConfig/></features>\n` +
  `  <type>gatewayServices</type>\n</edge>\n`;
