/** Every example directory loads without a manifest error, and the README describes each one. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadManifests } from "../../src/api/manifests.ts";
import { loadStateFile } from "../../src/simulator/index.ts";

const EXAMPLES = "examples";
const manifestDirs = readdirSync(EXAMPLES)
  .filter((name) => statSync(join(EXAMPLES, name)).isDirectory())
  .map((name) => (name === "demo" ? join(EXAMPLES, "demo", "manifests") : join(EXAMPLES, name)));

describe("examples", () => {
  it("has the demo and the common setups", () => {
    expect(manifestDirs.sort()).toEqual(
      ["demo/manifests", "ipv6-pool-by-name", "observe-audit", "several-pools", "single-manager"].map((d) =>
        join(EXAMPLES, d),
      ),
    );
  });

  it.each(manifestDirs)("%s passes loadManifests, with a manager and its Secret", async (dir) => {
    const set = await loadManifests([dir]);
    expect(set.errors.map((e) => e.message)).toEqual([]);
    expect(set.skipped).toEqual([]);
    const managers = set.objects.filter((o) => o.object.kind === "NSXManager");
    expect(managers).toHaveLength(1);
    expect(set.objects.length).toBeGreaterThan(1);
    expect(set.secrets.length).toBeGreaterThan(0);
  });

  it("the demo's simulator state loads", async () => {
    const state = await loadStateFile(join(EXAMPLES, "demo", "simulator-state.yaml"));
    expect(state.pools?.map((p) => p.id)).toEqual(["ipaddresspool-1", "ipaddresspool-2", "ipaddresspool-3"]);
  });

  it("the README names every example directory", () => {
    const readme = readFileSync(join(EXAMPLES, "README.md"), "utf8");
    for (const name of readdirSync(EXAMPLES).filter((n) => statSync(join(EXAMPLES, n)).isDirectory())) {
      expect(readme).toContain(`[\`${name}/\`](${name}/)`);
    }
  });
});
