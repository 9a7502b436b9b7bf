import { describe, expect, it } from "vitest";
import { isEdgeId, isPoolId } from "../../src/nsx/ids.ts";

describe("isEdgeId", () => {
  it.each([
    { name: "Plain", reason: "the manager's form", value: "edge-1", want: true },
    { name: "Large", reason: "any number of digits within the bound", value: "edge-123456", want: true },
    {
      name: "MaxLength",
      reason: "64 characters, as the CRD bounds spec.edgeId",
      value: `edge-${"9".repeat(59)}`,
      want: true,
    },
    {
      name: "TooLong",
      reason: "65 characters: the CRD would refuse it",
      value: `edge-${"9".repeat(60)}`,
      want: false,
    },
    { name: "NoNumber", reason: "edge- alone names no edge", value: "edge-", want: false },
    { name: "Upper", reason: "the manager writes it in lowercase", value: "EDGE-1", want: false },
    {
      name: "PathTraversal",
      reason: "the id goes into a URL path: nothing but digits after edge-",
      value: "edge-1/../2",
      want: false,
    },
    { name: "Query", reason: "no query smuggled into the path", value: "edge-1?x=1", want: false },
    {
      name: "NewlineAfter",
      reason: "a trailing newline does not slip past the end anchor",
      value: "edge-1\n",
      want: false,
    },
    { name: "Spaces", reason: "no padding", value: " edge-1", want: false },
    { name: "NotAString", reason: "a number from YAML is no id", value: 1, want: false },
  ])("$name: $reason", ({ value, want }) => {
    expect(isEdgeId(value)).toBe(want);
  });
});

describe("isPoolId", () => {
  it.each([
    { name: "Plain", reason: "the manager's form", value: "ipaddresspool-7", want: true },
    {
      name: "MaxLength",
      reason: "64 characters, as the CRD bounds spec.pool.id",
      value: `ipaddresspool-${"1".repeat(50)}`,
      want: true,
    },
    {
      name: "TooLong",
      reason: "65 characters: the CRD would refuse it",
      value: `ipaddresspool-${"1".repeat(51)}`,
      want: false,
    },
    { name: "Name", reason: "a pool's name is not its id", value: "web-pool", want: false },
    { name: "EdgeId", reason: "an edge's id is not a pool's", value: "edge-1", want: false },
    {
      name: "PathTraversal",
      reason: "the id goes into a URL path",
      value: "ipaddresspool-1/../x",
      want: false,
    },
  ])("$name: $reason", ({ value, want }) => {
    expect(isPoolId(value)).toBe(want);
  });
});
