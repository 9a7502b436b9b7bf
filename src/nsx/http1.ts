/**
 * One HTTP/1.1 connection to the manager: one socket, one request at a time, kept open between
 * requests. The manager's calls need only this (no pipelining, no HTTP/2, no redirects, no
 * compression), and a general client's layers (undici's dispatchers, streams and wasm parser) cost
 * more CPU per call than the manager's own work on a small edge (measured: issue 32's one-shot
 * `apply`). What a caller relies on:
 * - `onWritten` is called right before the request's bytes go to an open socket. Before it,
 *   the server cannot have seen the request, which is what makes a write safe to repeat.
 * - An answer is delivered whole or not at all: a cut-short answer is an error (http1-response.ts).
 * - A socket is reused only while it is surely still open: not after the server's Keep-Alive hint
 *   (less a margin for the race with its timer), nor past `idleTimeoutMs`, nor after any byte that
 *   was not part of an answer.
 */
import net from "node:net";
import { performance } from "node:perf_hooks";
import {
  Http1Error,
  ResponseReader,
  TOKEN,
  type ResponseHeaders,
  type ResponseSink,
} from "./http1-response.ts";

export interface Http1Request {
  method: string;
  /** origin-form: starts with "/", printable ASCII, no spaces */
  path: string;
  headers: Readonly<Record<string, string>>;
  body?: string | undefined;
}

/** What happens to one request, in this order: written, head, data..., end; or error at any point. */
export interface Http1Handler {
  onWritten(): void;
  /** `bodyLength`: the body's length when the answer declares it */
  onHead(status: number, headers: ResponseHeaders, bodyLength: number | undefined): void;
  onData(chunk: Buffer): void;
  onEnd(): void;
  onError(error: Error): void;
}

/** The TLS session to resume, shared by every connection to one server. */
export interface TlsSessionCache {
  session: Buffer | undefined;
}

export interface Http1ConnectionOptions {
  /** scheme, host and port */
  origin: URL;
  /** for https: the CAs to trust instead of the system roots, and whether to check at all */
  tls?: { ca?: string | undefined; rejectUnauthorized: boolean; sessions: TlsSessionCache } | undefined;
  connectTimeoutMs: number;
  /** the longest an idle socket is reused; the server's Keep-Alive hint, less a margin, shortens it */
  idleTimeoutMs: number;
}

/** Kept from the server's Keep-Alive hint: its timer may fire while our request is on the wire. */
const HINT_MARGIN_MS = 2_000;
/** the headers the connection writes itself, from the request */
const FRAMING_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection"]);
const PATH = /^\/[!-~]*$/;
const FIELD_VALUE = /^[^\0\r\n]*$/;

/** Why the request cannot be written as given, if it cannot: a header line must stay one line. */
function invalidRequest({ method, path, headers }: Http1Request): string | undefined {
  if (!TOKEN.test(method)) return "the method is not a token";
  if (!PATH.test(path)) return "the path has a space, a control or a non-ASCII character";
  for (const name in headers) {
    if (!TOKEN.test(name)) return `the header name ${JSON.stringify(name)} is not a token`;
    if (FRAMING_HEADERS.has(name.toLowerCase())) return `the header ${name} is the connection's to write`;
    if (!FIELD_VALUE.test(headers[name] as string)) return `the header ${name} has a CR, LF or NUL`;
  }
  return undefined;
}

function closedBefore(what: string): Http1Error {
  return new Http1Error("HTTP1_CLOSED", `the server closed the connection before ${what}`);
}

function unasked(): Http1Error {
  return new Http1Error("HTTP1_BAD_RESPONSE", "the server sent bytes before the request was written");
}

/** One request and its handler; the sink of its answer's reader, passing on what it reads until the exchange is over. */
class Exchange implements ResponseSink {
  readonly request: Http1Request;
  readonly handler: Http1Handler;
  reader: ResponseReader | undefined;
  /** aborted by its owner, or failed: nothing more reaches the handler */
  over = false;
  constructor(request: Http1Request, handler: Http1Handler) {
    this.request = request;
    this.handler = handler;
  }

  onHead(status: number, headers: ResponseHeaders, bodyLength: number | undefined): void {
    if (!this.over) this.handler.onHead(status, headers, bodyLength);
  }

  onData(chunk: Buffer): void {
    if (!this.over) this.handler.onData(chunk);
  }
}

/** Cancels a request: unsent, it is dropped; under way, its socket is destroyed. */
export interface Http1Call {
  abort(): void;
}

