/**
 * `nsxv-operator demo` (`npm start`): the product's first impression. Starts the simulated
 * manager with examples/demo/simulator-state.yaml, then runs plan, apply --release-strays and
 * plan again against examples/demo/manifests/, and finally checks on the simulator's own records
 * that no PUT lost content, that only strays were released and that paused and Observe objects
 * were left alone. Exit 0 when every step behaved as it should, 1 otherwise.
 */
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { AddressSet } from "../api/address-set.ts";
import { loadManifests } from "../api/manifests.ts";
import { SPEC_DEFAULTS, type EdgeTenant, type IPPoolAllocations, type NsxvObject } from "../api/types.ts";
import { EFFECTS, isPaused, sanctionedEdgeFields } from "../reconcile/index.ts";
import {
  loadStateFile,
  startSimulator,
  type AuditSnapshot,
  type CounterSnapshot,
  type RunningSimulator,
  type StateDump,
} from "../simulator/index.ts";
import { EXIT, processIo, type CliIo } from "./output.ts";
import { useColour } from "./output-text.ts";
import { runOneShotCommand, type OneShotFlags } from "./plan-apply.ts";
import { withDefaults } from "../util/options.ts";

const EXAMPLES = fileURLToPath(new URL("../../examples/demo/", import.meta.url));

export interface DemoOptions {
  /** default examples/demo/simulator-state.yaml */
  stateFile?: string;
  /** default examples/demo/manifests */
  manifestsDir?: string;
  /** the NSXManager of the manifests that is pointed at the simulator; default "lab" */
  managerName?: string;
}

export const DEMO_DEFAULTS = Object.freeze({
  stateFile: `${EXAMPLES}simulator-state.yaml`,
  manifestsDir: `${EXAMPLES}manifests`,
  managerName: "lab",
});

interface Step {
  command: "plan" | "apply";
  releaseStrays: boolean;
  /** what the step is for, and the exit code it must give */
  title: string;
  wantExit: number;
}

const STEPS: readonly Step[] = [
  {
    command: "plan",
    releaseStrays: false,
    title: "plan: what differs from the manifests",
    wantExit: EXIT.changes,
  },
  { command: "apply", releaseStrays: true, title: "apply --release-strays: correct it", wantExit: EXIT.ok },
  { command: "plan", releaseStrays: false, title: "plan again: nothing left to do", wantExit: EXIT.ok },
];

/** A check made on the simulator's records after the steps. */
interface Check {
  ok: boolean;
  text: string;
}

