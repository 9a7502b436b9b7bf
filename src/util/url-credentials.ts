/**
 * A URL that carries credentials (`https://user:password@host`) is refused everywhere, and the
 * refusal must not print what it refuses: every message that quotes such a value quotes it
 * through `hideUrlCredentials`.
 */

/** an optional scheme, then everything up to the last `@` (a password may hold `@`, `/` or spaces) */
const USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)?([^]*)@/;

/**
 * The value with what precedes the host (`user:password@`) replaced by `[REDACTED]`, when it has
 * a scheme and an `@`, or `name:secret@` without a scheme (a URL written without `https://`).
 * Anything else (`ops@example.org`) is returned as it is.
 */
export function hideUrlCredentials(value: string): string {
  const match = USERINFO.exec(value);
  if (match === null || (match[1] === undefined && !(match[2] ?? "").includes(":"))) return value;
  return `${match[1] ?? ""}[REDACTED]@${value.slice(match[0].length)}`;
}
