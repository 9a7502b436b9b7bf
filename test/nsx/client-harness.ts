/**
 * What the client test files share: test servers and manager clients that are closed after each
 * test (newest first), and a client with fast retries that records every attempt it makes.
 */
import { afterEach } from "vitest";
import { ManagerClient, type ManagerClientOptions, type RequestEvent } from "../../src/nsx/client.ts";
import { startServer, type Handler, type TestServer } from "./test-server.ts";

export interface ClientHarness {
  /** runs `close` after the current test */
  onCleanup(close: () => Promise<void>): void;
  serve(handler: Handler, options?: { tls?: boolean; port?: number }): Promise<TestServer>;
  /** a client for `url` with the harness's defaults, then `options`; `events` gets every attempt */
  client(url: string, options?: Partial<ManagerClientOptions>): { c: ManagerClient; events: RequestEvent[] };
}

/** Call once at the top of a test file: it registers the `afterEach` that closes what a test opened. */
export function clientHarness(defaults: Partial<ManagerClientOptions> = {}): ClientHarness {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const onCleanup = (close: () => Promise<void>): void => void cleanups.push(close);
  return {
    onCleanup,
    async serve(handler, options = {}) {
      const server = await startServer(handler, options);
      onCleanup(() => server.close());
      return server;
    },
    client(url, options = {}) {
      const events: RequestEvent[] = [];
      const c = new ManagerClient({
        url,
        username: "admin",
        password: "default",
        baseDelayMs: 1,
        maxDelayMs: 2,
        onRequest: (e) => events.push(e),
        ...defaults,
        ...options,
      });
      onCleanup(() => c.close());
      return { c, events };
    },
  };
}
