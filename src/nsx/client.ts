/**
 * `ManagerClient`: the manager calls over HTTP(S) for one NSX-v manager, one method each (the
 * routes of `RouteName` in client-options.ts: the edge list by page or whole, an edge, its
 * summary, its PUT, the pools of a scope, a pool's allocations, a release, and the 6.4 token
 * that the other calls carry under `auth: "token"`). It validates ids
 * before building paths, authenticates (Basic, or the 6.4 token scheme), sends every attempt
 * through the manager's limiter, repeats what is safe to repeat, turns every non-2xx into an
 * NsxApiError, and refuses bodies that are not safe XML. It reads and writes; it never decides.
 */
import type { Timer } from "../util/clock.ts";
import { EdgeDocument } from "./edge-document.ts";
import { edgeTypeLabel } from "./edge-shape.ts";
import { attemptVerdict, CircuitBreaker, isRefusal, refusalReason, type Refusal } from "./breaker.ts";
import {
  NsxApiError,
  NsxCircuitOpenError,
  NsxDocumentError,
  NsxIncompleteEdgeError,
  NsxResponseError,
  NsxTransportError,
  redactErrorDetails,
  type NsxError,
} from "./errors.ts";
import {
  parseAllocationList,
  parseAuthToken,
  parseErrorBody,
  parseEdgePage,
  parseEdgeSummary,
  parsePoolList,
  parseReleaseBody,
} from "./documents.ts";
import { encodeIpForPath, tryParseIp } from "../util/ip.ts";
import {
  resolveClientOptions,
  type ManagerClientOptions,
  type RequestEvent,
  type ResolvedClientOptions,
  type RouteName,
} from "./client-options.ts";
import { RequestLimiter, type Release } from "./limiter.ts";
import { createRedactor } from "./redact.ts";
import {
  backoffDelayMs,
  HttpTransport,
  mayRetry,
  parseRetryAfterMs,
  type AttemptOutcome,
  type HttpMethod,
  type HttpResponse,
} from "./transport.ts";
import type {
  Allocation,
  CallOptions,
  EdgePage,
  EdgeSummary,
  IpPool,
  ListEdgesOptions,
  ManagerApi,
  ReleaseAnswer,
} from "./types.ts";
import { isEdgeId, isPoolId } from "./ids.ts";

export { CLIENT_DEFAULTS } from "./client-options.ts";
export type { ManagerClientOptions, RequestEvent, RouteName } from "./client-options.ts";

const SCOPE_ID = /^[A-Za-z0-9_.:-]+$/;
const TOKEN_PATH = "/api/2.0/services/auth/token";
/** 200 pages: 200 000 edges in pages of 1024, 50 000 from a manager that caps pages at 256 */
export const MAX_EDGE_LIST_PAGES = 200;
/** tokens remembered for redaction after they were replaced: a late answer may still echo one */
const TOKENS_REMEMBERED = 8;

/** A list the manager counts or fills past what one may hold. */
function tooManyEdges(count: number, max: number): NsxResponseError {
  return new NsxResponseError(
    `edge list: the manager counts or sends ${count} edges, more than the ${max} one list may hold (maxEdgeListEdges; an NSX-v manager holds about 2000): refused`,
  );
}

function requireId(what: string, value: string, valid: (value: unknown) => boolean, form: string): void {
  if (typeof value !== "string" || !valid(value)) {
    throw new NsxDocumentError(`${what} ${JSON.stringify(value)?.slice(0, 80)} is not of the form ${form}`);
  }
}

interface Call {
  route: RouteName;
  method: HttpMethod;
  /** as sent, base path included */
  path: string;
  body?: string;
  /** may be repeated after any transient failure (GETs, the token request) */
  idempotent: boolean;
  signal?: AbortSignal | undefined;
  /** a tighter bound on the answer's body than the client's maxResponseBytes, and what it is */
  responseLimit?: { bytes: number; what: string };
}

