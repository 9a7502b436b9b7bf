/**
 * A KubeConfig whose calls share connections. client-node 2.0 builds a new undici Agent for
 * every request (KubeConfig.applySecurityAuthentication): each call opened its own TLS connection,
 * parsed the CA and client key again, and kept its socket until the keep-alive ran out. The
 * operator's 2000 first status writes held ~270 MB of native memory that way (bench
 * scale-apiserver). Here the first Agent built for a TLS identity serves every later call with the
 * same one; when the identity changes (a rotated CA or client certificate, another context), the
 * next call gets a new Agent and the old one is closed once its requests finish.
 */
import { createHash } from "node:crypto";
import { bufferFromFileOrString, KubeConfig, type RequestContext } from "@kubernetes/client-node";
import { Agent } from "undici";

export class SharedConnectionsKubeConfig extends KubeConfig {
  #shared: { identity: string; agent: Agent } | undefined;

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const built = context.getDispatcher();
    // proxies keep client-node's own dispatcher; no dispatcher: plain HTTP through fetch's global one
    if (!(built instanceof Agent)) return;
    const identity = this.#tlsIdentity();
    if (this.#shared?.identity === identity) {
      // the Agent client-node just built has no connection yet: dropping it costs nothing
      context.setDispatcher(this.#shared.agent);
      return;
    }
    const previous = this.#shared;
    this.#shared = { identity, agent: built };
    void previous?.agent.close().catch(() => undefined);
  }

  /** What the Agent's TLS options are made of, as the files and data hold it now: a digest. */
  #tlsIdentity(): string {
    const cluster = this.getCurrentCluster();
    const user = this.getCurrentUser();
    const material = [
      bufferFromFileOrString(cluster?.caFile, cluster?.caData),
      bufferFromFileOrString(user?.certFile, user?.certData),
      bufferFromFileOrString(user?.keyFile, user?.keyData),
    ].map((b) => b ?? Buffer.alloc(0));
    // the lengths make the concatenation unambiguous
    const settings = [cluster?.server, cluster?.proxyUrl, cluster?.skipTLSVerify, cluster?.tlsServerName];
    const hash = createHash("sha256").update(JSON.stringify([...settings, ...material.map((b) => b.length)]));
    for (const b of material) hash.update(b);
    return hash.digest("base64");
  }
}
