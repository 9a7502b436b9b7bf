/**
 * Static checks of the Dockerfile and .dockerignore, for a machine without a Docker engine: the
 * stages, what the runtime image holds (built output, CRDs, production dependencies; no package
 * manager, no install), the non-root user, the OCI labels, that the build context holds every
 * file a COPY names, and that the entrypoint is what the build emits for src/cli/main.ts. The
 * build and a `--help` run from a production install are proven by the lead's test.
 */
import { existsSync } from "node:fs";
import { posix } from "node:path";
import { describe, expect, it } from "vitest";
import { copies, execForm, instructions, parseDockerfile } from "./dockerfile.ts";
import { readRepoFile, repoPath } from "./tools.ts";

const stages = parseDockerfile(readRepoFile("Dockerfile"));
const stage = (name: string) => stages.find((candidate) => candidate.name === name);
const runtime = stages.at(-1);
const packageJson = JSON.parse(readRepoFile("package.json")) as {
  license: string;
  bin: Record<string, string>;
  files: string[];
  scripts: Record<string, string>;
};

describe("Dockerfile stages", () => {
  it("builds in node:24, installs production dependencies apart, and runs on node:24-slim", () => {
    expect(stages.map((candidate) => [candidate.name, candidate.image])).toEqual([
      ["build", "node:24"],
      ["deps", "node:24-slim"],
      ["runtime", "node:24-slim"],
    ]);
  });

  it("the build stage installs everything and compiles with `npm run build`", () => {
    const runs = instructions(stage("build"), "RUN");
    expect(runs.some((run) => /\bnpm ci\b/.test(run) && !run.includes("--omit=dev"))).toBe(true);
    expect(runs).toContain("npm run build");
  });

  it("the deps stage installs production dependencies only, from the lock file", () => {
    const runs = instructions(stage("deps"), "RUN");
    expect(runs.some((run) => /\bnpm ci\b.*--omit=dev/.test(run))).toBe(true);
    expect(copies(stage("deps")).flatMap((copy) => copy.sources)).toEqual([
      "package.json",
      "package-lock.json",
    ]);
  });

  it("no stage runs `npm install`, which would ignore the lock file", () => {
    for (const candidate of stages) {
      for (const run of instructions(candidate, "RUN"))
        expect(run, candidate.name).not.toMatch(/\bnpm (install|i)\b/);
    }
  });
});

describe("the runtime image", () => {
  it("installs nothing and removes the package managers", () => {
    const runs = instructions(runtime, "RUN").join(" ");
    expect(runs).not.toMatch(/\bnpm (ci|install|i)\b|\byarn (install|add)\b|\bapt-get install\b/);
    for (const path of ["/usr/local/lib/node_modules/npm", "/usr/local/bin/npm", "/usr/local/bin/npx"]) {
      expect(runs).toContain(path);
    }
  });

  it("holds only package.json, the CRDs, the build's dist/, the production node_modules/ and the demo", () => {
    expect(
      copies(runtime).map(
        ({ from, sources, destination }) => `${from ?? "context"}:${sources.join(",")}→${destination}`,
      ),
    ).toEqual([
      "context:package.json→./",
      "deps:/src/node_modules/→node_modules/",
      "build:/src/dist/→dist/",
      "context:crds/→crds/",
      "context:examples/demo/→examples/demo/",
    ]);
  });

  it("ships every entry of package.json `files`", () => {
    const destinations = copies(runtime).map((copy) => copy.destination.replace(/\/$/, ""));
    for (const entry of packageJson.files) expect(destinations, entry).toContain(entry);
  });

  it("runs as the non-root user 65532, the Deployment's runAsUser", () => {
    const users = instructions(runtime, "USER");
    expect(users.at(-1)).toBe("65532:65532");
    const lastUser = runtime?.instructions.map((i) => i.keyword).lastIndexOf("USER") ?? -1;
    // nothing after USER may need root
    expect(runtime?.instructions.slice(lastUser).filter((i) => i.keyword === "RUN")).toEqual([]);
  });

  it("starts `node dist/cli/main.js run`", () => {
    expect(execForm(runtime, "ENTRYPOINT")).toEqual(["node", "dist/cli/main.js"]);
    expect(execForm(runtime, "CMD")).toEqual(["run"]);
    expect(instructions(runtime, "WORKDIR").at(-1)).toBe("/app");
  });

  it("carries the OCI labels, with the package's license", () => {
    const labels = instructions(runtime, "LABEL").join(" ");
    for (const key of ["title", "description", "licenses", "source", "version", "revision", "created"]) {
      expect(labels).toMatch(new RegExp(`org\\.opencontainers\\.image\\.${key}=`));
    }
    expect(labels).toContain(`org.opencontainers.image.licenses="${packageJson.license}"`);
  });
});

describe("the entrypoint after a build", () => {
  const buildConfig = JSON.parse(readRepoFile("tsconfig.build.json")) as {
    compilerOptions: { rootDir: string; outDir: string };
  };
  const entrypoint = execForm(runtime, "ENTRYPOINT")[1] ?? "";

  it("is what tsc emits for src/cli/main.ts, and the package's bin", () => {
    const { rootDir, outDir } = buildConfig.compilerOptions;
    expect(entrypoint.startsWith(`${outDir}/`)).toBe(true);
    const source = posix.join(rootDir, entrypoint.slice(outDir.length + 1).replace(/\.js$/, ".ts"));
    expect(source).toBe("src/cli/main.ts");
    expect(existsSync(repoPath(source))).toBe(true);
    expect(Object.values(packageJson.bin)).toEqual([entrypoint]);
  });

  it("the build stage copies every file `npm run build` names", () => {
    const buildCopies = copies(stage("build")).flatMap((copy) =>
      copy.sources.map((source) => source.replace(/\/$/, "")),
    );
    const named = packageJson.scripts.build?.split(/\s+/).filter((word) => /\.(sh|json)$/.test(word)) ?? [];
    expect(named.length).toBeGreaterThan(0);
    for (const file of [...named, "tsconfig.json"]) {
      const copied = buildCopies.some((source) => file === source || file.startsWith(`${source}/`));
      expect(copied, file).toBe(true);
    }
    expect(buildCopies).toContain(buildConfig.compilerOptions.rootDir);
  });
});

describe(".dockerignore", () => {
  const lines = readRepoFile(".dockerignore")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const allowed = lines
    .filter((line) => line.startsWith("!"))
    .map((line) => line.slice(1).replace(/\/$/, ""));

  it("is an allow-list: everything is excluded first", () => {
    expect(lines[0]).toBe("*");
  });

  it("allows every path a COPY takes from the build context, and each exists", () => {
    const fromContext = stages.flatMap((candidate) =>
      copies(candidate)
        .filter((copy) => copy.from === undefined)
        .flatMap((copy) => copy.sources.map((source) => source.replace(/\/$/, ""))),
    );
    expect(fromContext.length).toBeGreaterThan(0);
    for (const source of fromContext) {
      expect(allowed, source).toContain(source);
      expect(existsSync(repoPath(source)), source).toBe(true);
    }
  });

  it.each([
    { path: ".git", reason: "history and possibly credentials in its config" },
    { path: "node_modules", reason: "the stages install their own, from the lock file" },
    { path: ".cache", reason: "local toolchains and control-plane binaries" },
    { path: "dist", reason: "the build stage compiles its own" },
    { path: "test", reason: "tests are not part of the image" },
  ])("keeps $path out ($reason)", ({ path }) => {
    expect(allowed.some((entry) => path === entry || path.startsWith(`${entry}/`))).toBe(false);
  });
});
