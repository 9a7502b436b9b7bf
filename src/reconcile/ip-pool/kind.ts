/**
 * The IPPoolAllocations kind's module (reconcile/kind-module.ts): one pass, nothing to do on
 * delete, and its part of its NSXManager's check (the pools of the global scope).
 */
import type { IPPoolAllocations } from "../../api/types.ts";
import type { KindModule } from "../kind-module.ts";
import { passOf } from "../pass.ts";
import { ipPoolPass } from "./handler.ts";
import { poolCheck } from "./manager-check.ts";

export const ipPoolKind: KindModule<IPPoolAllocations> = {
  reconcile: passOf(ipPoolPass),
  managerCheck: poolCheck,
};
