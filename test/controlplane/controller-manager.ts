/**
 * kube-controller-manager beside the shared control plane, with only the controllers a test
 * needs: the shared kube-apiserver has none, so a deleted namespace stays Terminating and owner
 * references are never followed. A test file that deletes namespaces starts it with the namespace
 * and garbage-collector controllers, as a real cluster has them, and stops it when it is done.
 */
import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import { startProcess, type ManagedProcess } from "./processes.ts";
import type { ControlPlaneInfo } from "./controlplane.ts";

/** The controllers a namespace deletion needs: the namespace's content deleted, then owners followed. */
export const NAMESPACE_DELETION_CONTROLLERS = [
  "namespace-controller",
  "garbage-collector-controller",
] as const;

export interface RunningControllerManager {
  process: ManagedProcess;
  stop(): Promise<void>;
}

export function startControllerManager(
  cp: Pick<ControlPlaneInfo, "kubeconfigPath" | "kubectlPath">,
  controllers: readonly string[] = NAMESPACE_DELETION_CONTROLLERS,
): RunningControllerManager {
  const dir = mkdtempSync(join(tmpdir(), "nsxv-kcm-"));
  const process = startProcess({
    name: "kube-controller-manager",
    // built beside kubectl by build.sh
    command: join(dirname(cp.kubectlPath), "kube-controller-manager"),
    args: [
      `--kubeconfig=${cp.kubeconfigPath}`,
      `--authentication-kubeconfig=${cp.kubeconfigPath}`,
      `--authorization-kubeconfig=${cp.kubeconfigPath}`,
      `--controllers=${controllers.join(",")}`,
      "--leader-elect=false",
      // no HTTPS endpoint: nothing here asks it anything
      "--secure-port=0",
      // the namespace controller lists every kind before deleting: do it at once
      "--concurrent-namespace-syncs=2",
    ],
    logPath: join(dir, "kube-controller-manager.log"),
  });
  return { process, stop: () => process.stop(2_000) };
}
