/**
 * The test-only firewall-default kind's handler (reconcile/kind.ts's contract): observe the edge
 * (GET), plan the one write when its default action differs, PUT the document just read with only
 * that action changed. Its object is an EdgeTenant's shape (spec.edgeId); a real kind has its own
 * type in api/types.ts and its CRD. The desired action is the handler's to keep the test small.
 */
import type { EdgeTenant } from "../../../src/api/types.ts";
import { EdgeDocument } from "../../../src/nsx/edge-document.ts";
import type { ManagerApi } from "../../../src/nsx/types.ts";
import type { PassHandler } from "../../../src/reconcile/kind.ts";
import type { SetFirewallDefaultAction } from "./actions.ts";

interface Seen {
  action: string | undefined;
  document: EdgeDocument;
}

const DEFAULT_ACTION = /(<defaultPolicy>\s*<action>)([^<]*)(<\/action>)/;

export function firewallDefaultPass(
  api: ManagerApi,
  desired: string,
): PassHandler<EdgeTenant, string, Seen, SetFirewallDefaultAction> {
  return {
    prepare: (ctx) => Promise.resolve(ctx.object.spec.edgeId),
    observe: async (edgeId, ctx) => {
      const document = await api.getEdge(edgeId, { signal: ctx.signal });
      return { action: DEFAULT_ACTION.exec(document.serialize())?.[2], document };
    },
    plan: (edgeId, seen) => ({
      actions:
        seen.action === desired
          ? []
          : [{ type: "setFirewallDefault", edgeId, from: seen.action, to: desired }],
      withheld: [],
      settle: () => ({ events: [] }),
    }),
    execute: async (action, { observed }, ctx) => {
      // a kind in src/ gives EdgeDocument a setter for its field; the test edits the text
      const text = observed.document.serialize().replace(DEFAULT_ACTION, `$1${action.to}$3`);
      await api.putEdge(action.edgeId, EdgeDocument.parse(text), { signal: ctx.signal });
      return "done";
    },
    rereadOn: { NSX_ERR_CONFLICT: "retry" },
    targetOf: (action) => action.edgeId,
    describe: (action) => `PUT edge ${action.edgeId} (its default firewall action)`,
  };
}
