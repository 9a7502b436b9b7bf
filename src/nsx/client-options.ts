/**
 * The options of `ManagerClient`: their types, every default in CLIENT_DEFAULTS, and the
 * check that turns what a caller gave into complete, valid settings (the caller's object is only
 * read). Also the shape of the per-attempt event the metrics layer counts, and the one judgement
 * of whether a connection is open to whoever sits on its network path.
 */
import { NsxDocumentError } from "./errors.ts";
import { realClock, type Clock } from "../util/clock.ts";
import { isLoopbackHost } from "../util/ip.ts";
import { withDefaults } from "../util/options.ts";

/** The route names the `onRequest` hook reports; one per call, plus the token request. */
export type RouteName =
  | "listEdges"
  | "getEdge"
  | "getEdgeSummary"
  | "putEdge"
  | "listPools"
  | "listAllocations"
  | "releaseAddress"
  | "token";

/** One attempt, as the metrics layer counts it. */
export interface RequestEvent {
  method: string;
  route: RouteName;
  /** the HTTP status, or "error" when there was no complete response */
  status: number | "error";
  durationMs: number;
  /** 1 for a call's first attempt */
  attempt: number;
}

export interface ManagerClientOptions {
  /** `https://host[:port]` (http for a simulator); a base path is kept; credentials in it are refused */
  url: string;
  username: string;
  password: string;
  /** "basic": Basic auth on every request; "token": NSX 6.4 AUTHTOKEN obtained with Basic */
  auth?: "basic" | "token";
  /** PEM bundle of CAs to trust instead of the system roots (self-signed managers) */
  ca?: string;
  /** skip certificate verification; for test managers only */
  insecureSkipVerify?: boolean;
  /** deadline of one attempt: connect, headers and the whole body */
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  maxConcurrentRequests?: number;
  requestsPerSecond?: number;
  /** token bucket size; defaults to requestsPerSecond (see CLIENT_DEFAULTS.burst) */
  burst?: number;
  /** repeats after the first attempt, for what may be repeated */
  maxRetries?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** the longest Retry-After honoured; a longer one is cut to this */
  maxRetryAfterMs?: number;
  maxResponseBytes?: number;
  /** edges one edge list may hold; a manager that counts or sends more gets its list refused */
  maxEdgeListEdges?: number;
  /** bytes all the pages of one edge list may take together; a page that would go past is refused unread */
  maxEdgeListBytes?: number;
  /** a token is replaced this long before it expires */
  tokenRefreshMarginMs?: number;
  /** lifetime assumed for a token that states no expiry */
  tokenLifetimeMs?: number;
  /** consecutive requests that timed out or could not connect after which requests fail at once; 0: never */
  circuitBreakerFailures?: number;
  /** how long requests fail at once before one probes the manager again */
  circuitBreakerCoolDownMs?: number;
  /** called once per attempt; must not throw (a throw is ignored) */
  onRequest?: (event: RequestEvent) => void;
  /** time and timers (tests) */
  clock?: Clock;
  /** [0, 1) source for retry jitter (tests) */
  random?: () => number;
}

