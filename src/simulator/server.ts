/**
 * The simulator's HTTP(S) server: reads each request, sends control calls to control.ts, and
 * runs API calls through faults (a latency fault's delay first), authentication and the handler,
 * then answers once the manager's latency has passed since the call arrived (its work included),
 * maybe truncated, trickled or not at all (connection reset), counting every call by route and
 * status.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import {
  negotiate,
  notAcceptable,
  unauthorizedResponse,
  type ApiRequest,
  type ApiResponse,
  type Caller,
  type XmlType,
} from "./api.ts";
import { CONTROL_UNAUTHORIZED, controlAuthorized, handleControl } from "./control.ts";
import type { ApiRoute, FaultPlan } from "./faults.ts";
import { CREDENTIALS_IN_BODY } from "./manager-routes.ts";
import { handleApi, matchRoute, unknownRouteResponse, type RouteMatch } from "./routes.ts";
import type { SimulatorState } from "./state.ts";
import { booleanDocument, errorDocument } from "./xml.ts";

export interface ServerOptions {
  host: string;
  port: number;
  tls?: { key: string; cert: string };
  /** see SimulatorOptions.controlToken */
  controlToken?: string;
}

export interface ListeningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const EMPTY = Buffer.alloc(0);
const NO_FAULTS: FaultPlan = { delayMs: 0, resetAfterAction: false, malformed: false };

