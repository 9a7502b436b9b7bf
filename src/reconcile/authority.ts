/**
 * Authority before ownership. An EdgeTenant or IPPoolAllocations acts through one NSXManager
 * (spec.managerRef), which must let it:
 * - an NSXManager serves the objects of its own namespace, and of the namespaces whose labels its
 *   `spec.allowedNamespaces.selector` matches (none by default): the holder of a manager's
 *   credentials shares it on purpose, as Gateway API's allowedRoutes do; an object naming one
 *   that does not allow its namespace is refused (NamespaceNotAllowed) and makes no call;
 * - an object has authority when its NSXManager allows it and that NSXManager's last check found
 *   its credentials present, bound to it, and accepted by the manager (`status.authenticated`).
 * The conflict index ranks claimants by authority before age: a claim through an NSXManager
 * whose credentials are missing, unbound or refused never blocks one that has them.
 * Pure: the store gives the NSXManager and the namespace's labels.
 */
import { matchesLabels } from "../api/label-selector.ts";
import { formatRef, refOf, type ObjectRef } from "../api/refs.ts";
import type { NSXManager } from "../api/types.ts";
import { ReconcileError } from "./errors.ts";

/** A namespace's labels; undefined when the source does not know it (a directory: no labels). */
export type NamespaceLabels = (namespace: string) => Readonly<Record<string, string>> | undefined;

/** Whether objects of `namespace` may act through `manager`. */
export function allowsNamespace(manager: NSXManager, namespace: string, labelsOf: NamespaceLabels): boolean {
  if (refOf(manager).namespace === namespace) return true;
  const selector = manager.spec?.allowedNamespaces?.selector;
  if (selector === undefined || selector === null) return false;
  return matchesLabels(selector, labelsOf(namespace) ?? {});
}

/** Whether an object of `namespace` acting through `manager` (undefined: it does not exist) has authority. */
export function hasAuthority(
  manager: NSXManager | undefined,
  namespace: string,
  labelsOf: NamespaceLabels,
): boolean {
  return (
    manager !== undefined &&
    manager.status?.authenticated === true &&
    allowsNamespace(manager, namespace, labelsOf)
  );
}

/** NamespaceNotAllowed: a person must act (the manager's owner allows the namespace, or the object names another manager). */
export function namespaceNotAllowed(object: ObjectRef, manager: ObjectRef): ReconcileError {
  const message = `${formatRef(manager)} does not allow objects of namespace ${object.namespace} (its spec.allowedNamespaces.selector does not match the namespace's labels): ${formatRef(object)} makes no call through it; whoever owns the NSXManager decides which namespaces share it`;
  return new ReconcileError({ reason: "NamespaceNotAllowed", message });
}
