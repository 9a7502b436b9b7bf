/**
 * metav1.LabelSelector as the API server reads one: every `matchLabels` pair and every
 * `matchExpressions` requirement must hold (an empty selector matches everything, as a
 * NetworkPolicy's namespaceSelector does). What an NSXManager's `spec.allowedNamespaces.selector`
 * is evaluated with against a namespace's labels.
 */

export type LabelSelectorOperator = "In" | "NotIn" | "Exists" | "DoesNotExist";

export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator;
  /** In and NotIn: at least one value; Exists and DoesNotExist: none */
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** Whether `labels` satisfy the selector; a requirement this module does not know matches nothing. */
export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  const has = (key: string): boolean => Object.hasOwn(labels, key);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!has(key) || labels[key] !== value) return false;
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const holds =
      operator === "In"
        ? has(key) && values.includes(labels[key] as string)
        : operator === "NotIn"
          ? !has(key) || !values.includes(labels[key] as string)
          : operator === "Exists"
            ? has(key)
            : operator === "DoesNotExist"
              ? !has(key)
              : false;
    if (!holds) return false;
  }
  return true;
}
