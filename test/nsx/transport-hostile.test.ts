/**
 * The transport against hostile answers: a raw server (test-server.ts, startRawServer) writes
 * exactly the bytes each case gives, in as many writes and pauses as it gives, and the case checks
 * what HttpTransport.send reports, through the public interface only (AttemptOutcome and the
 * errors' fields), so that the battery runs unchanged against any HTTP/1.1 client underneath.
 *
 * The contract: a response is a whole answer, framed as HTTP/1.1 frames it, or there is none. An
 * answer cut short, framed two ways at once, or malformed is a failure (never half an edge
 * document taken for a whole one), and whatever a server writes beyond or between its answers
 * never reaches another request (never a body mixing two answers). It was written against the
 * undici transport this client replaced, which broke the contract in nine cases: an unasked 100
 * Continue refused, a transfer coding other than chunked read as the body (raw or dechunked), and
 * the size check applied to a 1xx's or a 204's Content-Length.
 */
import { createHash } from "node:crypto";
import type { Socket } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NsxResponseError, NsxTransportError } from "../../src/nsx/errors.ts";
import {
  HttpTransport,
  type AttemptOutcome,
  type HttpRequest,
  type TransportOptions,
} from "../../src/nsx/transport.ts";
import { FakeClock, realClock } from "../../src/util/clock.ts";
import { waitFor } from "../support/wait.ts";
import { clientHarness } from "./client-harness.ts";
import { closedPort, startRawServer, TEST_CA, type RawAnswer, type RawServer } from "./test-server.ts";

const { onCleanup } = clientHarness();

/** bytes to write, or a pause in ms between two writes (on loopback each write then arrives alone) */
type Part = string | Buffer | number;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function writeParts(socket: Socket, parts: readonly Part[]): Promise<void> {
  for (const part of parts) {
    if (socket.destroyed) return;
    if (typeof part === "number") await sleep(part);
    else socket.write(part);
  }
}

/** `bytes` in writes of `size` bytes, `pauseMs` apart: cuts fall inside lines and UTF-8 characters */
function inPieces(bytes: string | Buffer, size: number, pauseMs = 2): Part[] {
  const buffer = Buffer.from(bytes);
  const parts: Part[] = [];
  for (let at = 0; at < buffer.length; at += size) parts.push(buffer.subarray(at, at + size), pauseMs);
  return parts;
}

