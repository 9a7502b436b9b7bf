// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { complexityBaselineRule, loadBaseline } from "./scripts/complexity-baseline.ts";

const COMPLEXITY_MAX = 15;

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
    // options object (undici and pino style). Complexity is eslint's, with the functions still over
    // the limit listed one by one in complexity-baseline.json (scripts/complexity-baseline.ts):
    // none may grow, no other may join them, and an entry goes when its function comes down.
    // Tests and benchmarks have no limits.
    files: ["src/**/*.ts"],
    plugins: { house: { rules: { "complexity-baseline": complexityBaselineRule } } },
    rules: {
      "house/complexity-baseline": [
        "error",
        {
          max: COMPLEXITY_MAX,
          root: import.meta.dirname,
          baseline: loadBaseline(import.meta.dirname, COMPLEXITY_MAX),
        },
      ],
      "max-params": ["error", 4],
    },
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