/** Every default of ManagerClientOptions, in one place. */
export const CLIENT_DEFAULTS = Object.freeze({
  /** Basic on every request: works on every 6.x manager; "token" needs 6.4 */
  auth: "basic" as "basic" | "token",
  /** certificates are verified unless switched off explicitly */
  insecureSkipVerify: false,
  /** per attempt, connect + headers + body: an edge PUT takes seconds, an edge can be megabytes */
  requestTimeoutMs: 30_000,
  /** TCP + TLS connect; a connect failure is provably unsent, so it may be repeated even for writes */
  connectTimeoutMs: 10_000,
  /** managers are easily overloaded (field notes); also the size of the connection pool */
  maxConcurrentRequests: 8,
  /** sustained attempts per second per manager (retries and token requests included) */
  requestsPerSecond: 20,
  /**
   * null: equal to requestsPerSecond. A burst of one second's worth keeps the rate bound visible:
   * the benchmark checks that N calls take about N / requestsPerSecond, and a large burst (such
   * as Crossplane's 10 x rate) would let a short run finish before the bound applies.
   */
  burst: null as number | null,
  /** repeats after the first attempt, for failures that may be repeated (see transport.mayRetry) */
  maxRetries: 3,
  /** full-jitter backoff: retry n waits a uniform [0, min(maxDelayMs, baseDelayMs * 2^n)) */
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  /** a Retry-After longer than this is cut to it: a reconcile should not hang for minutes */
  maxRetryAfterMs: 30_000,
  /**
   * 32 MiB: edges of a few MB are normal. Correcting a 31 MB edge peaks at 232 MiB of RSS in
   * `apply` (bench cli-footprint: about 4.5 bytes per byte of edge over a 90 MiB base), which
   * the Deployment's 1Gi limit holds beside the operator's own state: a larger answer is
   * refused with an error, never an OOM kill.
   */
  maxResponseBytes: 32 * 1024 * 1024,
  /**
   * An NSX-v manager holds about 2000 edges (its documented maximum): 10 000 is five times that.
   * A hostile or broken list (a huge totalCount, every page full of new ids) is refused at this
   * bound instead of being followed for its 200 pages and kept whole (1.37 GB of RSS measured).
   */
  maxEdgeListEdges: 10_000,
  /**
   * 32 MiB: a summary is about 1 KB (the simulator's) to 3 KB (a manager's, with its allowed
   * actions), so 10 000 of them fit; no page of a list is read past what is left of it, so one
   * list costs what one large edge read does.
   */
  maxEdgeListBytes: 32 * 1024 * 1024,
  /** a token is replaced this long before it expires */
  tokenRefreshMarginMs: 60_000,
  /** assumed when a token states no expiry: the NSX 6.4 default */
  tokenLifetimeMs: 90 * 60_000,
  /**
   * A manager that hangs costs each request requestTimeoutMs; after this many in a row (timed
   * out, a 504, or no connection; any other answer resets the count) every request fails at once
   * with NSX_ERR_CONNECTION instead of waiting. Three: one slow request (a huge edge) or two do
   * not cut off a manager that answers others in between.
   */
  circuitBreakerFailures: 3,
  /** then one request at a time probes; a failed probe opens the circuit for as long again */
  circuitBreakerCoolDownMs: 30_000,
});

/** The options with every default applied and every value checked. */
export type ResolvedClientOptions = Omit<
  Required<ManagerClientOptions>,
  "url" | "username" | "password" | "ca" | "onRequest" | "burst" | "auth"
> & { auth: "basic" | "token"; burst: number; origin: string; basePath: string };

function positive(
  name: string,
  value: number,
  { integer, zero }: { integer: boolean; zero: boolean },
): number {
  const ok = (zero ? value >= 0 : value > 0) && (integer ? Number.isSafeInteger(value) : value === value);
  if (!ok)
    throw new NsxDocumentError(
      `client options: ${name} must be a ${zero ? "non-negative" : "positive"} ${integer ? "integer" : "number"}`,
    );
  return value;
}

/** The manager's URL: http(s), no credentials, query or fragment; never echoed, it could carry userinfo. */
function managerUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new NsxDocumentError("client options: url is not a URL");
  }
  const extras = [url.username, url.password, url.search, url.hash].some((part) => part !== "");
  if (!["http:", "https:"].includes(url.protocol) || extras) {
    throw new NsxDocumentError(
      "client options: url must be http(s)://host[:port][/path], without credentials, query or fragment",
    );
  }
  return url;
}

