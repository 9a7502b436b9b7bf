/**
 * Text from elsewhere (a manager's answer) cut to a bound where it lands (a condition, an Event,
 * a status field, what is kept in memory of it), with a marker that says it was cut, how much was
 * left out, and a short hash of the whole: two long texts that differ only past the bound stay
 * different once cut, so a value recorded cut can still be compared with the same value cut again.
 */
import { createHash } from "node:crypto";

/** `...[cut: 40000 more characters, sha256 0a1b2c3d]` is at most this long */
const MARKER_MAX_LENGTH = 64;

/**
 * `text` when it has at most `maxLength` UTF-16 code units, else its head and the marker, at most
 * `maxLength` in all. A cut text is a string of its own: a slice would keep the whole text it
 * was cut from alive (V8 shares the characters), and so would whatever keeps the cut value. The
 * marker is ASCII, so that a Latin-1 text stays one byte a character in memory.
 */
export function boundText(text: string, maxLength: number): string {
  if (text.length <= maxLength) return text;
  let head = Math.max(0, maxLength - MARKER_MAX_LENGTH);
  // never leave half of a surrogate pair
  if (head > 0 && /[\uD800-\uDBFF]/.test(text.charAt(head - 1))) head -= 1;
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 8);
  const cut = `${text.slice(0, head)}...[cut: ${text.length - head} more characters, sha256 ${hash}]`;
  // a JSON round trip makes a new, flat string (and keeps a lone surrogate, as the text had it)
  return JSON.parse(JSON.stringify(cut)) as string;
}

/** `text`, bounded as `boundText` would, unless undefined. */
export function boundOptional(text: string | undefined, maxLength: number): string | undefined {
  return text === undefined ? undefined : boundText(text, maxLength);
}
