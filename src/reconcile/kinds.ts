/**
 * The registry of kinds: one module per kind (kind-module.ts), a row per kind of KINDS
 * (api/types.ts), so a kind listed there without a module does not compile. The reconciler takes
 * a kind's row for every object; nothing else in reconcile/ names the kinds' modules.
 */
import type { Kind, NsxvObject } from "../api/types.ts";
import { edgeTenantKind } from "./edge-tenant/kind.ts";
import { ipPoolKind } from "./ip-pool/kind.ts";
import type { KindModule } from "./kind-module.ts";
import { nsxManagerKind } from "./nsx-manager/kind.ts";

export const KIND_MODULES: { readonly [K in Kind]: KindModule<Extract<NsxvObject, { kind: K }>> } = {
  NSXManager: nsxManagerKind,
  EdgeTenant: edgeTenantKind,
  IPPoolAllocations: ipPoolKind,
};

/** The module of an object's kind. */
export function moduleOf(kind: Kind): KindModule<NsxvObject> {
  return KIND_MODULES[kind] as KindModule<NsxvObject>;
}