export class Http1Connection {
  readonly #options: Http1ConnectionOptions;
  readonly #host: string;
  readonly #hostHeader: string;
  #socket: net.Socket | undefined;
  #connected = false;
  #connectTimer: NodeJS.Timeout | undefined;
  /** until when (performance.now()) an idle socket may carry another request */
  #reusableUntil = 0;
  #active: Exchange | undefined;
  readonly #queue: Exchange[] = [];
  #closed = false;
  /** close()'s promise, and what settles it once the last request is over */
  #closing: { done: Promise<void>; resolve: () => void } | undefined;
  /** drops the idle socket once it may no longer be used: armed at most once per connection */
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(options: Http1ConnectionOptions) {
    this.#options = options;
    const { hostname, host } = options.origin;
    // an IPv6 literal comes bracketed
    this.#host = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
    this.#hostHeader = host;
  }

  /** Sends `request` after the ones before it; the handler hears how it goes. */
  request(request: Http1Request, handler: Http1Handler): Http1Call {
    const exchange = new Exchange(request, handler);
    const invalid = invalidRequest(request);
    if (invalid !== undefined || this.#closed) {
      exchange.over = true;
      handler.onError(
        invalid === undefined
          ? new Http1Error("HTTP1_DESTROYED", "the connection is closed")
          : new Http1Error("HTTP1_BAD_REQUEST", `the request cannot be written: ${invalid}`),
      );
      return { abort: () => undefined };
    }
    this.#queue.push(exchange);
    if (this.#active === undefined) this.#next();
    return { abort: () => this.#abort(exchange) };
  }

  /** Lets the requests in flight and queued finish, then closes the socket; later requests fail. */
  close(): Promise<void> {
    this.#closed = true;
    if (this.#closing === undefined) {
      let resolve = (): void => undefined;
      const done = new Promise<void>((settle) => (resolve = settle));
      this.#closing = { done, resolve };
    }
    if (this.#active === undefined) this.#idle();
    return this.#closing.done;
  }

  /** Fails every request in flight and queued, and destroys the socket. */
  destroy(): void {
    this.#closed = true;
    const failed = [...(this.#active === undefined ? [] : [this.#active]), ...this.#queue.splice(0)];
    this.#active = undefined;
    this.#drop();
    for (const exchange of failed)
      this.#fail(exchange, new Http1Error("HTTP1_DESTROYED", "the connection was destroyed"));
    this.#idle();
  }

  #next(): void {
    const exchange = this.#queue.shift();
    this.#active = exchange;
    if (exchange === undefined) return this.#idle();
    const socket = this.#socket;
    if (socket !== undefined && this.#connected && this.#usable(socket)) {
      socket.ref();
      this.#write(exchange, socket);
    } else {
      this.#drop();
      this.#connect();
    }
  }

  #idle(): void {
    if (this.#closed) {
      this.#drop();
      this.#closing?.resolve();
      return;
    }
    const socket = this.#socket;
    if (socket === undefined) return;
    socket.unref();
    if (this.#idleTimer === undefined) {
      this.#idleTimer = setTimeout(
        () => this.#idleTimeout(),
        this.#reusableUntil - performance.now(),
      ).unref();
    }
  }

  /** An idle socket past its reuse deadline is closed rather than left to the server or TCP keep-alive. */
  #idleTimeout(): void {
    this.#idleTimer = undefined;
    if (this.#active !== undefined || this.#socket === undefined) return;
    const left = this.#reusableUntil - performance.now();
    if (left <= 0) this.#drop();
    else this.#idleTimer = setTimeout(() => this.#idleTimeout(), left).unref();
  }

  #usable(socket: net.Socket): boolean {
    return (
      !socket.destroyed && socket.writable && !socket.readableEnded && performance.now() < this.#reusableUntil
    );
  }

  #connect(): void {
    const { origin, tls: tlsOptions, connectTimeoutMs } = this.#options;
    const port = Number(origin.port) || (tlsOptions === undefined ? 80 : 443);
    const socket =
      tlsOptions === undefined
        ? net.connect({ host: this.#host, port })
        : // loaded with the first https connection, as undici did: a plain-HTTP manager (the simulator) never needs it
          process.getBuiltinModule("node:tls").connect({
            host: this.#host,
            port,
            ...(net.isIP(this.#host) === 0 ? { servername: this.#host } : {}),
            ...(tlsOptions.ca !== undefined ? { ca: tlsOptions.ca } : {}),
            rejectUnauthorized: tlsOptions.rejectUnauthorized,
            ALPNProtocols: ["http/1.1"],
            ...(tlsOptions.sessions.session !== undefined ? { session: tlsOptions.sessions.session } : {}),
          });
    this.#socket = socket;
    this.#connected = false;
    socket.setNoDelay(true);
    this.#connectTimer = setTimeout(
      () =>
        socket.destroy(
          new Http1Error("HTTP1_CONNECT_TIMEOUT", `no connection within ${connectTimeoutMs} ms`),
        ),
      connectTimeoutMs,
    );
    socket.once(tlsOptions === undefined ? "connect" : "secureConnect", () => this.#onConnect(socket));
    if (tlsOptions !== undefined)
      socket.on("session", (session: Buffer) => (tlsOptions.sessions.session = session));
    socket.on("data", (bytes: Buffer) => this.#onData(socket, bytes));
    socket.on("end", () => this.#onEnd(socket));
    socket.on("error", (error: Error) => this.#onSocketError(socket, error));
    socket.on("close", () => this.#onClose(socket));
  }

  #onConnect(socket: net.Socket): void {
    if (socket !== this.#socket) return;
    clearTimeout(this.#connectTimer);
    this.#connected = true;
    socket.setKeepAlive(true, 60_000);
    const exchange = this.#active;
    if (exchange !== undefined) this.#write(exchange, socket);
  }

  #write(exchange: Exchange, socket: net.Socket): void {
    const { method, path, headers, body } = exchange.request;
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.#hostHeader}\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    if (body !== undefined) head += `content-length: ${Buffer.byteLength(body)}\r\n`;
    else if (method === "PUT" || method === "POST") head += "content-length: 0\r\n";
    exchange.reader = new ResponseReader(exchange);
    exchange.handler.onWritten();
    socket.write(body === undefined ? `${head}\r\n` : `${head}\r\n${body}`);
  }

  #onData(socket: net.Socket, bytes: Buffer): void {
    const exchange = this.#active;
    const reader = exchange?.reader;
    if (socket !== this.#socket || exchange === undefined || reader === undefined) {
      // bytes nobody asked for: whatever follows on this socket cannot be trusted to be ours
      if (socket === this.#socket && exchange !== undefined) return this.#failActive(exchange, unasked());
      socket.destroy();
      return;
    }
    try {
      reader.feed(bytes);
    } catch (error) {
      // the exchange may have been aborted by its handler during this read: the connection is another's now
      if (this.#active === exchange) this.#failActive(exchange, error as Error);
      return;
    }
    if (reader.done && this.#active === exchange) this.#complete(exchange, reader);
  }

  #complete(exchange: Exchange, reader: ResponseReader): void {
    this.#active = undefined;
    // a closing connection still carries the requests queued before close()
    if (reader.reusable && (!this.#closed || this.#queue.length > 0)) {
      const hint = reader.keepAliveHintMs;
      const keepMs = Math.min(
        this.#options.idleTimeoutMs,
        hint === undefined ? Infinity : hint - HINT_MARGIN_MS,
      );
      this.#reusableUntil = performance.now() + keepMs;
      if (keepMs <= 0) this.#drop();
    } else this.#drop();
    exchange.over = true;
    exchange.handler.onEnd();
    if (this.#active === undefined) this.#next();
  }

  #onEnd(socket: net.Socket): void {
    if (socket !== this.#socket) return;
    const exchange = this.#active;
    const reader = exchange?.reader;
    if (exchange === undefined) return this.#drop();
    if (reader === undefined) return this.#failActive(exchange, closedBefore("the request was sent"));
    try {
      reader.close();
    } catch (error) {
      return this.#failActive(exchange, error as Error);
    }
    this.#complete(exchange, reader);
  }

  #onSocketError(socket: net.Socket, error: Error): void {
    // a failed handshake may be the cached session's fault: the next connection starts afresh
    if (!this.#connected && this.#options.tls !== undefined) this.#options.tls.sessions.session = undefined;
    if (socket !== this.#socket) return;
    const exchange = this.#active;
    if (exchange === undefined) this.#drop();
    else this.#failActive(exchange, error);
  }

  #onClose(socket: net.Socket): void {
    if (socket !== this.#socket) return;
    const exchange = this.#active;
    if (exchange === undefined) this.#drop();
    else
      this.#failActive(
        exchange,
        closedBefore(exchange.reader === undefined ? "the request was sent" : "the answer was complete"),
      );
  }

  #failActive(exchange: Exchange, error: Error): void {
    this.#active = undefined;
    this.#drop();
    this.#fail(exchange, error);
    if (this.#active === undefined) this.#next();
  }

  #fail(exchange: Exchange, error: Error): void {
    if (exchange.over) return;
    exchange.over = true;
    exchange.handler.onError(error);
  }

  #abort(exchange: Exchange): void {
    if (exchange.over) return;
    exchange.over = true;
    const queued = this.#queue.indexOf(exchange);
    if (queued !== -1) this.#queue.splice(queued, 1);
    else if (this.#active === exchange) {
      this.#active = undefined;
      this.#drop();
      this.#next();
    }
  }

  /** Forgets the socket, destroying it: its events from now on are ignored. */
  #drop(): void {
    const socket = this.#socket;
    this.#socket = undefined;
    this.#connected = false;
    if (socket !== undefined) {
      clearTimeout(this.#connectTimer);
      socket.destroy();
    }
  }
}
