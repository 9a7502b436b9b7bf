/**
 * The Helm chart's tests share: where the chart is, the helm that test/controlplane/build.sh
 * builds (else one on PATH), and `helm template` / `helm lint` runs whose values go through a
 * file, as a user's `-f my-values.yaml` does. helm keeps its caches and settings in a temporary
 * directory, never in the user's.
 */
import { execFileSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { controlPlaneBinDir } from "../controlplane/binaries.ts";
import { type K8sObject, type ToolLookup, lookupTool, parseYamlDocuments, repoPath } from "./tools.ts";

export const CHART_DIR = repoPath("deploy/helm/nsxv-operator");
/** The release and namespace whose names equal deploy/'s (nsxv-operator in nsxv-system). */
export const DEFAULT_RELEASE = { name: "nsxv-operator", namespace: "nsxv-system" } as const;

/**
 * A tool test/controlplane/build.sh builds (helm, kubectl) from its directory when built, else
 * from PATH: `npm test` builds them once, and the unit tests find them there too.
 */
export function lookupBuiltTool(name: "helm" | "kubectl", purpose: string): ToolLookup {
  const built = join(controlPlaneBinDir(), name);
  try {
    accessSync(built, constants.X_OK);
    return { path: built, missingReason: "" };
  } catch {
    return lookupTool(name, `${purpose}; \`bash test/controlplane/build.sh\` builds it from Go modules`);
  }
}

/** Environment for a helm child: its cache, config and data in `home`, nothing of the user's. */
export function helmEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HELM_CACHE_HOME: join(home, "cache"),
    HELM_CONFIG_HOME: join(home, "config"),
    HELM_DATA_HOME: join(home, "data"),
  };
  delete env.KUBECONFIG;
  delete env.HELM_NAMESPACE;
  return env;
}

export interface RenderOptions {
  release?: string;
  namespace?: string;
  /** written to a values file and passed with -f */
  values?: Record<string, unknown>;
  /** the CRDs of crds/ too (`--include-crds`) */
  includeCrds?: boolean;
}

/** A failed helm run: the message is helm's own error output. */
export class HelmError extends Error {
  readonly code = "HELM_FAILED";
  readonly args: readonly string[];
  readonly stderr: string;
  constructor(args: readonly string[], stderr: string, cause: unknown) {
    super(`helm ${args.join(" ")} failed:\n${stderr}`, { cause });
    this.name = "HelmError";
    this.args = args;
    this.stderr = stderr;
  }
}

/** Runs helm with `values` (if any) in a values file; returns stdout, throws HelmError. */
export function runHelm(helmPath: string, args: readonly string[], values?: Record<string, unknown>): string {
  const home = mkdtempSync(join(tmpdir(), "nsxv-helm-"));
  try {
    const fullArgs = [...args];
    if (values !== undefined) {
      const file = join(home, "values.json");
      writeFileSync(file, JSON.stringify(values));
      fullArgs.push("--values", file);
    }
    try {
      return execFileSync(helmPath, fullArgs, {
        encoding: "utf8",
        env: helmEnv(home),
        timeout: 60_000,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      throw new HelmError(args, String((error as { stderr?: unknown }).stderr ?? error), error);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** `helm template` of the chart, parsed; defaults: deploy/'s release and namespace, no values. */
export function renderChart(helmPath: string, options: RenderOptions = {}): K8sObject[] {
  const {
    release = DEFAULT_RELEASE.name,
    namespace = DEFAULT_RELEASE.namespace,
    values,
    includeCrds,
  } = options;
  const args = ["template", release, CHART_DIR, "--namespace", namespace];
  if (includeCrds === true) args.push("--include-crds");
  return parseYamlDocuments(runHelm(helmPath, args, values), `helm ${args.join(" ")}`) as K8sObject[];
}

/** helm's error output of a render that must fail; throws when it succeeds. */
export function renderFailure(helmPath: string, options: RenderOptions): string {
  try {
    renderChart(helmPath, options);
  } catch (error) {
    if (error instanceof HelmError) return error.stderr;
    throw error;
  }
  throw new Error(`helm template with ${JSON.stringify(options.values)} succeeded; it must fail`);
}

/** The parts of values.schema.json that tests compare with the operator. */
export interface ChartSchema {
  properties: Record<string, { enum?: string[] } | undefined>;
  definitions: Record<string, { pattern?: string } | undefined>;
}

export function readChartSchema(): ChartSchema {
  return JSON.parse(readFileSync(join(CHART_DIR, "values.schema.json"), "utf8")) as ChartSchema;
}
