/**
 * A kind's options are its state's (KindStateKey): the reconciler takes them by kind (`kinds`),
 * and a kind's state is made with those given over the defaults it declares, one by one.
 */
import { describe, expect, it } from "vitest";
import { EDGE_TENANT_STATE } from "../../src/reconcile/edge-tenant/state.ts";
import { POOL_STATE } from "../../src/reconcile/ip-pool/state.ts";
import { KIND_OPTION_DEFAULTS } from "../../src/reconcile/kinds.ts";
import { RECONCILER_DEFAULTS } from "../../src/reconcile/reconciler.ts";
import { ReconcilerState, type ReconcilerSettings } from "../../src/reconcile/state.ts";

function stateWith(kinds: ReconcilerSettings["kinds"]): ReconcilerState {
  const settings = { ...RECONCILER_DEFAULTS, kinds } as unknown as ReconcilerSettings;
  return new ReconcilerState(settings, []);
}

describe("a kind's options", () => {
  it("are its state's defaults where none are given", () => {
    const edgeTenants = stateWith({}).of(EDGE_TENANT_STATE);
    expect([edgeTenants.fullReadIntervalMs, edgeTenants.fullReadsPerMinute]).toEqual([3_600_000, 7]);
  });

  it("are those given for its kind, over its defaults one by one", () => {
    const edgeTenants = stateWith({ EdgeTenant: { fullReadsPerMinute: 20 } }).of(EDGE_TENANT_STATE);
    expect([edgeTenants.fullReadIntervalMs, edgeTenants.fullReadsPerMinute]).toEqual([3_600_000, 20]);
  });

  it("are not another kind's", () => {
    const edgeTenants = stateWith({ IPPoolAllocations: { fullReadsPerMinute: 20 } }).of(EDGE_TENANT_STATE);
    expect(edgeTenants.fullReadsPerMinute).toBe(7);
  });

  it("default, as the reconciler shows them, to what the states declare", () => {
    expect(RECONCILER_DEFAULTS.kinds).toBe(KIND_OPTION_DEFAULTS);
    expect(KIND_OPTION_DEFAULTS).toEqual({
      EdgeTenant: EDGE_TENANT_STATE.defaults,
      IPPoolAllocations: POOL_STATE.defaults,
    });
    expect(POOL_STATE.defaults).toEqual({ poolListTtlMs: 30_000 });
  });
});
