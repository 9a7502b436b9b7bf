import { describe, expect, it } from "vitest";
import { boundText } from "../../src/util/bounded-text.ts";

describe("boundText", () => {
  it.each([
    { name: "Short", reason: "a text within the bound is kept as it is", text: "tenant-a", max: 64 },
    { name: "Exact", reason: "at the bound exactly, too", text: "x".repeat(100), max: 100 },
  ])("$name: $reason", ({ text, max }) => {
    expect(boundText(text, max)).toBe(text);
  });

  it("cuts a longer one to the bound, saying how much was left out and a hash of the whole", () => {
    const cut = boundText("a".repeat(40_000), 1024);
    expect(cut.length).toBeLessThanOrEqual(1024);
    expect(cut).toMatch(/^a+\.\.\.\[cut: \d+ more characters, sha256 [0-9a-f]{8}\]$/);
    const kept = cut.indexOf("...[cut");
    expect(cut).toContain(`cut: ${40_000 - kept} more characters`);
  });

  it("keeps two texts that differ only past the bound different, and the same text the same", () => {
    const a = `${"n".repeat(5000)}a`;
    const b = `${"n".repeat(5000)}b`;
    expect(boundText(a, 1024)).not.toBe(boundText(b, 1024));
    expect(boundText(a, 1024)).toBe(boundText(a, 1024));
  });

  it("never leaves half of a surrogate pair", () => {
    const text = "😀".repeat(1000);
    const cut = boundText(text, 501);
    const head = cut.slice(0, cut.indexOf("...[cut"));
    expect(head).toBe("😀".repeat(head.length / 2));
  });
});
