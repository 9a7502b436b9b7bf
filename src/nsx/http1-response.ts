/**
 * Reads one HTTP/1.1 answer from the bytes of a connection, as they arrive in pieces. Strict where
 * leniency lets a proxy or a hostile server make one answer read as another (RFC 9112 §6.3, §11.2):
 * Content-Length beside Transfer-Encoding, two Content-Lengths, a transfer coding we never asked
 * for, bare LF or CR, NUL, obs-fold and space before a colon are refused, not repaired. An answer
 * cut short is an error, never a shorter body; bytes after the answer are reported so that the
 * connection is not used again.
 */
import { CodedError } from "../util/errors.ts";

export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** Why an exchange with the server failed inside the HTTP layer. */
export type Http1ErrorCode =
  /** no connection within the connect timeout */
  | "HTTP1_CONNECT_TIMEOUT"
  /** the bytes are not an acceptable HTTP/1.1 answer */
  | "HTTP1_BAD_RESPONSE"
  /** the server closed the connection before the answer was complete */
  | "HTTP1_CLOSED"
  /** the request cannot be written as given (a control character in its path or a header) */
  | "HTTP1_BAD_REQUEST"
  /** the connection was destroyed, or closed, by its owner */
  | "HTTP1_DESTROYED";

export class Http1Error extends CodedError {
  declare readonly code: Http1ErrorCode;
  constructor(code: Http1ErrorCode, message: string) {
    super(code, message);
  }
}

/** What the reader hands on: the final head once, then the body's bytes. */
export interface ResponseSink {
  /** `bodyLength`: the body's length when the answer declares it (a body framed by Content-Length) */
  onHead(status: number, headers: ResponseHeaders, bodyLength: number | undefined): void;
  onData(chunk: Buffer): void;
}

/** 16 KiB, as Node's own HTTP parser allows by default; for a head, and again for trailers */
export const MAX_HEAD_BYTES = 16 * 1024;
/** interim (1xx) answers before the final one, beyond which the server is stalling */
const MAX_INTERIM = 16;
/** a chunk-size line with its extensions */
const MAX_CHUNK_LINE = 4 * 1024;

/** where the reader is in the answer */
const State = {
  Head: 0,
  Length: 1,
  ChunkSize: 2,
  ChunkData: 3,
  ChunkEnd: 4,
  Trailer: 5,
  UntilClose: 6,
  Done: 7,
} as const;
type State = (typeof State)[keyof typeof State];

const HEAD_END = Buffer.from("\r\n\r\n");
const LF = 0x0a;
const CR = 0x0d;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9][0-9][0-9])(?: [^\0\r\n]*)?$/;
/** a method or a field name (RFC 9110 §5.6.2) */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** controls but HTAB, and DEL: RFC 9110 §5.5 allows none of them in a field */
// eslint-disable-next-line no-control-regex -- the control characters a field may not hold are what it looks for
const FORBIDDEN_IN_FIELD = /[\0-\x08\x0a-\x1f\x7f]/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,12})[\t ]*(?:;[^\0\r\n]*)?$/;
const DECIMAL = /^[0-9]{1,15}$/;

function refuse(detail: string): Http1Error {
  return new Http1Error("HTTP1_BAD_RESPONSE", `malformed HTTP answer: ${detail}`);
}

/** A LF without the CR before it in bytes[from, to): a line ending that another reader might not see. */
function hasBareLineFeed(bytes: Buffer, from: number, to: number): boolean {
  for (let at = bytes.indexOf(LF, from); at !== -1 && at < to; at = bytes.indexOf(LF, at + 1)) {
    if (at === 0 || bytes[at - 1] !== CR) return true;
  }
  return false;
}

/** A head's bytes so far, in a buffer that holds the largest head allowed and its end */
interface PendingHead {
  bytes: Buffer;
  length: number;
}

interface Head {
  status: number;
  minor: number;
  headers: ResponseHeaders;
}

