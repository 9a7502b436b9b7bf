import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * The tests that run tools of their own (helm, kubectl, promtool, lua5.1, npm, govnsx, gonsx):
 * the `tools` project. helm, kubectl and our Go programs come from test/controlplane/build.sh, so
 * these files wait for its binaries, as the integration files do.
 */
const TOOL_TESTS = [
  "test/deploy/**/*.test.ts",
  "test/simulator/govnsx.test.ts",
  "test/simulator/gonsx.test.ts",
];

/**
 * Three projects, one pool of workers: `unit` (no servers, no tools), `tools` and `integration`
 * (one real etcd and kube-apiserver per run, shared by its files, each in namespaces of its own).
 * Their files run side by side, longest first (test/support/sequencer.ts); most of them wait on
 * servers and child processes more than they compute, so there are twice as many workers as
 * cores. When the control plane's binaries are missing they are built in the background
 * (test/controlplane/global-setup.ts) while the unit files run first.
 */
export default defineConfig({
  test: {
    // a run that finds no test files is a failure, not a pass
    passWithNoTests: false,
    pool: "forks",
    maxWorkers: 2 * availableParallelism(),
    sequence: { sequencer: (await import("./test/support/sequencer.ts")).LongestFirstSequencer },
    setupFiles: ["test/support/cpu-meter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/integration/**", ...TOOL_TESTS],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: "tools",
          include: TOOL_TESTS,
          globalSetup: ["test/controlplane/global-setup.ts"],
          setupFiles: ["test/controlplane/setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/controlplane/global-setup.ts"],
          setupFiles: ["test/controlplane/setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
