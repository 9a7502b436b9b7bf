/**
 * The errors of the manager client, in one module, and the manager's vocabulary: every error has
 * a stable `code` (undici's style, `NSX_ERR_*`) computed from the HTTP status and the manager's
 * own `errorCode`, so that callers decide on a code and never on statuses or NSX numbers. None of
 * them ever carries credentials: messages are built from the method, the path and what the
 * manager said, never from request headers or the manager URL's userinfo, and what the manager
 * said is redacted by the client (redact.ts) before it gets here.
 */
import { CodedError } from "../util/errors.ts";

export type NsxErrorCode =
  /** 404, or the manager's "could not be found" (202) or "pool does not exist" (120054) */
  | "NSX_ERR_NOT_FOUND"
  /** 409: someone else changed the object; read again and retry */
  | "NSX_ERR_CONFLICT"
  /** 401: the credentials (or the token) were refused */
  | "NSX_ERR_UNAUTHORIZED"
  /** 403: the user lacks the rights for this call */
  | "NSX_ERR_FORBIDDEN"
  /** 502, 503, 504: the manager, or a proxy in front of it, cannot serve now */
  | "NSX_ERR_UNAVAILABLE"
  /** IPAM 120056: the address is not allocated from this pool (or in use) */
  | "NSX_ERR_NOT_ALLOCATED"
  /** IPAM 120051: no free address left in the pool */
  | "NSX_ERR_POOL_EXHAUSTED"
  /** any other 4xx */
  | "NSX_ERR_BAD_REQUEST"
  /** any other 5xx (and a non-2xx status outside 4xx/5xx) */
  | "NSX_ERR_SERVER"
  /** no complete response: refused, reset, TLS failure, timeout, aborted */
  | "NSX_ERR_CONNECTION"
  /** a 2xx whose body cannot be used: not XML, a DOCTYPE, too large, the wrong shape */
  | "NSX_ERR_BAD_RESPONSE"
  /** a document or id given to the client (or the simulator) is not acceptable */
  | "NSX_ERR_BAD_DOCUMENT";

/** The manager's own error codes that say more than the status does. */
const CODE_BY_NSX_ERROR_CODE: Readonly<Record<string, NsxErrorCode>> = {
  "202": "NSX_ERR_NOT_FOUND",
  "120054": "NSX_ERR_NOT_FOUND",
  "120056": "NSX_ERR_NOT_ALLOCATED",
  "120051": "NSX_ERR_POOL_EXHAUSTED",
};

/** Statuses that decide the code whatever the body says. */
const CODE_BY_STATUS: Readonly<Record<number, NsxErrorCode>> = {
  401: "NSX_ERR_UNAUTHORIZED",
  403: "NSX_ERR_FORBIDDEN",
  409: "NSX_ERR_CONFLICT",
  502: "NSX_ERR_UNAVAILABLE",
  503: "NSX_ERR_UNAVAILABLE",
  504: "NSX_ERR_UNAVAILABLE",
};

/** The code of a non-2xx answer: the status where it decides, then the manager's errorCode, then the status class. */
export function apiErrorCode(status: number, errorCode: string | undefined): NsxErrorCode {
  const byStatus = CODE_BY_STATUS[status];
  if (byStatus !== undefined) return byStatus;
  const byNsxCode = errorCode === undefined ? undefined : CODE_BY_NSX_ERROR_CODE[errorCode.trim()];
  if (byNsxCode !== undefined) return byNsxCode;
  if (status === 404) return "NSX_ERR_NOT_FOUND";
  return status >= 400 && status < 500 ? "NSX_ERR_BAD_REQUEST" : "NSX_ERR_SERVER";
}