const MAX_RESPONSE_BYTES = 4096;
/** multi-byte UTF-8: `size` counts bytes, and a cut between writes or chunks splits a character */
const BODY = "<a>é€</a>";
const BODY_BYTES = Buffer.byteLength(BODY);
const ok = (body: string, head = "", status = "HTTP/1.1 200 OK"): string =>
  `${status}\r\n${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const CHUNKED = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
/** a whole answer nobody asked for, from servers that write more than they were asked */
const FORGED = ok("forged");
/** what every request after a case's first is answered */
const NEXT = ok("next");

const PUT: HttpRequest = {
  method: "PUT",
  path: "/api/4.0/edges/edge-1",
  headers: { "content-type": "application/xml" },
  body: "<edge/>",
};

function transport(origin: string, options: Partial<TransportOptions> = {}): HttpTransport {
  const created = new HttpTransport({
    origin,
    insecureSkipVerify: false,
    // one connection: whether an answer's connection is reused shows in the server's count
    connections: 1,
    requestTimeoutMs: 2_000,
    connectTimeoutMs: 2_000,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    clock: realClock,
    redact: (text) => text,
    ...options,
  });
  onCleanup(() => created.destroy());
  return created;
}

async function serveRaw(answer: RawAnswer, options: { tls?: boolean } = {}): Promise<RawServer> {
  const server = await startRawServer(answer, options);
  onCleanup(() => server.close());
  return server;
}

/** An outcome in one line, so that a failed expectation shows what came instead. */
function summary(outcome: AttemptOutcome): string {
  if (outcome.kind === "response") return `${outcome.status} ${JSON.stringify(outcome.body)}`;
  const notSent = outcome.error instanceof NsxTransportError ? outcome.error.notSent : "-";
  return `failure ${outcome.error.name}: ${outcome.error.message} (transient ${outcome.transient}, notSent ${notSent})`;
}

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("base64");

function expectResponse(outcome: AttemptOutcome, status: number, body: string | Buffer): void {
  const bytes = Buffer.from(body);
  expect(summary(outcome)).toBe(`${status} ${JSON.stringify(bytes.toString("utf8"))}`);
  if (outcome.kind !== "response") return;
  expect(outcome.size).toBe(bytes.length);
  expect(outcome.digest()).toBe(sha256(bytes));
}

type Failure = Extract<AttemptOutcome, { kind: "failure" }>;

function expectFailure(outcome: AttemptOutcome): Failure {
  expect(outcome.kind, summary(outcome)).toBe("failure");
  return outcome as Failure;
}

/**
 * What a case's answer must come to: a response with exactly this status and body (and these
 * headers), or a failure: `refused` (malformed or ambiguous: the request was sent, and the
 * failure comes from the bytes, not the deadline), `truncated` (the same, and transient: a GET
 * may be repeated, a PUT is not since notSent is false), `tooLarge` (over maxResponseBytes).
 */
type Want =
  | {
      status: number;
      body: string;
      headers?: Record<string, string | undefined>;
    }
  | "refused"
  | "truncated"
  | "tooLarge";

function expectWant(outcome: AttemptOutcome, want: Want): void {
  if (typeof want === "object") {
    expectResponse(outcome, want.status, want.body);
    for (const [name, value] of Object.entries(want.headers ?? {})) {
      expect(outcome.kind === "response" ? outcome.headers[name] : "no response", name).toBe(value);
    }
    return;
  }
  const failure = expectFailure(outcome);
  if (want === "tooLarge") {
    expect(failure.error).toBeInstanceOf(NsxResponseError);
    expect(failure.error.message).toMatch(/response larger than maxResponseBytes \(4096 bytes\)$/);
    expect(failure.transient).toBe(false);
    return;
  }
  // an answer the transport cannot use may be an NsxResponseError; a transport error was sent
  expect(failure.error instanceof NsxTransportError ? failure.error.notSent : false, summary(outcome)).toBe(
    false,
  );
  expect(failure.unreachable === true, `not at the deadline: ${summary(outcome)}`).toBe(false);
  if (want === "truncated") expect(failure.transient, summary(outcome)).toBe(true);
}

interface AnswerCase {
  name: string;
  reason: string;
  /** the answer to the case's PUT, as written */
  answer: Part[];
  /** the server closes the connection once the answer is written */
  close?: boolean;
  want: Want;
  /**
   * connections the server saw once the next request is answered: 1 when the case's connection
   * was reused, 2 when it must not have been; unset when either is right
   */
  connections?: 1 | 2;
  /**
   * the next request waits until the server has written all of `answer` and closed if `close`:
   * for what a server writes, or does, after the answer the client has read
   */
  nextAfterAnswer?: true;
}

/**
 * The case's PUT gets the case's answer; then a second PUT must get its own answer (NEXT),
 * whatever the first left on its connection.
 */
async function runAnswerCase(c: AnswerCase, options: { tls?: boolean } = {}): Promise<void> {
  let answered = 0;
  let written = Promise.resolve();
  const server = await serveRaw((_request, socket) => {
    if (answered++ > 0) return void socket.write(NEXT);
    written = writeParts(socket, c.answer).then(() => void (c.close === true && socket.end()));
    return written;
  }, options);
  const t = transport(server.url, options.tls === true ? { ca: TEST_CA } : {});
  expectWant(await t.send(PUT), c.want);
  if (c.nextAfterAnswer === true) {
    await written;
    // a timer set after the last write fires once the client's socket has been read: order, not time
    await sleep(10);
  }
  expectResponse(await t.send({ ...PUT, body: "<next/>" }), 200, "next");
  expect(server.requests.map((r) => r.body.toString())).toEqual(["<edge/>", "<next/>"]);
  if (c.connections !== undefined) expect(server.connections()).toBe(c.connections);
}

function table(cases: readonly AnswerCase[], options: { tls?: boolean } = {}): void {
  it.each(cases)("$name: $reason", (c) => runAnswerCase(c, options));
}

const chunk = (data: string | Buffer, extension = ""): Buffer => {
  const bytes = Buffer.from(data);
  return Buffer.concat([
    Buffer.from(`${bytes.length.toString(16)}${extension}\r\n`),
    bytes,
    Buffer.from("\r\n"),
  ]);
};
const BODY_BUFFER = Buffer.from(BODY);

const FRAMING: AnswerCase[] = [
  {
    name: "ContentLengthInPieces",
    reason: "status line, headers and body arrive a few bytes at a time, cuts inside characters",
    answer: inPieces(ok(BODY), 3),
    want: { status: 200, body: BODY },
    connections: 1,
  },
  {
    name: "ChunkedWithExtensionsAndTrailer",
    reason: "chunk extensions are ignored, a trailer ends the body, a chunk cut splits a character",
    answer: [
      CHUNKED,
      chunk(BODY_BUFFER.subarray(0, 4), ";name=value"),
      2,
      chunk(BODY_BUFFER.subarray(4), ';a;b="q x"'),
      2,
      "0\r\nX-Trailer: yes\r\n\r\n",
    ],
    want: { status: 200, body: BODY },
    connections: 1,
  },
  {
    name: "ChunkSizesInEitherCase",
    reason: "chunk sizes are hex digits in upper or lower case, with leading zeros",
    answer: [
      CHUNKED,
      `A\r\n${"a".repeat(10)}\r\n1b\r\n${"b".repeat(27)}\r\n1F\r\n${"c".repeat(31)}\r\n000a\r\n${"d".repeat(10)}\r\n0\r\n\r\n`,
    ],
    want: { status: 200, body: `${"a".repeat(10)}${"b".repeat(27)}${"c".repeat(31)}${"d".repeat(10)}` },
    connections: 1,
  },
  {
    name: "ChunkedNamedInCapitals",
    reason: "transfer-coding names are case-insensitive (RFC 9112 7)",
    answer: [`HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n`, chunk(BODY), "0\r\n\r\n"],
    want: { status: 200, body: BODY },
  },
  {
    name: "ChunkedInPieces",
    reason: "chunk-size lines, data and the last chunk cut anywhere between writes",
    answer: inPieces(`${CHUNKED}${chunk(BODY, ";x=1").toString()}${chunk("tail").toString()}0\r\n\r\n`, 4),
    want: { status: 200, body: `${BODY}tail` },
    connections: 1,
  },
  {
    name: "CloseDelimited",
    reason: "no Content-Length and no Transfer-Encoding: the body ends when the server closes",
    answer: ["HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n\r\n", BODY.slice(0, 3), 2, BODY.slice(3)],
    close: true,
    want: { status: 200, body: BODY },
    connections: 2,
  },
  {
    name: "NoReasonPhrase",
    reason: "the reason phrase may be absent: `HTTP/1.1 200` and a CRLF is a valid status line",
    answer: [ok(BODY, "", "HTTP/1.1 200")],
    want: { status: 200, body: BODY },
    connections: 1,
  },
  {
    name: "EmptyReasonPhrase",
    reason: "the space before an empty reason phrase is valid too",
    answer: [ok(BODY, "", "HTTP/1.1 404 ")],
    want: { status: 404, body: BODY },
  },
  {
    name: "LengthAfterWhitespace",
    reason: "optional whitespace before a field value is not part of it",
    answer: [`HTTP/1.1 200 OK\r\nContent-Length: \t ${BODY_BYTES}\r\n\r\n${BODY}`],
    want: { status: 200, body: BODY },
    connections: 1,
  },
  {
    name: "LengthBeforeWhitespace",
    reason: "whitespace after a value is not part of it either (RFC 9110 5.5)",
    answer: [`HTTP/1.1 200 OK\r\nContent-Length: ${BODY_BYTES} \r\n\r\n${BODY}`],
    want: { status: 200, body: BODY },
    connections: 1,
  },
  {
    name: "ChunkExtensionAfterWhitespace",
    reason: "RFC 9112 7.1.1 allows whitespace before a chunk extension's semicolon",
    answer: [CHUNKED, chunk(BODY, " ;a=b"), "0\r\n\r\n"],
    want: { status: 200, body: BODY },
    connections: 1,
  },
  {
    name: "StatusOutOfRange",
    reason: "a status over 599 is processed as a server error (RFC 9110 15): the status as sent",
    answer: [ok(BODY, "", "HTTP/1.1 999 Whatever")],
    want: { status: 999, body: BODY },
  },
  {
    name: "HeadersNearTheLimit",
    reason: "12 KiB of headers is within the 16 KiB bound",
    answer: [ok(BODY, Array.from({ length: 12 }, (_, i) => `X-Big-${i}: ${"v".repeat(1000)}\r\n`).join(""))],
    want: { status: 200, body: BODY },
  },
  {
    name: "BodyAtTheLimit",
    reason: "a body of exactly maxResponseBytes is whole and allowed",
    answer: [ok("x".repeat(MAX_RESPONSE_BYTES))],
    want: { status: 200, body: "x".repeat(MAX_RESPONSE_BYTES) },
  },
];

const INTERIM: AnswerCase[] = [
  {
    name: "Continue",
    reason: "an unasked 100 Continue comes before the final answer, which is the response",
    answer: ["HTTP/1.1 100 Continue\r\n\r\n", 2, ok(BODY)],
    want: { status: 200, body: BODY },
  },
  {
    name: "EarlyHints",
    reason: "a 103 with headers of its own; the response carries the final answer's headers",
    answer: ["HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n", ok(BODY, "X-Final: yes\r\n")],
    want: { status: 200, body: BODY, headers: { link: undefined, "x-final": "yes" } },
    connections: 1,
  },
  {
    name: "InterimsInPieces",
    reason: "two interim answers, then the final one, cut anywhere between writes",
    answer: inPieces(
      `HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: <x>\r\n\r\n${ok(BODY)}`,
      7,
    ),
    want: { status: 200, body: BODY },
  },
  {
    name: "InterimDeclaringLength",
    reason: "a 1xx has no body: a Content-Length on it (even over maxResponseBytes) means nothing",
    answer: ["HTTP/1.1 103 Early Hints\r\nContent-Length: 100000\r\n\r\n", ok(BODY)],
    want: { status: 200, body: BODY },
  },
  {
    name: "NoContent",
    reason: "a 204 has no body and its connection is reused",
    answer: ["HTTP/1.1 204 No Content\r\n\r\n"],
    want: { status: 204, body: "" },
    connections: 1,
  },
  {
    name: "NoContentDeclaringLength",
    reason:
      "a 204 has no body even if it declares a Content-Length; what it declared may follow, so its connection is not reused",
    answer: ["HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n"],
    want: { status: 204, body: "" },
    connections: 2,
  },
  {
    name: "NoContentWithLateBody",
    reason: "a 204 declaring a body whose bytes come later: they never answer the next request",
    answer: ["HTTP/1.1 204 No Content\r\nContent-Length: 38\r\n\r\n", 30, FORGED],
    want: { status: 204, body: "" },
    connections: 2,
  },
  {
    name: "NoContentChunked",
    reason: "a 204 that says its body is chunked: the chunks may follow, so its connection is not reused",
    answer: ["HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"],
    want: { status: 204, body: "" },
    connections: 2,
  },
  {
    name: "NotModifiedDeclaringLength",
    reason: "a 304 has no body even if it declares the length of the representation (not reused, as a 204's)",
    answer: ["HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n"],
    want: { status: 304, body: "" },
    connections: 2,
  },
  {
    name: "NoContentDeclaringZero",
    reason: "a 204 declaring a length of 0 declares no body: its connection is reused",
    answer: ["HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"],
    want: { status: 204, body: "" },
    connections: 1,
  },
  {
    name: "NoContentWithStrayBody",
    reason: "bytes a 204 sends after its head are not its body and never reach the next request",
    answer: ["HTTP/1.1 204 No Content\r\nContent-Length: 6\r\n\r\nforged"],
    want: { status: 204, body: "" },
  },
  {
    name: "NoContentDeclaringLengthOverLimit",
    reason: "a 204 declaring more than maxResponseBytes still carries nothing to refuse",
    answer: ["HTTP/1.1 204 No Content\r\nContent-Length: 100000\r\n\r\n"],
    want: { status: 204, body: "" },
  },
];

const TRUNCATED: AnswerCase[] = [
  {
    name: "ShortBody",
    reason: "the connection closes before Content-Length bytes (cut inside a character)",
    answer: [`HTTP/1.1 200 OK\r\nContent-Length: ${BODY_BYTES}\r\n\r\n`, BODY_BUFFER.subarray(0, 4)],
    close: true,
    want: "truncated",
  },
  {
    name: "ChunkedBeforeLastChunk",
    reason: "whole chunks, then the connection closes without the last (zero) chunk",
    answer: [CHUNKED, chunk(BODY)],
    close: true,
    want: "truncated",
  },
  {
    name: "ChunkedMidChunk",
    reason: "the connection closes inside a chunk's data",
    answer: [CHUNKED, "c\r\n<a>"],
    close: true,
    want: "truncated",
  },
  {
    name: "ChunkedInTrailer",
    reason: "the last chunk came but not the blank line that ends the trailer section",
    answer: [CHUNKED, chunk(BODY), "0\r\nX-Trailer: yes\r\n"],
    close: true,
    want: "truncated",
  },
  {
    name: "MidHeaders",
    reason: "the connection closes inside the header section",
    answer: ["HTTP/1.1 200 OK\r\nContent-Len"],
    close: true,
    want: "truncated",
  },
  {
    name: "MidStatusLine",
    reason: "the connection closes inside the status line",
    answer: ["HTTP/1.1 2"],
    close: true,
    want: "truncated",
  },
  {
    name: "NoAnswer",
    reason: "the connection closes after the request, before any byte of an answer",
    answer: [],
    close: true,
    want: "truncated",
  },
  {
    name: "OnlyAnInterim",
    reason: "an interim answer alone is no answer",
    answer: ["HTTP/1.1 103 Early Hints\r\nLink: <x>\r\n\r\n"],
    close: true,
    want: "truncated",
  },
];

const withLength = (value: string): AnswerCase => ({
  name: `Length ${JSON.stringify(value)}`,
  reason: "a Content-Length that is not one plain decimal number",
  answer: [`HTTP/1.1 200 OK\r\nContent-Length: ${value}\r\n\r\nhello${FORGED}`],
  want: "refused",
  connections: 2,
});
const withEncoding = (value: string, reason: string): AnswerCase => ({
  name: `Encoding ${JSON.stringify(value)}`,
  reason,
  answer: [`HTTP/1.1 200 OK\r\nTransfer-Encoding: ${value}\r\n\r\n`, chunk(BODY), "0\r\n\r\n"],
  close: true,
  want: "refused",
});
const withChunkSize = (size: string, reason: string): AnswerCase => ({
  name: `ChunkSize ${JSON.stringify(size)}`,
  reason,
  answer: [CHUNKED, `${size}\r\nhello\r\n0\r\n\r\n`],
  want: "refused",
  connections: 2,
});
const withStatusLine = (line: string, reason: string): AnswerCase => ({
  name: `StatusLine ${JSON.stringify(line)}`,
  reason,
  answer: [ok(BODY, "", line)],
  want: "refused",
  connections: 2,
});
const withHeaderLines = (name: string, lines: string, reason: string): AnswerCase => ({
  name,
  reason,
  answer: [ok(BODY, lines)],
  want: "refused",
  connections: 2,
});

const REFUSED: AnswerCase[] = [
  {
    name: "LengthAndChunked",
    reason: "framed two ways at once (the request-smuggling shape): neither may be picked",
    answer: [
      `HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n`,
      chunk("abc"),
      "0\r\n\r\n",
    ],
    want: "refused",
    connections: 2,
  },
  {
    name: "LengthTwiceDifferent",
    reason: "two Content-Lengths that disagree: either could be the body's",
    answer: [`HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 11\r\n\r\nhello${FORGED}`],
    want: "refused",
    connections: 2,
  },
  {
    name: "LengthTwiceSame",
    reason: "two equal Content-Lengths: RFC 9110 lets a recipient refuse them, and we do",
    answer: [`HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello`],
    want: "refused",
    connections: 2,
  },
  {
    name: "LengthList",
    reason: "a list in one Content-Length field, even of equal values",
    answer: [`HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello`],
    want: "refused",
    connections: 2,
  },
  ...["-1", "+5", "1e3", "0x10", "5 5", "", "5a", "9007199254740993", "99999999999999999999999"].map(
    withLength,
  ),
  withEncoding("gzip", "a coding we cannot undo, framed by the close: its bytes are not the document"),
  withEncoding("chunked, gzip", "chunked not last: framed by the close, and still gzip"),
  withEncoding("gzip, chunked", "chunked, but what it carries is gzip we never asked for"),
  withEncoding("chunked, chunked", "chunked applied twice, which a sender must not do"),
  withEncoding("identity", "not a transfer coding since RFC 7230"),
  {
    name: "EncodingInTwoFields",
    reason: "gzip, then chunked in a second field: the same list as one field",
    answer: [
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n`,
      chunk(BODY),
      "0\r\n\r\n",
    ],
    close: true,
    want: "refused",
  },
  withChunkSize("zz", "not hex"),
  withChunkSize("-5", "a sign is not a hex digit"),
  withChunkSize("0x5", "no 0x prefix in HTTP"),
  withChunkSize("3", "the chunk's data runs past its size: the CRLF after it is missing"),
  withChunkSize("10000000000000000", "2^64: a size that overflows 64 bits"),
  withChunkSize("", "an empty chunk-size line"),
  withHeaderLines(
    "HeadersOver16KiB",
    Array.from({ length: 20 }, (_, i) => `X-Big-${i}: ${"v".repeat(1000)}\r\n`).join(""),
    "20 KiB of headers in total",
  ),
  withHeaderLines("OneHeaderOver16KiB", `X-Big: ${"v".repeat(17_000)}\r\n`, "one header line of 17 KB"),
  withHeaderLines("ObsFold", "X-A: 1\r\n continued\r\n", "a line starting with a space folds into the last"),
  withHeaderLines("ObsFoldTab", "X-A: 1\r\n\tcontinued\r\n", "the same with a tab"),
  withHeaderLines("SpaceBeforeColon", "X-A : 1\r\n", "whitespace between a field name and its colon"),
  withHeaderLines("NulInValue", "X-A: a\0b\r\n", "a NUL in a field value"),
  withHeaderLines("BareCrInValue", "X-A: a\rb\r\n", "a bare CR in a field value"),
  withHeaderLines("ControlInValue", "X-A: a\x01b\r\n", "a control character in a field value"),
  withHeaderLines("DelInValue", "X-A: a\x7fb\r\n", "DEL in a field value"),
  withHeaderLines("NoColon", "X-A\r\n", "a header line without a colon"),
  withHeaderLines("EmptyName", ": x\r\n", "a field with an empty name"),
  withStatusLine("HTTP/2 200 OK", "not an HTTP/1.x version"),
  withStatusLine("HTTP/2.0 200 OK", "HTTP/2.0 is never spoken in this syntax"),
  withStatusLine("HTTP/0.9 200 OK", "HTTP/0.9 had no status line: an answer that claims it is not one"),
  withStatusLine("HTTP/1.1 099 X", "a status under 100"),
  withStatusLine(" HTTP/1.1 200 OK", "whitespace before the status line"),
  withStatusLine("ICY 200 OK", "SHOUTcast's status line"),
  withStatusLine("HTTP/1.1 20 OK", "a status of two digits"),
  withStatusLine("HTTP/1.1 2000 OK", "a status of four digits"),
  withStatusLine("http/1.1 200 OK", "HTTP-name is case-sensitive"),
  withStatusLine("HTTP/1.1 OK", "no status code"),
  {
    name: "BareLineFeeds",
    reason: "LF alone ends no line here: we read lines as every NSX manager writes them, with CRLF",
    answer: [`HTTP/1.1 200 OK\nContent-Length: 5\n\nhello`],
    want: "refused",
    connections: 2,
  },
  {
    name: "UnaskedUpgrade",
    reason: "a 101 Switching Protocols to a request that asked for no upgrade",
    answer: [`HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n${ok(BODY)}`],
    want: "refused",
    connections: 2,
  },
  {
    name: "NotHttp",
    reason: "an answer that is not HTTP at all",
    answer: ["SSH-2.0-OpenSSH_9.6\r\n\r\n"],
    want: "refused",
    connections: 2,
  },
];

