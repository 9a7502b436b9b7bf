/** Builders for the EdgeTenant tests: the object, its recorded original, an edge document, a planner input. */
import {
  API_VERSION,
  RESTORE_FINALIZER,
  type EdgeTenant,
  type EdgeTenantSpec,
} from "../../../src/api/types.ts";
import type { EdgeTenantPlanInput } from "../../../src/reconcile/edge-tenant/plan.ts";
import { resolveEdgeTenant } from "../../../src/reconcile/edge-tenant/spec.ts";
import { meta, type Meta } from "../fixtures.ts";

export function edgeTenant(spec: Partial<EdgeTenantSpec> = {}, m: Meta = {}): EdgeTenant {
  return {
    apiVersion: API_VERSION,
    kind: "EdgeTenant",
    metadata: meta({ name: "edge", ...m }),
    spec: { managerRef: { name: "nsx" }, edgeId: "edge-1", tenant: "blue", ...spec },
  };
}

/** The object as it is once a pass recorded the edge's original tenant (before its first correction). */
export function withOriginal(object: EdgeTenant, originalTenant: string): EdgeTenant {
  const originalTenantOf = {
    edgeId: object.spec.edgeId,
    manager: object.spec.managerRef.name,
    managerURL: "https://nsx.example",
  };
  return { ...object, status: { ...object.status, originalTenant, originalTenantOf } };
}

/** A small edge document with content the PUT must carry back unchanged. */
export function edgeXml(
  init: { id?: string; version?: number; tenant?: string; name?: string } = {},
): string {
  const { id = "edge-1", version = 7, tenant, name = "edge-one" } = init;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<edge>`,
    `  <id>${id}</id>`,
    `  <version>${version}</version>`,
    `  <status>deployed</status>`,
    `  <datacenterMoid>datacenter-2</datacenterMoid>`,
    ...(tenant === undefined ? [] : [`  <tenant>${tenant}</tenant>`]),
    `  <name>${name}</name>`,
    `  <features><firewall><rule id="1">keep &amp; me</rule></firewall><featureConfig/></features>`,
    `  <edgeAssistId>4</edgeAssistId>`,
    `</edge>`,
  ].join("\n");
}

/** An edge planner input from an object, as the handler builds it: the spec resolved once. */
export function edgePlanInput(
  init: Omit<
    EdgeTenantPlanInput,
    "config" | "generation" | "manager" | "recordsOriginal" | "finalizerPresent"
  > &
    Partial<Pick<EdgeTenantPlanInput, "manager" | "recordsOriginal" | "finalizerPresent">> & {
      object: EdgeTenant;
    },
): EdgeTenantPlanInput {
  const { object, ...rest } = init;
  return {
    manager: { name: object.spec.managerRef.name, url: "https://nsx.example" },
    // a one-shot pass unless a case says otherwise: the record-before-write step is its own cases
    recordsOriginal: false,
    finalizerPresent: (object.metadata.finalizers ?? []).includes(RESTORE_FINALIZER),
    ...rest,
    config: resolveEdgeTenant(object),
    generation: object.metadata.generation,
  };
}
