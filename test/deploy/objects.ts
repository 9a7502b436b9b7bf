/**
 * The shapes of the rendered objects that the deploy/ checks read, and small accessors that fail
 * the test, naming what is missing, when an object is not as expected.
 */
import { expect } from "vitest";
import type { K8sObject, PolicyRule } from "./tools.ts";

export interface Container {
  name: string;
  image: string;
  args: string[];
  env?: unknown[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { path: string; port: string | number } };
  readinessProbe: { httpGet: { path: string; port: string | number } };
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Record<string, unknown>;
}

export interface Deployment extends K8sObject {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: { serviceAccountName: string; securityContext: Record<string, unknown>; containers: Container[] };
    };
  };
}

export interface RoleObject extends K8sObject {
  rules: PolicyRule[];
}

export interface BindingObject extends K8sObject {
  roleRef: { kind: string; name: string };
  subjects: { kind: string; name: string; namespace?: string }[];
}

export interface ServiceMonitor extends K8sObject {
  spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
}

export interface PrometheusRule extends K8sObject {
  spec: {
    groups: {
      rules: {
        alert: string;
        expr: string;
        for?: string;
        labels?: Record<string, string>;
        annotations?: Record<string, string>;
      }[];
    }[];
  };
}

export function describeObject(object: K8sObject): string {
  const namespace = object.metadata.namespace;
  return `${object.kind} ${namespace === undefined ? "" : `${namespace}/`}${object.metadata.name}`;
}

export function rolesOf(objects: K8sObject[]): RoleObject[] {
  return objects.filter((object) => object.kind === "Role" || object.kind === "ClusterRole") as RoleObject[];
}

export function deploymentOf(objects: K8sObject[]): Deployment {
  const deployments = objects.filter((object) => object.kind === "Deployment") as Deployment[];
  expect(deployments).toHaveLength(1);
  return deployments[0] as Deployment;
}

export function containerOf(deployment: Deployment): Container {
  expect(deployment.spec.template.spec.containers).toHaveLength(1);
  return deployment.spec.template.spec.containers[0] as Container;
}

export function labelsMatch(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return (
    Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([key, value]) => labels[key] === value)
  );
}

/** The value of `--flag=value` in args. */
export function flagValue(args: string[], flag: string): string | undefined {
  return args.find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1);
}

/** Kubernetes quantities as plain numbers (cores, bytes), for the few suffixes used here. */
export function quantity(text: string | undefined): number {
  const match = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi)?$/.exec(text ?? "");
  expect(match, `quantity ${text}`).not.toBeNull();
  const factor = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 }[match?.[2] ?? ""] ?? 1;
  return Number(match?.[1]) * factor;
}
