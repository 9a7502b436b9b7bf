import { describe, expect, it } from "vitest";
import { hideUrlCredentials } from "../../src/util/url-credentials.ts";

describe("hideUrlCredentials", () => {
  it.each([
    {
      name: "UserAndPassword",
      reason: "the usual form",
      value: "https://admin:secret@nsx.example.org/api",
      want: "https://[REDACTED]@nsx.example.org/api",
    },
    {
      name: "AtAndSlashInPassword",
      reason: "everything up to the last @ goes: a password may hold @ and /",
      value: "https://admin:p@ss/w0rd@nsx.example.org",
      want: "https://[REDACTED]@nsx.example.org",
    },
    {
      name: "NoScheme",
      reason: "a URL written without https:// still carries name:secret@",
      value: "admin:secret@nsx.example.org",
      want: "[REDACTED]@nsx.example.org",
    },
    {
      name: "UserOnly",
      reason: "with a scheme, any userinfo goes",
      value: "http://admin@nsx",
      want: "http://[REDACTED]@nsx",
    },
    {
      name: "NoAt",
      reason: "nothing to hide",
      value: "https://nsx.example.org",
      want: "https://nsx.example.org",
    },
    {
      name: "QueryString",
      reason: "a query often passes a token: what follows ? goes",
      value: "https://nsx.example.org/api?token=abc&x=1",
      want: "https://nsx.example.org/api?[REDACTED]",
    },
    {
      name: "Fragment",
      reason: "what follows # goes too",
      value: "https://nsx.example.org/#secret",
      want: "https://nsx.example.org/#[REDACTED]",
    },
    {
      name: "AtInTheQuery",
      reason: "an @ after the ? is part of the query, not userinfo: the host stays readable",
      value: "https://nsx.example.org/?u=admin:pw@x",
      want: "https://nsx.example.org/?[REDACTED]",
    },
    {
      name: "UserinfoAndQuery",
      reason: "both go",
      value: "admin:pw@nsx.example.org?t=1",
      want: "[REDACTED]@nsx.example.org?[REDACTED]",
    },
    {
      name: "MailLike",
      reason: "a name@domain without scheme or colon is no credential",
      value: "ops@example.org",
      want: "ops@example.org",
    },
  ])("$name: $reason", ({ value, want }) => {
    expect(hideUrlCredentials(value)).toBe(want);
  });
});
