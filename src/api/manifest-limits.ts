/**
 * What a manifest file may cost, and how deep a manifest may nest: the bounds both readers of
 * YAML keep (block-yaml.ts, and the yaml library behind yaml-guard.ts). A module of its own so
 * that a pass whose manifests the block reader reads never loads the library.
 */

export const MANIFEST_LIMITS = Object.freeze({
  /** bytes of one file: four times a Kubernetes object's largest size */
  maxFileBytes: 4 * 1024 * 1024,
  /**
   * scalars, indicators, brackets, anchors and tags of one file: every node the parser builds
   * takes one (a `key: value` line three). 200 000 holds a 60 000-key mapping or an import of
   * 4 000 edges; the parser's cost at the cap is measured in bench/RESULTS.md.
   */
  maxTokens: 200_000,
  /**
   * flow collections open at once, plus `-` and `?` indicators on one line: the nesting a text
   * can build without a line per level (deeper block nesting needs quadratic indentation, so
   * the file size bounds it). Twice the 64 levels a document may have once read.
   */
  maxNesting: 128,
});

// numbers, not the defaults' literal types: a caller (a test) may pass others
export type ManifestLimits = { readonly [K in keyof typeof MANIFEST_LIMITS]: number };

/** How deep a manifest may nest: far beyond any real object, far below what could exhaust the stack. */
export const MAX_MANIFEST_DEPTH = 64;

/** An exception's message, with the engine's stack overflow said as what it means for a manifest. */
export function problemOf(error: unknown): string {
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return `nested too deeply to read (more than ${MAX_MANIFEST_DEPTH} levels are never needed)`;
  }
  return error instanceof Error ? error.message : String(error);
}
