/**
 * An HTTP proxy on loopback in front of the manager simulator that rewrites the bodies of chosen
 * answers, or answers in the manager's place: a manager that writes what the simulator never
 * would (odd address forms, DOCTYPEs, duplicated elements, wrong types, lost sections, answers
 * without Content-Length, a 409 after acting). Everything else passes through unchanged, so the
 * simulator still counts and audits every call that reaches it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Rewrite {
  method: string;
  /** matched against the request path (query excluded) */
  path: RegExp;
  /** the new body; the status and the content type stay */
  body: (text: string) => string;
  /**
   * Answers in the manager's place before anything is forwarded, when it returns an answer (a
   * manager that acts and then says 409); undefined forwards the call as usual.
   */
  intercept?: () => Promise<{ status: number; body: string } | undefined>;
  /** send without Content-Length, in chunks (as a streaming manager or a proxy does) */
  chunked?: boolean;
}

export interface RewritingProxy {
  url: string;
  /** how many answers were rewritten */
  rewritten(): number;
  close(): Promise<void>;
}

const FORWARDED_HEADERS = ["authorization", "content-type", "accept"];
const CHUNK_BYTES = 16 * 1024;

export async function startRewritingProxy(
  target: string,
  rewrites: readonly Rewrite[],
): Promise<RewritingProxy> {
  let rewritten = 0;
  const server = createServer((req, res) => {
    forward(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy error: ${(error as Error).message}`);
    });
  });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const value = req.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    const method = req.method ?? "GET";
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const rewrite = rewrites.find((r) => r.method === method && r.path.test(path));
    const own = await rewrite?.intercept?.();
    if (own !== undefined) {
      rewritten++;
      res.writeHead(own.status, { "content-type": "application/xml" });
      res.end(own.body);
      return;
    }
    const upstream = await fetch(`${target}${req.url ?? "/"}`, {
      method,
      headers,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    let body = Buffer.from(await upstream.arrayBuffer());
    if (rewrite !== undefined && upstream.status < 300 && body.length > 0) {
      body = Buffer.from(rewrite.body(body.toString("utf8")), "utf8");
      rewritten++;
    }
    const out: Record<string, string> = {};
    const type = upstream.headers.get("content-type");
    if (type !== null) out["content-type"] = type;
    const auth = upstream.headers.get("www-authenticate");
    if (auth !== null) out["www-authenticate"] = auth;
    if (rewrite?.chunked !== true) out["content-length"] = String(body.length);
    res.writeHead(upstream.status, out);
    for (let offset = 0; offset < body.length; offset += CHUNK_BYTES) {
      res.write(body.subarray(offset, offset + CHUNK_BYTES));
    }
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    rewritten: () => rewritten,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
