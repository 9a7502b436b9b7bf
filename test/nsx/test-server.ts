/**
 * A tiny scripted HTTP(S) server on a free loopback port for the client tests: records every
 * request (with its body) and lets each test answer as a manager, a broken proxy or a black hole
 * would. `close()` drops every open connection, so a test that never answers leaves nothing behind.
 * `startRawServer` is the same below HTTP: it reads requests itself and a test writes the answer's
 * bytes, as hostile or broken as it likes.
 */
import { readFileSync } from "node:fs";
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import net, { type AddressInfo, type Socket } from "node:net";
import tls, { type TLSSocket } from "node:tls";

/** Listens on 127.0.0.1 (`port`, or one the system picks) and resolves to the port. */
async function listenOnLoopback(server: net.Server, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return (server.address() as AddressInfo).port;
}

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
  const port = await listenOnLoopback(server, options.port);
  let connections = 0;
  let resumed = 0;
  server.on("connection", () => connections++);
  server.on("secureConnection", (socket: TLSSocket) => void (resumed += socket.isSessionReused() ? 1 : 0));
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

/** A request as the raw server read it off the wire. */
export interface RawRequest {
  /** the accepted connection it came on, counting from 0 */
  connection: number;
  method: string;
  target: string;
  /** the request line and header lines as received, without the blank line */
  head: string;
  /** header values by lower-cased name, in the order received */
  headers: Record<string, string[]>;
  body: Buffer;
}

/** Answers one request by writing to the socket; the next request on it is read once this settles. */
export type RawAnswer = (request: RawRequest, socket: Socket) => void | Promise<void>;

export interface RawServer {
  url: string;
  port: number;
  requests: RawRequest[];
  /** every byte received, per accepted connection */
  received: Buffer[];
  /** TCP connections accepted so far */
  connections(): number;
  close(): Promise<void>;
}

const HEAD_END = Buffer.from("\r\n\r\n");

/** The next whole request at the start of `data` and its length, or undefined while it is incomplete. */
function readRawRequest(
  data: Buffer,
  connection: number,
): { request: RawRequest; length: number } | undefined {
  const headEnd = data.indexOf(HEAD_END);
  if (headEnd < 0) return undefined;
  const head = data.subarray(0, headEnd).toString("latin1");
  const [requestLine = "", ...lines] = head.split("\r\n");
  const headers: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  // the clients under test send bodies with a Content-Length, never chunked
  const bodyStart = headEnd + HEAD_END.length;
  const length = bodyStart + Number(headers["content-length"]?.[0] ?? 0);
  if (data.length < length) return undefined;
  const [method = "", target = ""] = requestLine.split(" ");
  const body = Buffer.from(data.subarray(bodyStart, length));
  return { request: { connection, method, target, head, headers, body }, length };
}

/**
 * A server on a free loopback port that reads HTTP/1.1 requests off each connection and lets
 * `answer` write whatever bytes it likes. What does not start like a request (a TLS handshake
 * sent to the plain server) gets a 400 and a close, as a plain HTTP server answers it.
 */
export async function startRawServer(answer: RawAnswer, options: { tls?: boolean } = {}): Promise<RawServer> {
  const requests: RawRequest[] = [];
  const received: Buffer[] = [];
  const sockets = new Set<Socket>();
  let accepted = 0;
  const serveConnection = (socket: Socket): void => {
    const connection = received.length;
    received.push(Buffer.alloc(0));
    socket.setNoDelay(true);
    socket.on("error", () => undefined);
    let pending = Buffer.alloc(0);
    let busy = false;
    const readNext = async (): Promise<void> => {
      if (busy) return;
      busy = true;
      for (let next = readRawRequest(pending, connection); next !== undefined;) {
        pending = pending.subarray(next.length);
        requests.push(next.request);
        await answer(next.request, socket);
        next = readRawRequest(pending, connection);
      }
      busy = false;
    };
    socket.on("data", (chunk: Buffer) => {
      received[connection] = Buffer.concat([received[connection] as Buffer, chunk]);
      if (!/^[A-Z]/.test(received[connection].toString("latin1", 0, 1))) {
        socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      void readNext();
    });
  };
  const server = options.tls
    ? tls.createServer(TEST_TLS, serveConnection)
    : net.createServer(serveConnection);
  server.on("connection", (socket: Socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const port = await listenOnLoopback(server);
  return {
    url: `${options.tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    requests,
    received,
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
