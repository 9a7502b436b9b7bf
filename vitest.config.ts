import { configDefaults, defineConfig } from "vitest/config";

// Two projects: `unit` (fast, no servers) and `integration` (one real etcd + kube-apiserver per
// run, started by the project's global setup; test files run one at a time against it).
export default defineConfig({
  test: {
    // a run that finds no test files is a failure, not a pass
    passWithNoTests: false,
    pool: "forks",
    setupFiles: ["test/support/cpu-meter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/integration/**"],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/controlplane/global-setup.ts"],
          // the test files share one control plane; one at a time keeps them from disturbing each other
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
