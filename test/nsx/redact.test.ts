import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/nsx/redact.ts";

const PASSWORD = `Zq7!p"äss<w&rd`;
const BASIC_B64 = Buffer.from(`svc-nsx@corp:${PASSWORD}`).toString("base64");
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjE3MDAwMDAwMDB9.c2lnbmF0dXJl";
const redact = createRedactor(() => [PASSWORD, BASIC_B64, "ab"]);

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
