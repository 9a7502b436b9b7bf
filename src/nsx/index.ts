/**
 * The NSX-v manager client: everything the rest of the operator needs to read and write one
 * manager, and nothing about Kubernetes. `ManagerClient` (the five calls over HTTP, with limits,
 * retries and errors) implements `ManagerApi`; `EdgeDocument` is the lossless edge document;
 * errors are NsxError subclasses with stable codes. Transport, limiter and document readers stay
 * internal.
 */
export { CLIENT_DEFAULTS, ManagerClient } from "./client.ts";
export type { ManagerClientOptions, RequestEvent, RouteName } from "./client.ts";
export { EdgeDocument } from "./edge-document.ts";
export { NsxApiError, NsxDocumentError, NsxError, NsxResponseError, NsxTransportError } from "./errors.ts";
export type { NsxErrorDetails } from "./errors.ts";
export type { Allocation, CallOptions, IpPool, IpRange, ManagerApi, ReleaseAnswer } from "./types.ts";
