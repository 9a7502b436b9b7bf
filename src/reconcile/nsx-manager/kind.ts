/**
 * The NSXManager kind's module (reconcile/kind-module.ts): the manager's own check, whose failure
 * is its Ready, and the in-use finalizer a manager holds while objects name it.
 */
import { IN_USE_FINALIZER, type NSXManager } from "../../api/types.ts";
import type { KindModule } from "../kind-module.ts";
import { passOf } from "../pass.ts";
import {
  dependentsOnReadyChange,
  insecureConditions,
  managerFacts,
  managerReleasePass,
  nsxManagerPass,
  recordCredentials,
  refusedCredentialsWaitMs,
  secretHolds,
} from "./handler.ts";

export const nsxManagerKind: KindModule<NSXManager> = {
  reconcile: passOf(nsxManagerPass),
  readyFollowsFailure: true,
  resyncFindsChanges: true,
  failureFacts: managerFacts,
  remember: recordCredentials,
  waitBeforeCall: refusedCredentialsWaitMs,
  wakesOnReadyChange: dependentsOnReadyChange,
  secretHolds,
  specConditions: insecureConditions,
  forget: (ref, state) => state.connections.forget(ref.namespace, ref.name),
  finalizer: {
    name: IN_USE_FINALIZER,
    wanted: (object, state) => state.dependentsOf(object).length > 0,
    finalize: passOf(managerReleasePass),
    doing: "keeping the manager while objects that name it are deleted",
  },
};
