/**
 * Vitest global setup of the projects that need the control-plane binaries: `tools` (helm,
 * kubectl, govnsx on PATH) and `integration` (one shared etcd and kube-apiserver per run). It
 * returns at once, so that the unit tests run meanwhile: missing binaries are built in the
 * background (build.sh, 10-20 minutes cold; its output goes to a log file), and the test files
 * that need them wait in their setup file (setup.ts) by asking a small loopback endpoint of this
 * process, which answers once the binaries are there, and for the integration project once the
 * shared control plane has started on them. Both projects share one build and one control plane
 * (a process-wide service): vitest calls this setup once per project.
 *
 * Environment: missing binaries are built when Go is installed (NSXV_BUILD_CONTROLPLANE=0 turns
 * that off). Without them the tests that need them skip with the reason; NSXV_REQUIRE_CONTROLPLANE=1
 * turns that skip into a failure (CI sets it).
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { BUILD_SCRIPT, controlPlaneBinDir, missingBinaries, missingReason, notCurrent } from "./binaries.ts";
import { infoOf, startControlPlane, type ControlPlane } from "./controlplane.ts";
import { tailFile } from "./processes.ts";
import type { BinariesAnswer, ControlPlaneAnswer, ServiceEndpoint } from "./setup.ts";

/** How long one request waits for an answer before saying "not yet" (the client asks again). */
const LONG_POLL_MS = 30_000;

class ControlPlaneService {
  readonly #token = randomBytes(16).toString("hex");
  readonly #server: Server;
  readonly #binaries: Promise<BinariesAnswer>;
  #controlPlane: Promise<ControlPlane | undefined> | undefined;
  #users = 0;

  constructor() {
    this.#binaries = findOrBuild();
    this.#server = createServer((req, res) => {
      if (req.headers.authorization !== `Bearer ${this.#token}`) {
        res.writeHead(403).end();
        return;
      }
      const path = new URL(req.url ?? "/", "http://service").pathname;
      if (path !== "/binaries" && path !== "/control-plane") {
        res.writeHead(404).end();
        return;
      }
      const answer = path === "/binaries" ? this.#binaries : this.controlPlane();
      let timer: NodeJS.Timeout | undefined;
      const notYet = new Promise<"not yet">((resolve) => {
        timer = setTimeout(() => resolve("not yet"), LONG_POLL_MS);
      });
      void Promise.race([answer, notYet]).then((value) => {
        clearTimeout(timer);
        if (value === "not yet") res.writeHead(202).end();
        else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
      });
    });
  }

  async listen(): Promise<Omit<ServiceEndpoint, "controlPlane">> {
    if (!this.#server.listening) {
      await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    }
    const address = this.#server.address();
    if (address === null || typeof address === "string") throw new Error("the service has no TCP address");
    return { url: `http://127.0.0.1:${address.port}`, token: this.#token };
  }

  /** the shared control plane, started once (at the first ask) when the binaries are there */
  async controlPlane(): Promise<ControlPlaneAnswer> {
    const binaries = await this.#binaries;
    if (!binaries.found) return { available: false, reason: binaries.reason, failed: binaries.failed };
    this.#controlPlane ??= this.#start(binaries.binDir);
    try {
      const controlPlane = await this.#controlPlane;
      return controlPlane === undefined
        ? { available: false, reason: "the run is over", failed: true }
        : { available: true, info: infoOf(controlPlane) };
    } catch (error) {
      return { available: false, reason: `the control plane did not start: ${String(error)}`, failed: true };
    }
  }

  async #start(binDir: string): Promise<ControlPlane> {
    const startedAt = performance.now();
    const controlPlane = await startControlPlane({ binDir });
    console.info(
      `[controlplane] ${controlPlane.url} ready in ${Math.round(performance.now() - startedAt)} ms ` +
        `(kubeconfig and logs in ${controlPlane.dir})`,
    );
    return controlPlane;
  }

  acquire(): void {
    this.#users += 1;
  }

  /** after the last project's teardown: stops the control plane and the endpoint; says whether it did */
  async release(): Promise<boolean> {
    this.#users -= 1;
    if (this.#users > 0) return false;
    const closed = new Promise((resolve) => this.#server.close(resolve));
    // the workers' idle keep-alive connections would hold close() open
    this.#server.closeAllConnections();
    await closed;
    const controlPlane = await this.#controlPlane?.catch(() => undefined);
    await controlPlane?.stop();
    return true;
  }
}

/**
 * The binaries' directory, after building what build.sh would build there (binaries missing,
 * programs of ours built from another source) when building is allowed.
 */
async function findOrBuild(): Promise<BinariesAnswer> {
  const binDir = controlPlaneBinDir();
  const toBuild = notCurrent();
  const allowed = process.env.NSXV_BUILD_CONTROLPLANE !== "0" && hasGo();
  if (toBuild.length === 0 || !allowed) {
    // without a build, present is enough: a test of a program not current says so itself (findProgram)
    const missing = missingBinaries(binDir);
    return missing.length === 0
      ? { found: true, binDir }
      : { found: false, reason: missingReason(binDir, missing), failed: false };
  }
  mkdirSync(binDir, { recursive: true });
  const logPath = join(binDir, "build.log");
  console.warn(
    `[controlplane] building ${toBuild.join(", ")} into ${binDir} in the background, while the tests ` +
      `that do not need them run (10-20 minutes when cold; log: ${logPath})`,
  );
  const startedAt = performance.now();
  const code = await runBuild(logPath);
  const seconds = Math.round((performance.now() - startedAt) / 1000);
  const stillToBuild = notCurrent();
  if (code === 0 && stillToBuild.length === 0) {
    console.warn(`[controlplane] built in ${seconds} s`);
    return { found: true, binDir };
  }
  return {
    found: false,
    failed: true,
    reason:
      `${BUILD_SCRIPT} failed (exit ${code}) after ${seconds} s; the end of ${logPath}:\n${tailFile(logPath, 20)}\n` +
      missingReason(binDir, stillToBuild),
  };
}

function runBuild(logPath: string): Promise<number | null> {
  const log = openSync(logPath, "a");
  const child = spawn("bash", [BUILD_SCRIPT], { stdio: ["ignore", "ignore", log] });
  closeSync(log);
  return new Promise((resolve) => {
    child.on("error", () => resolve(null));
    child.on("exit", (code) => resolve(code));
  });
}

function hasGo(): boolean {
  return spawnSync("go", ["version"], { stdio: "ignore" }).status === 0;
}

const SERVICE = Symbol.for("nsxv-operator.test.controlplane-service");
type WithService = typeof globalThis & { [SERVICE]?: ControlPlaneService };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const global = globalThis as WithService;
  const service = (global[SERVICE] ??= new ControlPlaneService());
  service.acquire();
  // the integration project's files share one control plane: start it as soon as the binaries are there
  const controlPlane = project.name === "integration";
  if (controlPlane) void service.controlPlane();
  project.provide("controlPlaneService", { ...(await service.listen()), controlPlane });
  return async () => {
    if (await service.release()) delete global[SERVICE];
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    controlPlaneService: ServiceEndpoint;
  }
}