/** A username Basic auth can carry (non-empty, no ':'), and a password. */
function checkCredentials(options: ManagerClientOptions): void {
  if (typeof options.username !== "string" || options.username === "" || options.username.includes(":")) {
    throw new NsxDocumentError("client options: username must be non-empty and without ':'");
  }
  if (typeof options.password !== "string")
    throw new NsxDocumentError("client options: password must be a string");
}

/** Applies the defaults and checks every value; throws NsxDocumentError, never echoing the URL. */
export function resolveClientOptions(options: ManagerClientOptions): ResolvedClientOptions {
  const o = withDefaults(CLIENT_DEFAULTS, options);
  const url = managerUrl(options.url);
  checkCredentials(options);
  const auth = o.auth;
  if (auth !== "basic" && auth !== "token")
    throw new NsxDocumentError('client options: auth must be "basic" or "token"');
  const rps = positive("requestsPerSecond", o.requestsPerSecond, {
    integer: false,
    zero: false,
  });
  const int = (name: keyof typeof CLIENT_DEFAULTS, value: number, zero = false): number =>
    positive(name, value, { integer: true, zero });
  return {
    auth,
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ""),
    insecureSkipVerify: o.insecureSkipVerify,
    requestTimeoutMs: int("requestTimeoutMs", o.requestTimeoutMs),
    connectTimeoutMs: int("connectTimeoutMs", o.connectTimeoutMs),
    maxConcurrentRequests: int("maxConcurrentRequests", o.maxConcurrentRequests),
    requestsPerSecond: rps,
    burst: int("burst", o.burst ?? (Number.isFinite(rps) ? Math.max(1, Math.ceil(rps)) : 1)),
    maxRetries: int("maxRetries", o.maxRetries, true),
    baseDelayMs: int("baseDelayMs", o.baseDelayMs, true),
    maxDelayMs: int("maxDelayMs", o.maxDelayMs, true),
    maxRetryAfterMs: int("maxRetryAfterMs", o.maxRetryAfterMs, true),
    maxResponseBytes: int("maxResponseBytes", o.maxResponseBytes),
    maxEdgeListEdges: int("maxEdgeListEdges", o.maxEdgeListEdges),
    maxEdgeListBytes: int("maxEdgeListBytes", o.maxEdgeListBytes),
    tokenRefreshMarginMs: int("tokenRefreshMarginMs", o.tokenRefreshMarginMs, true),
    tokenLifetimeMs: int("tokenLifetimeMs", o.tokenLifetimeMs),
    circuitBreakerFailures: int("circuitBreakerFailures", o.circuitBreakerFailures, true),
    circuitBreakerCoolDownMs: int("circuitBreakerCoolDownMs", o.circuitBreakerCoolDownMs, true),
    clock: options.clock ?? realClock,
    random: options.random ?? Math.random,
  };
}

/** A connection that anyone on its network path can read or change, and why. */
export interface InsecureTransport {
  kind: "insecureSkipVerify" | "plainHttp";
  message: string;
}

/**
 * Whether these settings leave the connection open to the network path: plain `http://` to a
 * host other than this machine (credentials and documents in clear text), or `https://` without
 * certificate verification (anyone in between can pose as the manager). Undefined for a URL that
 * does not parse: resolving the options refuses it.
 */
export function insecureTransport(options: {
  url: string;
  insecureSkipVerify?: boolean | undefined;
}): InsecureTransport | undefined {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    return undefined;
  }
  if (url.protocol === "http:") {
    if (isLoopbackHost(url.hostname)) return undefined;
    return {
      kind: "plainHttp",
      message: `plain http:// to ${url.host}: the credentials and every document cross the network unencrypted, readable and changeable on the way; use https://`,
    };
  }
  if (url.protocol === "https:" && options.insecureSkipVerify === true) {
    return {
      kind: "insecureSkipVerify",
      message: `TLS certificate verification is off (insecureSkipVerify) for ${url.host}: anyone on the network path can pose as the manager, read the credentials and change what is read and written; trust the manager's CA instead`,
    };
  }
  return undefined;
}
