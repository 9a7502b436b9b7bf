import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/nsx/redact.ts";

const PASSWORD = `Zq7!p"äss<w&rd`;
const BASIC_B64 = Buffer.from(`svc-nsx@corp:${PASSWORD}`).toString("base64");
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjE3MDAwMDAwMDB9.c2lnbmF0dXJl";
const redact = createRedactor(() => [PASSWORD, BASIC_B64, "ab"]);

/** what the client gives its redactor: the password, user:password and the Basic credentials */
const ECHO_PASSWORD = "Hx9-echo-PASSWORD-31";
const ECHO_USER_PASSWORD = `svc-nsx:${ECHO_PASSWORD}`;
const ECHO_B64 = Buffer.from(ECHO_USER_PASSWORD).toString("base64");
const clientRedact = createRedactor(() => [ECHO_PASSWORD, ECHO_USER_PASSWORD, ECHO_B64]);
const hex = (text: string) => Buffer.from(text).toString("hex");
const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("createRedactor", () => {
  it.each([
    {
      name: "BasicHeader",
      reason: "the Authorization header as sent",
      text: `Authorization: Basic ${BASIC_B64}`,
      want: "Authorization: Basic [REDACTED]",
    },
    {
      name: "BasicCutShort",
      reason: "a proxy's snippet cut inside the base64: no longer equal to it, still its shape",
      text: `echo: Basic ${BASIC_B64.slice(0, 30)}`,
      want: "echo: Basic [REDACTED]",
    },
    {
      name: "BasicOtherCredentials",
      reason: "credentials this client never sent are credentials all the same",
      text: `basic ${Buffer.from("root:hunter2").toString("base64")}`,
      want: "basic [REDACTED]",
    },
    {
      name: "BasicAsAWord",
      reason: "words after Basic decode to bytes, not text: the manager's own sentences stay",
      text: 'Basic authentication failed; Basic realm="NSX Manager"; Basic Auth',
      want: 'Basic authentication failed; Basic realm="NSX Manager"; Basic Auth',
    },
    {
      name: "AuthToken",
      reason: "the 6.4 token scheme, whatever token follows",
      text: "AUTHTOKEN abcdef0123456789 refused",
      want: "AUTHTOKEN [REDACTED] refused",
    },
    {
      name: "BearerToken",
      reason: "the other token scheme a proxy may use",
      text: "Bearer 0123456789abcdef",
      want: "Bearer [REDACTED]",
    },
    {
      name: "JwtAlone",
      reason: "a token without its scheme, whole or cut",
      text: `token ${JWT} and ${JWT.slice(0, 20)}`,
      want: "token [REDACTED] and [REDACTED]",
    },
    {
      name: "PasswordXmlEscaped",
      reason: "raw XML text holds the password escaped",
      text: "pw Zq7!p&quot;äss&lt;w&amp;rd",
      want: "pw [REDACTED]",
    },
    {
      name: "PasswordJsonEscaped",
      reason: "a JSON answer holds it escaped",
      text: `{"pw":${JSON.stringify(PASSWORD)}}`,
      want: '{"pw":"[REDACTED]"}',
    },
    {
      name: "PasswordUrlEncoded",
      reason: "a URL or a form holds it percent-encoded",
      text: `user=svc&pw=${encodeURIComponent(PASSWORD)}`,
      want: "user=svc&pw=[REDACTED]",
    },
    {
      name: "ShortSecret",
      reason: "a secret under 3 characters would garble every message and hide nothing",
      text: "about a cab",
      want: "about a cab",
    },
  ])("$name: $reason", ({ text, want }) => {
    expect(redact(text)).toBe(want);
  });
});

describe("createRedactor: credentials echoed transformed", () => {
  it.each([
    {
      name: "SplitBase64Wrapped",
      reason: "the Basic credentials wrapped every 8 characters, as a proxy or a MIME encoder does",
      text: `auth: ${ECHO_B64.match(/.{1,8}/g)?.join("\n")}`,
      want: "auth: [REDACTED]",
    },
    {
      name: "SplitBase64Halves",
      reason: "the base64 cut in two and each half quoted apart: each piece is still a piece of it",
      text: `first "${ECHO_B64.slice(0, 16)}", then "${ECHO_B64.slice(16)}"`,
      want: 'first "[REDACTED]", then "[REDACTED]"',
    },
    {
      name: "Base64OfThePasswordAlone",
      reason: "a proxy that encodes only the password",
      text: `pw=${b64(ECHO_PASSWORD)}`,
      want: "pw=[REDACTED]",
    },
    {
      name: "Base64OfThePasswordInsideOtherText",
      reason: "the base64 of a longer text that holds the password, at an alignment of its own",
      text: `blob ${b64(`xy:${ECHO_PASSWORD};`)}`,
      want: "blob [REDACTED]",
    },
    {
      name: "HexLower",
      reason: "the password's bytes in hex",
      text: `pw ${hex(ECHO_PASSWORD)}`,
      want: "pw [REDACTED]",
    },
    {
      name: "HexUpperSpaced",
      reason: "hex in upper case, a space between the bytes",
      text: `pw ${hex(ECHO_PASSWORD).toUpperCase().replace(/(..)/g, "$1 ").trim()}.`,
      want: "pw [REDACTED].",
    },
    {
      name: "UpperCased",
      reason: "a server that upper-cases what it echoes",
      text: `LOGIN SVC-NSX:${ECHO_PASSWORD.toUpperCase()} REFUSED`,
      want: "LOGIN [REDACTED] REFUSED",
    },
    {
      name: "Spaced",
      reason: "a character, then a space, then the next",
      text: `pw: ${[...ECHO_PASSWORD].join(" ")} (spaced)`,
      want: "pw: [REDACTED] (spaced)",
    },
    {
      name: "NumericEntitiesDecimal",
      reason: "XML numeric character references, one per character",
      text: `<details>${[...ECHO_PASSWORD].map((c) => `&#${c.charCodeAt(0)};`).join("")}</details>`,
      want: "<details>[REDACTED]</details>",
    },
    {
      name: "NumericEntitiesHexMixed",
      reason: "hexadecimal references for some characters, the others as they are",
      text: `x ${[...ECHO_PASSWORD].map((c, i) => (i % 2 === 0 ? `&#x${c.charCodeAt(0).toString(16)};` : c)).join("")} y`,
      want: "x [REDACTED] y",
    },
    {
      name: "JsonUnicodeEscapes",
      reason: "a JSON answer that escapes every character",
      text: `{"p":"${[...ECHO_PASSWORD].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}"}`,
      want: '{"p":"[REDACTED]"}',
    },
    {
      name: "OrdinaryTextStays",
      reason: "the manager's own words, ids and UUIDs are not credentials: nothing is removed",
      text: "edge-12 (uuid 4203a1b2-9c3d-4e5f-a6b7-c8d9e0f1a2b3): user svc-nsx lacks the right to PUT",
      want: "edge-12 (uuid 4203a1b2-9c3d-4e5f-a6b7-c8d9e0f1a2b3): user svc-nsx lacks the right to PUT",
    },
  ])("$name: $reason", ({ text, want }) => {
    expect(clientRedact(text)).toBe(want);
  });
});
