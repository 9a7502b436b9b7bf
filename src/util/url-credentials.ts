/**
 * A URL that carries credentials (`https://user:password@host`), or a query string or fragment
 * (where a token or a password is often passed: `?token=...`), is refused everywhere, and the
 * refusal must not print what it refuses: every message that quotes such a value quotes it through
 * `hideUrlCredentials`.
 */

/** an optional scheme, then everything up to the last `@` (a password may hold `@`, `/` or spaces) */
const USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)?([^]*)@/;

/**
 * The value with what precedes the host (`user:password@`) replaced by `[REDACTED]`, when it has
 * a scheme and an `@`, or `name:secret@` without a scheme (a URL written without `https://`), and
 * everything after the first `?` or `#` replaced by `[REDACTED]`. Anything else (`ops@example.org`)
 * is returned as it is.
 */
export function hideUrlCredentials(value: string): string {
  const query = value.search(/[?#]/);
  const kept = query === -1 ? value : `${value.slice(0, query + 1)}[REDACTED]`;
  const match = USERINFO.exec(query === -1 ? value : value.slice(0, query));
  if (match === null || (match[1] === undefined && !(match[2] ?? "").includes(":"))) return kept;
  return `${match[1] ?? ""}[REDACTED]@${kept.slice(match[0].length)}`;
}

/** Whether the text has a query string or a fragment: `?` or `#` anywhere (refused, never quoted). */
export function hasQueryOrFragment(value: string): boolean {
  return /[?#]/.test(value);
}
