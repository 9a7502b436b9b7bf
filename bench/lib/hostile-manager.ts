/**
 * A manager whose edge list is hostile (or broken): every page is full of edges never listed
 * before, each summary padded to `summaryBytes`, under a `totalCount` no manager reaches. It
 * answers the pools of the global scope (none) and each edge's document (a small generated edge
 * with `tenant`), so that a check passes and an EdgeTenant can read its edge one by one; anything
 * else is a 404. What `bench/hostile-edge-list.ts` and test/bad-input/hostile-edge-list.test.ts
 * point the operator and the CLI at.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { generateEdgeXml } from "../../src/simulator/index.ts";

export interface HostileManagerOptions {
  /** what each page says the list holds; default 1 000 000 000 */
  totalCount?: number;
  /** each summary about this large, its name padded; default 1200 */
  summaryBytes?: number;
  /** the tenant of every edge's document; default "tenant-a" */
  tenant?: string;
}

export interface HostileManager {
  url: string;
  /** the edge list pages asked for so far */
  pages(): number;
  close(): Promise<void>;
}

const DECL = '<?xml version="1.0" encoding="UTF-8"?>';

export async function startHostileManager(options: HostileManagerOptions = {}): Promise<HostileManager> {
  const { totalCount = 1_000_000_000, summaryBytes = 1200, tenant = "tenant-a" } = options;
  let pages = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://manager");
    const edge = /^\/api\/4\.0\/edges\/(edge-(\d+))$/.exec(url.pathname);
    let body: string | undefined;
    if (url.pathname === "/api/4.0/edges") {
      pages++;
      const start = Number(url.searchParams.get("startIndex") ?? 0);
      const size = Number(url.searchParams.get("pageSize") ?? 256);
      body = page(start, size, totalCount, summaryBytes);
    } else if (edge !== null) {
      body = generateEdgeXml({ edgeNumber: Number(edge[2]), tenant, firewallRules: 1 });
    } else if (url.pathname === "/api/2.0/services/ipam/pools/scope/globalroot-0") {
      body = `${DECL}<ipamAddressPools/>`;
    }
    res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/xml" });
    res.end(body ?? "");
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pages: () => pages,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** `size` summaries from `start`, each a new edge, padded to about `summaryBytes`. */
function page(start: number, size: number, totalCount: number, summaryBytes: number): string {
  const summaries: string[] = [];
  for (let n = start + 1; n <= start + size; n++) {
    const head = `<edgeSummary><objectId>edge-${n}</objectId><revision>1</revision><tenantId>tenant-a</tenantId><name>`;
    const tail = `</name></edgeSummary>`;
    const pad = Math.max(1, summaryBytes - head.length - tail.length - 12);
    summaries.push(`${head}esg-${n}-${"x".repeat(pad)}${tail}`);
  }
  return (
    `${DECL}<pagedEdgeList><edgePage><pagingInfo><pageSize>${size}</pageSize><startIndex>${start}</startIndex>` +
    `<totalCount>${totalCount}</totalCount><sortOrderAscending>true</sortOrderAscending><sortBy>id</sortBy>` +
    `</pagingInfo>${summaries.join("")}</edgePage></pagedEdgeList>`
  );
}
