/**
 * The list+watch adapter to a cluster for ResourceWatch (src/controller/kube-watch.ts): the
 * kubeconfig's credentials and TLS settings as client-node's own calls use them, undici's fetch,
 * and the watch stream read line by line. client-node's `Watch` is not used: its inactivity timeout
 * (30 s, private) is shorter than the API server's bookmark interval (1 min). An error answer is
 * decoded from the API server's Status body into one readable line (errors.ts).
 */
import { HttpMethod, RequestContext, type KubeConfig } from "@kubernetes/client-node";
import { fetch, type Response } from "undici";
import { decodeStatus } from "./errors.ts";
import { WatchError, type KubeObject, type ListWatchApi, type Query } from "../controller/kube-watch.ts";
import { withDefaults } from "../util/options.ts";

export interface KubeListWatchOptions {
  /** a watch that delivers nothing (not even a bookmark, sent every minute) this long is dead; default 90000 */
  inactivityTimeoutMs?: number;
  /** a list page, or the response to a watch request, that takes longer fails; default 60000 */
  requestTimeoutMs?: number;
}

export const KUBE_LIST_WATCH_DEFAULTS = { inactivityTimeoutMs: 90_000, requestTimeoutMs: 60_000 } as const;

/** Lists and watches through the kubeconfig's current cluster. */
export function kubeListWatchApi(kc: KubeConfig, options: KubeListWatchOptions = {}): ListWatchApi {
  const settings = withDefaults(KUBE_LIST_WATCH_DEFAULTS, options);
  return {
    async list(path, query, signal) {
      const timeout = AbortSignal.any([signal, AbortSignal.timeout(settings.requestTimeoutMs)]);
      const response = await get(kc, path, query, timeout);
      const list = (await response.json()) as {
        items?: KubeObject[] | null;
        metadata?: { resourceVersion?: string; continue?: string };
      };
      return {
        items: list.items ?? [],
        resourceVersion: list.metadata?.resourceVersion ?? "",
        continue: list.metadata?.continue,
      };
    },
    watch: (path, query, onEvent, signal) => watch(kc, settings, { path, query, onEvent, signal }),
  };
}

/** One GET with the kubeconfig's authentication; anything but 200 is a WatchError (410: WATCH_GONE). */
async function get(kc: KubeConfig, path: string, query: Query, signal: AbortSignal): Promise<Response> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new WatchError("WATCH_FAILED", "the kubeconfig has no current cluster");
  const url = new URL(cluster.server + path);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  const context = new RequestContext(url.toString(), HttpMethod.GET);
  await kc.applySecurityAuthentication(context);
  const what = `${query.watch === true ? "watch" : "list"} ${path}`;
  const response = await fetch(url, {
    headers: { ...context.getHeaders(), accept: "application/json" },
    dispatcher: context.getDispatcher(),
    signal,
  }).catch((cause: unknown) => {
    throw new WatchError("WATCH_FAILED", `${what}: ${(cause as Error).message}`, { cause });
  });
  if (response.status !== 200) {
    const said = decodeStatus(await response.text().catch(() => "")).text;
    const code = response.status === 410 ? "WATCH_GONE" : "WATCH_FAILED";
    const retryAfter = response.headers.get("retry-after");
    // the API server sends whole seconds (a 429 while a resource's storage initializes: 1)
    const retryAfterMs =
      retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : undefined;
    throw new WatchError(code, `${what}: HTTP ${response.status}${said}`, {
      status: response.status,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  return response;
}

/**
 * A watch: the response headers within the request timeout, then events (or bookmarks) within the
 * inactivity timeout, each line handed to `onEvent`. `ended` settles when the stream does.
 */
async function watch(
  kc: KubeConfig,
  settings: Required<KubeListWatchOptions>,
  call: {
    path: string;
    query: Query;
    onEvent: (type: string, object: unknown) => void;
    signal: AbortSignal;
  },
): Promise<{ ended: Promise<void> }> {
  const { path, signal } = call;
  const connection = new AbortController();
  const onAbort = (): void => connection.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  let timer = setTimeout(onAbort, settings.requestTimeoutMs);
  const dead = new WatchError(
    "WATCH_FAILED",
    `watch ${path}: no data for ${settings.inactivityTimeoutMs} ms`,
  );
  const alive = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => connection.abort(dead), settings.inactivityTimeoutMs);
  };
  const stop = (): void => {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  };
  let response: Response;
  try {
    response = await get(kc, path, { ...call.query, watch: true }, connection.signal);
  } catch (error) {
    stop();
    throw error;
  }
  alive();
  const ended = readLines(response, connection.signal, (line) => {
    alive();
    const event = JSON.parse(line) as { type?: string; object?: unknown };
    if (typeof event.type === "string") call.onEvent(event.type, event.object);
  }).then(
    () => stop(),
    (error: unknown) => {
      stop();
      if (signal.aborted) return;
      const reason: unknown = connection.signal.reason;
      if (reason instanceof WatchError) throw reason;
      throw new WatchError("WATCH_FAILED", `watch ${path}: ${(error as Error).message}`, { cause: error });
    },
  );
  return { ended };
}

/** Calls `onLine` with each non-empty line of the body until it ends; rejects when it breaks. */
async function readLines(
  response: Response,
  signal: AbortSignal,
  onLine: (line: string) => void,
): Promise<void> {
  if (response.body === null) return;
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    if (signal.aborted) break;
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line !== "") onLine(line);
    }
  }
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error("aborted");
}
