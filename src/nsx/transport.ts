/**
 * One HTTP attempt against one manager, and the policy for repeating attempts. `HttpTransport`
 * owns the manager's connections (http1.ts), sends one request with its own deadline (headers and
 * body), reads the body under a size cap, and reports either the response or a classified
 * failure; it never retries. Whether the request was ever written to a socket is known exactly
 * (the connection calls `onWritten` right before it writes), which is what makes a write safe to
 * repeat. The retry policy (which failures, how long to wait) is here as pure functions; the
 * client's loop applies it.
 */
import { createHash } from "node:crypto";
import { NsxResponseError, NsxTransportError } from "./errors.ts";
import { Http1Connection, type Http1Call, type Http1Handler, type TlsSessionCache } from "./http1.ts";
import type { ResponseHeaders } from "./http1-response.ts";
import type { Clock } from "../util/clock.ts";

export type { ResponseHeaders };

export type HttpMethod = "GET" | "PUT" | "DELETE" | "POST";

export interface TransportOptions {
  /** scheme, host and port; no path (the client keeps any base path) and no credentials */
  origin: string;
  /** PEM bundle of CAs to trust instead of the system roots */
  ca?: string;
  insecureSkipVerify: boolean;
  /** connections to the manager; the limiter keeps in-flight requests at or below it */
  connections: number;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  maxResponseBytes: number;
  clock: Clock;
  /** scrubs secrets out of text that reaches an error (causes, server text) */
  redact: (text: string) => string;
}

export interface HttpRequest {
  method: HttpMethod;
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
  signal?: AbortSignal | undefined;
  /**
   * a tighter bound on this answer's body than the transport's maxResponseBytes (what is left of
   * a budget), and what a refusal at it says the bound is
   */
  responseLimit?: { bytes: number; what: string } | undefined;
}

export interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  /** the body as UTF-8 text, decoded when first read */
  readonly body: string;
  /** the body's length in bytes */
  readonly size: number;
  /** SHA-256 (base64) of the body's bytes, taken without decoding them or joining the chunks */
  digest(): string;
}

/**
 * An answer as it arrived, its bytes decoded only when `body` is read: a caller that finds the
 * bytes the same as an answer it already read (an edge list page of megabytes, read every sync
 * interval) neither joins nor decodes them.
 */
class ReceivedResponse implements HttpResponse {
  readonly kind = "response";
  readonly status: number;
  readonly headers: ResponseHeaders;
  readonly size: number;
  readonly #chunks: readonly Buffer[];
  #body: string | undefined;

  constructor(status: number, headers: ResponseHeaders, chunks: readonly Buffer[]) {
    this.status = status;
    this.headers = headers;
    this.#chunks = chunks;
    this.size = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  }

  get body(): string {
    // most answers arrive in one chunk: decoded where it lies, not copied first
    this.#body ??= (
      this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks)
    ).toString("utf8");
    return this.#body;
  }

  digest(): string {
    const hash = createHash("sha256");
    for (const chunk of this.#chunks) hash.update(chunk);
    return hash.digest("base64");
  }
}

/** a body piece under this is copied into a shared buffer rather than kept as an object of its own */
const SMALL_PIECE_BYTES = 4 * 1024;
const SHARED_PIECE_BYTES = 64 * 1024;

/**
 * A body's bytes as they arrive. Large pieces are kept as they are (no copy); small ones are
 * copied together, so that a body sent in tiny chunks costs its bytes in memory rather than an
 * object per piece (1-byte chunks would otherwise take ~100 times the body's size).
 */
export class BodyPieces {
  readonly #pieces: Buffer[] = [];
  #shared: Buffer | undefined;
  #sharedLength = 0;

