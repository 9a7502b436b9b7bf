/** The IPPoolAllocations kind's module (reconcile/kind-module.ts): one pass, nothing to do on delete. */
import type { IPPoolAllocations } from "../../api/types.ts";
import type { KindModule } from "../kind-module.ts";
import { passOf } from "../pass.ts";
import { ipPoolPass } from "./handler.ts";

export const ipPoolKind: KindModule<IPPoolAllocations> = { reconcile: passOf(ipPoolPass) };
