/**
 * The EdgeTenant kind's module (reconcile/kind-module.ts): its pass over a live object, the
 * restore finalizer an object with deletionPolicy Restore holds until the tenant is written back,
 * and its part of its NSXManager's check (the edge list).
 */
import { RESTORE_FINALIZER, type EdgeTenant } from "../../api/types.ts";
import type { KindModule } from "../kind-module.ts";
import { passOf } from "../pass.ts";
import { edgeTenantPass, restorePass } from "./handler.ts";
import { edgeListCheck } from "./manager-check.ts";

export const edgeTenantKind: KindModule<EdgeTenant> = {
  reconcile: passOf(edgeTenantPass),
  managerCheck: edgeListCheck,
  finalizer: {
    name: RESTORE_FINALIZER,
    wanted: (object) => object.spec?.deletionPolicy === "Restore",
    finalize: passOf(restorePass),
    doing: "restoring the original tenant before the object goes",
  },
};
