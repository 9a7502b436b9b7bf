/**
 * One manager client per NSXManager object, built from the object and its Secrets, and replaced
 * when any of them changes: the cache key is a keyed hash of (url, credentials, TLS, limits), so
 * a rotated password takes effect on the next reconcile without a restart, and the old client
 * is closed. The hash is computed again only when the object's spec or one of its Secrets is
 * another object than last time (every source replaces what changed, and a status write keeps
 * the spec): a reconcile of an unchanged manager costs three identity checks. The client
 * factory is injected (`new ManagerClient(...)` in the operator, a fake in tests). A missing
 * Secret or key is a ManagerNotReady error naming the Secret and the key, never a value.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { NSXManager, Secret } from "../api/types.ts";
import type { ManagerClientOptions } from "../nsx/client.ts";
import { insecureTransport } from "../nsx/client-options.ts";
import type { ManagerApi } from "../nsx/types.ts";
import { ReconcileError } from "./errors.ts";
import { resolveManager } from "./spec.ts";
import { normalizeManagerUrl } from "../api/manager-url.ts";
import { DEFAULT_NAMESPACE } from "../api/refs.ts";

/** A client that can be let go: `close` lets its requests in flight finish, `destroy` aborts them. */
export type ClosableManagerApi = ManagerApi & { close(): Promise<void>; destroy(): Promise<void> };

/** What the object and the Secrets give; the rest of the client's options come from here. */
type OwnOptions =
  | "url"
  | "auth"
  | "username"
  | "password"
  | "ca"
  | "insecureSkipVerify"
  | "maxConcurrentRequests"
  | "requestsPerSecond"
  | "requestTimeoutMs";

/** Which NSXManager object a client is built for (`namespace/name`), e.g. to label its metrics. */
export interface ManagerIdentity {
  namespace: string;
  name: string;
}

export interface ManagerConnectionsOptions {
  createClient: (options: ManagerClientOptions, manager: ManagerIdentity) => ClosableManagerApi;
  /** given to every client: `onRequest` for metrics, retry tuning; never credentials */
  clientOptions?: Omit<Partial<ManagerClientOptions>, OwnOptions>;
  /** an old client's close() failed; default: ignored (it is being dropped anyway) */
  onCloseError?: (error: unknown) => void;
}

export interface ManagerSecrets {
  /** the Secret named by spec.credentialsSecretRef, undefined when it does not exist */
  credentials: Secret | undefined;
  /** the Secret named by spec.tls.caSecretRef, when the object names one */
  ca?: Secret | undefined;
}

export interface ManagerConnection {
  api: ManagerApi;
  /** names the manager and this client's settings: the key of anything cached per client */
  key: string;
  /**
   * names what every client that reaches this manager the same verified way may share, whichever
   * NSXManager object built it (its edge list): the manager's URL and what verifies its
   * certificate (the system's authorities, or a CA). A client that verifies nothing (no
   * certificate verification, plain http to another machine) shares with no other: its `key`.
   */
  sharedKey: string;
  /** the manager's URL, normalized (normalizeManagerUrl): the real manager the client talks to */
  url: string;
}

interface Entry {
  hash: string;
  client: ClosableManagerApi;
  connection: ManagerConnection;
  /** what the hash was computed from: the same objects again give the same hash */
  spec: NSXManager["spec"];
  credentials: Secret | undefined;
  ca: Secret | undefined;
}

export class ManagerConnections {
  readonly #options: ManagerConnectionsOptions;
  readonly #entries = new Map<string, Entry>();
  /** per instance, so that the hashes of credentials mean nothing outside this process */
  readonly #hmacKey = randomBytes(32);

  constructor(options: ManagerConnectionsOptions) {
    this.#options = { ...options };
  }

