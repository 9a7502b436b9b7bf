/**
 * Keeps credentials out of every text the client hands on: error messages, every field of the
 * manager's error documents, answers quoted in errors. A manager or a proxy may echo the request
 * back, Authorization header included, in any element, and may transform what it echoes. Two nets:
 * - by value: the password, `username:password`, the Basic credentials and every auth token this
 *   client has sent, found in the text read as a reader would (entities, numeric character
 *   references, JSON escapes and ASCII percent-escapes decoded, white space dropped, case
 *   ignored), as themselves and as base64 (at any alignment, so also of the password alone or cut
 *   out of a longer text) or hex; an encoded form is also found in pieces of MIN_FRAGMENT_CHARS or
 *   more (a base64 split in two, or cut short);
 * - by shape: `Basic <base64 that decodes to text>`, `AUTHTOKEN <token>`, `Bearer <token>` and
 *   JWTs, which also catches what a proxy cut short and a token the client has already dropped.
 */

const MARK = "[REDACTED]";
/** shorter secrets are left alone: replacing every "ab" would garble messages and hide nothing */
const MIN_SECRET_CHARS = 3;
/**
 * An encoded form (base64, hex) is searched for only from this length, and found in any piece of
 * this length: shorter runs of base64 or hex digits occur in ordinary text (ids, UUIDs) by chance.
 */
const MIN_FRAGMENT_CHARS = 10;

/** `Basic` and a base64 word: the credentials of an Authorization header, whole or cut */
const BASIC = /\b(Basic\s+)([A-Za-z0-9+/]{4,}={0,2})/gi;
/** the schemes that carry a token, and a token-like word after them */
const TOKEN_SCHEMES = /\b((?:AUTHTOKEN|Bearer)\s+)([A-Za-z0-9._~+/=-]{8,})/gi;
/** a JWT, whole or cut: the base64url of a JSON object always starts with `eyJ` */
const JWT = /\beyJ[A-Za-z0-9_-]{6,}(?:\.[A-Za-z0-9_-]*){0,2}/g;

/** what a reader of XML, JSON or a URL takes for one character, at a `&`, `\` or `%` */
const XML_REFERENCE = /&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));/y;
const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(["\\/])|([bfnrt]))/y;
const PERCENT_ESCAPE = /%([0-9a-fA-F]{2})/y;
const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
/** where reading differs from copying: an escape may start, or white space is dropped */
const SPECIAL = /[&\\%]|\s+/g;
const WHITE_SPACE = /^\s$/;

/**
 * The text as a reader takes it, for searching: each escape decoded to its character, white
 * space dropped, letters in lower case. `runs` maps it back, in order: from `at` on, `text`
 * came from the original's `origin` onwards, one character per character, or (with `end`) every
 * character of it up to the next run came from the one escape `origin`..`end`.
 */
interface ReadText {
  text: string;
  runs: { at: number; origin: number; end?: number }[];
}

/** per character that may start an escape: its pattern, and what a match stands for (undefined: read as written) */
const ESCAPES: Record<string, { pattern: RegExp; decode: (m: RegExpExecArray) => string | undefined }> = {
  "&": {
    pattern: XML_REFERENCE,
    decode: (m) => {
      if (m[3] !== undefined) return NAMED[m[3]];
      const code = parseInt(m[1] ?? m[2] ?? "", m[1] !== undefined ? 10 : 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
    },
  },
  "\\": {
    pattern: JSON_ESCAPE,
    decode: (m) => (m[1] !== undefined ? String.fromCharCode(parseInt(m[1], 16)) : (m[2] ?? " ")),
  },
  "%": {
    pattern: PERCENT_ESCAPE,
    // a byte above ASCII is part of a UTF-8 sequence: it stays as written, on both sides
    decode: (m) => {
      const byte = parseInt(m[1] ?? "", 16);
      return byte < 0x80 ? String.fromCharCode(byte) : undefined;
    },
  },
};

/** the characters an escape at `i` stands for, and where the escape ends; undefined: none there */
function escapeAt(text: string, i: number): { chars: string; end: number } | undefined {
  const escape = ESCAPES[text[i] ?? ""];
  if (escape === undefined) return undefined;
  escape.pattern.lastIndex = i;
  const m = escape.pattern.exec(text);
  const chars = m === null ? undefined : escape.decode(m);
  return m === null || chars === undefined ? undefined : { chars, end: i + m[0].length };
}

/** lower case where that keeps the length (it does for nearly every character) */
function lower(text: string): string {
  const lowered = text.toLowerCase();
  return lowered.length === text.length
    ? lowered
    : [...text].map((c) => (c.toLowerCase().length === c.length ? c.toLowerCase() : c)).join("");
}

function readText(text: string): ReadText {
  let out = "";
  const runs: ReadText["runs"] = [];
  const copy = (from: number, to: number): void => {
    if (to <= from) return;
    runs.push({ at: out.length, origin: from });
    out += lower(text.slice(from, to));
  };
  let copied = 0;
  SPECIAL.lastIndex = 0;
  for (let m = SPECIAL.exec(text); m !== null; m = SPECIAL.exec(text)) {
    copy(copied, m.index);
    copied = m.index + m[0].length;
    if (WHITE_SPACE.test(m[0].charAt(0))) continue;
    const escape = escapeAt(text, m.index);
    // a `&`, `\` or `%` that starts no escape is text
    if (escape === undefined) copy(m.index, copied);
    else {
      const chars = escape.chars.replace(/\s+/g, "");
      if (chars !== "") runs.push({ at: out.length, origin: m.index, end: escape.end });
      out += lower(chars);
      copied = SPECIAL.lastIndex = escape.end;
    }
  }
  copy(copied, text.length);
  return { text: out, runs };
}

/** the span of the original text that read characters start..end-1 came from */
function originalSpan(read: ReadText, start: number, end: number): [number, number] {
  const { runs } = read;
  const runOf = (at: number): ReadText["runs"][number] => {
    let [lo, hi] = [0, runs.length - 1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((runs[mid] as ReadText["runs"][number]).at <= at) lo = mid;
      else hi = mid - 1;
    }
    return runs[lo] as ReadText["runs"][number];
  };
  const first = runOf(start);
  const last = runOf(end - 1);
  const from = first.end === undefined ? first.origin + (start - first.at) : first.origin;
  const to = last.end ?? last.origin + (end - 1 - last.at) + 1;
  return [from, to];
}

/**
 * `bytes` in base64 (both alphabets) as it appears inside the base64 of any longer text: at each
 * of the three alignments, without the digits that depend on the bytes around it.
 */
function base64Forms(bytes: Buffer): string[] {
  const forms: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const total = offset + bytes.length;
    const lead = [0, 2, 3][offset] as number;
    // the last group's digit that mixes in the bytes after, and the padding
    const trail = total % 3 === 0 ? 0 : 4 - (total % 3);
    const core = encoded.slice(lead, encoded.length - trail);
    forms.push(core, core.replaceAll("+", "-").replaceAll("/", "_"));
  }
  // the base64 of the secret alone, whole
  const whole = bytes.toString("base64").replace(/=+$/, "");
  forms.push(whole, whole.replaceAll("+", "-").replaceAll("/", "_"));
  return forms;
}

/** What to search for: whole forms (the secret as read, URL-encoded) and pieces of encoded ones. */
interface Needles {
  whole: string[];
  /** every piece of MIN_FRAGMENT_CHARS of the encoded forms */
  pieces: Set<string>;
  /** the first three characters of every piece, as tripleAt computes them: most places of a text start none */
  starts: Set<number>;
}

/** the character codes at `at`, `at + 1` and `at + 2` as one number; -1 when one is not ASCII */
function tripleAt(text: string, at: number): number {
  const [a, b, c] = [text.charCodeAt(at), text.charCodeAt(at + 1), text.charCodeAt(at + 2)];
  return a < 128 && b < 128 && c < 128 ? (a << 14) | (b << 7) | c : -1;
}

function needlesOf(secrets: readonly string[]): Needles {
  const whole = new Set<string>();
  const pieces = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_CHARS) continue;
    for (const form of [secret, encodeURIComponent(secret)]) {
      const read = readText(form).text;
      if (read.length > 0) whole.add(read);
    }
    const bytes = Buffer.from(secret, "utf8");
    for (const form of [...base64Forms(bytes), bytes.toString("hex")]) {
      const read = form.toLowerCase();
      for (let i = 0; i + MIN_FRAGMENT_CHARS <= read.length; i++)
        pieces.add(read.slice(i, i + MIN_FRAGMENT_CHARS));
    }
  }
  const starts = new Set([...pieces].map((piece) => tripleAt(piece, 0)));
  return { whole: [...whole], pieces, starts };
}

