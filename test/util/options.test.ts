import { describe, expect, it } from "vitest";
import { omitUndefined, withDefaults } from "../../src/util/options.ts";

interface ExampleOptions {
  timeoutMs?: number | undefined;
  name?: string | null | undefined;
  retry?: boolean | undefined;
  clientId?: string;
}
const EXAMPLE_DEFAULTS: Readonly<Required<Omit<ExampleOptions, "clientId">>> = Object.freeze({
  timeoutMs: 1000,
  name: "nsxv",
  retry: true,
});

describe("withDefaults", () => {
  it.each([
    {
      name: "NoOptions",
      reason: "undefined options are every default",
      options: undefined,
      want: { timeoutMs: 1000, name: "nsxv", retry: true },
    },
    {
      name: "EmptyOptions",
      reason: "an empty object is every default",
      options: {},
      want: { timeoutMs: 1000, name: "nsxv", retry: true },
    },
    {
      name: "ExplicitUndefined",
      reason:
        "a key set to undefined (an optional flag not given, passed on) keeps the default, as if left out",
      options: { timeoutMs: undefined, name: undefined },
      want: { timeoutMs: 1000, name: "nsxv", retry: true },
    },
    {
      name: "Overrides",
      reason: "a key the caller sets wins",
      options: { timeoutMs: 5 },
      want: { timeoutMs: 5, name: "nsxv", retry: true },
    },
    {
      name: "FalsyValuesWin",
      reason: "0, false and the empty string are values, not absence",
      options: { timeoutMs: 0, name: "", retry: false },
      want: { timeoutMs: 0, name: "", retry: false },
    },
    {
      name: "NullWins",
      reason: "null is a value the caller chose; only undefined means left out",
      options: { name: null },
      want: { timeoutMs: 1000, name: null, retry: true },
    },
    {
      name: "OtherKeysKept",
      reason: "keys without a default (a required dependency) pass through",
      options: { clientId: "c1" },
      want: { timeoutMs: 1000, name: "nsxv", retry: true, clientId: "c1" },
    },
  ])("$name: $reason", ({ options, want }) => {
    expect(withDefaults(EXAMPLE_DEFAULTS, options as ExampleOptions | undefined)).toEqual(want);
  });

  it("returns a new object and changes neither the defaults nor the options", () => {
    const options: ExampleOptions = { timeoutMs: undefined, name: "x" };
    const merged = withDefaults(EXAMPLE_DEFAULTS, options);
    merged.timeoutMs = 7;
    expect(options, "the caller's options").toEqual({ timeoutMs: undefined, name: "x" });
    expect(EXAMPLE_DEFAULTS.timeoutMs, "the defaults").toBe(1000);
    expect(merged).not.toBe(EXAMPLE_DEFAULTS);
  });

  it("types every defaulted key as set", () => {
    const options: ExampleOptions = { timeoutMs: undefined };
    const merged = withDefaults(EXAMPLE_DEFAULTS, options);
    // a number, not number | undefined: this line would not typecheck otherwise
    const timeoutMs: number = merged.timeoutMs;
    expect(timeoutMs).toBe(1000);
  });
});

describe("omitUndefined", () => {
  it.each([
    {
      name: "DropsUndefined",
      reason: "an undefined key goes",
      value: { a: 1, b: undefined },
      want: { a: 1 },
    },
    {
      name: "KeepsFalsy",
      reason: "null, 0, false and '' are values",
      value: { a: null, b: 0, c: false, d: "" },
      want: { a: null, b: 0, c: false, d: "" },
    },
    {
      name: "Shallow",
      reason: "a nested undefined stays: status fields are compared one level deep",
      value: { a: { b: undefined } },
      want: { a: { b: undefined } },
    },
  ])("$name: $reason", ({ value, want }) => {
    const result = omitUndefined(value);
    expect(result).toStrictEqual(want);
    expect(Object.keys(result)).toEqual(Object.keys(want));
  });

  it("keeps an own __proto__ key of parsed JSON a key, never the copy's prototype", () => {
    const value = JSON.parse('{"a": 1, "__proto__": {"polluted": true}, "b": null}') as Record<
      string,
      unknown
    >;
    const result = omitUndefined(value) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(result["polluted"]).toBeUndefined();
    expect(Object.keys(result)).toEqual(["a", "__proto__", "b"]);
    expect(Object.getOwnPropertyDescriptor(result, "__proto__")?.value).toEqual({ polluted: true });
  });
});
