/**
 * The NSX-v manager client's entry point for code outside the operator (docs/client.md's
 * example imports it; test/docs/client-example.test.ts runs that example): everything needed to
 * read and write one manager, and nothing about Kubernetes. `ManagerClient` (the manager calls
 * over HTTP, with limits, retries and errors) implements `ManagerApi`; `EdgeDocument` is the
 * lossless edge document; errors are NsxError subclasses with stable codes. Transport, limiter
 * and document readers stay internal. Modules in src/ import the client's files directly.
 */
export { CLIENT_DEFAULTS, ManagerClient } from "./client.ts";
export type { ManagerClientOptions, RequestEvent, RouteName } from "./client.ts";
export { EdgeDocument } from "./edge-document.ts";
export {
  NsxApiError,
  NsxDocumentError,
  NsxError,
  NsxIncompleteEdgeError,
  NsxResponseError,
  NsxTransportError,
} from "./errors.ts";
export type { NsxErrorDetails } from "./errors.ts";
export type { Allocation, CallOptions, IpPool, IpRange, ManagerApi, ReleaseAnswer } from "./types.ts";
