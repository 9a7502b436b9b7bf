/**
 * The chart and deploy/ are one install written twice; what keeps them from drifting apart is a
 * comparison of what each renders, object by object and field by field, after the differences
 * that are meant (each named with its reason). Whatever deploy/ holds is the reference: a change
 * there fails the comparison until the chart follows, and so does a change to the chart alone.
 */
import type { K8sObject } from "./tools.ts";
import { describeObject } from "./objects.ts";

/** One intended difference: how it is removed before comparing, and why it is there. */
export interface IntendedDifference {
  name: string;
  reason: string;
  /** applied to each object the chart renders; undefined drops the object */
  chart?: (object: K8sObject) => K8sObject | undefined;
  /** applied to each object deploy/ renders; undefined drops the object */
  kustomize?: (object: K8sObject) => K8sObject | undefined;
}

/** The labels Helm charts add by convention (helm create writes them); deploy/ has none. */
export const HELM_LABELS = [
  "helm.sh/chart",
  "app.kubernetes.io/instance",
  "app.kubernetes.io/version",
  "app.kubernetes.io/managed-by",
] as const;

/** A deep copy without the keys `keys`, wherever they stand (labels, selectors, label selectors of terms). */
function withoutKeys(value: unknown, keys: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutKeys(item, keys));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !keys.includes(key))
      .map(([key, item]) => [key, withoutKeys(item, keys)]),
  );
}

export const HELM_LABELS_DIFFERENCE: IntendedDifference = {
  name: "Helm's labels",
  reason:
    "every chart object says which chart, release and version made it; the selectors add " +
    "app.kubernetes.io/instance, so that two releases never select each other's pods",
  chart: (object) => withoutKeys(object, HELM_LABELS) as K8sObject,
};

export interface Comparison {
  /** what the chart renders after the intended differences, by `Kind namespace/name` */
  chart: Record<string, K8sObject>;
  /** what deploy/ renders after the intended differences, by `Kind namespace/name` */
  kustomize: Record<string, K8sObject>;
  /** intended differences that changed nothing: no longer true, so no longer to be excused */
  stale: string[];
}

function applyAll(
  objects: readonly K8sObject[],
  step: ((object: K8sObject) => K8sObject | undefined) | undefined,
): { objects: K8sObject[]; changed: boolean } {
  if (step === undefined) return { objects: [...objects], changed: false };
  const after = objects.flatMap((object) => step(structuredClone(object)) ?? []);
  return { objects: after, changed: JSON.stringify(after) !== JSON.stringify(objects) };
}

function byId(objects: readonly K8sObject[]): Record<string, K8sObject> {
  return Object.fromEntries(objects.map((object) => [describeObject(object), object]));
}

/** Both renders with the intended differences taken out, and the differences that no longer apply. */
export function compareRenders(
  chart: readonly K8sObject[],
  kustomize: readonly K8sObject[],
  intended: readonly IntendedDifference[],
): Comparison {
  let chartObjects = [...chart];
  let kustomizeObjects = [...kustomize];
  const stale: string[] = [];
  for (const difference of intended) {
    const chartStep = applyAll(chartObjects, difference.chart);
    const kustomizeStep = applyAll(kustomizeObjects, difference.kustomize);
    if (!chartStep.changed && !kustomizeStep.changed) stale.push(difference.name);
    chartObjects = chartStep.objects;
    kustomizeObjects = kustomizeStep.objects;
  }
  return { chart: byId(chartObjects), kustomize: byId(kustomizeObjects), stale };
}
