/**
 * The hardened list+watch loop (src/controller/kube-watch.ts) against a scripted API and a fake
 * clock: paged lists, resourceVersion tracking with bookmarks, restarts with jittered backoff
 * (1 s doubling to 30 s, or to 3 s while the server does not answer or answers 401/403, or its
 * Retry-After; starting over when the kind of failure changes), relist on 410 and periodically,
 * readiness while down, clean stop.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { FakeClock } from "../../src/util/clock.ts";
import {
  ResourceWatch,
  WatchError,
  type KubeObject,
  type ListPage,
  type ListWatchApi,
  type Query,
  type WatchHandler,
} from "../../src/controller/kube-watch.ts";
import { kubeListWatchApi } from "../../src/kube/list-watch.ts";

const obj = (name: string, resourceVersion: string): KubeObject => ({
  metadata: { name, namespace: "ns", resourceVersion },
});

/** An API whose lists answer from `pages` and whose watches the test drives. */
class ScriptedApi implements ListWatchApi {
  readonly lists: Query[] = [];
  readonly watches: { query: Query; atMs: number }[] = [];
  pages: ListPage[] = [{ items: [], resourceVersion: "1" }];
  listError: Error | undefined;
  openError: Error | undefined;
  /** failures of the next watch attempts, one each, before openError applies */
  openErrors: Error[] = [];
  current:
    { emit: (type: string, object: unknown) => void; end: () => void; fail: (e: Error) => void } | undefined;
  #page = 0;
  readonly #clock: FakeClock;

  constructor(clock: FakeClock) {
    this.#clock = clock;
  }

