/**
 * The oldest Node.js the command runs on. The first modules it loads (undici 8, commander 15) fail
 * on an older one with a TypeError that names neither Node nor a version, so the entry checks
 * first. Imports nothing: the entry loads it before anything else.
 */

/** as package.json's `engines.node` (">=22.19"), undici's own minimum */
export const MINIMUM_NODE = "22.19";

/**
 * One line for a Node.js older than `minimum` ("major.minor"); undefined when `version` (as
 * process.versions.node) is recent enough.
 */
export function nodeTooOld(version: string, minimum: string = MINIMUM_NODE): string | undefined {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const [minMajor = 0, minMinor = 0] = minimum.split(".").map(Number);
  if (major > minMajor || (major === minMajor && minor >= minMinor)) return undefined;
  return `nsxv-operator needs Node >= ${minimum} (this is Node v${version})`;
}