export async function runDemo(io: CliIo, options: DemoOptions = {}): Promise<number> {
  const o = withDefaults(DEMO_DEFAULTS, options);
  const colour = useColour(io.stdout, io.env);
  const bold = (text: string) => (colour ? `\u001b[1m${text}\u001b[22m` : text);
  const mark = (ok: boolean) =>
    colour ? (ok ? "\u001b[32m✓\u001b[39m" : "\u001b[31m✗\u001b[39m") : ok ? "✓" : "✗";
  // the demo's credentials are the Secret's: variables meant for a real manager must not leak in
  const demoIo: CliIo = { ...io, env: { ...io.env, NSX_USERNAME: undefined, NSX_PASSWORD: undefined } };

  let simulator: RunningSimulator;
  try {
    simulator = await startSimulator({
      state: await loadStateFile(o.stateFile),
      sanctionedEdgeFields: sanctionedEdgeFields(EFFECTS),
    });
  } catch (error) {
    io.stderr.write(
      `error: cannot start the simulator: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return EXIT.error;
  }
  try {
    const before = simulator.state.dump();
    const shown = relative(process.cwd(), o.manifestsDir) || ".";
    io.stdout.write(
      `${bold("nsxv-operator demo")}: a simulated NSX-v manager at ${simulator.url} with ` +
        `${before.edges.length} edges and ${before.pools.length} IP pools, and the manifests in ${shown}.\n`,
    );
    let ok = true;
    for (const [index, step] of STEPS.entries()) {
      const flags: OneShotFlags = {
        filename: [o.manifestsDir],
        managerUrl: [`${o.managerName}=${simulator.url}`],
        releaseStrays: step.releaseStrays,
      };
      const line = `$ nsxv-operator ${step.command}${step.releaseStrays ? " --release-strays" : ""} -f ${shown} --manager-url ${o.managerName}=${simulator.url}`;
      io.stdout.write(`\n${bold(`── ${index + 1}/${STEPS.length} ${step.title}`)}\n${line}\n\n`);
      const exit = await runOneShotCommand(step.command, flags, demoIo);
      if (exit !== step.wantExit) {
        ok = false;
        io.stdout.write(`${mark(false)} ${step.command} exited ${exit}; expected ${step.wantExit}\n`);
      }
    }
    io.stdout.write(`\n${bold("── checked on the simulator's records")}\n`);
    const checks = await verify(simulator, before, o.manifestsDir);
    for (const check of checks) io.stdout.write(`${mark(check.ok)} ${check.text}\n`);
    ok &&= checks.every((c) => c.ok);
    io.stdout.write(
      ok
        ? `\n${bold("Demo complete: drift found and corrected, nothing else touched.")}\n`
        : `\n${bold("Demo FAILED: see the ✗ above.")}\n`,
    );
    return ok ? EXIT.ok : EXIT.error;
  } finally {
    await simulator.close();
  }
}

/** Compares the simulator's state and audit after the steps with its state before them. */
async function verify(
  simulator: RunningSimulator,
  before: StateDump,
  manifestsDir: string,
): Promise<Check[]> {
  const after = simulator.state.dump();
  const audit = simulator.state.audit.snapshot();
  const objects = (await loadManifests([manifestsDir])).objects.map((l) => l.object);
  return [
    putCheck(audit, simulator.state.counters.snapshot()),
    ...poolChecks(objects, before, after, audit),
    untouchedCheck(objects, before, after),
  ];
}

function putCheck(audit: AuditSnapshot, counters: CounterSnapshot): Check {
  const puts = Object.values(counters["putEdge"] ?? {}).reduce((a, b) => a + b, 0);
  const lost = audit.violations.length;
  return {
    ok: lost === 0,
    text: `${puts} edge PUT${puts === 1 ? "" : "s"}, ${lost === 0 ? "none" : lost} lost content: each document equal to the stored one but for <tenant>`,
  };
}

/** Only strays were released, and every allowed address that was allocated still is. */
function poolChecks(
  objects: readonly NsxvObject[],
  before: StateDump,
  after: StateDump,
  audit: AuditSnapshot,
): Check[] {
  const allowedByPool = new Map<string, AddressSet>();
  for (const object of objects) {
    if (object.kind !== "IPPoolAllocations") continue;
    const { id, name, scope = SPEC_DEFAULTS.poolScope } = object.spec.pool;
    const pool = before.pools.find((p) =>
      id !== undefined ? p.id === id : p.name === name && p.scopeId === scope,
    );
    if (pool !== undefined) allowedByPool.set(pool.id, AddressSet.parse(object.spec.allowed));
  }
  const wronglyReleased = audit.releases.filter((r) => allowedByPool.get(r.poolId)?.has(r.ip) !== false);
  const keptBefore = before.pools.flatMap((p) =>
    p.allocations
      .filter((a) => allowedByPool.get(p.id)?.has(a.ipAddress))
      .map((a) => `${p.id} ${a.ipAddress}`),
  );
  const allocatedAfter = new Set(
    after.pools.flatMap((p) => p.allocations.map((a) => `${p.id} ${a.ipAddress}`)),
  );
  const lost = keptBefore.filter((k) => !allocatedAfter.has(k));
  const released = audit.releases.map((r) => r.ip).join(", ");
  return [
    {
      ok: wronglyReleased.length === 0,
      text:
        wronglyReleased.length === 0
          ? `${audit.releases.length} strays released, none of them allowed: ${released}`
          : `released although allowed (or in no managed pool): ${wronglyReleased.map((r) => r.ip).join(", ")}`,
    },
    {
      ok: lost.length === 0,
      text:
        lost.length === 0
          ? `${keptBefore.length} allowed addresses still allocated`
          : `allowed addresses no longer allocated: ${lost.join(", ")}`,
    },
  ];
}

/** Paused objects and Observe objects: their edges and pools are as they were. */
function untouchedCheck(objects: readonly NsxvObject[], before: StateDump, after: StateDump): Check {
  const looked = objects.flatMap((object) => {
    if (object.kind === "NSXManager") return [];
    if (!isPaused(object.metadata) && object.spec.managementPolicy !== "Observe") return [];
    return [
      object.kind === "EdgeTenant"
        ? edgeUntouched(object, before, after)
        : poolUntouched(object, before, after),
    ];
  });
  const targets = looked.map((l) => l.target);
  const changed = looked.flatMap((l) => (l.changed === undefined ? [] : [l.changed]));
  return {
    ok: changed.length === 0,
    text:
      changed.length === 0
        ? `paused and Observe objects left alone: ${targets.join(", ") || "(none in the manifests)"}`
        : `changed although paused or Observe: ${changed.join(", ")}`,
  };
}

/** What an untouched object's check looked at, and what of it changed (if anything did). */
interface Untouched {
  target: string;
  changed?: string;
}

/** An EdgeTenant's edge: its version and tenant as they were. */
function edgeUntouched(object: EdgeTenant, before: StateDump, after: StateDump): Untouched {
  const { edgeId } = object.spec;
  const [was, is] = [before, after].map((s) => s.edges.find((e) => e.id === edgeId));
  const changed = was?.version !== is?.version || was?.tenant !== is?.tenant;
  return { target: `edge ${edgeId}`, ...(changed ? { changed: edgeId } : {}) };
}

/** An IPPoolAllocations's pool: its allocations as they were. */
function poolUntouched(object: IPPoolAllocations, before: StateDump, after: StateDump): Untouched {
  const { id, name } = object.spec.pool;
  const [was, is] = [before, after].map((s) => s.pools.find((p) => p.id === id || p.name === name));
  const changed = JSON.stringify(was?.allocations) !== JSON.stringify(is?.allocations);
  return { target: `pool ${was?.id ?? id ?? name}`, ...(changed ? { changed: was?.id ?? "?" } : {}) };
}

export function demoCommand(): Command {
  return new Command("demo")
    .description("Start a simulated NSX-v manager with drift, then plan, apply and plan again (npm start).")
    .action(async () => {
      process.exitCode = await runDemo(processIo());
    });
}
