import { describe, expect, it } from "vitest";
import { apiErrorCode, NsxApiError, type NsxErrorCode } from "../../src/nsx/errors.ts";

describe("apiErrorCode", () => {
  it.each<{ name: string; reason: string; status: number; errorCode?: string; want: NsxErrorCode }>([
    {
      name: "Unauthorized",
      reason: "401 is the credentials, whatever the body",
      status: 401,
      errorCode: "202",
      want: "NSX_ERR_UNAUTHORIZED",
    },
    { name: "Forbidden", reason: "403 is missing rights", status: 403, want: "NSX_ERR_FORBIDDEN" },
    { name: "Conflict", reason: "409 is a concurrent modification", status: 409, want: "NSX_ERR_CONFLICT" },
    {
      name: "Unavailable",
      reason: "503 is the manager (or its proxy) unable to serve",
      status: 503,
      errorCode: "10013",
      want: "NSX_ERR_UNAVAILABLE",
    },
    {
      name: "GatewayTimeout",
      reason: "504 from a proxy is the same",
      status: 504,
      want: "NSX_ERR_UNAVAILABLE",
    },
    {
      name: "ObjectNotFound",
      reason: "errorCode 202 is a missing object, even on a 400",
      status: 400,
      errorCode: "202",
      want: "NSX_ERR_NOT_FOUND",
    },
    {
      name: "PoolNotFound",
      reason: "IPAM 120054: the pool does not exist",
      status: 400,
      errorCode: "120054",
      want: "NSX_ERR_NOT_FOUND",
    },
    {
      name: "NotAllocated",
      reason: "IPAM 120056: not allocated from this pool",
      status: 400,
      errorCode: "120056",
      want: "NSX_ERR_NOT_ALLOCATED",
    },
    {
      name: "Exhausted",
      reason: "IPAM 120051: no free address",
      status: 400,
      errorCode: "120051",
      want: "NSX_ERR_POOL_EXHAUSTED",
    },
    {
      name: "SpacedCode",
      reason: "a code with whitespace around it is the same code",
      status: 400,
      errorCode: " 120056\n",
      want: "NSX_ERR_NOT_ALLOCATED",
    },
    { name: "Http404", reason: "a plain 404 without a code", status: 404, want: "NSX_ERR_NOT_FOUND" },
    {
      name: "OtherClientError",
      reason: "415 and other 4xx are bad requests",
      status: 415,
      errorCode: "13100",
      want: "NSX_ERR_BAD_REQUEST",
    },
    {
      name: "ServerError",
      reason: "500 with a code of its own is a server error",
      status: 500,
      errorCode: "500",
      want: "NSX_ERR_SERVER",
    },
    {
      name: "OddStatus",
      reason: "a 3xx that reached here is not a client error",
      status: 302,
      want: "NSX_ERR_SERVER",
    },
  ])("$name: $reason", ({ status, errorCode, want }) => {
    expect(apiErrorCode(status, errorCode)).toBe(want);
    const error = new NsxApiError({
      status,
      method: "GET",
      path: "/p",
      errors: errorCode === undefined ? [] : [{ errorCode }],
    });
    expect(error.code).toBe(want);
  });
});
