/**
 * Helpers for the static checks of deploy/, gitops/ and the Dockerfile: repository paths, YAML
 * loading that fails on any parse error, external tools looked up on PATH (kubectl renders
 * kustomizations exactly as `kubectl apply -k` does; lua5.1 runs the Argo CD health script), and
 * flattening RBAC rules into comparable rows.
 */
import { execFileSync } from "node:child_process";
import { accessSync, constants, readFileSync, readdirSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}

export function readRepoFile(...parts: string[]): string {
  return readFileSync(repoPath(...parts), "utf8");
}

/** A Kubernetes object as YAML gives it: only the fields the checks read are typed. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** Every document of a multi-document YAML text; throws on any error, naming `what`. */
export function parseYamlDocuments(text: string, what: string): unknown[] {
  return parseAllDocuments(text)
    .map((document) => {
      if (document.errors.length > 0) {
        throw new Error(`${what}: ${document.errors.map((e) => e.message).join("; ")}`);
      }
      return document.toJS() as unknown;
    })
    .filter((value) => value != null);
}

/** Files under a repository directory whose names end in one of `extensions`, sorted. */
export function listFiles(dir: string, extensions: readonly string[]): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(repoPath(dir))) {
    const relative = join(dir, entry);
    if (statSync(repoPath(relative)).isDirectory()) {
      found.push(...listFiles(relative, extensions));
    } else if (extensions.some((extension) => entry.endsWith(extension))) {
      found.push(relative);
    }
  }
  return found.sort();
}

/** An executable on PATH, or why a check that needs it cannot run. */
export interface ToolLookup {
  path: string | undefined;
  /** names the tool and how to install it; shown when the check is skipped or, in CI, fails */
  missingReason: string;
}

export function lookupTool(name: string, installHint: string): ToolLookup {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return { path: candidate, missingReason: "" };
    } catch {
      // not in this PATH entry
    }
  }
  const missingReason = `${name} is not on PATH: ${installHint}`;
  // a skip that says nothing looks like a pass: say which tests wait for what, and how to get it
  if (!IN_CI) console.warn(`[skipped] the tests that need ${missingReason}`);
  return { path: undefined, missingReason };
}

/** CI must run every check: there a missing tool is a failure, not a skip. */
export const IN_CI = process.env.CI === "true" || process.env.CI === "1";

/** `kubectl kustomize DIR` (what `kubectl apply -k DIR` sends), parsed. */
export function renderKustomization(kubectl: string, dir: string): K8sObject[] {
  const output = execFileSync(kubectl, ["kustomize", dir], { encoding: "utf8", timeout: 30_000 });
  return parseYamlDocuments(output, `kubectl kustomize ${dir}`) as K8sObject[];
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs?: string[];
  nonResourceURLs?: string[];
}

/** One row per (apiGroup, resource, verb, resourceName): two rule lists grant the same iff their rows are equal. */
export function ruleRows(rules: readonly PolicyRule[]): string[] {
  const rows = new Set<string>();
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs ?? []) {
          for (const name of rule.resourceNames ?? ["(any)"]) {
            rows.add(`${group === "" ? "core" : group} ${resource} ${verb} ${name}`);
          }
        }
      }
    }
    for (const url of rule.nonResourceURLs ?? []) rows.add(`nonResourceURL ${url}`);
  }
  return [...rows].sort();
}
