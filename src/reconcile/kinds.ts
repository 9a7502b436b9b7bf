/**
 * The registry of kinds: one module per kind (kind-module.ts), a row per kind of KINDS
 * (api/types.ts), so a kind listed there without a module does not compile. The reconciler takes
 * a kind's row for every object; nothing else in reconcile/ names the kinds' modules.
 */
import type { Kind, NsxvObject } from "../api/types.ts";
import { edgeTenantKind } from "./edge-tenant/kind.ts";
import { EDGE_TENANT_STATE, type EdgeTenantOptions } from "./edge-tenant/state.ts";
import { ipPoolKind } from "./ip-pool/kind.ts";
import { POOL_STATE, type PoolOptions } from "./ip-pool/state.ts";
import type { KindModule } from "./kind-module.ts";
import type { ManagerCheckPart } from "./manager-check.ts";
import { nsxManagerKind } from "./nsx-manager/kind.ts";

/** The dependent kinds, in the order an NSXManager's Ready message names what their parts of its check read. */
const DEPENDENT_MODULES = { IPPoolAllocations: ipPoolKind, EdgeTenant: edgeTenantKind } as const;

/** The dependent kinds' parts of an NSXManager's check (manager-check.ts): its module runs them. */
export const MANAGER_CHECK_PARTS: readonly ManagerCheckPart[] = Object.values(DEPENDENT_MODULES).flatMap(
  (module) => (module.managerCheck === undefined ? [] : [module.managerCheck]),
);

export const KIND_MODULES: { readonly [K in Kind]: KindModule<Extract<NsxvObject, { kind: K }>> } = {
  NSXManager: nsxManagerKind(MANAGER_CHECK_PARTS),
  ...DEPENDENT_MODULES,
};

/** The module of an object's kind. */
export function moduleOf(kind: Kind): KindModule<NsxvObject> {
  return KIND_MODULES[kind] as KindModule<NsxvObject>;
}

/**
 * Each kind's options, by kind (a kind with options of its own: its state's, KindStateKey), as
 * the reconciler takes them (ReconcilerDeps' `kinds`); any left out take the state's defaults.
 */
export interface KindOptions {
  EdgeTenant?: Partial<EdgeTenantOptions>;
  IPPoolAllocations?: Partial<PoolOptions>;
}

/** The kinds' options' defaults, as their states declare them. */
export const KIND_OPTION_DEFAULTS = Object.freeze({
  EdgeTenant: EDGE_TENANT_STATE.defaults,
  IPPoolAllocations: POOL_STATE.defaults,
}) satisfies Required<KindOptions>;
