/**
 * The NSXManager kind's module (reconcile/kind-module.ts): the manager's own check, whose failure
 * is its Ready, and the in-use finalizer a manager holds while objects name it.
 */
import { IN_USE_FINALIZER, type NSXManager } from "../../api/types.ts";
import type { KindModule } from "../kind-module.ts";
import type { ManagerCheckPart } from "../manager-check.ts";
import { passOf } from "../pass.ts";
import {
  dependentsOnReadyChange,
  insecureConditions,
  managerFacts,
  managerPasses,
  recordCredentials,
  refusedCredentialsWaitMs,
  secretHolds,
} from "./handler.ts";

/** The module, over the dependent kinds' parts of the check (the registry's, kinds.ts). */
export function nsxManagerKind(parts: readonly ManagerCheckPart[]): KindModule<NSXManager> {
  const passes = managerPasses(parts);
  return {
    reconcile: passOf(passes.check),
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
      finalize: passOf(passes.release),
      doing: "keeping the manager while objects that name it are deleted",
    },
  };
}
