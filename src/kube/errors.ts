/**
 * Kubernetes API errors as one readable line: client-node's ApiException carries the API
 * server's Status as an escaped JSON string inside a multi-line message; `KubeApiError` keeps
 * the HTTP status and says `what: HTTP 403 Forbidden: <the Status message>`.
 */
import { ApiException } from "@kubernetes/client-node";
import { CodedError } from "../util/errors.ts";

export class KubeApiError extends CodedError {
  /** the HTTP status */
  readonly status: number;
  /** the Status reason (`Forbidden`, `NotFound`, `Conflict`, ...), when the body had one */
  readonly reason: string | undefined;
  /** the Status details' kind (`namespaces` for a namespace that does not exist, ...) */
  readonly detailsKind: string | undefined;

  constructor(what: string, status: number, body: unknown, options?: { cause?: unknown }) {
    const decoded = decodeStatus(body);
    super("KUBE_API_ERROR", `${what}: HTTP ${status}${decoded.text}`, options);
    this.status = status;
    this.reason = decoded.reason;
    this.detailsKind = decoded.detailsKind;
  }
}

/** An ApiException as a KubeApiError naming `what` failed; anything else as it is. */
export function decodeApiError(what: string, error: unknown): unknown {
  return error instanceof ApiException
    ? new KubeApiError(what, error.code, error.body, { cause: error })
    : error;
}

/** The API server's Status (a JSON text or an object), or the body's first 300 characters. */
export function decodeStatus(body: unknown): { text: string; reason?: string; detailsKind?: string } {
  let status: unknown = body;
  if (typeof body === "string") {
    try {
      status = JSON.parse(body);
    } catch {
      const text = body.trim().slice(0, 300);
      return { text: text === "" ? "" : `: ${text}` };
    }
  }
  const s = status as {
    kind?: unknown;
    reason?: unknown;
    message?: unknown;
    details?: { kind?: unknown };
  } | null;
  if (s?.kind !== "Status" || typeof s.message !== "string") {
    const text = body === undefined || body === null ? "" : JSON.stringify(body).slice(0, 300);
    return { text: text === "" ? "" : `: ${text}` };
  }
  const reason = typeof s.reason === "string" ? s.reason : undefined;
  const detailsKind = typeof s.details?.kind === "string" ? s.details.kind : undefined;
  return { text: `${reason === undefined ? "" : ` ${reason}`}: ${s.message}`, reason, detailsKind };
}
