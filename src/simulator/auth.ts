/**
 * Authentication as an NSX-v manager does it: HTTP Basic on every call, and from 6.4 a token from
 * POST /api/2.0/services/auth/token sent as `Authorization: AUTHTOKEN <value>`, valid until it
 * expires. Rotating the credentials makes the old ones fail and, unless told otherwise, revokes
 * the tokens issued so far. An optional second account has the Auditor role: it reads, and its
 * writes are answered 403, as a manager answers a user without the rights.
 */
import { randomBytes } from "node:crypto";

export interface Credentials {
  username: string;
  password: string;
}

export const DEFAULT_CREDENTIALS: Readonly<Credentials> = Object.freeze({
  username: "admin",
  password: "default",
});

export interface IssuedToken {
  value: string;
  validToMs: number;
}

/** Tokens kept at most; expired ones are swept when this is reached. */
const MAX_TOKENS = 10_000;

export type Role = "enterpriseAdmin" | "auditor";

export type AuthResult =
  { ok: true; scheme: "basic" | "token"; role: Role; username: string } | { ok: false; reason: string };

interface TokenRecord {
  validToMs: number;
  role: Role;
  username: string;
}

export class AuthStore {
  #credentials: Credentials;
  readonly #auditor: Credentials | undefined;
  readonly #tokens = new Map<string, TokenRecord>();

  constructor(credentials: Credentials, auditor?: Credentials) {
    this.#credentials = { ...credentials };
    this.#auditor = auditor === undefined ? undefined : { ...auditor };
  }

  get username(): string {
    return this.#credentials.username;
  }

  /** Checks an Authorization header; `allowBasic` false refuses Basic (basic auth disabled). */
  check(header: string | undefined, options: { allowBasic: boolean; nowMs: number }): AuthResult {
    if (header === undefined || header === "") return { ok: false, reason: "no credentials" };
    const space = header.indexOf(" ");
    const scheme = (space === -1 ? header : header.slice(0, space)).toLowerCase();
    const value = space === -1 ? "" : header.slice(space + 1).trim();
    if (scheme === "basic") {
      if (!options.allowBasic) return { ok: false, reason: "basic authentication is disabled" };
      const decoded = Buffer.from(value, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      const role = colon === -1 ? undefined : this.roleOf(decoded.slice(0, colon), decoded.slice(colon + 1));
      return role === undefined
        ? { ok: false, reason: "bad credentials" }
        : { ok: true, scheme: "basic", role, username: decoded.slice(0, colon) };
    }
    if (scheme === "authtoken") {
      const token = this.#tokens.get(value);
      if (token === undefined) return { ok: false, reason: "unknown token" };
      if (token.validToMs <= options.nowMs) return { ok: false, reason: "token expired" };
      return { ok: true, scheme: "token", role: token.role, username: token.username };
    }
    return { ok: false, reason: `unsupported scheme ${scheme}` };
  }

  /** the role of these credentials (as the Basic header or a request body gives them), undefined when wrong */
  roleOf(username: string, password: string): Role | undefined {
    const matches = (c: Credentials | undefined) => c?.username === username && c.password === password;
    if (matches(this.#credentials)) return "enterpriseAdmin";
    return matches(this.#auditor) ? "auditor" : undefined;
  }

  /** A JWT-shaped opaque value; clients must not look inside, and nothing here reads it back. */
  issue(options: { nowMs: number; ttlMs: number; role: Role }): IssuedToken {
    if (this.#tokens.size >= MAX_TOKENS) this.#sweep(options.nowMs);
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const validToMs = options.nowMs + options.ttlMs;
    const username = (options.role === "auditor" ? this.#auditor : this.#credentials)?.username ?? "";
    const value = [
      part({ alg: "HS256", typ: "JWT" }),
      part({ sub: username, iat: Math.floor(options.nowMs / 1000), exp: Math.floor(validToMs / 1000) }),
      randomBytes(32).toString("base64url"),
    ].join(".");
    this.#tokens.set(value, { validToMs, role: options.role, username });
    return { value, validToMs };
  }

  /** Revokes the tokens issued to a user (6.4.1 token invalidation); how many there were. */
  invalidate(username: string): number {
    let revoked = 0;
    for (const [value, token] of this.#tokens) {
      if (token.username !== username) continue;
      this.#tokens.delete(value);
      revoked++;
    }
    return revoked;
  }

  rotate(credentials: Credentials, options: { keepTokens: boolean }): void {
    this.#credentials = { ...credentials };
    if (!options.keepTokens) this.#tokens.clear();
  }

  #sweep(nowMs: number): void {
    for (const [value, token] of this.#tokens) if (token.validToMs <= nowMs) this.#tokens.delete(value);
    // still full of live tokens: drop the oldest, as a manager's session table would
    for (const value of this.#tokens.keys()) {
      if (this.#tokens.size < MAX_TOKENS) break;
      this.#tokens.delete(value);
    }
  }
}
