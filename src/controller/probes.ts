/**
 * The operator's two HTTP endpoints, on separate ports as controller-runtime has them: the probe
 * server (`/healthz`, `/readyz`, from registered checks) and the metrics server (`/metrics`).
 * Both follow the `start(signal)` shape and report the address they bound through `listening`.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { CodedError } from "../util/errors.ts";
import type { Clock } from "../util/clock.ts";
import { realClock, withTimeout } from "../util/clock.ts";
import type { Logger } from "./controller.ts";
import { nopLogger } from "./controller.ts";
import { withDefaults } from "../util/options.ts";

/** Returns nothing when healthy, or why not; a thrown error counts as failing with its message. */
export type Check = () => string | undefined | Promise<string | undefined>;

export interface BoundAddress {
  host: string;
  port: number;
}

export class BindAddressError extends CodedError {
  constructor(address: string) {
    super(
      "INVALID_BIND_ADDRESS",
      `invalid bind address "${address}": want [host]:port, e.g. ":8081" or "127.0.0.1:0"`,
    );
  }
}

/** ":8081" (every interface), "127.0.0.1:0", "[::1]:9090" → host (undefined: every interface) and port */
export function parseBindAddress(address: string): { host: string | undefined; port: number } {
  const colon = address.lastIndexOf(":");
  const portText = address.slice(colon + 1);
  let host = address.slice(0, colon);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  const port = Number(portText);
  if (colon < 0 || !/^\d{1,5}$/.test(portText) || port > 65535 || host.includes("[")) {
    throw new BindAddressError(address);
  }
  return { host: host === "" ? undefined : host, port };
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

function send(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = "text/plain; charset=utf-8",
): void {
  res.writeHead(status, { "content-type": contentType, "x-content-type-options": "nosniff" });
  res.end(body);
}

/** One HTTP listener with the start(signal) shape; what the two servers below share. */
class Endpoint {
  readonly listening: Promise<BoundAddress>;
  readonly #address: string;
  readonly #handler: Handler;
  readonly #logger: Logger;
  #bound: (address: BoundAddress) => void = () => {};
  #failed: (error: unknown) => void = () => {};

  constructor(address: string, handler: Handler, logger: Logger) {
    parseBindAddress(address);
    this.#address = address;
    this.#handler = handler;
    this.#logger = logger;
    this.listening = new Promise<BoundAddress>((resolve, reject) => {
      this.#bound = resolve;
      this.#failed = reject;
    });
    // a caller that only awaits start() must not see an unhandled rejection
    this.listening.catch(() => {});
  }

  async start(signal: AbortSignal): Promise<void> {
    const { host, port } = parseBindAddress(this.#address);
    const server = createServer((req, res) => {
      this.#handler(req, res).catch((err: unknown) => {
        this.#logger.error({ err, url: req.url }, "http handler failed");
        if (!res.headersSent) send(res, 500, "internal error\n");
        else res.destroy();
      });
    });
    try {
      await listen(server, host, port);
    } catch (error) {
      this.#failed(error);
      throw error;
    }
    const info = server.address() as AddressInfo;
    this.#bound({ host: info.address, port: info.port });
    await new Promise<void>((resolve) => {
      const close = (): void => {
        server.close(() => resolve());
        server.closeAllConnections();
      };
      if (signal.aborted) close();
      else signal.addEventListener("abort", close, { once: true });
    });
  }
}

function listen(server: Server, host: string | undefined, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function pathOf(req: IncomingMessage): { path: string; verbose: boolean } {
  const url = new URL(req.url ?? "/", "http://probe");
  return { path: url.pathname, verbose: url.searchParams.has("verbose") };
}

export interface ProbeServerOptions {
  /** default ":8081" */
  bindAddress?: string;
  /** a check that takes longer fails; default 1000 (the kubelet's own probe timeout is 1 s) */
  checkTimeoutMs?: number;
  clock?: Clock;
  logger?: Logger;
}

export const PROBE_DEFAULTS = { bindAddress: ":8081", checkTimeoutMs: 1000 } as const;

/**
 * `/healthz` (liveness) and `/readyz` (readiness), controller-runtime style: 200 "ok" when every
 * check passes; otherwise 500 with one line per check (`[-]name failed: why`). `?verbose` lists
 * the checks on success too.
 */
export class ProbeServer {
  readonly #endpoint: Endpoint;
  readonly #checkTimeoutMs: number;
  readonly #clock: Clock;
  readonly #health = new Map<string, Check>();
  readonly #ready = new Map<string, Check>();

  constructor(options: ProbeServerOptions = {}) {
    const o = withDefaults(PROBE_DEFAULTS, options);
    this.#checkTimeoutMs = o.checkTimeoutMs;
    this.#clock = options.clock ?? realClock;
    this.#endpoint = new Endpoint(
      o.bindAddress,
      (req, res) => this.#handle(req, res),
      options.logger ?? nopLogger,
    );
  }

  /** resolves with the bound address once listening; rejects if binding failed */
  get listening(): Promise<BoundAddress> {
    return this.#endpoint.listening;
  }

  addHealthCheck(name: string, check: Check): this {
    this.#health.set(name, check);
    return this;
  }

  addReadyCheck(name: string, check: Check): this {
    this.#ready.set(name, check);
    return this;
  }

  start(signal: AbortSignal): Promise<void> {
    return this.#endpoint.start(signal);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, verbose } = pathOf(req);
    const checks = path === "/healthz" ? this.#health : path === "/readyz" ? this.#ready : undefined;
    if (checks === undefined) return send(res, 404, "not found\n");
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "method not allowed\n");
    const results = await Promise.all([...checks].map(([name, check]) => this.#run(name, check)));
    const failed = results.some((r) => r.failure !== undefined);
    if (!failed && !verbose) return send(res, 200, "ok");
    const lines = results.map((r) =>
      r.failure === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.failure}`,
    );
    lines.push(`${path.slice(1)} check ${failed ? "failed" : "passed"}`);
    send(res, failed ? 500 : 200, `${lines.join("\n")}\n`);
  }

  async #run(name: string, check: Check): Promise<{ name: string; failure: string | undefined }> {
    const outcome = Promise.resolve()
      .then(check)
      .catch((err: unknown) => (err instanceof Error ? err.message : String(err)) || "error");
    const failure = await withTimeout(
      this.#clock,
      outcome,
      this.#checkTimeoutMs,
      `no answer within ${this.#checkTimeoutMs} ms`,
    );
    return { name, failure };
  }
}

export interface MetricsServerOptions {
  registry: Registry;
  /** default ":8080" */
  bindAddress?: string;
  logger?: Logger;
}

export const METRICS_DEFAULTS = { bindAddress: ":8080" } as const;

/** `/metrics` in the Prometheus text format, from the registry. */
export class MetricsServer {
  readonly #endpoint: Endpoint;

  constructor(options: MetricsServerOptions) {
    const registry = options.registry;
    this.#endpoint = new Endpoint(
      withDefaults(METRICS_DEFAULTS, options).bindAddress,
      async (req, res) => {
        if (pathOf(req).path !== "/metrics") return send(res, 404, "not found\n");
        if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "method not allowed\n");
        send(res, 200, await registry.metrics(), registry.contentType);
      },
      options.logger ?? nopLogger,
    );
  }

  get listening(): Promise<BoundAddress> {
    return this.#endpoint.listening;
  }

  start(signal: AbortSignal): Promise<void> {
    return this.#endpoint.start(signal);
  }
}