/** Base class: every error the client throws is an NsxError. */
export class NsxError extends CodedError {
  declare readonly code: NsxErrorCode;
  constructor(code: NsxErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** What the manager said in an NSX error document; every field is optional in the wild. */
export interface NsxErrorDetails {
  details?: string;
  errorCode?: string;
  moduleName?: string;
  /** key/value pairs from `<errorData>`, when present */
  data?: Record<string, string>;
}

/**
 * The same details with `redact` applied to every field, `errorData` keys and values included: a
 * manager or proxy that echoes the request may put the Authorization header into any of them.
 */
export function redactErrorDetails(
  details: NsxErrorDetails,
  redact: (text: string) => string,
): NsxErrorDetails {
  const entries = Object.entries(details).map(([field, value]: [string, unknown]) => [
    field,
    typeof value === "string"
      ? redact(value)
      : Object.fromEntries(
          Object.entries(value as Record<string, string>).map(([k, v]) => [redact(k), redact(v)]),
        ),
  ]);
  return Object.fromEntries(entries) as NsxErrorDetails;
}

/** The manager answered with a non-2xx status. */
export class NsxApiError extends NsxError {
  readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly details: string | undefined;
  readonly errorCode: string | undefined;
  readonly moduleName: string | undefined;
  /** every `<error>` of an `<errors>` body; the first is also spread on this object */
  readonly errors: NsxErrorDetails[];

  constructor(init: { status: number; method: string; path: string; errors: NsxErrorDetails[] }) {
    const first = init.errors[0] ?? {};
    const said = [
      first.details,
      first.errorCode !== undefined ? `errorCode ${first.errorCode}` : undefined,
      first.moduleName !== undefined ? `module ${first.moduleName}` : undefined,
    ].filter((s): s is string => s !== undefined && s !== "");
    super(
      apiErrorCode(init.status, first.errorCode),
      `${init.method} ${init.path}: HTTP ${init.status}${said.length > 0 ? `: ${said.join(", ")}` : ""}`,
    );
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.details = first.details;
    this.errorCode = first.errorCode;
    this.moduleName = first.moduleName;
    this.errors = init.errors;
  }
}

/** The request did not complete: connection refused or reset, TLS failure, timeout. */
export class NsxTransportError extends NsxError {
  readonly method: string;
  readonly path: string;
  /** true when the request provably never reached the server (safe to retry a write) */
  readonly notSent: boolean;
  constructor(init: { method: string; path: string; reason: string; notSent: boolean; cause?: unknown }) {
    super("NSX_ERR_CONNECTION", `${init.method} ${init.path}: ${init.reason}`, { cause: init.cause });
    this.method = init.method;
    this.path = init.path;
    this.notSent = init.notSent;
  }
}

/**
 * The client's circuit breaker refused the request without sending it: the manager's last
 * requests timed out or could not connect (breaker.ts). `retryAtMs` is when a probe may go
 * (epoch ms); undefined while a probe is under way.
 */
export class NsxCircuitOpenError extends NsxTransportError {
  readonly retryAtMs: number | undefined;
  constructor(init: { method: string; path: string; reason: string; retryAtMs: number | undefined }) {
    super({ method: init.method, path: init.path, reason: init.reason, notSent: true });
    this.retryAtMs = init.retryAtMs;
  }
}

/** The manager's answer could not be used: not XML, a DOCTYPE, too large, wrong shape. */
export class NsxResponseError extends NsxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("NSX_ERR_BAD_RESPONSE", message, options);
  }
}

/** A document given to the client (or the simulator) is not acceptable. */
export class NsxDocumentError extends NsxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("NSX_ERR_BAD_DOCUMENT", message, options);
  }
}

/**
 * A PUT refused before any call: the document lacks what every edge of its type carries
 * (edge-shape.ts), and writing it would replace the edge's configuration with less.
 */
export class NsxIncompleteEdgeError extends NsxDocumentError {
  readonly edgeId: string;
  /** what it lacks, as the message names it: `<vnics>`, `<firewall> in <features>`, ... */
  readonly missing: readonly string[];

  constructor(init: { edgeId: string; missing: readonly string[]; typeLabel: string }) {
    super(
      `putEdge ${init.edgeId}: refusing to write a document that is not a whole edge: it lacks ${init.missing.join(", ")}, which every ${init.typeLabel} carries`,
    );
    this.edgeId = init.edgeId;
    this.missing = init.missing;
  }
}