const HYGIENE: AnswerCase[] = [
  {
    name: "ExtraAnswerAfterAnswer",
    reason: "a second answer in the same write as the first is not the next request's",
    answer: [`${ok(BODY)}${FORGED}`],
    want: { status: 200, body: BODY },
  },
  {
    name: "GarbageAfterAnswer",
    reason: "bytes after a whole answer never reach the next request",
    answer: [ok(BODY), "garbage\r\n\r\n"],
    want: { status: 200, body: BODY },
  },
  {
    name: "ExtraChunkedAfterAnswer",
    reason: "bytes after the last chunk of a chunked answer are not the next request's",
    answer: [CHUNKED, chunk(BODY), `0\r\n\r\n${FORGED}`],
    want: { status: 200, body: BODY },
  },
  {
    name: "UnsolicitedAnswerWhenIdle",
    reason: "an answer nobody asked for, written on an idle keep-alive connection",
    answer: [ok(BODY), 20, FORGED],
    want: { status: 200, body: BODY },
    nextAfterAnswer: true,
  },
  {
    name: "ConnectionClose",
    reason: "after `Connection: close` the connection is not reused, even if the server keeps it open",
    answer: [ok(BODY, "Connection: close\r\n")],
    want: { status: 200, body: BODY },
    connections: 2,
  },
  {
    name: "Http10",
    reason: "an HTTP/1.0 answer without keep-alive closes its connection",
    answer: [ok(BODY, "", "HTTP/1.0 200 OK")],
    want: { status: 200, body: BODY },
    connections: 2,
  },
  {
    name: "ServerClosesIdle",
    reason: "the server closes the keep-alive connection once idle: the next PUT goes on a new one",
    answer: [ok(BODY), 10],
    close: true,
    want: { status: 200, body: BODY },
    nextAfterAnswer: true,
    connections: 2,
  },
];

