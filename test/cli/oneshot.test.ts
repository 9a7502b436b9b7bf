import { afterAll, describe, expect, it } from "vitest";
import { runOneShot } from "../../src/cli/oneshot.ts";
import type { ClosableManagerApi } from "../../src/reconcile/index.ts";
import { ManifestDirs } from "./helpers.ts";

const dirs = new ManifestDirs();
afterAll(() => dirs.cleanup());

const manager = (name: string, namespace: string) => ({
  apiVersion: "nsxv.io/v1alpha1",
  kind: "NSXManager",
  metadata: { name, namespace },
  spec: { url: "https://nsx.example", credentialsSecretRef: { name: "nsx-credentials" } },
});
const edgeTenant = (name: string, namespace: string, edgeId: string) => ({
  apiVersion: "nsxv.io/v1alpha1",
  kind: "EdgeTenant",
  metadata: { name, namespace },
  spec: { managerRef: { name: "nsx" }, edgeId, tenant: "t1" },
});

/** A manager whose edge list shows every edge in sync: a plan makes no other call. */
const inSync: ClosableManagerApi = {
  listEdges: (options = {}) => {
    const edges = ["edge-1", "edge-2", "edge-3", "edge-4"].map((id) => ({ id, tenant: "t1", revision: 1 }));
    return Promise.resolve(options.keep === undefined ? edges : edges.map(options.keep));
  },
  getEdge: () => Promise.reject(new Error("no edge read expected")),
  putEdge: () => Promise.reject(new Error("no write expected")),
  listPools: () => Promise.resolve([]),
  listAllocations: () => Promise.resolve([]),
  releaseAddress: () => Promise.reject(new Error("no release expected")),
  close: () => Promise.resolve(),
  destroy: () => Promise.resolve(),
};

describe("runOneShot", () => {
  it("reports NSXManagers first, then each kind by namespace/name, whatever the files' order", async () => {
    const path = dirs.write({
      "all.yaml": [
        edgeTenant("b", "team-b", "edge-4"),
        edgeTenant("b", "team-a", "edge-2"),
        manager("nsx", "team-b"),
        edgeTenant("a", "team-b", "edge-3"),
        edgeTenant("a", "team-a", "edge-1"),
        manager("nsx", "team-a"),
      ],
    });
    const result = await runOneShot({
      paths: [path],
      mode: "plan",
      env: { NSX_USERNAME: "u", NSX_PASSWORD: "p" },
      createClient: () => inSync,
    });
    if (result.type !== "ran") throw new Error(`the pass did not run: ${JSON.stringify(result)}`);
    expect(
      result.objects.map(({ object: o }) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`),
    ).toEqual([
      "NSXManager team-a/nsx",
      "NSXManager team-b/nsx",
      "EdgeTenant team-a/a",
      "EdgeTenant team-a/b",
      "EdgeTenant team-b/a",
      "EdgeTenant team-b/b",
    ]);
    expect(result.objects.map(({ report }) => report.outcome.type)).toEqual(Array(6).fill("done"));
  });
});
