/**
 * A hostile or broken edge list (a count no manager reaches, pages full of edges never listed
 * before, summaries padded to kilobytes) is bounded in what it costs (maxEdgeListEdges,
 * maxEdgeListBytes): `apply` refuses it after one page, or once its pages pass the byte budget,
 * says so on the NSXManager (EdgeListUnavailable, status.edgeListError), and reads its
 * EdgeTenants' edges one by one instead. Memory is measured in bench/hostile-edge-list.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHostileManager, type HostileManager } from "../../bench/lib/hostile-manager.ts";
import { runOneShot } from "../../src/cli/oneshot.ts";

describe("a hostile edge list, in apply", () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0)) await step();
  });

  async function apply(manager: HostileManager) {
    const dir = mkdtempSync(join(tmpdir(), "nsxv-hostile-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const docs = [
      {
        apiVersion: "nsxv.io/v1alpha1",
        kind: "NSXManager",
        metadata: { name: "nsx" },
        spec: { url: manager.url, credentialsSecretRef: { name: "nsx-credentials" } },
      },
      ...[1, 2].map((n) => ({
        apiVersion: "nsxv.io/v1alpha1",
        kind: "EdgeTenant",
        metadata: { name: `edge-${n}` },
        spec: { managerRef: { name: "nsx" }, edgeId: `edge-${n}`, tenant: "tenant-a" },
      })),
    ];
    writeFileSync(join(dir, "objects.yaml"), docs.map((d) => stringify(d)).join("---\n"));
    const result = await runOneShot({
      paths: [dir],
      mode: "apply",
      env: { NSX_USERNAME: "admin", NSX_PASSWORD: "secret" },
    });
    if (result.type !== "ran") throw new Error(`the manifests did not load: ${JSON.stringify(result)}`);
    return result.objects;
  }

  it.each([
    {
      name: "CountNoManagerReaches",
      reason: "a totalCount past the bound is refused on the first page, before it is followed",
      options: { totalCount: 1_000_000_000 },
      says: "more than the 10000 one list may hold",
      pages: 1,
    },
    {
      name: "PagesPastTheByteBudget",
      reason:
        "a count within the bound whose summaries are kilobytes each is refused once its pages pass 32 MiB",
      options: { totalCount: 9_000, summaryBytes: 4_000 },
      says: "maxEdgeListBytes",
      pages: 9,
    },
  ])("$name: $reason", async ({ options, says, pages }) => {
    const manager = await startHostileManager(options);
    cleanup.push(() => manager.close());
    const [nsx, ...tenants] = await apply(manager);
    const status = nsx?.report.status as {
      edgeListError?: string;
      conditions?: { type: string; status: string; message: string }[];
    };
    expect(status.edgeListError).toContain(says);
    const condition = status.conditions?.find((c) => c.type === "EdgeListUnavailable");
    expect(condition).toMatchObject({ status: "True" });
    expect(condition?.message).toContain("read their edges one by one");
    expect(nsx?.report.events.map((e) => e.reason)).toContain("EdgeListUnavailable");
    expect(manager.pages(), "the list is not followed past its bound").toBeLessThanOrEqual(pages);
    for (const t of tenants) {
      const ready = t.report.status?.conditions?.find((c) => c.type === "Ready");
      expect(ready, `${t.object.metadata.name}: read one by one, in sync`).toMatchObject({
        status: "True",
        reason: "InSync",
      });
    }
  });
});
