/**
 * The NSXManager kind makes no change on the manager: its effects are how `plan` and `apply` name
 * one (its URL). Pure data, registered in reconcile/actions.ts.
 */
import type { NSXManager } from "../../api/types.ts";
import type { KindEffects } from "../effects.ts";

export const NSX_MANAGER_EFFECTS: KindEffects<never, never, NSXManager> = {
  kind: "NSXManager",
  actions: {},
  changeLists: {},
  changeReasons: [],
  view: { target: (object) => object.spec.url },
};