  add(piece: Buffer): void {
    if (piece.length >= SMALL_PIECE_BYTES) {
      this.#flush();
      this.#pieces.push(piece);
      return;
    }
    if (this.#shared === undefined || this.#sharedLength + piece.length > this.#shared.length) {
      this.#flush();
      this.#shared = Buffer.allocUnsafe(SHARED_PIECE_BYTES);
    }
    this.#sharedLength += piece.copy(this.#shared, this.#sharedLength);
  }

  /** The pieces, in order; the body is their concatenation. */
  done(): Buffer[] {
    this.#flush();
    return this.#pieces;
  }

  #flush(): void {
    if (this.#shared !== undefined && this.#sharedLength > 0) {
      this.#pieces.push(this.#shared.subarray(0, this.#sharedLength));
    }
    this.#shared = undefined;
    this.#sharedLength = 0;
  }
}

/** One attempt: the manager answered (any status), or it did not, classified. */
export type AttemptOutcome =
  | ({ kind: "response" } & HttpResponse)
  | {
      kind: "failure";
      error: NsxTransportError | NsxResponseError;
      /** transient (network, timeout): repeating may help, if the method allows it */
      transient: boolean;
      /** no answer in time, or no connection: what the client's circuit breaker counts */
      unreachable?: boolean;
    };

/** Why an attempt was cut short by us rather than by the network. */
class Stop {
  readonly kind: "timeout" | "aborted" | "tooLarge";
  readonly detail: string;
  constructor(kind: "timeout" | "aborted" | "tooLarge", detail: string) {
    this.kind = kind;
    this.detail = detail;
  }
}

const CONNECT_FAILURES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EADDRNOTAVAIL: "address not available",
  HTTP1_CONNECT_TIMEOUT: "connect timeout",
};

/** A request the connection refused to write: repeating it cannot help. */
const INVALID_REQUEST = "HTTP1_BAD_REQUEST";

/**
 * The longest an idle connection is reused (undici's default keep-alive timeout; a shorter
 * Keep-Alive hint from the manager, less 2 s, shortens it): a connection idle longer is closed and
 * the next request opens another, resuming its TLS session.
 */
const IDLE_TIMEOUT_MS = 4_000;

/** OpenSSL's answer to a first record that is not TLS: most often a plain HTTP server on that port. */
function isPlainHttp(code: string, message: string): boolean {
  return (
    code === "ERR_SSL_WRONG_VERSION_NUMBER" || (code === "EPROTO" && /wrong version number/i.test(message))
  );
}

/** Certificate and handshake failures: permanent until someone fixes the CA or the certificate. */
function isTlsFailure(code: string): boolean {
  return /CERT|SELF_SIGNED|VERIFY|^ERR_SSL_|^ERR_TLS_|^EPROTO$/.test(code);
}

function errorCode(error: unknown): string {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : "";
}

/** One connection to the manager (one socket, one request at a time), and its attempts now. */
interface Connection {
  http: Http1Connection;
  attempts: number;
}

export class HttpTransport {
  readonly #options: TransportOptions;
  readonly #origin: URL;
  /** shared by every connection, so that each one after the first resumes the TLS session */
  readonly #tlsSessions: TlsSessionCache = { session: undefined };
  /** at most `connections`, opened as attempts first need them */
  readonly #connections: Connection[] = [];
  /**
   * The connections without an attempt, the one freed last on top: a request goes out on a socket
   * that is open and warm.
   */
  readonly #idle: Connection[] = [];
  #closed = false;

  constructor(options: TransportOptions) {
    this.#options = options;
    // connections open sockets on their first request only: no I/O here
    this.#origin = new URL(options.origin);
  }

