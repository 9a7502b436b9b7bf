import { describe, expect, it } from "vitest";
import { NsxResponseError, NsxTransportError } from "../../src/nsx/errors.ts";
import { ReconcileError } from "../../src/reconcile/errors.ts";
import { apiError } from "./fixtures.ts";

const reset = new NsxTransportError({
  method: "PUT",
  path: "/api/4.0/edges/edge-1",
  reason: "network error",
  notSent: false,
});

describe("ReconcileError.from", () => {
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
    {
      name: "Http409",
      reason: "A conflict that escaped the handlers' retries is a concurrent modification.",
      error: apiError(409),
      want: { reason: "ConcurrentModification", message: "PUT /api/4.0/edges/edge-1: HTTP 409" },
    },
    {
      name: "NotAllocated",
      reason:
        "IPAM's 120056 outside a release's own handling is the generic reason, with the manager's words.",
      error: apiError(
        400,
        "DELETE",
        "/api/2.0/services/ipam/pools/ipaddresspool-1/ipaddresses/10.0.0.1",
        "120056",
      ),
      want: { reason: "ReconcileError", message: "errorCode 120056" },
    },
  ])("$name", ({ reason, error, want }) => {
    const failure = ReconcileError.from(error);
    expect(failure.reason, reason).toBe(want.reason);
    expect(failure.message, reason).toContain(want.message);
    expect(failure.terminal, reason).toBe(want.terminal ?? false);
    expect(failure.code, reason).toMatch(/^RECONCILE_[A-Z_]+$/);
    if (!(error instanceof ReconcileError))
      expect(failure.cause, `${reason}: the original is the cause`).toBe(error);
  });
});
