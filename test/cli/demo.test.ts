/** The demo (`npm start`) as a test: in-process, exit 0, and it shows the drift found and corrected. */
import { describe, expect, it } from "vitest";
import { runDemo } from "../../src/cli/demo.ts";
import { captureIo, ManifestDirs, edgeTenant, manager, secret } from "./helpers.ts";

describe("demo", () => {
  it("plans, applies, plans again with no changes, checks the simulator, and exits 0", async () => {
    const io = captureIo({ env: { NSX_USERNAME: "someone", NSX_PASSWORD: "else" } });
    const exit = await runDemo(io);
    const out = io.out();
    expect(exit, out + io.err()).toBe(0);
    expect(out).toContain("── 1/3 plan: what differs from the manifests");
    expect(out).toContain("Plan: 2 tenant corrections, 3 releases. 1 object observed only, 1 paused.");
    expect(out).toContain(`~ tenant: "default" → "tenant-blue"  corrected`);
    expect(out).toContain(`- 2001:db8:20::1a0  note "vtep-esx-09 (decommissioned)"  released`);
    expect(out).toContain("Applied: 2 tenant corrections, 3 releases.");
    expect(out).toContain("No changes. 1 object observed only, 1 paused.");
    expect(out).toContain("✓ 2 edge PUTs, none lost content");
    expect(out).toContain("✓ 3 strays released, none of them allowed");
    expect(out, "the paused edge and the Observe pool").toContain(
      "✓ paused and Observe objects left alone: edge edge-3, pool ipaddresspool-3",
    );
    expect(out).not.toContain("✗");
    expect(out).toContain("Demo complete");
    expect(out.split("\n").length, "short enough to read at once").toBeLessThan(70);
  });

  it("exits 1 when a step does not behave as expected", async () => {
    // manifests that the demo state already satisfies: the first plan finds nothing, which is wrong for a demo
    const dirs = new ManifestDirs();
    try {
      const dir = dirs.write({
        "all.yaml": [manager("https://nsx.example.org"), secret(), edgeTenant("web", "edge-1", "default")],
      });
      const io = captureIo();
      expect(await runDemo(io, { manifestsDir: dir })).toBe(1);
      expect(io.out()).toContain("✗ plan exited 0; expected 2");
      expect(io.out()).toContain("Demo FAILED");
    } finally {
      dirs.cleanup();
    }
  });
});
