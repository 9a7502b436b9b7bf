/**
 * The parts of `run` that talk to a cluster: the kubeconfig, the Kubernetes source and the Lease
 * of leader election, from the adapters in src/kube/. `run.ts` imports this module only when no
 * --manifests is given, so that a run without a cluster never loads @kubernetes/client-node.
 */
import { SharedConnectionsKubeConfig } from "../kube/config.ts";
import type { Logger } from "../controller/controller.ts";
import { clusterLeaseStore } from "../kube/lease-store.ts";
import type { LeaderElectionConfig } from "../operator/operator.ts";
import { KubernetesSource } from "../source/kubernetes.ts";
import type { DesiredStateSource } from "../source/source.ts";

/** Where `run` reads the desired state from in a cluster: the flags --kubeconfig, --namespace, --selector. */
export interface ClusterSourceConfig {
  type: "cluster";
  kubeconfig?: string;
  namespace?: string;
  selector?: string;
}

/** The Lease of --leader-elect. */
export interface LeaseConfig {
  id: string;
  namespace: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export async function clusterParts(
  config: ClusterSourceConfig,
  le: LeaseConfig | undefined,
  logger: Logger,
): Promise<{ source: DesiredStateSource; leaderElection: LeaderElectionConfig | undefined }> {
  const kc = new SharedConnectionsKubeConfig();
  if (config.kubeconfig !== undefined) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault(); // $KUBECONFIG, ~/.kube/config, then the in-cluster service account
  const source = new KubernetesSource({
    kubeConfig: kc,
    logger,
    ...(config.namespace !== undefined ? { namespace: config.namespace } : {}),
    ...(config.selector !== undefined ? { labelSelector: config.selector } : {}),
  });
  const leaderElection =
    le === undefined
      ? undefined
      : {
          name: le.id,
          store: clusterLeaseStore(kc, { namespace: le.namespace, name: le.id }),
          leaseDurationMs: le.leaseDurationMs,
          renewDeadlineMs: le.renewDeadlineMs,
          retryPeriodMs: le.retryPeriodMs,
        };
  return { source, leaderElection };
}