  /** Lets the requests in flight finish, then closes the sockets; later requests fail as not sent. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#connections.map(({ http }) => http.close()));
  }

  /** Aborts every request in flight and closes the sockets; resolves at once, whatever the manager does. */
  destroy(): Promise<void> {
    this.#closed = true;
    for (const { http } of this.#connections) http.destroy();
    return Promise.resolve();
  }

  /**
   * A connection for one attempt: an idle one, else a new one while there are fewer than
   * `connections`, else (more attempts than connections: the limiter lets none through the
   * client) the least busy, where the connection queues it behind the attempt in flight.
   */
  #take(): Connection {
    let connection = this.#idle.pop();
    if (connection === undefined && this.#connections.length < this.#options.connections) {
      connection = { http: this.#connection(), attempts: 0 };
      this.#connections.push(connection);
    }
    connection ??= this.#connections.reduce((a, b) => (b.attempts < a.attempts ? b : a));
    connection.attempts += 1;
    return connection;
  }

  #connection(): Http1Connection {
    const { ca, insecureSkipVerify, connectTimeoutMs } = this.#options;
    const secure = this.#origin.protocol === "https:";
    return new Http1Connection({
      origin: this.#origin,
      tls: secure ? { ca, rejectUnauthorized: !insecureSkipVerify, sessions: this.#tlsSessions } : undefined,
      connectTimeoutMs,
      idleTimeoutMs: IDLE_TIMEOUT_MS,
    });
  }

  #give(connection: Connection): void {
    connection.attempts -= 1;
    if (connection.attempts === 0) this.#idle.push(connection);
  }

  /** Sends one request and reads the whole answer; never throws, never retries. */
  send(request: HttpRequest): Promise<AttemptOutcome> {
    const { clock, requestTimeoutMs } = this.#options;
    const own = this.#options.maxResponseBytes;
    const limit = request.responseLimit;
    const tighter = limit !== undefined && limit.bytes < own;
    const maxResponseBytes = tighter ? limit.bytes : own;
    const bound = tighter ? limit.what : `maxResponseBytes (${own} bytes)`;
    return new Promise<AttemptOutcome>((resolve) => {
      let started = false;
      let settled = false;
      // set once the request is handed to a connection; a stop before that has nothing to abort
      const sent: { call?: Http1Call } = {};
      let status = 0;
      let headers: ResponseHeaders = {};
      const received = new BodyPieces();
      let bytes = 0;
      // given back when the attempt settles, however it does
      const connection = this.#closed ? undefined : this.#take();

      const finish = (outcome: AttemptOutcome): void => {
        if (settled) return;
        settled = true;
        timer.cancel();
        if (connection !== undefined) this.#give(connection);
        request.signal?.removeEventListener("abort", onAbort);
        resolve(outcome);
      };
      const fail = (cause: unknown): void => finish(this.#classify(request, cause, started));
      const stop = (reason: Stop): void => {
        fail(reason);
        sent.call?.abort();
      };
      const onAbort = (): void => stop(new Stop("aborted", "aborted by the caller"));
      const timer = clock.setTimer(requestTimeoutMs, () =>
        stop(new Stop("timeout", `no complete response within ${requestTimeoutMs} ms`)),
      );
      const tooLarge = (): Stop => new Stop("tooLarge", `response larger than ${bound}`);

      if (request.signal?.aborted) return onAbort();
      request.signal?.addEventListener("abort", onAbort, { once: true });

      const handler: Http1Handler = {
        onWritten: () => {
          started = true;
        },
        onHead: (statusCode, responseHeaders, bodyLength) => {
          status = statusCode;
          headers = responseHeaders;
          if (bodyLength !== undefined && bodyLength > maxResponseBytes) stop(tooLarge());
        },
        onData: (chunk) => {
          bytes += chunk.length;
          if (bytes > maxResponseBytes) stop(tooLarge());
          else received.add(chunk);
        },
        onEnd: () => finish(new ReceivedResponse(status, headers, received.done())),
        onError: fail,
      };
      if (connection === undefined) return fail(new Error("the connections to the manager are closed"));
      sent.call = connection.http.request(request, handler);
    });
  }

  #classify(request: HttpRequest, cause: unknown, started: boolean): AttemptOutcome {
    const { method, path } = request;
    const notSent = !started;
    if (cause instanceof Stop) {
      if (cause.kind === "tooLarge") {
        return {
          kind: "failure",
          error: new NsxResponseError(`${method} ${path}: ${cause.detail}`),
          transient: false,
        };
      }
      const error = new NsxTransportError({
        method,
        path,
        reason: cause.detail,
        notSent,
        ...(cause.kind === "aborted" ? { cause: request.signal?.reason } : {}),
      });
      const timedOut = cause.kind === "timeout";
      return { kind: "failure", error, transient: timedOut, unreachable: timedOut };
    }
    const code = errorCode(cause);
    const safeCause = this.#safeCause(cause, code);
    const connectFailure = CONNECT_FAILURES[code];
    let reason: string;
    let transient = code !== INVALID_REQUEST;
    const unreachable = connectFailure !== undefined;
    if (connectFailure !== undefined) reason = `${connectFailure} (${code})`;
    else if (isPlainHttp(code, safeCause.message)) {
      reason = `the server at ${this.#options.origin} does not speak TLS: use http:// if it is meant to be plain HTTP`;
      transient = false;
    } else if (isTlsFailure(code)) {
      reason = `TLS handshake failed: ${safeCause.message} (set ca, or insecureSkipVerify for a test manager)`;
      transient = false;
    } else reason = `network error: ${safeCause.message}`;
    return {
      kind: "failure",
      error: new NsxTransportError({ method, path, reason, notSent, cause: safeCause }),
      transient,
      unreachable,
    };
  }

