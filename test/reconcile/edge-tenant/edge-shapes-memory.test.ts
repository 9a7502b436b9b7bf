/**
 * What the operator keeps of each edge it reads, until its next read: the shape of the read
 * (status.edgeShape: its sections and list lengths). V8 keeps a substring of 13 characters or
 * more as a slice of its parent, so a name like `hypervisorAssist` cut from a document kept the
 * whole document alive: 16 000 edges of 10 KB held 160 MB (bench fleet-interval, a heap
 * snapshot). Measured here with the heap after a full collection.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { EdgeDocument } from "../../../src/nsx/edge-document.ts";
import { rememberedShapeOf } from "../../../src/reconcile/edge-tenant/edge-shapes.ts";
import { generateEdgeXml } from "../../../src/simulator/index.ts";
import { detached } from "../../../src/util/detached.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const EDGES = 200;
const EDGE_BYTES = 50_000;

/** heap bytes that `keep` adds, after full collections, per item of `n` */
function retainedPerItem(n: number, keep: () => unknown): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = keep();
  gc();
  const after = process.memoryUsage().heapUsed;
  expect(kept).toBeDefined();
  return (after - before) / n;
}

describe("what is kept of a read does not keep the read", () => {
  it("the remembered shapes of 50 KB edges cost bytes, not the documents", () => {
    const perEdge = retainedPerItem(EDGES, () => {
      const shapes = [];
      for (let i = 1; i <= EDGES; i++) {
        const text = generateEdgeXml({ edgeNumber: i, targetBytes: EDGE_BYTES, pretty: false });
        shapes.push(rememberedShapeOf(`edge-${i}`, EdgeDocument.parse(text)));
      }
      return shapes;
    });
    // kept whole, each edge would cost its 50 000 bytes
    expect(perEdge, "bytes kept per edge").toBeLessThan(5_000);
  });

  it("detached copies are equal to what they copy, non-ASCII included", () => {
    for (const text of ["", "edge-1", "tenant-ä-€-𝄞", "x".repeat(100)]) expect(detached(text)).toBe(text);
  });
});
