/**
 * Edge documents: the time to parse, set the tenant of, and serialize a generated edge of about
 * 1 MB and 5 MB (the simulator's generator, one line per element as managers send them), each
 * step timed on its own and the whole round trip, median and p95 of N runs after warm-up. And
 * the steady state of a 25 KB edge: the read of a converged pass (a scan that keeps only
 * `<edge>`'s own fields) against building the whole tree, which only a write needs.
 */
import { EdgeDocument } from "../src/nsx/edge-document.ts";
import { parseXmlDocument } from "../src/nsx/xml.ts";
import { generateEdgeXml } from "../src/simulator/index.ts";
import { atMost, ResultBuilder, type BenchResult } from "./lib/result.ts";
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
    // setTenant timed on a document whose tree is built (a write builds it once, untimed here)
    const parsed = (): EdgeDocument => EdgeDocument.parse(xml).setTenant("tenant-a");
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
  steadyState(result, options);
  result.note(
    "Each step timed alone (setTenant on a freshly parsed document, parsed untimed); roundTrip = " +
      "parse + setTenant + serialize of the text as a GET returns it. One process, no I/O.",
  );
  return result.build();
}

/** a 25 KB edge read many times, as a converged pass reads it: scan, and the whole tree for comparison */
function steadyState(result: ResultBuilder, options: EdgeDocumentBenchOptions): void {
  const xml = generateEdgeXml({ edgeNumber: 7, tenant: "tenant-a", targetBytes: 25_000, pretty: false });
  const label = `${(xml.length / 1024).toFixed(0)} KB x1000`;
  const none = (): undefined => undefined;
  const loops = { ...options, runs: options.runs * 2 };
  const scan = summarize(
    repeat(
      loops,
      () => {
        for (let i = 0; i < 1000; i++)
          if (EdgeDocument.parse(xml).tenant === undefined) throw new Error("no tenant");
      },
      none,
    ),
  );
  const tree = summarize(
    repeat(
      loops,
      () => {
        for (let i = 0; i < 1000; i++) parseXmlDocument(xml, "edge document");
      },
      none,
    ),
  );
  result.add({ case: label, metric: "scan per edge (median)", value: scan.medianMs, unit: "µs" });
  result.add({ case: label, metric: "whole tree per edge (median)", value: tree.medianMs, unit: "µs" });
  const ratio = scan.medianMs / tree.medianMs;
  result.add({
    case: label,
    metric: "scan / whole tree",
    value: ratio,
    unit: "ratio",
    target: atMost(ratio, 0.25),
  });
}

function sizeLabel(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 2 : 0)} MB`;
}
