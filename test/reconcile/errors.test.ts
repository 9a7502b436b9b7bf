import { describe, expect, it } from "vitest";
import { NsxResponseError, NsxTransportError } from "../../src/nsx/errors.ts";
import { ReconcileError, toFailure } from "../../src/reconcile/errors.ts";
import { apiError } from "./fixtures.ts";

const reset = new NsxTransportError({
  method: "PUT",
  path: "/api/4.0/edges/edge-1",
  reason: "network error",
  notSent: false,
});

describe("toFailure", () => {
  it.each([
    {
      name: "TransportError",
      reason: "No complete answer (here a reset PUT) is Unreachable, whatever the call.",
      error: reset,
      want: { reason: "Unreachable", message: "PUT /api/4.0/edges/edge-1: network error" },
    },
    ...[502, 503, 504].map((status) => ({
      name: `Http${status}`,
      reason: "A gateway or availability answer says the manager cannot serve now: Unreachable.",
      error: apiError(status),
      want: { reason: "Unreachable", message: `PUT /api/4.0/edges/edge-1: HTTP ${status}` },
    })),
    {
      name: "Http500",
      reason: "The manager's own error is not unreachability: the generic reason, with its words.",
      error: apiError(500),
      want: { reason: "ReconcileError", message: "PUT /api/4.0/edges/edge-1: HTTP 500: status 500" },
    },
    {
      name: "Http401",
      reason: "Refused credentials are a person's to fix.",
      error: apiError(401, "GET"),
      want: { reason: "Unauthorized", message: "the manager refused the credentials: GET" },
    },
    {
      name: "Http403",
      reason: "Missing rights are a person's to fix.",
      error: apiError(403),
      want: { reason: "Unauthorized", message: "the user lacks the rights: PUT" },
    },
    {
      name: "UnusableAnswer",
      reason: "A 2xx that cannot be read is the generic reason.",
      error: new NsxResponseError("edge document: not well-formed"),
      want: { reason: "ReconcileError", message: "edge document: not well-formed" },
    },
    {
      name: "OwnError",
      reason: "The reconciler's own errors keep their reason and terminal flag.",
      error: ReconcileError.invalidSpec("spec.edgeId: bad"),
      want: { reason: "InvalidSpec", message: "spec.edgeId: bad", terminal: true },
    },
    {
      name: "Bug",
      reason: "Anything else is named by its class, never dropped.",
      error: new TypeError("x is undefined"),
      want: { reason: "ReconcileError", message: "TypeError: x is undefined" },
    },
  ])("$name", ({ reason, error, want }) => {
    const failure = toFailure(error);
    expect(failure.reason, reason).toBe(want.reason);
    expect(failure.message, reason).toContain(want.message);
    expect(failure.terminal, reason).toBe(want.terminal ?? false);
  });
});
