/**
 * The errors of the manager client, in one module. Each has a stable `code` and, where one
 * exists, a `cause`. None of them ever carries credentials: messages are built from the method,
 * the path and what the manager said, never from request headers or the manager URL's userinfo.
 */

/** Base class: every error the client throws is an NsxError. */
export class NsxError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
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
      "NSX_API_ERROR",
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
    super("NSX_TRANSPORT_ERROR", `${init.method} ${init.path}: ${init.reason}`, { cause: init.cause });
    this.method = init.method;
    this.path = init.path;
    this.notSent = init.notSent;
  }
}

/** The manager's answer could not be used: not XML, a DOCTYPE, too large, wrong shape. */
export class NsxResponseError extends NsxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("NSX_BAD_RESPONSE", message, options);
  }
}

/** A document given to the client (or the simulator) is not acceptable. */
export class NsxDocumentError extends NsxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("NSX_BAD_DOCUMENT", message, options);
  }
}
