/**
 * src/simulator/README.md documents every call the simulator serves: each route of the table in
 * routes.ts, by method and path, and each route name that faults and counters use.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { API_ROUTES } from "../../src/simulator/index.ts";
import { ROUTES } from "../../src/simulator/routes.ts";

const README = readFileSync(new URL("../../src/simulator/README.md", import.meta.url), "utf8");

describe("src/simulator/README.md", () => {
  const calls = ROUTES.flatMap(({ pattern, methods }) =>
    Object.entries(methods).map(([method, route]) => ({ method, path: `/${pattern.join("/")}`, route })),
  );

  it.each(calls)("documents $method $path ($route)", ({ method, path }) => {
    // `*` is a {param} in the README; the path ends where a query, space or backquote starts
    const escaped = path.replace(/[.]/g, "\\.").replace(/\*/g, "\\{\\w+\\}");
    expect(README).toMatch(new RegExp(`\`${method} ${escaped}[\`\\[? ]`));
  });

  it("names every route that faults and counters know", () => {
    for (const route of API_ROUTES) expect(README, route).toContain(`| \`${route}\``);
    expect(calls.map((c) => c.route).sort()).toEqual([...API_ROUTES].sort());
  });
});
