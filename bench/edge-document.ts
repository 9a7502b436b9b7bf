/**
 * Edge documents: the time to parse, set the tenant of, and serialize a generated edge of about
 * 1 MB and 5 MB (the simulator's generator, one line per element as managers send them), each
 * step timed on its own and the whole round trip, median and p95 of N runs after warm-up.
 */
import { EdgeDocument } from "../src/nsx/edge-document.ts";
import { generateEdgeXml } from "../src/simulator/index.ts";
import { ResultBuilder, type BenchResult } from "./lib/result.ts";
import { repeat, summarize, type Summary } from "./lib/stats.ts";

export interface EdgeDocumentBenchOptions {
  sizesBytes: readonly number[];
  warmup: number;
  runs: number;
  /** per size and step */
  budgetMs: number;
}

export const EDGE_DOCUMENT_FULL: EdgeDocumentBenchOptions = {
  sizesBytes: [1 << 20, 5 << 20],
  warmup: 5,
  runs: 20,
  budgetMs: 20_000,
};

export const EDGE_DOCUMENT_QUICK: EdgeDocumentBenchOptions = {
  sizesBytes: [1 << 20],
  warmup: 2,
  runs: 5,
  budgetMs: 5_000,
};

export async function benchEdgeDocument(options: EdgeDocumentBenchOptions): Promise<BenchResult> {
  const result = new ResultBuilder("edge-document");
  for (const targetBytes of options.sizesBytes) {
    const xml = generateEdgeXml({ edgeNumber: 7, tenant: "tenant-a", targetBytes, pretty: false });
    const label = sizeLabel(xml.length);
    const none = (): undefined => undefined;
    const parsed = (): EdgeDocument => EdgeDocument.parse(xml);
    const changed = EdgeDocument.parse(xml).setTenant("tenant-b");
    const timings: Record<string, Summary> = {
      parse: summarize(repeat(options, () => EdgeDocument.parse(xml), none)),
      setTenant: summarize(repeat(options, (doc: EdgeDocument) => doc.setTenant("tenant-b"), parsed)),
      serialize: summarize(repeat(options, () => changed.serialize(), none)),
      roundTrip: summarize(
        repeat(options, () => EdgeDocument.parse(xml).setTenant("tenant-b").serialize(), none),
      ),
    };
    for (const [step, s] of Object.entries(timings)) {
      result.add({ case: label, metric: `${step} median`, value: s.medianMs, unit: "ms" });
      result.add({ case: label, metric: `${step} p95`, value: s.p95Ms, unit: "ms" });
    }
    result.detail(label, { bytes: xml.length, ...timings });
    // yield between sizes so that a caller's timers (progress, time limits) can run
    await new Promise((resolve) => setImmediate(resolve));
  }
  result.note(
    "Each step timed alone (setTenant on a freshly parsed document, parsed untimed); roundTrip = " +
      "parse + setTenant + serialize of the text as a GET returns it. One process, no I/O.",
  );
  return result.build();
}

function sizeLabel(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 2 : 0)} MB`;
}
