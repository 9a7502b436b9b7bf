/**
 * Keeps credentials out of every text the client hands on: error messages, every field of the
 * manager's error documents, answers quoted in errors. A manager or a proxy may echo the request
 * back, Authorization header included, in any element. Two nets:
 * - by value: the password, the Basic credentials and every auth token this client has sent,
 *   also as XML, JSON and URL encoding would write them;
 * - by shape: `Basic <base64 that decodes to text>`, `AUTHTOKEN <token>`, `Bearer <token>` and
 *   JWTs, which also catches what a proxy cut short (a value no longer whole is no longer equal
 *   to the secret) and a token the client has already dropped.
 */

const MARK = "[REDACTED]";
/** shorter secrets are left alone: replacing every "ab" would garble messages and hide nothing */
const MIN_SECRET_CHARS = 3;

/** `Basic` and a base64 word: the credentials of an Authorization header, whole or cut */
const BASIC = /\b(Basic\s+)([A-Za-z0-9+/]{4,}={0,2})/gi;
/** the schemes that carry a token, and a token-like word after them */
const TOKEN_SCHEMES = /\b((?:AUTHTOKEN|Bearer)\s+)([A-Za-z0-9._~+/=-]{8,})/gi;
/** a JWT, whole or cut: the base64url of a JSON object always starts with `eyJ` */
const JWT = /\beyJ[A-Za-z0-9_-]{6,}(?:\.[A-Za-z0-9_-]*){0,2}/g;

/** Every form in which `secret` may appear in text a server wrote back. */
function encodings(secret: string): string[] {
  const xml = secret
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
  return [...new Set([secret, xml, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])];
}

/**
 * Whether a base64 word decodes to text, as credentials do (`user:password` in UTF-8): words such
 * as "authentication" or a realm decode to bytes that are not text and are left as they are. A
 * word cut short may end inside a character: the last decoded character does not count.
 */
function decodesToText(word: string): boolean {
  const text = Buffer.from(word, "base64").toString("utf8");
  // eslint-disable-next-line no-control-regex -- control characters are what text does not hold
  return text.length > 0 && !/[\u0000-\u0008\u000e-\u001f\u007f\ufffd]/.test(text.slice(0, -1));
}

/** Replaces each secret (in each encoding) and anything shaped like a credential with `[REDACTED]`. */
export function createRedactor(secrets: () => readonly string[]): (text: string) => string {
  return (text) => {
    const values = secrets()
      .filter((s) => s.length >= MIN_SECRET_CHARS)
      .flatMap(encodings)
      // the longest first: a secret inside another is not left half-replaced
      .sort((a, b) => b.length - a.length);
    let out = text;
    for (const value of values) out = out.split(value).join(MARK);
    return out
      .replace(BASIC, (whole, scheme: string, word: string) =>
        decodesToText(word) ? `${scheme}${MARK}` : whole,
      )
      .replace(TOKEN_SCHEMES, (_whole, scheme: string) => `${scheme}${MARK}`)
      .replace(JWT, MARK);
  };
}