function parseHead(text: string): Head {
  const lines = text.split("\r\n");
  const statusLine = STATUS_LINE.exec(lines[0] as string);
  if (statusLine === null) throw refuse(`status line ${JSON.stringify((lines[0] as string).slice(0, 64))}`);
  const headers: ResponseHeaders = Object.create(null) as ResponseHeaders;
  for (let i = 1; i < lines.length; i++) {
    const [name, value] = fieldOf(lines[i] as string, "header");
    const seen = headers[name];
    headers[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return { status: Number(statusLine[2]), minor: Number(statusLine[1]), headers };
}

/** A field line's name (lower case) and value without the whitespace around it. */
function fieldOf(line: string, what: "header" | "trailer"): [string, string] {
  const colon = line.indexOf(":");
  const name = line.slice(0, colon);
  if (colon === -1 || !TOKEN.test(name) || FORBIDDEN_IN_FIELD.test(line)) {
    throw refuse(`${what} line ${JSON.stringify(line.slice(0, 64))}`);
  }
  let start = colon + 1;
  let end = line.length;
  while (start < end && isBlank(line.charCodeAt(start))) start++;
  while (end > start && isBlank(line.charCodeAt(end - 1))) end--;
  return [name.toLowerCase(), line.slice(start, end)];
}

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

function tokens(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const joined = Array.isArray(value) ? value.join(",") : value;
  return joined.split(",").map((token) => token.trim().toLowerCase());
}

type Framing =
  { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" } | { kind: "close" };

/** How the body of this final answer is delimited (RFC 9112 §6.3); refuses the ambiguous ones. */
function framingOf({ status, headers }: Head): Framing {
  if (status === 204 || status === 304) return { kind: "none" };
  const transferEncoding = headers["transfer-encoding"];
  const contentLength = headers["content-length"];
  if (transferEncoding !== undefined) {
    if (contentLength !== undefined) throw refuse("both Content-Length and Transfer-Encoding");
    const codings = tokens(transferEncoding);
    // we send no TE header, so chunked alone is the only coding a server may use
    if (codings.length !== 1 || codings[0] !== "chunked") {
      throw refuse(`Transfer-Encoding ${JSON.stringify(String(transferEncoding))}`);
    }
    return { kind: "chunked" };
  }
  if (contentLength !== undefined) {
    if (Array.isArray(contentLength)) throw refuse("more than one Content-Length");
    if (!DECIMAL.test(contentLength)) throw refuse(`Content-Length ${JSON.stringify(contentLength)}`);
    return { kind: "length", length: Number(contentLength) };
  }
  return { kind: "close" };
}

/**
 * A 204 or 304 that declares a body anyway: none is read, and whatever the server sends of it
 * must not be taken for the next request's answer, so the connection is not used again.
 */
function declaresBody(headers: ResponseHeaders): boolean {
  const length = headers["content-length"];
  return headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** How long the server keeps an idle connection, from `Keep-Alive: timeout=N`, in ms. */
function keepAliveHintMs(headers: ResponseHeaders): number | undefined {
  const value = headers["keep-alive"];
  const match = /(?:^|[,;\s])timeout=([0-9]{1,9})(?:$|[,;\s])/i.exec(
    Array.isArray(value) ? value.join(",") : (value ?? ""),
  );
  return match === null ? undefined : Number(match[1]) * 1000;
}

/**
 * One answer's reader. `feed` takes the connection's bytes in order and throws an `Http1Error`
 * for bytes that are not an acceptable answer; `close` says the server closed the connection.
 */
export class ResponseReader {
  readonly #sink: ResponseSink;
  #state: State = State.Head;
  /** head bytes so far, when a head arrives in pieces */
  #pendingHead: PendingHead | undefined;
  #interim = 0;
  /** body bytes left of a Content-Length or of the current chunk */
  #remaining = 0;
  /** a chunk line or trailer line so far (latin1), when it arrives in pieces */
  #line = "";
  #trailerBytes = 0;
  #persistent = false;
  #bytesAfter = false;
  /** the server's Keep-Alive timeout hint, if it gave one */
  keepAliveHintMs: number | undefined;

  constructor(sink: ResponseSink) {
    this.#sink = sink;
  }

  /** The whole answer has been read. */
  get done(): boolean {
    return this.#state === State.Done;
  }

  /** The answer is done and the connection may carry another request. */
  get reusable(): boolean {
    return this.#state === State.Done && this.#persistent && !this.#bytesAfter;
  }

  /** Bytes of the connection, in order. */
  feed(bytes: Buffer): void {
    let at = 0;
    while (at < bytes.length) {
      if (this.#state === State.Done) {
        this.#bytesAfter = true;
        return;
      }
      at = this.#step(bytes, at);
    }
  }

  /** The server closed the connection: ends a body delimited by the close, else throws. */
  close(): void {
    if (this.#state === State.UntilClose) this.#state = State.Done;
    if (this.#state === State.Done) return;
    const where = this.#state === State.Head ? "in its head" : "in its body";
    throw new Http1Error(
      "HTTP1_CLOSED",
      `the server closed the connection before the answer was complete (${where})`,
    );
  }

  #step(bytes: Buffer, at: number): number {
    switch (this.#state) {
      case State.Head:
        return this.#readHead(bytes, at);
      case State.Length:
      case State.ChunkData:
        return this.#readBody(bytes, at);
      case State.UntilClose:
        this.#sink.onData(at === 0 ? bytes : bytes.subarray(at));
        return bytes.length;
      default:
        return this.#readLine(bytes, at);
    }
  }

  #readHead(bytes: Buffer, at: number): number {
    if (this.#pendingHead === undefined) {
      const end = bytes.indexOf(HEAD_END, at);
      if (end !== -1 && end - at <= MAX_HEAD_BYTES) {
        this.#onHead(parseHead(bytes.toString("latin1", at, end)));
        return end + HEAD_END.length;
      }
      this.#pendingHead = { bytes: Buffer.allocUnsafe(MAX_HEAD_BYTES + HEAD_END.length), length: 0 };
    }
    return this.#readHeadPiece(this.#pendingHead, bytes, at);
  }

  /**
   * A head that arrives in pieces: each byte is copied, searched and checked once, so a server
   * that sends its head a byte at a time costs time, not CPU that grows with the head's square.
   */
  #readHeadPiece(pending: PendingHead, bytes: Buffer, at: number): number {
    const from = pending.length;
    const taken = bytes.copy(pending.bytes, from, at);
    pending.length += taken;
    const end = pending.bytes
      .subarray(0, pending.length)
      .indexOf(HEAD_END, Math.max(0, from - HEAD_END.length + 1));
    if (end !== -1 && end <= MAX_HEAD_BYTES) {
      this.#pendingHead = undefined;
      this.#onHead(parseHead(pending.bytes.toString("latin1", 0, end)));
      return at + end + HEAD_END.length - from;
    }
    if (pending.length > MAX_HEAD_BYTES + HEAD_END.length - 1) {
      throw refuse(`head larger than ${MAX_HEAD_BYTES} bytes`);
    }
    if (hasBareLineFeed(pending.bytes, from, pending.length)) throw refuse("a line ending without CR");
    return at + taken;
  }

  #onHead(head: Head): void {
    if (head.status < 200) {
      if (head.status === 101) throw refuse("101 Switching Protocols to a request that asked for none");
      if (++this.#interim > MAX_INTERIM) throw refuse(`more than ${MAX_INTERIM} interim (1xx) answers`);
      return;
    }
    const framing = framingOf(head);
    this.#persistent =
      head.minor === 1 &&
      framing.kind !== "close" &&
      !tokens(head.headers["connection"]).includes("close") &&
      !(framing.kind === "none" && declaresBody(head.headers));
    this.keepAliveHintMs = keepAliveHintMs(head.headers);
    this.#sink.onHead(head.status, head.headers, framing.kind === "length" ? framing.length : undefined);
    if (framing.kind === "length") {
      this.#remaining = framing.length;
      this.#state = framing.length === 0 ? State.Done : State.Length;
    } else if (framing.kind === "chunked") this.#state = State.ChunkSize;
    else this.#state = framing.kind === "close" ? State.UntilClose : State.Done;
  }

  /** Body bytes counted by #remaining: of a Content-Length (then the answer is done) or of a chunk (then its CRLF). */
  #readBody(bytes: Buffer, at: number): number {
    const end = Math.min(bytes.length, at + this.#remaining);
    this.#sink.onData(at === 0 && end === bytes.length ? bytes : bytes.subarray(at, end));
    this.#remaining -= end - at;
    if (this.#remaining === 0) this.#state = this.#state === State.Length ? State.Done : State.ChunkEnd;
    return end;
  }

  /** A CRLF-ended line of the chunked framing: a chunk size, the CRLF after a chunk, a trailer. */
  #readLine(bytes: Buffer, at: number): number {
    const lf = bytes.indexOf(LF, at);
    const bound = this.#state === State.Trailer ? MAX_HEAD_BYTES - this.#trailerBytes : MAX_CHUNK_LINE;
    if (lf === -1) {
      this.#line += bytes.toString("latin1", at);
      if (this.#line.length > bound) throw refuse("a chunk-size or trailer line too long");
      return bytes.length;
    }
    const text = this.#line + bytes.toString("latin1", at, lf);
    this.#line = "";
    if (text.length > bound) throw refuse("a chunk-size or trailer line too long");
    if (!text.endsWith("\r")) throw refuse("a line ending without CR in the chunked body");
    this.#onLine(text.slice(0, -1));
    return lf + 1;
  }

  #onLine(line: string): void {
    if (this.#state === State.ChunkEnd) {
      if (line !== "") throw refuse("chunk data longer than its size");
      this.#state = State.ChunkSize;
    } else if (this.#state === State.ChunkSize) {
      const size = CHUNK_SIZE.exec(line);
      if (size === null) throw refuse(`chunk size ${JSON.stringify(line.slice(0, 64))}`);
      this.#remaining = parseInt(size[1] as string, 16);
      this.#state = this.#remaining === 0 ? State.Trailer : State.ChunkData;
    } else if (line === "") this.#state = State.Done;
    else {
      fieldOf(line, "trailer");
      this.#trailerBytes += line.length + 2;
    }
  }
}