const TOO_LARGE: AnswerCase[] = [
  {
    name: "LengthOverLimit",
    reason: "a declared length over maxResponseBytes is refused without waiting for the body",
    answer: ["HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n<a>"],
    want: "tooLarge",
    connections: 2,
  },
  {
    name: "ChunkedOverLimit",
    reason: "chunks adding up to more than maxResponseBytes, the answer left open",
    answer: [CHUNKED, ...Array.from({ length: 5 }, () => chunk("x".repeat(1000)))],
    want: "tooLarge",
    connections: 2,
  },
  {
    name: "ChunkSizeOverLimit",
    reason: "one chunk declaring 2^48 bytes, the answer left open",
    answer: [CHUNKED, "FFFFFFFFFFFF\r\n", "x".repeat(5000)],
    want: "tooLarge",
    connections: 2,
  },
  {
    name: "CloseDelimitedOverLimit",
    reason: "an undeclared body over maxResponseBytes, the connection left open",
    answer: ["HTTP/1.1 200 OK\r\n\r\n", "x".repeat(5000)],
    want: "tooLarge",
    connections: 2,
  },
];

describe("answers the transport takes", () => {
  describe("framing", () => table(FRAMING));
  describe("interim and bodiless answers", () => table(INTERIM));
});

describe("answers that are failures", () => {
  describe("truncated", () => table(TRUNCATED));
  describe("refused", () => table(REFUSED));
  describe("over maxResponseBytes", () => table(TOO_LARGE));
});

