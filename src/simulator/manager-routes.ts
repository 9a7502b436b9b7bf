/**
 * The manager's own calls beyond edges and pools, as VMware's 6.4 RAML lists them: the three
 * calls of PowerNSX's Connect-NsxServer (since 2017: the network fabric's features as its
 * credential check, version information, the registered vCenter), and the authentication family
 * under `/api/2.0/services/auth/` and `/api/3.0/services/auth/token`. Each exists from the release
 * the RAML gives (ROUTE_SINCE); an older manager answers 404.
 *
 *   GET /api/2.0/nwfabric/features                               <featureInfos>: one <featureInfo> per fabric feature
 *   GET /api/1.0/appliance-management/global/info                <globalInfo>: the user, the release
 *   GET /api/2.0/services/vcconfig                               <vcInfo>: the state file's vcenter, else empty
 *
 *   POST /api/2.0/services/auth/token[?expiresInMinutes=1..1440]  6.4.0  a token for the caller
 *   POST /api/3.0/services/auth/token[?expiresInMinutes]           6.4.2  a token for <credentials> in the body
 *   GET|PUT /api/2.0/services/auth/tokenexpiration                 6.4.0  <authTokenExpiry> (tokenTtlMs)
 *   POST /api/2.0/services/auth/tokeninvalidation?userId=U         6.4.1  revokes U's tokens
 *   GET|PUT /api/2.0/services/auth/basic                           6.4.2  <basicAuthStatus>; the PUT takes
 *                                                                         <auth> credentials in the body
 */
import { parseXmlObject } from "../nsx/xml.ts";
import {
  badRequest,
  forbidden,
  readXmlBody,
  unauthorizedResponse,
  type ApiRequest,
  type ApiResponse,
  type Caller,
} from "./api.ts";
import type { Role } from "./auth.ts";
import type { ApiRoute } from "./faults.ts";
import type { SimulatorState } from "./state.ts";
import { releaseText } from "./manager.ts";
import { el, opt, renderDocument, tokenDocument } from "./xml.ts";

export type ManagerRoute = Extract<
  ApiRoute,
  | "token"
  | "tokenWithCredentials"
  | "getTokenExpiry"
  | "setTokenExpiry"
  | "invalidateTokens"
  | "getBasicAuth"
  | "setBasicAuth"
  | "globalInfo"
  | "fabricFeatures"
  | "getVcConfig"
>;

/** the release each call appeared in (6.4 RAML method history) */
export const ROUTE_SINCE: Readonly<Partial<Record<ApiRoute, readonly [number, number, number]>>> = {
  token: [6, 4, 0],
  getTokenExpiry: [6, 4, 0],
  setTokenExpiry: [6, 4, 0],
  invalidateTokens: [6, 4, 1],
  tokenWithCredentials: [6, 4, 2],
  getBasicAuth: [6, 4, 2],
  setBasicAuth: [6, 4, 2],
};

/** calls whose credentials are in the body: the Authorization header is not read */
export const CREDENTIALS_IN_BODY: ReadonlySet<ApiRoute> = new Set(["tokenWithCredentials", "setBasicAuth"]);

/** a token lives 1 minute to 24 hours (RAML) */
const MAX_EXPIRY_MINUTES = 1440;

/** Runs one of the calls above; `caller` is undefined for CREDENTIALS_IN_BODY calls. */
export function handleManagerRoute(
  state: SimulatorState,
  route: ManagerRoute,
  req: ApiRequest,
  caller: Caller | undefined,
): ApiResponse {
  switch (route) {
    case "globalInfo":
      return caller === undefined
        ? unauthenticated()
        : xmlResponse(state, globalInfo(state, caller.username));
    case "fabricFeatures":
      return xmlResponse(state, fabricFeatures(state));
    case "getVcConfig":
      return xmlResponse(state, vcInfo(state));
    case "token":
      return caller === undefined ? unauthenticated() : issueToken(state, req, caller.role);
    case "tokenWithCredentials":
      return withBodyCredentials(req, "credentials", state, (role) => issueToken(state, req, role));
    case "getTokenExpiry":
      return xmlResponse(
        state,
        el("authTokenExpiry", [el("defaultExpiryInMinutes", Math.round(state.settings.tokenTtlMs / 60_000))]),
      );
    case "setTokenExpiry":
      return setTokenExpiry(state, req);
    case "invalidateTokens": {
      const userId = req.query.get("userId");
      if (userId === null || userId === "")
        return badRequest("Give the user whose tokens to invalidate as userId.");
      state.auth.invalidate(userId);
      return { status: 204 };
    }
    case "getBasicAuth":
      return xmlResponse(
        state,
        el("basicAuthStatus", [el("disableBasicAuth", !state.settings.basicAuthEnabled)]),
      );
    case "setBasicAuth":
      return withBodyCredentials(req, "auth", state, (role, body) => {
        if (role !== "enterpriseAdmin") return forbidden();
        const disable = body.disableBasicAuth;
        if (disable !== "true" && disable !== "false")
          return badRequest("disableBasicAuth must be true or false.");
        state.updateSettings({ basicAuthEnabled: disable === "false" });
        return { status: 204 };
      });
  }
}

