/**
 * docs/client.md's "Using the client from code" runs as written, through the client's entry point
 * (src/nsx/index.ts): the example is copied to a temporary file with its `./src/` imports pointed
 * at this checkout, run by this Node.js, and its output compared with what its comments say.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "nsxv-client-example-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("docs/client.md's example", () => {
  it("runs against the demo's simulated manager and prints what its comments say", async () => {
    const doc = await readFile(join(ROOT, "docs/client.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Using the client from code"));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code, "a ts block after the heading").toBeDefined();
    expect(code).toContain(`from "./src/nsx/index.ts"`);
    const file = join(dir, "example.ts");
    await writeFile(file, (code ?? "").replaceAll(`"./src/`, `"${pathToFileURL(join(ROOT, "src")).href}/`));
    const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: ROOT, timeout: 30_000 });
    // each pool (id, name, its addresses), then the 404 the last call ends with
    for (const pool of [
      "ipaddresspool-1 controller-pool",
      "ipaddresspool-2 vtep-v6",
      "ipaddresspool-3 dmz-pool",
    ])
      expect(stdout).toContain(pool);
    expect(stdout).toMatch(/\n404 202 The requested object : edge-99 could not be found\..*\n$/);
  });
});
