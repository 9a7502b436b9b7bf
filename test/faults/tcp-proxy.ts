/**
 * A TCP proxy on loopback that a test can cut: every byte passes through untouched (TLS
 * included), `sever()` destroys every open connection at once (what a dropped watch, a NAT
 * timeout or a load balancer restart does to a client), and while `refuse` is on, new
 * connections are closed as soon as they are accepted.
 */
import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export interface TcpProxy {
  /** 127.0.0.1:<port> of the proxy */
  host: string;
  port: number;
  /** destroys every open connection; returns how many there were */
  sever(): number;
  /** while true, new connections are closed at once */
  refuse: boolean;
  /** connections accepted so far */
  accepted(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let accepted = 0;
  const state = { refuse: false };
  const server = createServer((client) => {
    accepted++;
    if (state.refuse) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: "127.0.0.1",
    port,
    sever() {
      const sockets = [...open];
      for (const socket of sockets) socket.destroy();
      open.clear();
      return sockets.length / 2;
    },
    get refuse() {
      return state.refuse;
    },
    set refuse(value: boolean) {
      state.refuse = value;
    },
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        open.clear();
        server.close(() => resolve());
      }),
  };
}