  list(_path: string, query: Query): Promise<ListPage> {
    this.lists.push(query);
    if (this.listError !== undefined) return Promise.reject(this.listError);
    if (query.continue === undefined) this.#page = 0;
    const page = this.pages[this.#page++ % this.pages.length]!;
    return Promise.resolve(page);
  }

  watch(_path: string, query: Query, onEvent: (type: string, object: unknown) => void, signal: AbortSignal) {
    this.watches.push({ query, atMs: this.#clock.now() });
    const scripted = this.openErrors.shift();
    if (scripted !== undefined) return Promise.reject(scripted);
    if (this.openError !== undefined) return Promise.reject(this.openError);
    let end = (): void => {};
    let fail = (_e: Error): void => {};
    const ended = new Promise<void>((resolve, reject) => {
      end = resolve;
      fail = reject;
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    this.current = { emit: onEvent, end, fail };
    return Promise.resolve({ ended });
  }
}

class RecordingHandler implements WatchHandler {
  readonly calls: string[] = [];
  replace(objects: KubeObject[]): void {
    this.calls.push(`replace ${objects.map((o) => o.metadata.name).join(",")}`);
  }
  upsert(object: KubeObject): void {
    this.calls.push(`upsert ${object.metadata.name}`);
  }
  remove(object: KubeObject): void {
    this.calls.push(`remove ${object.metadata.name}`);
  }
}

describe("ResourceWatch", () => {
  const stop = new Set<AbortController>();
  afterEach(() => {
    for (const c of stop) c.abort();
    stop.clear();
  });

  function setup(options: { relistIntervalMs?: number } = {}) {
    const clock = new FakeClock();
    const api = new ScriptedApi(clock);
    const handler = new RecordingHandler();
    const watch = new ResourceWatch({
      api,
      handler,
      clock,
      path: "/apis/nsxv.io/v1alpha1/namespaces/ns/edgetenants",
      name: "EdgeTenant",
      labelSelector: "team=a",
      pageSize: 2,
      random: () => 0.5, // no jitter: delays are exact
      ...options,
    });
    const controller = new AbortController();
    stop.add(controller);
    return { clock, api, handler, watch, controller };
  }

  it("lists page by page, then watches from the list's resourceVersion; events and bookmarks move it", async () => {
    const { clock, api, handler, watch, controller } = setup();
    api.pages = [
      { items: [obj("a", "5"), obj("b", "6")], resourceVersion: "10", continue: "next" },
      { items: [obj("c", "7")], resourceVersion: "10" },
    ];
    const synced = watch.synced(controller.signal);
    expect(watch.notReady()).toMatch(/^EdgeTenant: not listed yet/);
    const done = watch.start(controller.signal);
    await clock.flush();
    expect(await synced).toBe(true);
    expect(api.lists).toEqual([
      { labelSelector: "team=a", limit: 2, continue: undefined },
      { labelSelector: "team=a", limit: 2, continue: "next" },
    ]);
    expect(api.watches[0]?.query).toMatchObject({
      resourceVersion: "10",
      allowWatchBookmarks: true,
      labelSelector: "team=a",
    });
    const timeout = api.watches[0]?.query.timeoutSeconds as number;
    expect(timeout).toBeGreaterThanOrEqual(300);
    expect(timeout).toBeLessThan(600);

    api.current?.emit("ADDED", obj("d", "11"));
    api.current?.emit("MODIFIED", obj("a", "12"));
    api.current?.emit("DELETED", obj("b", "13"));
    api.current?.emit("BOOKMARK", { metadata: { resourceVersion: "20" } });
    expect(handler.calls).toEqual(["replace a,b,c", "upsert d", "upsert a", "remove b"]);
    expect(watch.resourceVersion).toBe("20");
    expect(watch.notReady()).toBeUndefined();
    controller.abort();
    await done;
  });

  const backoffs = [
    {
      name: "Unanswered",
      error: new WatchError("WATCH_FAILED", "connect ECONNREFUSED"),
      starts: [0, 1_000, 3_000, 6_000, 9_000, 12_000, 15_000, 18_000, 21_000],
      reason:
        "no answer (a server down, restarting): 1 s doubling to 3 s, so the watch is back within 5 s of the server",
    },
    {
      name: "AnsweredWithAnError",
      error: new WatchError("WATCH_FAILED", "HTTP 500 InternalError", { status: 500 }),
      starts: [0, 1_000, 3_000, 7_000, 15_000, 31_000, 61_000, 91_000, 121_000],
      reason: "a server that answers but fails may be struggling: 1 s doubling to 30 s",
    },
    {
      name: "RetryAfter",
      error: new WatchError("WATCH_FAILED", "HTTP 429 storage is (re)initializing", {
        status: 429,
        retryAfterMs: 1_000,
      }),
      // random 0.5: up to 20 % more than asked, never less
      starts: [0, 1_100, 2_200, 3_300, 4_400, 5_500, 6_600, 7_700, 8_800],
      reason: "what the server asked for (1 s while a resource's storage initializes after a restart)",
    },
  ];
  it.each(backoffs)("backs off between failed watches: $name", async ({ error, starts, reason }) => {
    const { clock, api, watch, controller } = setup();
    const done = watch.start(controller.signal);
    await clock.flush();
    api.openError = error;
    api.current?.fail(error);
    await clock.advance(starts.at(-1)!);
    expect(
      api.watches.map((w) => w.atMs - api.watches[0]!.atMs),
      reason,
    ).toEqual(starts);
    controller.abort();
    await done;
  });

  it("restarts a broken watch from the last resourceVersion, not ready meanwhile, backoff reset once open", async () => {
    const { clock, api, watch, controller } = setup();
    api.pages = [{ items: [], resourceVersion: "7" }];
    const done = watch.start(controller.signal);
    await clock.flush();
    api.openError = new WatchError("WATCH_FAILED", "connect ECONNREFUSED");
    api.current?.fail(new WatchError("WATCH_FAILED", "socket hang up"));
    await clock.advance(200_000);
    expect(api.watches.every((w) => w.query.resourceVersion === "7")).toBe(true);
    expect(api.lists).toHaveLength(1);
    expect(watch.notReady()).toMatch(/^EdgeTenant: connect ECONNREFUSED \(for 200 s\)/);

    api.openError = undefined;
    await clock.advance(5_000);
    expect(watch.notReady()).toBeUndefined();
    // the backoff starts over after a watch that opened
    api.current?.fail(new WatchError("WATCH_FAILED", "reset"));
    const before = api.watches.length;
    await clock.advance(1_000);
    expect(api.watches).toHaveLength(before + 1);
    controller.abort();
    await done;
  });

  const goneCases = [
    {
      name: "ErrorEvent",
      reason: "the API server ends a watch whose resourceVersion was compacted with an ERROR event, code 410",
      breakWatch: (api: ScriptedApi) =>
        api.current?.emit("ERROR", { kind: "Status", code: 410, reason: "Expired", message: "too old" }),
    },
    {
      name: "HttpStatus",
      reason: "or answers the watch request itself with HTTP 410",
      breakWatch: (api: ScriptedApi) =>
        api.current?.fail(new WatchError("WATCH_GONE", "HTTP 410", { status: 410 })),
    },
  ];
  it.each(goneCases)("410 Gone relists at once: $name", async ({ breakWatch, reason }) => {
    const { clock, api, handler, watch, controller } = setup();
    api.pages = [{ items: [obj("a", "3")], resourceVersion: "3" }];
    const done = watch.start(controller.signal);
    await clock.flush();
    api.pages = [{ items: [obj("a", "30"), obj("b", "31")], resourceVersion: "40" }];
    breakWatch(api);
    await clock.flush();
    expect(api.lists, reason).toHaveLength(2);
    expect(handler.calls).toEqual(["replace a", "replace a,b"]);
    expect(api.watches.at(-1)?.query.resourceVersion).toBe("40");
    expect(api.watches.at(-1)?.atMs).toBe(api.watches[0]?.atMs);
    expect(watch.notReady()).toBeUndefined();
    controller.abort();
    await done;
  });

  it("relists every relistIntervalMs while healthy, and reopens a watch the server ended without delay", async () => {
    const { clock, api, watch, controller } = setup({ relistIntervalMs: 10_000 });
    const done = watch.start(controller.signal);
    await clock.flush();
    api.current?.end(); // the server's timeoutSeconds passed
    await clock.flush();
    expect(api.watches).toHaveLength(2);
    expect(api.lists).toHaveLength(1);
    await clock.advance(10_000);
    expect(api.lists).toHaveLength(2);
    expect(api.watches).toHaveLength(3);
    expect(watch.notReady()).toBeUndefined();
    controller.abort();
    await done;
  });

  const silent = () => new WatchError("WATCH_FAILED", "connect ECONNREFUSED");
  const forbidden = () => new WatchError("WATCH_FAILED", "HTTP 403 forbidden", { status: 403 });
  const unauthorized = () => new WatchError("WATCH_FAILED", "HTTP 401 Unauthorized", { status: 401 });
  const serverError = () => new WatchError("WATCH_FAILED", "HTTP 500 etcd", { status: 500 });
  /** sequences of failures: the doubling counts failures of one kind in a row */
  const backoffCases = [
    {
      name: "RefusedWhileLoadingRbac",
      reason:
        "a restarted server answers 403 until it has loaded RBAC: after an outage, the first 403 starts over at 1 s, not at the 30 s the errors' count would reach",
      failures: [...Array.from({ length: 8 }, silent), forbidden(), forbidden()],
      delays: [1, 2, 3, 3, 3, 3, 3, 3, 1, 2],
    },
    {
      name: "RefusedStaysQuick",
      reason: "a missing grant is picked up within 3 s of an admin adding it",
      failures: [...Array.from({ length: 5 }, forbidden), unauthorized(), unauthorized()],
      delays: [1, 2, 3, 3, 3, 3, 3],
    },
    {
      name: "ErrorsAfterAnOutage",
      reason: "a server back from silence gets its first error retried at 1 s, then the errors' doubling",
      failures: [...Array.from({ length: 6 }, silent), serverError(), serverError(), serverError()],
      delays: [1, 2, 3, 3, 3, 3, 1, 2, 4],
    },
  ];
  it.each(backoffCases)(
    "backs off by the kind of failure, starting over when it changes: $name",
    async ({ failures, delays, reason }) => {
      const { clock, api, watch, controller } = setup();
      api.openErrors = [...failures];
      const done = watch.start(controller.signal);
      await clock.advance(200_000);
      const times = api.watches.map((w) => w.atMs);
      const gaps = times.slice(1).map((t, i) => (t - times[i]!) / 1000);
      expect(gaps, reason).toEqual(delays);
      expect(watch.notReady()).toBeUndefined();
      controller.abort();
      await done;
    },
  );

  it("keeps retrying a failing list, and resolves (never rejects) when stopped", async () => {
    const { clock, api, watch, controller } = setup();
    api.listError = new WatchError("WATCH_FAILED", "HTTP 403 forbidden", { status: 403 });
    const synced = watch.synced(controller.signal);
    const done = watch.start(controller.signal);
    await clock.advance(10_000);
    expect(api.lists.length).toBeGreaterThanOrEqual(3);
    expect(watch.notReady()).toMatch(/HTTP 403 forbidden/);
    controller.abort();
    await expect(done).resolves.toBeUndefined();
    expect(await synced).toBe(false);
  });
});

describe("kubeListWatchApi", () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** an API server stand-in: the list, a watch that sends one event then falls silent, 410s and 429s */
  async function fakeApiServer(): Promise<{ kc: KubeConfig; requests: string[] }> {
    const requests: string[] = [];
    server = createServer((req, res) => {
      requests.push(`${req.url} ${req.headers.authorization}`);
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname === "/gone") {
        res.writeHead(410, { "content-type": "application/json" }).end('{"kind":"Status","code":410}');
      } else if (url.pathname === "/initializing") {
        // what kube-apiserver answers for a custom resource right after it started
        res
          .writeHead(429, { "content-type": "application/json", "retry-after": "1" })
          .end(
            '{"kind":"Status","code":429,"reason":"TooManyRequests","message":"storage is (re)initializing"}',
          );
      } else if (url.searchParams.get("watch") === "true") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write(`${JSON.stringify({ type: "ADDED", object: obj("b", "12") })}\n{"type":"BOOKMARK",`);
        res.write(`"object":{"metadata":{"resourceVersion":"13"}}}\n`);
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ items: [obj("a", "11")], metadata: { resourceVersion: "11", continue: "c" } }),
        );
      }
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: "c",
          server: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: "u", token: "secret-token" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    return { kc, requests };
  }

  it("lists and watches with the kubeconfig's credentials; a silent watch ends as broken", async () => {
    const { kc, requests } = await fakeApiServer();
    const api = kubeListWatchApi(kc, { inactivityTimeoutMs: 300 });
    const signal = new AbortController().signal;
    expect(await api.list("/things", { limit: 2, labelSelector: "a=b" }, signal)).toEqual({
      items: [obj("a", "11")],
      resourceVersion: "11",
      continue: "c",
    });
    const events: string[] = [];
    const { ended } = await api.watch(
      "/things",
      { resourceVersion: "11" },
      (type, o) => {
        events.push(`${type} ${(o as KubeObject).metadata.resourceVersion}`);
      },
      signal,
    );
    await expect(ended).rejects.toThrow(/no data for 300 ms/);
    expect(events).toEqual(["ADDED 12", "BOOKMARK 13"]);
    expect(requests).toEqual([
      "/things?limit=2&labelSelector=a%3Db Bearer secret-token",
      "/things?resourceVersion=11&watch=true Bearer secret-token",
    ]);
  });

  it("a 410 is WATCH_GONE; an aborted watch ends quietly", async () => {
    const { kc } = await fakeApiServer();
    const api = kubeListWatchApi(kc);
    const controller = new AbortController();
    await expect(api.list("/gone", {}, controller.signal)).rejects.toMatchObject({
      code: "WATCH_GONE",
      status: 410,
    });
    await expect(api.watch("/gone", {}, () => {}, controller.signal)).rejects.toMatchObject({
      code: "WATCH_GONE",
    });
    const { ended } = await api.watch("/things", {}, () => {}, controller.signal);
    controller.abort();
    await expect(ended).resolves.toBeUndefined();
  });

  it("a 429 carries the Retry-After it was sent; no answer at all carries no status", async () => {
    const { kc } = await fakeApiServer();
    const api = kubeListWatchApi(kc);
    const signal = new AbortController().signal;
    await expect(api.watch("/initializing", {}, () => {}, signal)).rejects.toMatchObject({
      code: "WATCH_FAILED",
      status: 429,
      retryAfterMs: 1_000,
      message: expect.stringContaining("storage is (re)initializing"),
    });
    // the server gone: nothing answers
    server!.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    await expect(api.list("/things", {}, signal)).rejects.toMatchObject({
      code: "WATCH_FAILED",
      status: undefined,
      retryAfterMs: undefined,
      message: expect.stringContaining("/things"),
    });
  });
});
