/**
 * The HTTP/1.1 layer below the transport, where transport-hostile.test.ts cannot see: the reader's
 * head bound at byte granularity and its cost on a head sent a byte at a time, how small body
 * pieces are kept, and a connection's close() and idle sockets.
 */
import { describe, expect, it } from "vitest";
import { Http1Connection, type Http1Handler } from "../../src/nsx/http1.ts";
import { MAX_HEAD_BYTES, ResponseReader, type ResponseHeaders } from "../../src/nsx/http1-response.ts";
import { BodyPieces } from "../../src/nsx/transport.ts";
import { clientHarness } from "./client-harness.ts";
import { startRawServer, type RawServer } from "./test-server.ts";

const { onCleanup } = clientHarness();

/** Feeds `text` to a reader in pieces of `size` bytes; the status it reads, or the error's message. */
function read(text: string, size: number): string {
  let status = 0;
  const reader = new ResponseReader({ onHead: (s) => void (status = s), onData: () => undefined });
  const bytes = Buffer.from(text, "latin1");
  try {
    for (let at = 0; at < bytes.length; at += size) reader.feed(bytes.subarray(at, at + size));
  } catch (error) {
    return (error as Error).message;
  }
  return reader.done ? String(status) : "incomplete";
}

/** An answer whose head (status line and fields, without the blank line) is `headBytes` long. */
function answerWithHead(headBytes: number): string {
  const start = "HTTP/1.1 204 No Content\r\nX-Pad: ";
  return `${start}${"p".repeat(headBytes - start.length)}\r\n\r\n`;
}

describe("the reader's head", () => {
  it.each([
    { name: "Whole", reason: "the head in one read", size: Infinity },
    { name: "ByteByByte", reason: "every piece one byte: the end is found across pieces", size: 1 },
    { name: "OddPieces", reason: "the blank line cut at every offset in turn", size: 7 },
  ])("takes a head of exactly MAX_HEAD_BYTES and refuses one byte more: $name ($reason)", ({ size }) => {
    expect(read(answerWithHead(MAX_HEAD_BYTES), size)).toBe("204");
    expect(read(answerWithHead(MAX_HEAD_BYTES + 1), size)).toMatch(/head larger than 16384 bytes/);
  });

  it("finds a bare LF in a head sent a byte at a time, before the head ends", () => {
    expect(read("HTTP/1.1 200 OK\nContent-Length: 0\n", 1)).toMatch(/a line ending without CR/);
  });
});

describe("BodyPieces", () => {
  it("copies small pieces together: a body in 1-byte pieces is one buffer, not an object per byte", () => {
    const body = new BodyPieces();
    const bytes = Buffer.from("x".repeat(20_000).replace(/x/g, (_, i: number) => String(i % 10)));
    for (let at = 0; at < bytes.length; at++) body.add(bytes.subarray(at, at + 1));
    const pieces = body.done();
    expect(pieces).toHaveLength(1);
    expect(Buffer.concat(pieces).equals(bytes)).toBe(true);
  });

  it("keeps large pieces as they are and the order of all of them", () => {
    const body = new BodyPieces();
    const large = Buffer.alloc(8 * 1024, "L");
    body.add(Buffer.from("ab"));
    body.add(large);
    body.add(Buffer.from("cd"));
    const pieces = body.done();
    expect(pieces.map((p) => p.toString().slice(0, 2))).toEqual(["ab", "LL", "cd"]);
    expect(pieces[1]).toBe(large);
  });
});

async function serve(): Promise<{ server: RawServer; closed: () => number }> {
  let closed = 0;
  const seen = new WeakSet<object>();
  const server = await startRawServer((_request, socket) => {
    if (!seen.has(socket)) socket.on("close", () => closed++);
    seen.add(socket);
    socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  });
  onCleanup(() => server.close());
  return { server, closed: () => closed };
}

function connection(server: RawServer, idleTimeoutMs = 4_000): Http1Connection {
  const created = new Http1Connection({
    origin: new URL(server.url),
    connectTimeoutMs: 2_000,
    idleTimeoutMs,
  });
  onCleanup(async () => created.destroy());
  return created;
}

/** Sends a GET; resolves with its status, or the error's code. */
function get(c: Http1Connection): Promise<string> {
  return new Promise((resolve) => {
    let status = 0;
    const handler: Http1Handler = {
      onWritten: () => undefined,
      onHead: (s: number, _h: ResponseHeaders) => void (status = s),
      onData: () => undefined,
      onEnd: () => resolve(String(status)),
      onError: (error) => resolve((error as { code?: string }).code ?? error.message),
    };
    c.request({ method: "GET", path: "/", headers: {} }, handler);
  });
}

describe("Http1Connection", () => {
  it("close() lets the requests queued before it finish on the same socket, and every close() resolves", async () => {
    const { server } = await serve();
    const c = connection(server);
    const answers = [get(c), get(c), get(c)];
    const closes = [c.close(), c.close()];
    expect(await Promise.all(answers)).toEqual(["200", "200", "200"]);
    await Promise.all(closes);
    expect(server.connections()).toBe(1);
    expect(await get(c)).toBe("HTTP1_DESTROYED");
  });

  it("closes an idle socket once it may no longer be reused, rather than leaving it to the server", async () => {
    const { server, closed } = await serve();
    const c = connection(server, 50);
    expect(await get(c)).toBe("200");
    await expect.poll(closed, { timeout: 2_000 }).toBe(1);
    expect(await get(c)).toBe("200");
    expect(server.connections()).toBe(2);
  });
});
