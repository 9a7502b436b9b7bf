/**
 * The shape of src/, checked by `npm run lint` (depcruise), rule by folder: the layers
 * docs/architecture.md describes, and no cycles. Each rule names the folder that may not import,
 * and what; most are written as "only these", so a new folder is forbidden until a rule allows it.
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
      comment: "nsx/ is the manager's client: nothing of Kubernetes, of the machinery or of our kinds.",
      severity: "error",
      from: { path: "^src/nsx/" },
      to: { path: "^src/(?!nsx/|util/)" },
    },
    {
      name: "reconcile-knows-no-wiring",
      comment: "reconcile/ decides from the kinds and the manager: it knows no source, queue or cluster.",
      severity: "error",
      from: { path: "^src/reconcile/" },
      to: { path: "^src/(?!reconcile/|api/|nsx/|util/)" },
    },
    {
      name: "a-kind-is-one-folder",
      comment:
        "A kind's folder in reconcile/ (edge-tenant/, ip-pool/, nsx-manager/) imports the shared core, not another kind's folder, but for the NSXManager's that every dependent kind names (docs/adding-a-kind.md).",
      severity: "error",
      from: { path: "^src/reconcile/([^/]+)/" },
      to: { path: "^src/reconcile/[^/]+/", pathNot: ["^src/reconcile/$1/", "^src/reconcile/nsx-manager/"] },
    },
    {
      name: "the-core-finds-kinds-in-the-registries",
      comment:
        "reconcile/'s shared core reaches the kinds' folders only through the registries (kinds.ts: the modules; actions.ts and plan.ts: the actions and their effects), the package's entry (index.ts) and the reconciler's defaults of the kinds' options; code outside reconcile/ only through index.ts.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/reconcile/([^/]+/|(kinds|actions|plan|index|reconciler)\\.ts$)" },
      to: { path: "^src/reconcile/[^/]+/" },
    },
    {
      name: "controller-is-generic",
      comment:
        "controller/ is generic machinery: it imports nothing of nsx/, reconcile/, source/ or the kinds, and no cluster adapter (kube/ implements controller's interfaces, not the other way round).",
      severity: "error",
      from: { path: "^src/controller/" },
      to: { path: "^src/(?!controller/|util/)" },
    },
    {
      name: "kube-adapts-controller-only",
      comment:
        "kube/ holds the adapters to @kubernetes/client-node: they implement controller/'s interfaces (list+watch, Lease, Events) and know nothing of the kinds, the manager or reconcile.",
      severity: "error",
      from: { path: "^src/kube/" },
      to: { path: "^src/(?!kube/|controller/|util/)" },
    },
    {
      name: "source-knows-only-the-store",
      comment:
        "source/ delivers the desired state and carries status: of reconcile/ it knows only the store interface it implements (reconcile/store.ts), and never the manager, the wiring or a command.",
      severity: "error",
      from: { path: "^src/source/" },
      to: { path: "^src/(?!source/|api/|controller/|kube/|util/|reconcile/store\\.ts$)" },
    },
    {
      name: "operator-is-not-a-command",
      comment:
        "operator/ is the wiring the commands use, not the other way round; it takes a source, never builds a cluster's.",
      severity: "error",
      from: { path: "^src/operator/" },
      to: { path: "^src/(cli|simulator|kube)/" },
    },
    {
      name: "simulator-stands-alone",
      comment: "The simulator is a manager: it shares the XML and IP pieces, nothing of the operator.",
      severity: "error",
      from: { path: "^src/simulator/" },
      to: { path: "^src/(?!simulator/|nsx/|util/)" },
    },
    {
      name: "client-node-only-in-kube",
      comment:
        "@kubernetes/client-node is imported by the adapters in kube/ and by the Kubernetes source (source/kubernetes*.ts), nowhere else.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(kube/|source/kubernetes[a-z-]*\\.ts$)" },
      to: { path: "@kubernetes/client-node" },
    },
    {
      name: "cluster-code-loaded-lazily",
      comment:
        "The modules that load client-node (kube/, source/kubernetes*.ts) and the cluster wiring (cli/run-cluster.ts) are imported statically only by each other; anything else imports them dynamically (run, without --manifests) or for types, so that plan, apply, simulate, demo, import and run --manifests never load client-node (test/cli/footprint.test.ts checks it at run time).",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(kube/|source/kubernetes[a-z-]*\\.ts$|cli/run-cluster\\.ts$)" },
      to: {
        path: "^src/(kube/|source/kubernetes[a-z-]*\\.ts$|cli/run-cluster\\.ts$)",
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