describe("connection hygiene", () => {
  table(HYGIENE);

  it("answers a request queued behind one refused in the middle of a read", async () => {
    // the first answer is over its bound at "hello" and malformed after it, in the same read: the
    // refusal frees the connection for the queued request, and the malformed rest must not fail it
    let answered = 0;
    const server = await serveRaw((_request, socket) => {
      if (answered++ > 0) return void socket.write(NEXT);
      socket.write(`${CHUNKED}5\r\nhello\r\nZZZ\r\n`);
    });
    const t = transport(server.url);
    const [first, second] = await Promise.all([
      t.send({ ...PUT, responseLimit: { bytes: 3, what: "the case's bound" } }),
      t.send({ ...PUT, body: "<next/>" }),
    ]);
    expect(expectFailure(first).error.message).toMatch(/response larger than the case's bound$/);
    expectResponse(second, 200, "next");
    expect(server.connections()).toBe(2);
  });

  it("does not reuse a connection past the server's Keep-Alive timeout", async () => {
    // after its 1 s the server drops the connection without a FIN reaching us (a firewall's idle
    // timeout does this): a PUT written on it later would never be answered
    let onFirst = 0;
    const server = await serveRaw((request, socket) => {
      if (request.connection === 0 && onFirst++ > 0) return;
      socket.write(ok(BODY, "Keep-Alive: timeout=1\r\n"));
    });
    const t = transport(server.url, { requestTimeoutMs: 1_000 });
    expectResponse(await t.send(PUT), 200, BODY);
    await sleep(1_200);
    expectResponse(await t.send(PUT), 200, BODY);
    expect(server.connections()).toBe(2);
  });
});

describe("over TLS", () => {
  const names = new Set([
    "ContentLengthInPieces",
    "ChunkedInPieces",
    "CloseDelimited",
    "ShortBody",
    "ChunkedBeforeLastChunk",
    "LengthAndChunked",
    "ExtraAnswerAfterAnswer",
  ]);
  table(
    [...FRAMING, ...TRUNCATED, ...REFUSED, ...HYGIENE].filter((c) => names.has(c.name)),
    { tls: true },
  );
});

describe("deadlines and aborts", () => {
  it("fails an answer whose headers trickle forever at requestTimeoutMs, counted from the request", async () => {
    const clock = new FakeClock();
    let lines = 0;
    const server = await serveRaw(async (_request, socket) => {
      socket.write("HTTP/1.1 200 OK\r\n");
      while (!socket.destroyed && lines < 10_000) {
        socket.write(`X-Line-${lines++}: a\r\n`);
        await sleep(5);
      }
    });
    const t = transport(server.url, { clock, requestTimeoutMs: 60_000 });
    let outcome: AttemptOutcome | undefined;
    void t.send(PUT).then((o) => (outcome = o));
    await waitFor("headers trickling", () => lines >= 3);
    await clock.advance(30_000);
    const seen = lines;
    await waitFor("more headers trickling", () => lines >= seen + 3);
    expect(outcome, "still waiting at half the deadline").toBeUndefined();
    // a deadline that restarts at each byte would not fire here
    await clock.advance(30_000);
    const failure = expectFailure(await waitFor("the outcome", () => outcome, { timeoutMs: 2_000 }));
    expect(failure.error.message).toBe("PUT /api/4.0/edges/edge-1: no complete response within 60000 ms");
    expect(failure.error instanceof NsxTransportError && failure.error.notSent).toBe(false);
    expect([failure.transient, failure.unreachable]).toEqual([true, true]);
  });

  it("fails an answer whose body trickles forever at requestTimeoutMs", async () => {
    const clock = new FakeClock();
    let bytes = 0;
    const server = await serveRaw(async (_request, socket) => {
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 4000\r\n\r\n");
      while (!socket.destroyed && bytes < 4000) {
        socket.write("x");
        bytes++;
        await sleep(5);
      }
    });
    const t = transport(server.url, { clock, requestTimeoutMs: 60_000 });
    const outcome = t.send(PUT);
    await waitFor("the body trickling", () => bytes >= 3);
    await clock.advance(60_000);
    const failure = expectFailure(await outcome);
    expect(failure.error.message).toBe("PUT /api/4.0/edges/edge-1: no complete response within 60000 ms");
    expect([failure.transient, failure.unreachable]).toEqual([true, true]);
  });

  it("fails an attempt aborted mid-body as sent, and does not reuse its connection", async () => {
    let answered = 0;
    const server = await serveRaw((_request, socket) => {
      if (answered++ > 0) return void socket.write(NEXT);
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n<a>`);
    });
    const t = transport(server.url);
    const controller = new AbortController();
    const outcome = t.send({ ...PUT, signal: controller.signal });
    await waitFor("the request", () => server.requests.length === 1);
    // the head and the start of the body reach the client
    await sleep(30);
    controller.abort(new Error("shutting down"));
    const failure = expectFailure(await outcome);
    expect(failure.error.message).toBe("PUT /api/4.0/edges/edge-1: aborted by the caller");
    expect(failure.error.cause).toEqual(new Error("shutting down"));
    expect(failure.error instanceof NsxTransportError && failure.error.notSent).toBe(false);
    expect(failure.transient).toBe(false);
    expectResponse(await t.send(PUT), 200, "next");
    expect(server.connections()).toBe(2);
  });
});

describe("requests", () => {
  it("sends the host, the given headers and the body's exact bytes with their length", async () => {
    const server = await serveRaw((_request, socket) => void socket.write(ok(BODY)));
    const t = transport(server.url);
    const headers = { "content-type": "application/xml", authorization: "Basic YWRtaW46ZGVmYXVsdA==" };
    const path = "/api/4.0/edges/edge-1?x=a%20b";
    expectResponse(await t.send({ method: "PUT", path, headers, body: BODY }), 200, BODY);
    expectResponse(await t.send({ method: "GET", path: "/api/2.0/x", headers: {} }), 200, BODY);
    const [put, get] = server.requests;
    expect([put?.method, put?.target, get?.method, get?.target]).toEqual(["PUT", path, "GET", "/api/2.0/x"]);
    expect(put?.head.split("\r\n")[0]).toBe(`PUT ${path} HTTP/1.1`);
    expect(put?.headers).toMatchObject({
      host: [`127.0.0.1:${server.port}`],
      "content-type": ["application/xml"],
      authorization: ["Basic YWRtaW46ZGVmYXVsdA=="],
      "content-length": [String(BODY_BYTES)],
    });
    expect(put?.headers["transfer-encoding"]).toBeUndefined();
    expect(put?.body.equals(BODY_BUFFER)).toBe(true);
    expect(get?.headers.host).toEqual([`127.0.0.1:${server.port}`]);
    expect(get?.body.length).toBe(0);
  });

  const INJECTED = "\r\nX-Injected: 1\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n";
  it.each<{ name: string; reason: string; path?: string; headers?: Record<string, string> }>([
    { name: "PathWithCrLf", reason: "a second request smuggled through the path", path: `/a${INJECTED}` },
    { name: "PathWithLf", reason: "a bare LF many servers take as a line end", path: "/a\nX-Injected: 1" },
    { name: "PathWithCr", reason: "a bare CR some servers take as a line end", path: "/a\rX-Injected: 1" },
    {
      name: "PathWithSpace",
      reason: "a space ends the request target",
      path: "/a HTTP/1.1\r\nX-Injected: 1",
    },
    { name: "PathWithNul", reason: "a NUL ends a C string in the server", path: "/a\0b" },
    {
      name: "ValueWithCrLf",
      reason: "a header line smuggled through a value",
      headers: { "x-a": `v${INJECTED}` },
    },
    { name: "ValueWithLf", reason: "a bare LF in a value", headers: { "x-a": "v\nX-Injected: 1" } },
    { name: "ValueWithCr", reason: "a bare CR in a value", headers: { "x-a": "v\rX-Injected: 1" } },
    { name: "ValueWithNul", reason: "a NUL in a value", headers: { "x-a": "v\0" } },
    {
      name: "NameWithColon",
      reason: "a colon in a name makes another field",
      headers: { "x-injected: 1\r\nx-a": "v" },
    },
    { name: "NameWithSpace", reason: "a space is not a token character", headers: { "x a": "v" } },
  ])("refuses to send $name: $reason", async ({ path, headers }) => {
    const server = await serveRaw((_request, socket) => void socket.write(ok(BODY)));
    const t = transport(server.url);
    const failure = expectFailure(
      await t.send({ ...PUT, path: path ?? PUT.path, headers: headers ?? PUT.headers }),
    );
    expect(failure.error).toBeInstanceOf(NsxTransportError);
    expect((failure.error as NsxTransportError).notSent).toBe(true);
    expect(Buffer.concat(server.received).toString("latin1"), "nothing reached the server").toBe("");
    // the transport is fine for the next request
    expectResponse(await t.send(PUT), 200, BODY);
    expect(server.requests).toHaveLength(1);
  });
});

describe("connections", () => {
  it("fails a refused connection as transient, not sent and unreachable", async () => {
    const t = transport(`http://127.0.0.1:${await closedPort()}`);
    const failure = expectFailure(await t.send(PUT));
    expect(failure.error.message).toBe("PUT /api/4.0/edges/edge-1: connection refused (ECONNREFUSED)");
    expect(failure.error instanceof NsxTransportError && failure.error.notSent).toBe(true);
    expect([failure.transient, failure.unreachable]).toEqual([true, true]);
  });

  // that a second connection resumes the first one's TLS session is client-transport.test.ts's
  // "resumes the TLS session of its first connection on the others"
  it.each([
    {
      name: "PlainHttpBehindHttps",
      reason: "an https origin whose server speaks plain HTTP",
      tls: false,
      ca: TEST_CA,
      want: /: the server at https:\/\/127\.0\.0\.1:\d+ does not speak TLS: use http:\/\//,
    },
    {
      name: "UnknownCa",
      reason: "a certificate from a CA the transport was not given",
      tls: true,
      ca: undefined,
      want: /: TLS handshake failed: .*\(set ca, or insecureSkipVerify for a test manager\)$/,
    },
  ])("fails $name as not transient: $reason", async ({ tls, ca, want }) => {
    const server = await serveRaw((_request, socket) => void socket.write(ok(BODY)), { tls });
    const t = transport(server.url.replace("http://", "https://"), ca === undefined ? {} : { ca });
    const failure = expectFailure(await t.send(PUT));
    expect(failure.error.message).toMatch(want);
    expect(failure.error instanceof NsxTransportError && failure.error.notSent).toBe(true);
    expect(failure.transient).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it("answers over TLS with the CA", async () => {
    const server = await serveRaw((_request, socket) => void socket.write(ok(BODY)), { tls: true });
    const t = transport(server.url, { ca: TEST_CA });
    expectResponse(await t.send(PUT), 200, BODY);
    expectResponse(await t.send(PUT), 200, BODY);
    expect(server.connections()).toBe(1);
  });
});

/** A valid answer, and how it is cut into writes. */
interface ValidAnswer {
  status: number;
  reason: string;
  headers: { name: string; value: string }[];
  body: Uint8Array;
  framing: "length" | "chunked";
  chunkCuts: number[];
  extension: string;
  trailer: boolean;
  writeCuts: number[];
}

/** `bytes` cut at `cuts` (taken modulo its length), in order, empty pieces dropped */
function cutAt(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort(
    (a, b) => a - b,
  );
  return [0, ...points]
    .map((from, i) => bytes.subarray(from, [...points, bytes.length][i]))
    .filter((piece) => piece.length > 0);
}

function renderAnswer(a: ValidAnswer): Buffer {
  const body = Buffer.from(a.body);
  const fields = a.headers.map((h) => `${h.name}: ${h.value}\r\n`).join("");
  const framing =
    a.framing === "length" ? `Content-Length: ${body.length}\r\n` : "Transfer-Encoding: chunked\r\n";
  const head = `HTTP/1.1 ${a.status}${a.reason}\r\n${fields}${framing}\r\n`;
  if (a.framing === "length") return Buffer.concat([Buffer.from(head), body]);
  const chunks = cutAt(body, a.chunkCuts).map((piece) => chunk(piece, a.extension));
  const end = `0\r\n${a.trailer ? "X-Trailer: t\r\n" : ""}\r\n`;
  return Buffer.concat([Buffer.from(head), ...chunks, Buffer.from(end)]);
}

const FRAMING_FIELDS = new Set([
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "trailer",
]);
const validAnswer: fc.Arbitrary<ValidAnswer> = fc.record({
  status: fc.integer({ min: 200, max: 599 }).filter((s) => s !== 204 && s !== 304),
  reason: fc.oneof(
    fc.constant(""),
    fc.stringMatching(/^[\t -~]{0,12}$/).map((r) => ` ${r}`),
  ),
  headers: fc
    .uniqueArray(
      fc.record({
        name: fc.stringMatching(/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,11}$/),
        value: fc.oneof(fc.constant(""), fc.stringMatching(/^[!-~]([\t -~]{0,20}[!-~])?$/)),
      }),
      { selector: (h) => h.name.toLowerCase(), maxLength: 5 },
    )
    .map((headers) => headers.filter((h) => !FRAMING_FIELDS.has(h.name.toLowerCase()))),
  body: fc.uint8Array({ maxLength: 3000 }),
  framing: fc.constantFrom("length" as const, "chunked" as const),
  chunkCuts: fc.array(fc.nat(), { maxLength: 5 }),
  extension: fc.constantFrom("", ";a", ";a=b", ';n="v w"'),
  trailer: fc.boolean(),
  writeCuts: fc.array(fc.nat(), { maxLength: 6 }),
});

describe("property", () => {
  it("reads any valid answer, written in any TCP writes, as exactly its status, headers and body", async () => {
    let writes: Buffer[] = [];
    const server = await serveRaw((_request, socket) =>
      writeParts(
        socket,
        writes.flatMap((w) => [w, 1]),
      ),
    );
    const t = transport(server.url);
    await fc.assert(
      fc.asyncProperty(validAnswer, async (answer) => {
        writes = cutAt(renderAnswer(answer), answer.writeCuts);
        const outcome = await t.send(PUT);
        expectResponse(outcome, answer.status, Buffer.from(answer.body));
        const headers = outcome.kind === "response" ? outcome.headers : {};
        for (const { name, value } of answer.headers) expect(headers[name.toLowerCase()]).toBe(value);
      }),
      { numRuns: 50 },
    );
    expect(server.connections(), "every answer was whole and kept alive").toBe(1);
  });
});
