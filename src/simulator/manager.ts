/**
 * Who the simulated manager is: its UUIDs (in pool and edge summary documents) and its release,
 * which `GET /api/1.0/appliance-management/global/info` reports and which decides the calls it
 * offers (the 6.4 token calls do not exist on a 6.3 manager).
 */
import { createHash } from "node:crypto";

export interface ManagerRelease {
  major: number;
  minor: number;
  patch: number;
  build: number;
}

export interface ManagerIdentity {
  vsmUuid: string;
  nodeId: string;
  release: ManagerRelease;
}

export const DEFAULT_VSM_UUID = "420D3C54-5E36-8D1A-9F41-2C6B7A3E9B10";
/** a 6.4.6 manager: every call of the 6.4 RAML that the simulator has is there */
export const DEFAULT_RELEASE: Readonly<ManagerRelease> = Object.freeze({
  major: 6,
  minor: 4,
  patch: 6,
  build: 15177041,
});

export function managerIdentity(vsmUuid: string, release: ManagerRelease): ManagerIdentity {
  return { vsmUuid, nodeId: uuidFrom(vsmUuid), release };
}

/** `6.4.6`, as an appliance's `vmVersion` shows it */
export function releaseText(release: ManagerRelease): string {
  return `${release.major}.${release.minor}.${release.patch}`;
}

/** `major.minor.patch` (each 0-999), or undefined when the text is not one */
export function parseRelease(text: string, build: number): ManagerRelease | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text.trim());
  if (match === null) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), build };
}

/** true when the release is `since` (major.minor.patch) or later */
export function isAtLeast(release: ManagerRelease, since: readonly [number, number, number]): boolean {
  const own = [release.major, release.minor, release.patch];
  for (let i = 0; i < 3; i++) {
    const [a, b] = [own[i] ?? 0, since[i] ?? 0];
    if (a !== b) return a > b;
  }
  return true;
}

/** a stable node UUID derived from the manager's */
function uuidFrom(seed: string): string {
  const h = createHash("sha256").update(seed).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