  /**
   * The client for this manager, created or replaced when its settings changed. Throws
   * ReconcileError: InvalidSpec for a bad spec, ManagerNotReady for a missing Secret or key.
   */
  resolve(manager: NSXManager, secrets: ManagerSecrets): ManagerConnection {
    const namespace = manager.metadata.namespace ?? DEFAULT_NAMESPACE;
    const name = `${namespace}/${manager.metadata.name}`;
    const cached = this.#entries.get(name);
    if (
      cached?.spec === manager.spec &&
      cached.credentials === secrets.credentials &&
      cached.ca === secrets.ca
    ) {
      return cached.connection;
    }
    const config = resolveManager(manager);
    const credentials = `${namespace}/${config.credentialsSecret}`;
    const options: ManagerClientOptions = {
      ...this.#options.clientOptions,
      url: config.url,
      auth: config.auth === "Token" ? "token" : "basic",
      username: secretValue(secrets.credentials, credentials, "username"),
      password: secretValue(secrets.credentials, credentials, "password"),
      insecureSkipVerify: config.insecureSkipVerify,
      maxConcurrentRequests: config.maxConcurrentRequests,
      requestsPerSecond: config.requestsPerSecond,
      requestTimeoutMs: config.requestTimeoutMs,
    };
    if (config.ca !== undefined)
      options.ca = secretValue(secrets.ca, `${namespace}/${config.ca.secret}`, config.ca.key);
    const hash = this.#hash(options);
    if (cached !== undefined && cached.hash !== hash) this.#closeQuietly(cached.client);
    const client =
      cached?.hash === hash
        ? cached.client
        : this.#options.createClient(options, { namespace, name: manager.metadata.name });
    const url = normalizeManagerUrl(config.url) ?? config.url;
    const key = `${name}#${hash}`;
    const verifiedBy = options.ca === undefined ? "system" : `ca ${this.#digest([options.ca])}`;
    const sharedKey = insecureTransport(options) === undefined ? `${url} verified by ${verifiedBy}` : key;
    const connection = { api: client, key, sharedKey, url };
    this.#entries.set(name, {
      hash,
      client,
      connection,
      spec: manager.spec,
      credentials: secrets.credentials,
      ca: secrets.ca,
    });
    return connection;
  }

  /** names the client's settings without revealing them */
  #hash(options: ManagerClientOptions): string {
    return this.#digest([
      options.url,
      options.auth,
      options.username,
      options.password,
      options.ca ?? null,
      options.insecureSkipVerify,
      options.maxConcurrentRequests,
      options.requestsPerSecond,
      options.requestTimeoutMs,
    ]);
  }

  #digest(values: unknown[]): string {
    return createHmac("sha256", this.#hmacKey).update(JSON.stringify(values)).digest("hex").slice(0, 16);
  }

  /**
   * The client built last for this NSXManager object, whatever its Secrets say now: what a
   * pending restore uses when the Secret went first (a namespace deleted at once). Undefined
   * when none was built since the operator started.
   */
  held(namespace: string, name: string): ManagerConnection | undefined {
    return this.#entries.get(`${namespace}/${name}`)?.connection;
  }

  /** The NSXManager object is gone: close its client. */
  async forget(namespace: string, name: string): Promise<void> {
    const key = `${namespace}/${name}`;
    const entry = this.#entries.get(key);
    this.#entries.delete(key);
    await entry?.client.close();
  }

  /** Close every client once its requests in flight are done (the end of a one-shot run). */
  async close(): Promise<void> {
    await Promise.all(this.#drop().map((c) => c.close()));
  }

  /**
   * Abort every request in flight and drop every client (the operator's shutdown): whatever a
   * manager does, nothing waits for it, and nothing reaches it later.
   */
  async destroy(): Promise<void> {
    await Promise.all(this.#drop().map((c) => c.destroy()));
  }

  #drop(): ClosableManagerApi[] {
    const clients = [...this.#entries.values()].map((e) => e.client);
    this.#entries.clear();
    return clients;
  }

  /** Requests of other reconciles may still run on the old client; they fail and are retried on the new one. */
  #closeQuietly(client: ClosableManagerApi): void {
    client.close().catch((error: unknown) => this.#options.onCloseError?.(error));
  }
}

/** The decoded value of one key (stringData first, as the API server would merge it); never echoed. */
function secretValue(secret: Secret | undefined, name: string, key: string): string {
  if (secret === undefined) {
    throw new ReconcileError({ reason: "ManagerNotReady", message: `Secret ${name} not found` });
  }
  const plain = secret.stringData?.[key];
  const encoded = secret.data?.[key];
  const value =
    plain ?? (encoded === undefined ? undefined : Buffer.from(encoded, "base64").toString("utf8"));
  if (value === undefined || value === "") {
    throw new ReconcileError({
      reason: "ManagerNotReady",
      message: `Secret ${name} has no key ${JSON.stringify(key)} (or it is empty)`,
    });
  }
  return value;
}