  /**
   * A copy of a network error with only its name, code and scrubbed message: node's errors can
   * hold sockets and request state, none of which belongs in a log line.
   */
  #safeCause(cause: unknown, code: string): Error {
    const message = cause instanceof Error ? cause.message : String(cause);
    const copy = new Error(this.#options.redact(message));
    copy.name = cause instanceof Error ? cause.name : "Error";
    if (code !== "") Object.assign(copy, { code });
    return copy;
  }
}

/** Statuses after which a repeat may succeed: rate limited, or the manager (or a proxy) is down. */
const TRANSIENT_STATUSES = new Set([429, 502, 503, 504]);

/**
 * May this attempt be repeated? `idempotent` calls (GETs, the token request) repeat after any
 * transient failure or status. Writes (PUT, DELETE) repeat only when the manager provably did not
 * act on them: the request was never written to a socket, or it answered 429, which refuses a
 * request before any processing (RFC 6585: the client sent too many requests; nothing was done).
 * A 502/503/504 or a timeout after sending may come after the manager applied the change (a 503
 * "edge unreachable" after storing the configuration), so a blind repeat could apply a stale edge
 * document over a newer one or misreport a release; the caller re-reads and decides instead.
 */
export function mayRetry(outcome: AttemptOutcome, idempotent: boolean): boolean {
  if (outcome.kind === "response") {
    return TRANSIENT_STATUSES.has(outcome.status) && (idempotent || outcome.status === 429);
  }
  return (
    outcome.transient && (idempotent || (outcome.error instanceof NsxTransportError && outcome.error.notSent))
  );
}

export interface BackoffOptions {
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * Full jitter (AWS architecture blog, "Exponential Backoff and Jitter"): a uniform draw in
 * [0, min(maxDelayMs, baseDelayMs * 2^retry)). `retry` counts from 0; `random` returns [0, 1).
 */
export function backoffDelayMs(retry: number, options: BackoffOptions, random: () => number): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.min(retry, 30));
  return Math.floor(random() * ceiling);
}

/** Retry-After as delta-seconds or an HTTP date, in ms from `nowEpochMs`; undefined when absent or unreadable. */
export function parseRetryAfterMs(
  header: string | string[] | undefined,
  nowEpochMs: number,
): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^[0-9]+$/.test(value)) return Number(value) * 1000;
  // an HTTP-date always has a weekday or month name; Date.parse alone accepts "-5"
  const date = /[A-Za-z]/.test(value) ? Date.parse(value) : NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowEpochMs);
}
