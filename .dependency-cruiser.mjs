/**
 * The shape of src/, checked by `npm run lint` (depcruise): the layers README.md's Development
 * section describes, and no cycles. Each rule names the folder that may not import, and what.
 */
/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-cycles",
      comment: "A cycle makes two modules one: split the piece both need into a third.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "util-is-a-leaf",
      comment: "util/ holds small pieces with no knowledge of the rest.",
      severity: "error",
      from: { path: "^src/util/" },
      to: { path: "^src/(?!util/)" },
    },
    {
      name: "api-knows-only-util",
      comment: "api/ is the kinds and their helpers: it knows neither the manager nor the machinery.",
      severity: "error",
      from: { path: "^src/api/" },
      to: { path: "^src/(?!api/|util/)" },
    },
    {
      name: "nsx-knows-no-kubernetes",
      comment: "nsx/ is the manager's client: nothing of Kubernetes or of our kinds.",
      severity: "error",
      from: { path: "^src/nsx/" },
      to: { path: "^src/(?!nsx/|util/)|@kubernetes/client-node" },
    },
    {
      name: "reconcile-knows-no-wiring",
      comment: "reconcile/ decides from the kinds and the manager: it knows no source, queue or cluster.",
      severity: "error",
      from: { path: "^src/reconcile/" },
      to: { path: "^src/(?!reconcile/|api/|nsx/|util/)|@kubernetes/client-node" },
    },
    {
      name: "controller-is-generic",
      comment: "controller/ is generic machinery: it imports nothing of nsx/, reconcile/ or the kinds.",
      severity: "error",
      from: { path: "^src/controller/" },
      to: { path: "^src/(?!controller/|util/)" },
    },
    {
      name: "source-knows-no-manager",
      comment: "source/ delivers the desired state and carries status: it never talks to a manager.",
      severity: "error",
      from: { path: "^src/source/" },
      to: { path: "^src/(nsx|operator|cli|simulator)/" },
    },
    {
      name: "operator-is-not-a-command",
      comment: "operator/ is the wiring the commands use, not the other way round.",
      severity: "error",
      from: { path: "^src/operator/" },
      to: { path: "^src/(cli|simulator)/" },
    },
    {
      name: "simulator-stands-alone",
      comment: "The simulator is a manager: it shares the XML and IP pieces, nothing of the operator.",
      severity: "error",
      from: { path: "^src/simulator/" },
      to: { path: "^src/(?!simulator/|nsx/|util/)|@kubernetes/client-node" },
    },
    {
      name: "client-node-only-in-cluster-code",
      comment:
        "@kubernetes/client-node is loaded only by code that talks to a cluster (kube-*, source/kubernetes*, cli/run-cluster): plan, apply, simulate, demo and run --manifests never load it.",
      severity: "error",
      from: {
        path: "^src/",
        pathNot: "^src/(controller/kube-[a-z-]+|source/kubernetes|cli/run-cluster)\\.ts$",
      },
      to: { path: "@kubernetes/client-node" },
    },
    {
      name: "cluster-code-loaded-lazily",
      comment: "Modules that load client-node are imported by the cluster wiring, or dynamically by run.",
      severity: "error",
      from: {
        path: "^src/",
        pathNot: "^src/(controller/kube-[a-z-]+|source/kubernetes[a-z-]*|cli/run-cluster)\\.ts$",
      },
      to: {
        path: "^src/(controller/kube-(lease-store|event-sink|list-watch)|source/kubernetes|cli/run-cluster)\\.ts$",
        // a type import is erased at run time
        dependencyTypesNot: ["dynamic-import", "type-only"],
      },
    },
    {
      name: "cli-entry-checks-node-first",
      comment:
        "cli/main.ts refuses an old Node.js before anything loads: it imports only cli/node-version.ts (which imports nothing), the program dynamically.",
      severity: "error",
      from: { path: "^src/cli/(main|node-version)\\.ts$" },
      to: { pathNot: "^src/cli/node-version\\.ts$", dependencyTypesNot: ["dynamic-import"] },
    },
    {
      name: "src-not-tests",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench)/" },
    },
    {
      name: "resolvable",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
    },
  },
};
