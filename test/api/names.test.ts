import { describe, expect, it } from "vitest";
import { isDnsLabel, isDnsSubdomain } from "../../src/api/names.ts";

describe("isDnsLabel", () => {
  it.each([
    { name: "Plain", reason: "lowercase letters", value: "default", want: true },
    {
      name: "DigitsAndDashes",
      reason: "digits and inner dashes are allowed",
      value: "team-2-prod",
      want: true,
    },
    { name: "OneCharacter", reason: "a single letter or digit is a label", value: "a", want: true },
    {
      name: "DigitFirst",
      reason: "RFC 1123 (unlike 952) lets a label start with a digit",
      value: "1st",
      want: true,
    },
    { name: "MaxLength", reason: "63 characters is the bound", value: "a".repeat(63), want: true },
    { name: "TooLong", reason: "64 characters is one too many", value: "a".repeat(64), want: false },
    { name: "Empty", reason: "an empty name is no name", value: "", want: false },
    { name: "Upper", reason: "uppercase is refused, not folded", value: "Default", want: false },
    { name: "LeadingDash", reason: "a label starts with a letter or digit", value: "-ns", want: false },
    { name: "TrailingDash", reason: "a label ends with a letter or digit", value: "ns-", want: false },
    { name: "Dot", reason: "a dot makes a subdomain, not a label", value: "a.b", want: false },
    { name: "Underscore", reason: "underscores are not in RFC 1123", value: "a_b", want: false },
    {
      name: "NewlineAfter",
      reason: "a trailing newline does not slip past the end anchor",
      value: "ns\n",
      want: false,
    },
    { name: "NotAString", reason: "a number from YAML is no name", value: 7, want: false },
  ])("$name: $reason", ({ value, want }) => {
    expect(isDnsLabel(value)).toBe(want);
  });
});

describe("isDnsSubdomain", () => {
  it.each([
    { name: "Label", reason: "a single label is a subdomain", value: "nsx-credentials", want: true },
    { name: "Dotted", reason: "labels joined by dots", value: "nsx.example.com", want: true },
    {
      name: "MaxLength",
      reason: "253 characters in all is the bound",
      value: `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`,
      want: true,
    },
    {
      name: "TooLong",
      reason: "254 characters in all is one too many",
      value: `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(62)}`,
      want: false,
    },
    { name: "EmptyLabel", reason: "two dots in a row leave an empty label", value: "a..b", want: false },
    { name: "LeadingDot", reason: "a name starts with a letter or digit", value: ".a", want: false },
    { name: "Upper", reason: "uppercase is refused", value: "Nsx", want: false },
    { name: "Empty", reason: "an empty name is no name", value: "", want: false },
  ])("$name: $reason", ({ value, want }) => {
    expect(isDnsSubdomain(value)).toBe(want);
  });
});
