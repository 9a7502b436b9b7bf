/**
 * Durations as the custom resources write them (`spec.syncInterval`, `spec.release.minStrayAge`):
 * the part of Go's `time.ParseDuration` syntax that makes sense for them, so that the API
 * server's CEL `duration()` and this parser agree on every accepted text.
 *
 * Accepted: one or more `<number><unit>` terms, units `ms`, `s`, `m`, `h`, decimal fractions
 * (`1.5h`, `.5s`), combinations (`1h30m`), and a bare `0`. Rejected, unlike Go: signs (no
 * negative durations), `ns`, `us`/`µs`, spaces, the empty string. Like Go: at most
 * 2^63-1 nanoseconds, fractions below a nanosecond truncated.
 */
import { CodedError } from "../util/errors.ts";

/** Text that is not a duration this operator accepts. */
export class DurationError extends CodedError {
  /** what is wrong, without the text: `durations cannot be negative` */
  readonly reason: string;
  constructor(text: string, reason: string) {
    super("INVALID_DURATION", `${JSON.stringify(text)} is not a duration: ${reason}`);
    this.reason = reason;
  }
}

/** The CRD's pattern for the same syntax; crds/ carries this exact text. */
export const DURATION_PATTERN = "^(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ms|s|m|h))+)$";

const TERM = /([0-9]*)(?:\.([0-9]*))?(ms|s|m|h)/y;
const NS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const MAX_NS = (1n << 63n) - 1n;

/** Go duration text → milliseconds (fractional below 1 ms); throws DurationError. */
export function parseDuration(text: string): number {
  const fail = (reason: string): never => {
    throw new DurationError(text, reason);
  };
  if (typeof text !== "string" || text === "") return fail("it is empty");
  if (text === "0") return 0;
  if (text.startsWith("-")) fail("durations cannot be negative");
  let ns = 0n;
  TERM.lastIndex = 0;
  while (TERM.lastIndex < text.length) {
    const at = TERM.lastIndex;
    const term = nextTermNs(text);
    if (term === undefined) {
      return fail(`expected a number and a unit (ms, s, m, h) at ${JSON.stringify(text.slice(at))}`);
    }
    ns += term;
    if (ns > MAX_NS) fail("longer than the longest Go duration (about 2562047h)");
  }
  return Number(ns) / 1e6;
}

/** The nanoseconds of the term (`1.5h`) at TERM.lastIndex, moving past it; undefined when there is none. */
function nextTermNs(text: string): bigint | undefined {
  const match = TERM.exec(text);
  const [, whole = "", fraction = "", unit = ""] = match ?? [];
  if (match === null || (whole === "" && fraction === "")) return undefined;
  const perUnit = NS_PER_UNIT[unit] ?? 0n;
  const wholeNs = BigInt(whole === "" ? "0" : whole) * perUnit;
  if (fraction === "") return wholeNs;
  return wholeNs + (BigInt(fraction) * perUnit) / 10n ** BigInt(fraction.length);
}

/** Milliseconds → short Go-style text for messages: `1h30m`, `1m30s`, `1.5s`, `250ms`, `0s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0)
    throw new DurationError(`${ms}ms`, "want a finite number of milliseconds >= 0");
  if (ms === 0) return "0s";
  if (ms < 1000) return `${trimDecimals(ms)}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  return [
    hours > 0 ? `${hours}h` : "",
    minutes > 0 ? `${minutes}m` : "",
    seconds > 0 ? `${trimDecimals(seconds)}s` : "",
  ].join("");
}

function trimDecimals(n: number): string {
  return String(Number(n.toFixed(3)));
}