export async function listen(state: SimulatorState, options: ServerOptions): Promise<ListeningServer> {
  // aborted on close, so that pending latency and trickle timers do not keep the process alive
  const lifetime = new AbortController();
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    serve({ state, signal: lifetime.signal, controlToken: options.controlToken }, req, res).catch(
      (error: unknown) => {
        if (lifetime.signal.aborted) return;
        // a bug in the simulator: answer 500 rather than hang the client
        if (!res.headersSent) {
          res.writeHead(500, { "Content-Type": "text/plain" });
          res.end(`simulator error: ${error instanceof Error ? error.message : String(error)}`);
        } else {
          res.destroy();
        }
      },
    );
  };
  const server: Server = options.tls ? createHttpsServer(options.tls, handler) : createHttpServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `${options.tls ? "https" : "http"}://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        lifetime.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What every request to one listening simulator shares. */
interface ServerContext {
  state: SimulatorState;
  /** aborted when the server closes */
  signal: AbortSignal;
  controlToken: string | undefined;
}

async function serve(server: ServerContext, req: IncomingMessage, res: ServerResponse) {
  const arrivedAt = performance.now();
  const { state, signal } = server;
  const method = req.method ?? "GET";
  const read = await readRequest(req, state.settings.maxRequestBytes);
  if ("refused" in read) {
    sendPlain(res, read.refused.status, read.refused.text);
    return;
  }
  const { segments, body } = read;
  if (segments[0] === "_simulator") {
    serveControl(server, req, res, { method, segments: segments.slice(1), body });
    return;
  }
  const match = matchRoute(method, segments, state.manager.release);
  const routeName = match.route;
  const plan = match.route === "unknown" ? NO_FAULTS : state.faults.plan(match.route);
  const latencyMs = state.settings.latencyMs;
  // a latency fault stalls the manager before it acts: a client that gives up meanwhile finds the call done later
  if (plan.delayMs > 0) await sleep(plan.delayMs, undefined, { signal });
  const mediaType = negotiate(req.headers.accept);
  const response =
    plan.outcome?.kind === "reset"
      ? undefined
      : apiResponse(state, callOf(req, read, { match, plan, mediaType }));
  // the manager's own latency is the call's least total time, its work included: the answer waits for the rest
  // whole milliseconds, as timers keep them: calls that wait alike share one timer list
  const waitMs = Math.ceil(latencyMs + plan.delayMs - (performance.now() - arrivedAt));
  if (waitMs > 0) await sleep(waitMs, undefined, { signal });
  if (response === undefined || plan.resetAfterAction) {
    state.counters.count(routeName, "reset");
    req.socket.destroy();
    return;
  }
  state.counters.count(routeName, response.status);
  await send(server, res, response, { plan, mediaType: mediaType ?? "application/xml" });
}

/** What apiResponse needs of one API call. */
function callOf(
  req: IncomingMessage,
  { rawPath, rawQuery, segments, body }: RequestRead,
  { match, plan, mediaType }: Pick<ApiCall, "match" | "plan" | "mediaType">,
): ApiCall {
  const request: ApiRequest = {
    method: req.method ?? "GET",
    segments,
    query: new URLSearchParams(rawQuery),
    contentType: req.headers["content-type"],
    authorization: req.headers.authorization,
    body,
    ...(plan.staleListing !== undefined ? { staleListing: plan.staleListing } : {}),
  };
  return { match, plan, request, rawPath, mediaType, accept: req.headers.accept };
}

/** A request's path, decoded, its query and its body. */
interface RequestRead {
  rawPath: string;
  rawQuery: string;
  segments: string[];
  body: Buffer;
}

/** The request read; or why it is refused: 400 a path that does not decode, 413 a body too large. */
async function readRequest(
  req: IncomingMessage,
  maxBytes: number,
): Promise<RequestRead | { refused: { status: number; text: string } }> {
  const [rawPath = "/", rawQuery = ""] = (req.url ?? "/").split("?", 2);
  const segments = decodeSegments(rawPath);
  const body = await readBody(req, maxBytes);
  if (segments === undefined) return { refused: { status: 400, text: "bad path" } };
  if (body === undefined) return { refused: { status: 413, text: "body too large" } };
  return { rawPath, rawQuery, segments, body };
}

function serveControl(
  { state, controlToken }: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  call: { method: string; segments: string[]; body: Buffer },
): void {
  const result = controlAuthorized(req.headers.authorization, controlToken)
    ? handleControl(state, call.method, call.segments, call.body.toString("utf8"))
    : CONTROL_UNAUTHORIZED;
  const text = JSON.stringify(result.json);
  res.writeHead(result.status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** The answer to a manager call: the fault's status, a 404/405, a 401/406, or the call's own. */
interface ApiCall {
  match: RouteMatch;
  plan: FaultPlan;
  request: ApiRequest;
  rawPath: string;
  /** undefined when the Accept header allows no type the manager answers with */
  mediaType: XmlType | undefined;
  accept: string | undefined;
}

function apiResponse(state: SimulatorState, call: ApiCall): ApiResponse {
  const { match, plan, request } = call;
  if (plan.outcome?.kind === "status") return { status: plan.outcome.status, errors: plan.outcome.errors };
  if (match.route === "unknown") return unknownRouteResponse(match, call.rawPath);
  const auth = authenticate(state, match.route, request);
  if ("refused" in auth) return auth.refused;
  if (call.mediaType === undefined) return notAcceptable(call.accept ?? "");
  return handleApi(state, match, request, auth.caller);
}

/** who calls, when they may go on (undefined for calls whose credentials are in the body), else the 401 */
function authenticate(
  state: SimulatorState,
  route: ApiRoute,
  req: ApiRequest,
): { caller: Caller | undefined } | { refused: ApiResponse } {
  if (CREDENTIALS_IN_BODY.has(route)) return { caller: undefined };
  const tokenCall = route === "token";
  const result = state.auth.check(req.authorization, {
    allowBasic: tokenCall || state.settings.basicAuthEnabled,
    nowMs: state.clock.now(),
  });
  if (!result.ok) return { refused: unauthorizedResponse(result.reason) };
  if (tokenCall && result.scheme !== "basic")
    return { refused: unauthorizedResponse("a token is issued only for Basic credentials") };
  return { caller: { role: result.role, username: result.username } };
}

async function send(
  { state, signal }: ServerContext,
  res: ServerResponse,
  response: ApiResponse,
  { plan, mediaType }: { plan: FaultPlan; mediaType: XmlType },
): Promise<void> {
  const { status, body } = answerOf(response, plan, state.settings.prettyXml);
  const headers: Record<string, string | number> = { ...response.headers };
  if (body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  headers["Content-Type"] = response.contentType ?? mediaType;
  headers["Content-Length"] = bytes.length;
  res.writeHead(status, headers);
  if (plan.trickle === undefined) {
    res.end(bytes);
    return;
  }
  const { bytesPerInterval, intervalMs } = plan.trickle;
  for (let offset = 0; offset < bytes.length && !res.destroyed; offset += bytesPerInterval) {
    if (offset > 0) await sleep(intervalMs, undefined, { signal });
    res.write(bytes.subarray(offset, offset + bytesPerInterval));
  }
  res.end();
}

/** The status and body sent: a fault's error document in its shape, a malformed fault's cut in half. */
function answerOf(
  response: ApiResponse,
  plan: FaultPlan,
  pretty: boolean,
): { status: number; body: ApiResponse["body"] } {
  let status = response.status;
  let body = response.body;
  if (response.errors !== undefined) {
    const shape = (plan.outcome?.kind === "status" ? plan.outcome.shape : undefined) ?? plan.shape ?? "error";
    body = errorDocument(response.errors, shape, { pretty });
  }
  if (plan.malformed) {
    // a 204 has no body to spoil: answer 200 with a cut document instead
    if (body === undefined) status = 200;
    const whole = Buffer.from(body ?? booleanDocument(true));
    body = whole.subarray(0, Math.floor(whole.length / 2));
  }
  return { status, body };
}

/** for requests that cannot be read: the connection is closed, as unread body bytes may follow */
function sendPlain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    "Content-Type": "text/plain",
    "Content-Length": Buffer.byteLength(text),
    Connection: "close",
  });
  res.end(text);
}

/** decoded path segments without the empty first one and a trailing slash; undefined when not decodable */
function decodeSegments(rawPath: string): string[] | undefined {
  const parts = rawPath.split("/").slice(1);
  if (parts.length > 0 && parts.at(-1) === "") parts.pop();
  try {
    return parts.map((p) => decodeURIComponent(p));
  } catch {
    return undefined;
  }
}

/** the whole body, or undefined when it is larger than maxBytes */
async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  // most calls (GET, DELETE) have no body: skip the stream machinery for them
  if (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined) {
    req.resume();
    return EMPTY;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