/** Resolves `promise`, or rejects with a transport error when `signal` aborts first. */
function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  call: Call,
  what: string,
): Promise<T> {
  if (signal === undefined) return promise;
  const aborted = (): NsxTransportError =>
    new NsxTransportError({
      method: call.method,
      path: call.path,
      reason: `aborted by the caller ${what}`,
      notSent: true,
      cause: signal.reason,
    });
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(aborted());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

export class ManagerClient implements ManagerApi {
  readonly #options: ResolvedClientOptions;
  readonly #onRequest: ((event: RequestEvent) => void) | undefined;
  readonly #basic: string;
  readonly #redact: (text: string) => string;
  readonly #limiter: RequestLimiter;
  readonly #breaker: CircuitBreaker;
  readonly #transport: HttpTransport;
  #token: { value: string; refreshAtMs: number } | undefined;
  /** every token sent lately, the current one included: redacted wherever an answer echoes one */
  readonly #tokensSent: string[] = [];
  #tokenPending: Promise<string> | undefined;
  #closed = false;

  constructor(options: ManagerClientOptions) {
    const o = resolveClientOptions(options);
    this.#options = o;
    this.#onRequest = options.onRequest;
    const userPassword = `${options.username}:${options.password}`;
    const credentials = Buffer.from(userPassword, "utf8").toString("base64");
    this.#basic = `Basic ${credentials}`;
    const secrets = [options.password, userPassword, credentials];
    this.#redact = createRedactor(() => [...secrets, ...this.#tokensSent]);
    this.#limiter = new RequestLimiter({
      maxConcurrentRequests: o.maxConcurrentRequests,
      requestsPerSecond: o.requestsPerSecond,
      burst: o.burst,
      clock: o.clock,
    });
    this.#breaker = new CircuitBreaker({
      failures: o.circuitBreakerFailures,
      coolDownMs: o.circuitBreakerCoolDownMs,
      clock: o.clock,
    });
    this.#transport = new HttpTransport({
      origin: o.origin,
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
      insecureSkipVerify: o.insecureSkipVerify,
      connections: o.maxConcurrentRequests,
      requestTimeoutMs: o.requestTimeoutMs,
      connectTimeoutMs: o.connectTimeoutMs,
      maxResponseBytes: o.maxResponseBytes,
      clock: o.clock,
      redact: this.#redact,
    });
  }

  async getEdge(edgeId: string, options?: CallOptions): Promise<EdgeDocument> {
    requireId("edge id", edgeId, isEdgeId, "edge-<n>");
    const call = this.#get("getEdge", `/api/4.0/edges/${edgeId}`, options);
    return this.#read(call, ({ body }) => {
      const doc = EdgeDocument.parse(body);
      if (doc.id.trim() !== edgeId) {
        throw new NsxResponseError(
          `GET ${call.path}: the manager answered with edge ${JSON.stringify(doc.id.slice(0, 80))}`,
        );
      }
      return doc;
    });
  }

  /** Sends the whole document; any 2xx is success. */
  async putEdge(edgeId: string, doc: EdgeDocument, options?: CallOptions): Promise<void> {
    requireId("edge id", edgeId, isEdgeId, "edge-<n>");
    if (doc.id.trim() !== edgeId) {
      throw new NsxDocumentError(
        `putEdge ${edgeId}: the document is for edge ${JSON.stringify(doc.id.slice(0, 80))}`,
      );
    }
    // a PUT replaces the edge's configuration with what it carries: never send less than an edge
    const missing = doc.missingFromWholeEdge();
    if (missing.length > 0)
      throw new NsxIncompleteEdgeError({ edgeId, missing, typeLabel: edgeTypeLabel(doc.shape()) });
    await this.#call({
      route: "putEdge",
      method: "PUT",
      path: `${this.#options.basePath}/api/4.0/edges/${edgeId}`,
      body: doc.serialize(),
      idempotent: false,
      signal: options?.signal,
    });
  }

  /** One page of the manager's edge list (pageSize 1 to 1024; the manager's default is 256). */
  async getEdgePage(startIndex: number, pageSize: number, options?: CallOptions): Promise<EdgePage> {
    return this.#edgePage({ startIndex, pageSize, maxBytes: this.#options.maxEdgeListBytes }, options);
  }

  /**
   * Every edge, following the pages until `startIndex + pageSize` reaches `totalCount`, as VMware's
   * clients do. `onPage` hears the count so far and the total, for progress on long lists. What a
   * list may cost is bounded (maxEdgeListEdges, maxEdgeListBytes, MAX_EDGE_LIST_PAGES): a manager
   * that counts or sends more is refused with NsxResponseError, whatever it answers. With
   * `pages`, a page whose bytes are those of its last complete read is not parsed again.
   */
  async listEdges(
    options: ListEdgesOptions & { onPage?: (fetched: number, total: number) => void } = {},
  ): Promise<EdgeSummary[]> {
    try {
      const edges = await this.#listEdges(options);
      options.pages?.complete();
      return edges;
    } catch (error) {
      options.pages?.abandon();
      throw error;
    }
  }

  async #listEdges(
    options: ListEdgesOptions & { onPage?: (fetched: number, total: number) => void },
  ): Promise<EdgeSummary[]> {
    const { maxEdgeListEdges, maxEdgeListBytes } = this.#options;
    // the manager's own default: a manager that caps pages lower is followed all the same
    const pageSize = options.pageSize ?? 256;
    // by id: an edge created while paging can shift one already read onto the next page
    const edges = new Map<string, EdgeSummary>();
    let bytesLeft = maxEdgeListBytes;
    for (let startIndex = 0, pages = 1; ; pages++) {
      const { keep, pages: memo } = options;
      const page = await this.#edgePage(
        { startIndex, pageSize, maxBytes: bytesLeft, keep, pages: memo },
        options,
      );
      bytesLeft -= page.bytes;
      // a count no manager reaches is refused before it is followed
      if (page.totalCount > maxEdgeListEdges) throw tooManyEdges(page.totalCount, maxEdgeListEdges);
      for (const edge of page.edges) edges.set(edge.id, edge);
      if (edges.size > maxEdgeListEdges) throw tooManyEdges(edges.size, maxEdgeListEdges);
      options.onPage?.(edges.size, page.totalCount);
      const next = startIndex + page.edges.length;
      if (next >= page.totalCount) break;
      if (page.edges.length === 0) {
        throw new NsxResponseError(
          `edge list: the manager counts ${page.totalCount} edges but the page at ${startIndex} is empty`,
        );
      }
      // served a few edges at a time, even a count within the bound would page on for long
      if (pages >= MAX_EDGE_LIST_PAGES) {
        throw new NsxResponseError(
          `edge list: the manager counts ${page.totalCount} edges and ${pages} pages held ${edges.size}; stopped at ${MAX_EDGE_LIST_PAGES} pages`,
        );
      }
      // the manager may cap a page below what was asked: go on from what it sent
      startIndex = next;
    }
    return [...edges.values()];
  }

  /**
   * A page, read only up to `maxBytes` (what is left of its list's budget), with what it cost; of
   * each summary what `keep` keeps; taken from `pages` when its bytes are the same as there.
   */
  async #edgePage(
    at: Pick<ListEdgesOptions, "keep" | "pages"> & { startIndex: number; pageSize: number; maxBytes: number },
    options: CallOptions | undefined,
  ): Promise<EdgePage & { bytes: number }> {
    const { startIndex, pageSize, maxBytes, keep, pages } = at;
    if (
      !Number.isSafeInteger(startIndex) ||
      startIndex < 0 ||
      !Number.isSafeInteger(pageSize) ||
      pageSize < 1
    ) {
      throw new NsxDocumentError(
        `edge list: startIndex ${startIndex} and pageSize ${pageSize} must be integers ≥ 0 and ≥ 1`,
      );
    }
    const query = `startIndex=${startIndex}&pageSize=${pageSize}`;
    const max = this.#options.maxEdgeListBytes;
    const what = `what is left (${maxBytes} bytes) of the ${max} bytes the pages of one edge list may take together (maxEdgeListBytes)`;
    const call = {
      ...this.#get("listEdges", `/api/4.0/edges?${query}`, options),
      responseLimit: { bytes: maxBytes, what },
    };
    const parse = (body: string): EdgePage => {
      const page = parseEdgePage(body);
      return keep === undefined ? page : { ...page, edges: page.edges.map(keep) };
    };
    return this.#read(call, (response) => ({
      ...(pages === undefined ? parse(response.body) : pages.page(startIndex, pageSize, response, parse)),
      bytes: response.size,
    }));
  }

  async getEdgeSummary(edgeId: string, options?: CallOptions): Promise<EdgeSummary> {
    requireId("edge id", edgeId, isEdgeId, "edge-<n>");
    return this.#read(this.#get("getEdgeSummary", `/api/4.0/edges/${edgeId}/summary`, options), ({ body }) =>
      parseEdgeSummary(body),
    );
  }

  async listPools(scopeId: string, options?: CallOptions): Promise<IpPool[]> {
    requireId(
      "scope id",
      scopeId,
      (value) => typeof value === "string" && SCOPE_ID.test(value),
      "[A-Za-z0-9_.:-]+",
    );
    return this.#read(
      this.#get("listPools", `/api/2.0/services/ipam/pools/scope/${scopeId}`, options),
      ({ body }) => parsePoolList(body),
    );
  }

  async listAllocations(poolId: string, options?: CallOptions): Promise<Allocation[]> {
    requireId("pool id", poolId, isPoolId, "ipaddresspool-<n>");
    return this.#read(
      this.#get("listAllocations", `/api/2.0/services/ipam/pools/${poolId}/ipaddresses`, options),
      ({ body }) => parseAllocationList(body),
    );
  }

  /** Released only when the manager answered `true` or `<boolean>true</boolean>`. */
  async releaseAddress(poolId: string, ip: string, options?: CallOptions): Promise<ReleaseAnswer> {
    requireId("pool id", poolId, isPoolId, "ipaddresspool-<n>");
    if (typeof ip !== "string" || tryParseIp(ip) === undefined) {
      throw new NsxDocumentError(`address ${JSON.stringify(ip)?.slice(0, 80)} is not an IP address`);
    }
    const call: Call = {
      route: "releaseAddress",
      method: "DELETE",
      path: `${this.#options.basePath}/api/2.0/services/ipam/pools/${poolId}/ipaddresses/${encodeIpForPath(ip)}`,
      idempotent: false,
      signal: options?.signal,
    };
    return this.#read(call, ({ body, status }) => {
      const answer = parseReleaseBody(body, status);
      return { ...answer, answer: this.#redact(answer.answer) };
    });
  }

  /** Closes the connections, letting requests in flight finish; later calls fail. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#transport.close();
  }

  /** Aborts the requests in flight (they fail at once) and closes the pool; later calls fail. */
  async destroy(): Promise<void> {
    this.#closed = true;
    await this.#transport.destroy();
  }

  #get(route: RouteName, path: string, options: CallOptions | undefined): Call {
    return {
      route,
      method: "GET",
      path: `${this.#options.basePath}${path}`,
      idempotent: true,
      signal: options?.signal,
    };
  }

  /**
   * The call, and its answer read by `parse`. What the answer makes a parser say (a value quoted in
   * a complaint) is redacted: a proxy may answer 200 with the request echoed.
   */
  async #read<T>(call: Call, parse: (response: HttpResponse) => T): Promise<T> {
    const response = await this.#call(call);
    try {
      return parse(response);
    } catch (error) {
      if (!(error instanceof NsxResponseError)) throw error;
      const message = this.#redact(error.message);
      // the original goes only when it said too much: its cause may say the same
      throw message === error.message ? error : new NsxResponseError(message);
    }
  }

  /** Attempts until a 2xx, a failure that may not be repeated, or the retry budget is spent. */
  async #call(call: Call): Promise<HttpResponse> {
    const o = this.#options;
    let retries = 0;
    let tokenRenewed = false;
    for (let attempt = 1; ; attempt++) {
      if (this.#closed) {
        throw new NsxTransportError({
          method: call.method,
          path: call.path,
          reason: "the client is closed",
          notSent: true,
        });
      }
      const authorization =
        call.route === "token" || o.auth === "basic" ? this.#basic : await this.#tokenHeader(call);
      const outcome = await this.#attempt(call, authorization, attempt);
      if (outcome.kind === "response" && outcome.status >= 200 && outcome.status < 300) return outcome;
      // a 401 is decided before any processing: renew the token once and repeat
      if (!tokenRenewed && this.#dropRejectedToken(outcome, authorization)) {
        tokenRenewed = true;
        continue;
      }
      const error = outcome.kind === "response" ? this.#apiError(call, outcome) : outcome.error;
      if (retries >= o.maxRetries || !mayRetry(outcome, call.idempotent)) throw error;
      await this.#pause(call, this.#retryDelayMs(outcome, retries), error);
      retries++;
    }
  }

  /** A 401 to a token (not to Basic auth): the token is dropped, unless another replaced it meanwhile. */
  #dropRejectedToken(outcome: AttemptOutcome, authorization: string): boolean {
    if (outcome.kind !== "response" || outcome.status !== 401 || authorization === this.#basic) return false;
    if (this.#token !== undefined && authorization.endsWith(this.#token.value)) this.#token = undefined;
    return true;
  }

  /** One attempt through the limiter and the circuit breaker, reported to the hook. */
  async #attempt(call: Call, authorization: string, attempt: number): Promise<AttemptOutcome> {
    // refused before the limiter too: a request the circuit refuses takes no slot and no token
    const refusal = this.#breaker.refusal();
    if (refusal !== undefined) throw this.#circuitOpen(call, refusal);
    let release: Release;
    try {
      release = await this.#limiter.acquire(call.signal);
    } catch (reason) {
      throw new NsxTransportError({
        method: call.method,
        path: call.path,
        reason: "aborted by the caller while waiting for the request limiter",
        notSent: true,
        cause: reason,
      });
    }
    // asked once a slot is free: the circuit may have opened while this request waited for it
    const permit = this.#breaker.admit();
    if (isRefusal(permit)) {
      release();
      throw this.#circuitOpen(call, permit);
    }
    const { clock } = this.#options;
    const startMs = clock.now();
    let outcome: AttemptOutcome | undefined;
    try {
      const { method, path, body, signal, responseLimit } = call;
      const headers: Record<string, string> =
        body === undefined
          ? { accept: "application/xml", authorization }
          : { accept: "application/xml", authorization, "content-type": "application/xml" };
      outcome = await this.#transport.send({ method, path, headers, body, signal, responseLimit });
    } finally {
      release();
      const verdict = outcome === undefined ? undefined : attemptVerdict(call, outcome, call.signal);
      this.#breaker.report(permit, verdict ?? { kind: "inconclusive" });
    }
    const status = outcome.kind === "response" ? outcome.status : "error";
    try {
      this.#onRequest?.({
        method: call.method,
        route: call.route,
        status,
        // the wall clock may step back
        durationMs: Math.max(0, clock.now() - startMs),
        attempt,
      });
    } catch {
      // metrics must never fail a manager call
    }
    return outcome;
  }

  /** Refused by the open circuit: what failed, and when the manager is tried again. */
  #circuitOpen(call: Call, refusal: Refusal): NsxCircuitOpenError {
    const { origin, basePath } = this.#options;
    const reason = refusalReason(refusal, `${origin}${basePath}`);
    return new NsxCircuitOpenError({
      method: call.method,
      path: call.path,
      reason,
      retryAtMs: refusal.probeAtMs,
    });
  }

  #retryDelayMs(outcome: AttemptOutcome, retry: number): number {
    const o = this.#options;
    const retryAfterMs =
      outcome.kind === "response"
        ? parseRetryAfterMs(outcome.headers["retry-after"], o.clock.now())
        : undefined;
    if (retryAfterMs !== undefined) return Math.min(retryAfterMs, o.maxRetryAfterMs);
    return backoffDelayMs(retry, o, o.random);
  }

  #pause(call: Call, delayMs: number, lastError: NsxError): Promise<void> {
    const { clock } = this.#options;
    let timer: Timer | undefined;
    const wait = new Promise<void>((resolve) => {
      timer = clock.setTimer(delayMs, resolve);
    });
    return raceAbort(wait, call.signal, call, `while waiting to retry after: ${lastError.message}`).finally(
      () => timer?.cancel(),
    );
  }

  /**
   * Every field of the error document redacted, and the body itself before it is read: a plain
   * text answer is cut to a snippet, and a secret cut in two would no longer be found.
   */
  #apiError(call: Call, response: HttpResponse): NsxApiError {
    const errors = parseErrorBody(this.#redact(response.body)).map((e) =>
      redactErrorDetails(e, this.#redact),
    );
    return new NsxApiError({ status: response.status, method: call.method, path: call.path, errors });
  }

  /** `AUTHTOKEN <jwt>`, fetching (once for all waiters) when there is none or it is about to expire. */
  async #tokenHeader(call: Call): Promise<string> {
    const { clock } = this.#options;
    if (this.#token !== undefined && clock.now() < this.#token.refreshAtMs)
      return `AUTHTOKEN ${this.#token.value}`;
    this.#tokenPending ??= this.#fetchToken().finally(() => {
      this.#tokenPending = undefined;
    });
    return `AUTHTOKEN ${await raceAbort(this.#tokenPending, call.signal, call, "while waiting for an auth token")}`;
  }

  async #fetchToken(): Promise<string> {
    const o = this.#options;
    const call: Call = {
      route: "token",
      method: "POST",
      path: `${o.basePath}${TOKEN_PATH}`,
      idempotent: true,
    };
    const token = await this.#read(call, ({ body }) => parseAuthToken(body));
    this.#tokensSent.push(token.value);
    if (this.#tokensSent.length > TOKENS_REMEMBERED) this.#tokensSent.shift();
    const nowMs = o.clock.now();
    const expiresAtMs = token.expiresAtMs ?? nowMs + o.tokenLifetimeMs;
    // a token shorter-lived than the margin is still used for half its life, not refetched per call
    const refreshAtMs = Math.max(expiresAtMs - o.tokenRefreshMarginMs, nowMs + (expiresAtMs - nowMs) / 2);
    this.#token = { value: token.value, refreshAtMs };
    return token.value;
  }
}
