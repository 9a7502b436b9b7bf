// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    // crd-validators.generated.ts: ajv's code, written by scripts/crd-validators.ts and checked by its test
    ignores: [
      "dist/",
      ".cache/",
      "node_modules/",
      "coverage/",
      "bench/results/",
      "src/api/crd-validators.generated.ts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-throw-literal": "error",
      eqeqeq: ["error", "always", { null: "ignore" }],
    },
  },
  {
    // the shape of a function in src/: a branchy one is split, a long list of arguments is an
    // options object (undici and pino style)
    files: ["src/**/*.ts"],
    rules: { complexity: ["error", 15], "max-params": ["error", 4] },
  },
  {
    // Baseline (issue 22): the files with functions over the complexity limit when it was added,
    // in three bands (19, 35, 39) that cap their worst, so none grows past its band. Drop a file
    // from its band when it is split; the planners and the reconciler go with the one contract
    // per kind (issue 22 item 1). Tests and benchmarks have no limits.
    files: [
      "src/api/duration.ts",
      "src/api/manifests.ts",
      "src/api/yaml-guard.ts",
      "src/cli/run.ts",
      "src/controller/kube-watch.ts",
      "src/nsx/client.ts",
      "src/nsx/xml.ts",
      "src/operator/operator.ts",
      "src/reconcile/conflicts.ts",
      "src/reconcile/ip-pool/plan.ts",
      "src/reconcile/spec.ts",
      "src/simulator/server.ts",
    ],
    rules: { complexity: ["error", 19] },
  },
  {
    files: [
      "src/cli/demo.ts",
      "src/nsx/client-options.ts",
      "src/reconcile/edge-tenant/restore-plan.ts",
      "src/source/directory.ts",
    ],
    rules: { complexity: ["error", 35] },
  },
  {
    files: ["src/reconcile/edge-tenant/plan.ts"],
    rules: { complexity: ["error", 39] },
  },
  {
    // CommonJS preloaded with --require (bench/lib/peak-rss.cjs): Node's CommonJS globals
    files: ["**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", module: "writable", process: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