function unauthenticated(): ApiResponse {
  return unauthorizedResponse("no credentials");
}

function globalInfo(state: SimulatorState, username: string) {
  const { release } = state.manager;
  return el("globalInfo", [
    el("currentLoggedInUser", username),
    el("versionInfo", [
      el("majorVersion", release.major),
      el("minorVersion", release.minor),
      el("patchVersion", release.patch),
      el("buildNumber", release.build),
    ]),
  ]);
}

/**
 * The features of the RAML's network fabric status example (their ids), each at the manager's
 * release; the names are the simulator's (no record of a manager's was found).
 */
const FABRIC_FEATURES: readonly (readonly [id: string, name: string])[] = [
  ["com.vmware.vshield.nsxmgr.nwfabric.hostPrep", "Host Preparation"],
  ["com.vmware.vshield.nsxmgr.vxlan", "VXLAN"],
  ["com.vmware.vshield.nsxmgr.messagingInfra", "Messaging Infrastructure"],
  ["com.vmware.vshield.firewall", "Firewall"],
];

function fabricFeatures(state: SimulatorState) {
  const version = releaseText(state.manager.release);
  return el(
    "featureInfos",
    FABRIC_FEATURES.map(([featureId, name]) =>
      el("featureInfo", [el("name", name), el("featureId", featureId), el("version", version)]),
    ),
  );
}

/** the registered vCenter as the RAML's example shows it; an empty <vcInfo/> when none is */
function vcInfo(state: SimulatorState) {
  const vc = state.vcenter;
  if (vc === undefined) return el("vcInfo");
  return el("vcInfo", [
    el("ipAddress", vc.ipAddress),
    el("userName", vc.userName),
    opt("certificateThumbprint", vc.certificateThumbprint),
    el("assignRoleToUser", true),
  ]);
}

function issueToken(state: SimulatorState, req: ApiRequest, role: Role): ApiResponse {
  const minutes = req.query.get("expiresInMinutes");
  let ttlMs = state.settings.tokenTtlMs;
  if (minutes !== null) {
    const value = /^\d+$/.test(minutes) ? Number(minutes) : 0;
    if (value < 1 || value > MAX_EXPIRY_MINUTES) {
      return badRequest(
        `expiresInMinutes must be from 1 to ${MAX_EXPIRY_MINUTES}, not ${JSON.stringify(minutes)}.`,
      );
    }
    ttlMs = value * 60_000;
  }
  const issued = state.auth.issue({ nowMs: state.clock.now(), ttlMs, role });
  return { status: 200, body: tokenDocument(issued, { pretty: state.settings.prettyXml }) };
}

function setTokenExpiry(state: SimulatorState, req: ApiRequest): ApiResponse {
  const body = readBodyObject(req, "authTokenExpiry");
  if ("refused" in body) return body.refused;
  const text = body.value.defaultExpiryInMinutes;
  const minutes = typeof text === "string" && /^\d+$/.test(text) ? Number(text) : 0;
  if (minutes < 1 || minutes > MAX_EXPIRY_MINUTES) {
    return badRequest(`defaultExpiryInMinutes must be from 1 to ${MAX_EXPIRY_MINUTES}.`);
  }
  state.updateSettings({ tokenTtlMs: minutes * 60_000 });
  return { status: 204 };
}

/** reads `<root><username/><password/>...</root>` and runs `then` with the role of those credentials; 401 when wrong */
function withBodyCredentials(
  req: ApiRequest,
  root: string,
  state: SimulatorState,
  then: (role: Role, body: Record<string, unknown>) => ApiResponse,
): ApiResponse {
  const body = readBodyObject(req, root);
  if ("refused" in body) return body.refused;
  const { username, password } = body.value;
  const role =
    typeof username === "string" && typeof password === "string"
      ? state.auth.roleOf(username, password)
      : undefined;
  if (role === undefined) return unauthorizedResponse(`bad credentials in <${root}>`);
  return then(role, body.value);
}

function readBodyObject(
  req: ApiRequest,
  root: string,
): { value: Record<string, unknown> } | { refused: ApiResponse } {
  const read = readXmlBody(req);
  if ("refused" in read) return read;
  try {
    const parsed = parseXmlObject(read.text, root)[root];
    if (typeof parsed === "object" && parsed !== null) return { value: parsed as Record<string, unknown> };
  } catch (error) {
    return { refused: badRequest(error instanceof Error ? error.message : String(error)) };
  }
  return { refused: badRequest(`The request body must be a <${root}> document.`) };
}

function xmlResponse(state: SimulatorState, root: ReturnType<typeof el>): ApiResponse {
  return { status: 200, body: renderDocument(root, { pretty: state.settings.prettyXml }) };
}
