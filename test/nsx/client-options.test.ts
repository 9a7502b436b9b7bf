/**
 * resolveClientOptions: what a client may be built with. Each refusal names the option, never the
 * URL (it could carry credentials).
 */
import { describe, expect, it } from "vitest";
import { NsxDocumentError } from "../../src/nsx/errors.ts";
import { resolveClientOptions, type ManagerClientOptions } from "../../src/nsx/client-options.ts";

const good: ManagerClientOptions = {
  url: "https://nsx.example:8443/base/",
  username: "admin",
  password: "pw",
};

describe("resolveClientOptions", () => {
  it("keeps the origin and the base path without its trailing slash, and applies the defaults", () => {
    const o = resolveClientOptions(good);
    expect(o).toMatchObject({ origin: "https://nsx.example:8443", basePath: "/base", auth: "basic" });
    expect(o.burst, "a burst of the rate, rounded up").toBe(Math.max(1, Math.ceil(o.requestsPerSecond)));
    expect(
      resolveClientOptions({ ...good, requestsPerSecond: Infinity }).burst,
      "no rate: a burst of 1",
    ).toBe(1);
  });

  it.each([
    { reason: "a URL that does not parse", change: { url: "nsx.example" }, error: /url is not a URL/ },
    { reason: "another scheme", change: { url: "ftp://nsx.example" }, error: /url must be http\(s\)/ },
    {
      reason: "a user in the URL",
      change: { url: "https://admin@nsx.example" },
      error: /without credentials/,
    },
    {
      reason: "a password in the URL",
      change: { url: "https://:secret@nsx.example" },
      error: /without credentials/,
    },
    { reason: "a query", change: { url: "https://nsx.example/?a=1" }, error: /query or fragment/ },
    { reason: "a fragment", change: { url: "https://nsx.example/#x" }, error: /query or fragment/ },
    { reason: "an empty username", change: { username: "" }, error: /username must be non-empty/ },
    {
      reason: "a username with ':' (Basic auth cannot carry it)",
      change: { username: "a:b" },
      error: /without ':'/,
    },
    {
      reason: "a password that is not a string",
      change: { password: undefined as unknown as string },
      error: /password must be a string/,
    },
    {
      reason: "another auth",
      change: { auth: "digest" as "basic" },
      error: /auth must be "basic" or "token"/,
    },
    {
      reason: "a rate of 0",
      change: { requestsPerSecond: 0 },
      error: /requestsPerSecond must be a positive number/,
    },
    {
      reason: "a fractional timeout",
      change: { requestTimeoutMs: 1.5 },
      error: /requestTimeoutMs must be a positive integer/,
    },
    {
      reason: "negative retries",
      change: { maxRetries: -1 },
      error: /maxRetries must be a non-negative integer/,
    },
  ])("refuses $reason", ({ change, error }) => {
    const options = { ...good, ...change };
    expect(() => resolveClientOptions(options)).toThrow(NsxDocumentError);
    expect(() => resolveClientOptions(options)).toThrow(error);
    // the URL is never echoed: it could carry userinfo
    expect(() => resolveClientOptions(options)).not.toThrow(/nsx\.example|secret/);
  });
});
