/**
 * What kstatus (sigs.k8s.io/cli-utils/pkg/kstatus, the library Flux, kpt and cli-utils' apply use)
 * says of objects, asked of the real library: test/kstatus/main.go, which
 * test/controlplane/build.sh builds beside the control plane binaries.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { controlPlaneBinDir } from "../controlplane/binaries.ts";

export type KStatus = "Current" | "InProgress" | "Failed" | "Terminating" | "NotFound" | "Unknown";

export interface KStatusResult {
  status: KStatus;
  message: string;
}

/** kstatus's verdict on each object, in order, as the API server returned them */
export function kstatusOf(objects: readonly object[]): KStatusResult[] {
  const output = execFileSync(join(controlPlaneBinDir(), "kstatus"), {
    input: JSON.stringify(objects),
    encoding: "utf8",
  });
  return JSON.parse(output) as KStatusResult[];
}

export function kstatus(object: object): KStatusResult {
  return kstatusOf([object])[0]!;
}
