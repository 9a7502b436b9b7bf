/**
 * How an object is named across the operator: `ObjectRef` (kind, namespace, name), the queue key
 * `Kind/namespace/name` and the texts messages use. Objects without a namespace (manifest files)
 * live in `default`, as kubectl would put them.
 */
import { KINDS, type Kind, type NsxvObject, type ObjectMeta } from "./types.ts";

export interface ObjectRef {
  kind: Kind;
  namespace: string;
  name: string;
}

export const DEFAULT_NAMESPACE = "default";

export function refOf(object: NsxvObject): ObjectRef {
  return {
    kind: object.kind,
    namespace: object.metadata.namespace ?? DEFAULT_NAMESPACE,
    name: object.metadata.name,
  };
}

/** `EdgeTenant default/esg-app`: how messages name an object. */
export function formatRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace}/${ref.name}`;
}

export function sameRef(a: ObjectRef, b: ObjectRef): boolean {
  return a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
}

/** The queue key of an object: `Kind/namespace/name` (names and namespaces never contain `/`). */
export function objectKey(ref: ObjectRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

export function parseObjectKey(key: string): ObjectRef | undefined {
  const [kind, namespace, name, ...rest] = key.split("/");
  if (rest.length > 0 || namespace === undefined || name === undefined) return undefined;
  if (!(KINDS as readonly string[]).includes(kind ?? "")) return undefined;
  return { kind: kind as Kind, namespace, name };
}

/** `namespace/name` of a Secret or an object, without kind. */
export function namespacedName(meta: Pick<ObjectMeta, "name" | "namespace">): string {
  return `${meta.namespace ?? DEFAULT_NAMESPACE}/${meta.name}`;
}

/**
 * The NSXManager an EdgeTenant or IPPoolAllocations names: `spec.managerRef.name` in
 * `spec.managerRef.namespace`, by default the object's own namespace. Undefined for an
 * NSXManager, or when the name is missing.
 */
export function managerRefOf(object: NsxvObject): ObjectRef | undefined {
  if (object.kind === "NSXManager") return undefined;
  const { name, namespace } = object.spec?.managerRef ?? {};
  if (typeof name !== "string" || name === "") return undefined;
  const own = object.metadata.namespace ?? DEFAULT_NAMESPACE;
  return {
    kind: "NSXManager",
    namespace: typeof namespace === "string" && namespace !== "" ? namespace : own,
    name,
  };
}

/**
 * How a dependent in `namespace` names its NSXManager in status and messages: its name when it is
 * in the same namespace (what every earlier release wrote), `namespace/name` when in another.
 */
export function managerLabel(namespace: string, manager: ObjectRef): string {
  return manager.namespace === namespace ? manager.name : `${manager.namespace}/${manager.name}`;
}

/** The NSXManager a `managerLabel` names, for a dependent in `namespace`. */
export function managerOfLabel(namespace: string, label: string): ObjectRef {
  const at = label.indexOf("/");
  return at < 0
    ? { kind: "NSXManager", namespace, name: label }
    : { kind: "NSXManager", namespace: label.slice(0, at), name: label.slice(at + 1) };
}
