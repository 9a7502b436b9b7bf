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
    // options object (undici and pino style). Every function is within both limits (issue 33 took
    // the last ones down), so there is no baseline of exceptions. Tests and benchmarks have none.
    files: ["src/**/*.ts"],
    rules: { complexity: ["error", 15], "max-params": ["error", 4] },
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
