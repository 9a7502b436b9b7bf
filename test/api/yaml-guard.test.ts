/**
 * scanYamlText, the lexer's one pass before parsing: how deep a text nests (flow brackets, and a
 * line's `-` and `?` indicators until its newline) and how many tokens it has, against the limits.
 */
import { describe, expect, it } from "vitest";
import { MANIFEST_LIMITS } from "../../src/api/manifest-limits.ts";
import { scanYamlText } from "../../src/api/yaml-guard.ts";

const limits = { ...MANIFEST_LIMITS, maxNesting: 2, maxTokens: 40 };

describe("scanYamlText", () => {
  it.each([
    { reason: "two flow levels are within 2", text: "a: [[1]]\n", refused: false },
    { reason: "three flow levels are not", text: "a: [[[1]]]\n", refused: true },
    { reason: "a closed bracket gives its level back", text: "a: [[1], [2], {b: 3}]\n", refused: false },
    {
      reason: "a closing bracket with none open goes no lower than 0",
      text: "a: ]]] [[1]]\n",
      refused: false,
    },
    { reason: "a line's indicators nest", text: "- - - a\n", refused: true },
    { reason: "explicit keys nest as items do", text: "? ? ? a\n", refused: true },
    { reason: "a newline ends a line's indicators", text: "- - a\n- - b\n- - c\n", refused: false },
    { reason: "a line's indicator and a flow level add up", text: "- - [a]\n", refused: true },
  ])("$reason", ({ text, refused }) => {
    const problem = scanYamlText(text, limits);
    if (!refused) expect(problem).toBeUndefined();
    else expect(problem?.detail).toMatch(/^nested deeper than 2 levels: refused before parsing/);
  });

  it("counts tokens, and says where the text went past the limit", () => {
    const text = Array.from({ length: 30 }, (_, i) => `k${i}: v\n`).join("");
    const problem = scanYamlText(text, limits);
    expect(problem?.detail).toMatch(/^more than 40 YAML tokens/);
    expect(problem?.offset).toBeGreaterThan(0);
    expect(problem?.offset).toBeLessThan(text.length);
    expect(scanYamlText(text, { ...limits, maxTokens: 1000 })).toBeUndefined();
  });
});
