/**
 * What every API handler shares: the request and response shapes, the caller, the error answers
 * of core-services, and XML in and out. Bodies are taken as `application/xml` or `text/xml`, with
 * any charset a decoder knows (UTF-8 when none is named); answers are XML, labelled with the type
 * the client's `Accept` prefers, and a client that accepts neither gets 406.
 */
import { TextDecoder } from "node:util";
import type { Role } from "./auth.ts";
import { ERROR_CODES, errorEntry, type ErrorCode } from "./error-codes.ts";
import type { StaleListing } from "./stale-list.ts";
import type { NsxErrorEntry } from "./xml.ts";

export interface ApiRequest {
  method: string;
  /** decoded path segments */
  segments: string[];
  query: URLSearchParams;
  contentType: string | undefined;
  authorization: string | undefined;
  body: Buffer;
  /** set by a staleList fault: the edge list and summaries answer from it */
  staleListing?: StaleListing;
}

export interface ApiResponse {
  status: number;
  headers?: Record<string, string>;
  /** XML; absent for 204 and for errors */
  body?: string | Buffer;
  /** the body's type when it is not XML (a new pool's id is plain text); default: the negotiated XML type */
  contentType?: string;
  /** rendered in the error shape the faults ask for */
  errors?: NsxErrorEntry[];
}

/** who makes the call: from the Authorization header, or from the body for the calls that take credentials there */
export interface Caller {
  role: Role;
  username: string;
}

/** The XML media types the manager reads and writes. */
export const XML_TYPES = ["application/xml", "text/xml"] as const;
export type XmlType = (typeof XML_TYPES)[number];

/**
 * The XML type to answer with, by the client's `Accept` (q-values and wildcards honoured;
 * application/xml on a tie or without the header); undefined when it accepts neither.
 */
export function negotiate(accept: string | undefined): XmlType | undefined {
  if (accept === undefined || accept.trim() === "") return "application/xml";
  const ranges = accept.split(",").map(parseRange);
  let best: { type: XmlType; q: number } | undefined;
  for (const type of XML_TYPES) {
    const q = qualityOf(type, ranges);
    if (q > 0 && (best === undefined || q > best.q)) best = { type, q };
  }
  return best?.type;
}

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function parseRange(text: string): MediaRange {
  const [range = "", ...params] = text.split(";").map((p) => p.trim().toLowerCase());
  const [type = "", subtype = ""] = range.split("/");
  const qParam = params.find((p) => p.startsWith("q="));
  const q = qParam === undefined ? 1 : Number(qParam.slice(2));
  return { type, subtype, q: Number.isFinite(q) ? q : 0 };
}

/** the q of the most specific range that matches (exact, then the type's wildcard, then any), 0 when none does */
function qualityOf(mediaType: string, ranges: readonly MediaRange[]): number {
  const [type, subtype] = mediaType.split("/");
  let best: { specificity: number; q: number } = { specificity: -1, q: 0 };
  for (const r of ranges) {
    const specificity =
      r.type === type && r.subtype === subtype
        ? 2
        : r.type === type && r.subtype === "*"
          ? 1
          : r.type === "*"
            ? 0
            : -1;
    if (specificity > best.specificity) best = { specificity, q: r.q };
  }
  return best.q;
}

/** 406: the client accepts no type the manager writes */
export function notAcceptable(accept: string): ApiResponse {
  return {
    status: 406,
    errors: [
      errorEntry(
        ERROR_CODES.notAcceptable,
        `Cannot answer in ${accept}: the manager answers in application/xml or text/xml (JSON is not served).`,
      ),
    ],
  };
}

/** The body of a call that sends XML, decoded, or the error answer (415 wrong type or charset, 400 bad bytes). */
export function readXmlBody(req: ApiRequest): { text: string } | { refused: ApiResponse } {
  const [mediaType = "", ...params] = (req.contentType ?? "").split(";").map((p) => p.trim());
  if (!(XML_TYPES as readonly string[]).includes(mediaType.toLowerCase())) {
    return {
      refused: unsupportedMediaType(
        `Unsupported Content-Type ${req.contentType ?? "(none)"}: send application/xml.`,
      ),
    };
  }
  const charsetParam = params.find((p) => p.toLowerCase().startsWith("charset="));
  const charset = charsetParam?.slice("charset=".length).replace(/^"(.*)"$/, "$1") ?? "utf-8";
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true });
  } catch {
    return { refused: unsupportedMediaType(`Unsupported charset ${charset}: send UTF-8.`) };
  }
  try {
    return { text: decoder.decode(req.body) };
  } catch {
    return { refused: badRequest(`The request body is not valid ${charset}.`) };
  }
}

function unsupportedMediaType(details: string): ApiResponse {
  return { status: 415, errors: [errorEntry(ERROR_CODES.unsupportedMediaType, details)] };
}

export function notFound(id: string): ApiResponse {
  return {
    status: 404,
    errors: [
      {
        ...errorEntry(
          ERROR_CODES.objectNotFound,
          `The requested object : ${id} could not be found. Object identifiers are case sensitive.`,
        ),
        data: { objectId: id },
      },
    ],
  };
}

export function badRequest(details: string): ApiResponse {
  return codedBadRequest(ERROR_CODES.invalidRequest, details);
}

/** a 400 with a module's own code: the edge module's or IPAM's */
export function codedBadRequest(code: ErrorCode, details: string): ApiResponse {
  return { status: 400, errors: [errorEntry(code, details)] };
}

export function forbidden(): ApiResponse {
  return {
    status: 403,
    errors: [
      errorEntry(ERROR_CODES.notPermitted, "User does not have the rights to perform this operation."),
    ],
  };
}

export function unauthorizedResponse(reason: string): ApiResponse {
  return {
    status: 401,
    headers: { "WWW-Authenticate": 'Basic realm="NSX Manager"' },
    errors: [errorEntry(ERROR_CODES.authenticationFailed, `Authentication failed: ${reason}.`)],
  };
}