/** a digit of a base64 (either alphabet) or hex word; `=` pads one at its end */
const ENCODED_DIGIT = /[A-Za-z0-9+/_-]/;
const ENCODED_END = /[A-Za-z0-9+/_=-]/;

/**
 * The spans of `text` (original positions, merged) where a needle was found in its reading. A
 * piece of an encoded form stands for the whole word it is in: the rest of that word (the digits
 * that mix in the characters around the secret, the padding) goes with it.
 */
function spansOf(text: string, needles: Needles): [number, number][] {
  const read = readText(text);
  const hits: [number, number][] = [];
  const span = (start: number, end: number, word: boolean): void => {
    let [from, to] = originalSpan(read, start, end);
    if (word) {
      while (from > 0 && ENCODED_DIGIT.test(text[from - 1] as string)) from--;
      while (to < text.length && ENCODED_END.test(text[to] as string)) to++;
    }
    hits.push([from, to]);
  };
  for (const needle of needles.whole) {
    for (let at = read.text.indexOf(needle); at !== -1; at = read.text.indexOf(needle, at + 1))
      span(at, at + needle.length, false);
  }
  if (needles.pieces.size > 0) {
    for (let at = 0; at + MIN_FRAGMENT_CHARS <= read.text.length; at++) {
      if (
        needles.starts.has(tripleAt(read.text, at)) &&
        needles.pieces.has(read.text.slice(at, at + MIN_FRAGMENT_CHARS))
      )
        span(at, at + MIN_FRAGMENT_CHARS, true);
    }
  }
  hits.sort((a, b) => a[0] - b[0]);
  const spans: [number, number][] = [];
  for (const [from, to] of hits) {
    const last = spans.at(-1);
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else spans.push([from, to]);
  }
  return spans;
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

/** Replaces each secret (in each form it can be recognised in) and anything shaped like a credential with `[REDACTED]`. */
export function createRedactor(secrets: () => readonly string[]): (text: string) => string {
  let cached: { key: string; needles: Needles } | undefined;
  return (text) => {
    const current = secrets();
    const key = JSON.stringify(current);
    if (cached?.key !== key) cached = { key, needles: needlesOf(current) };
    let out = "";
    let last = 0;
    for (const [from, to] of spansOf(text, cached.needles)) {
      out += text.slice(last, from) + MARK;
      last = to;
    }
    out += text.slice(last);
    return out
      .replace(BASIC, (whole, scheme: string, word: string) =>
        decodesToText(word) ? `${scheme}${MARK}` : whole,
      )
      .replace(TOKEN_SCHEMES, (_whole, scheme: string) => `${scheme}${MARK}`)
      .replace(JWT, MARK);
  };
}
