/**
 * `nsxv-operator simulate`: runs the NSX manager simulator until SIGINT or SIGTERM, printing its
 * URL on one line of stdout so that scripts and tests can read the port. Secrets stay off the
 * command line when asked (`ps` shows it to every user of the machine): the manager password
 * from a file or NSXV_SIMULATOR_PASSWORD, the control API's token from a file or
 * NSXV_SIMULATOR_CONTROL_TOKEN. Listening beyond loopback is said on stderr: the control API can
 * change or read everything the simulator holds.
 */
import { EFFECTS, sanctionedEdgeFields } from "../reconcile/index.ts";
import { readFile } from "node:fs/promises";
import { Command, InvalidArgumentError } from "commander";
import { loadStateFile, startSimulator, type SimulatorOptions } from "../simulator/index.ts";
import { isLoopbackHost } from "../util/ip.ts";

interface SimulateFlags {
  port: number;
  host: string;
  state?: string;
  username?: string;
  password?: string;
  passwordFile?: string;
  controlTokenFile?: string;
  tlsKey?: string;
  tlsCert?: string;
  latencyMs?: number;
}

/** Environment variables that carry the secrets instead of the command line. */
export const SIMULATE_ENV = {
  password: "NSXV_SIMULATOR_PASSWORD",
  controlToken: "NSXV_SIMULATOR_CONTROL_TOKEN",
} as const;

function nonNegativeInteger(text: string): number {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError("not a non-negative integer");
  return Number(text);
}

/** A secret from one source: the flag's value, the file's first line, or the variable; two flags are an error. */
async function secretFrom(sources: {
  flag?: [string, string | undefined];
  file: [string, string | undefined];
  env: [string, string | undefined];
}): Promise<string | undefined> {
  const { flag, file, env } = sources;
  if (flag?.[1] !== undefined && file[1] !== undefined)
    throw new Error(`give ${flag[0]} or ${file[0]}, not both`);
  if (flag?.[1] !== undefined) return flag[1];
  if (file[1] !== undefined) {
    const text = (await readFile(file[1], "utf8")).split(/\r?\n/)[0] ?? "";
    if (text === "") throw new Error(`${file[0]} ${file[1]}: the first line is empty`);
    return text;
  }
  return env[1] === "" ? undefined : env[1];
}

/** The simulator's options from the flags and the environment, and what to warn about. */
export async function simulateOptions(
  flags: SimulateFlags,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ options: SimulatorOptions; warnings: string[] }> {
  // what the operator's kinds may change on an edge is no violation of the audit
  const options: SimulatorOptions = {
    host: flags.host,
    port: flags.port,
    sanctionedEdgeFields: sanctionedEdgeFields(EFFECTS),
  };
  if (flags.state !== undefined) options.state = await loadStateFile(flags.state);
  const password = await secretFrom({
    flag: ["--password", flags.password],
    file: ["--password-file", flags.passwordFile],
    env: [SIMULATE_ENV.password, env[SIMULATE_ENV.password]],
  });
  if ((flags.username === undefined) !== (password === undefined)) {
    throw new Error(
      `give --username and a password (--password-file, ${SIMULATE_ENV.password} or --password) together`,
    );
  }
  if (flags.username !== undefined && password !== undefined) {
    options.credentials = { username: flags.username, password };
  }
  const controlToken = await secretFrom({
    file: ["--control-token-file", flags.controlTokenFile],
    env: [SIMULATE_ENV.controlToken, env[SIMULATE_ENV.controlToken]],
  });
  if (controlToken !== undefined) options.controlToken = controlToken;
  if (flags.tlsKey !== undefined && flags.tlsCert !== undefined) {
    options.tls = { key: await readFile(flags.tlsKey, "utf8"), cert: await readFile(flags.tlsCert, "utf8") };
  }
  if (flags.latencyMs !== undefined) options.settings = { latencyMs: flags.latencyMs };
  return { options, warnings: exposure(flags.host, options) };
}

/** What listening on `host` exposes, beyond this machine. */
function exposure(host: string, options: SimulatorOptions): string[] {
  if (isLoopbackHost(host)) return [];
  const warnings: string[] = [];
  if (options.controlToken === undefined) {
    warnings.push(
      `listening on ${host}: the control API (/_simulator/: state, credentials, faults) is open to anyone who can reach it; give it a token with --control-token-file or ${SIMULATE_ENV.controlToken}`,
    );
  }
  if (options.tls === undefined) {
    warnings.push(
      `listening on ${host} without TLS: the manager credentials${options.controlToken === undefined ? "" : " and the control token"} cross the network in clear text (--tls-key, --tls-cert)`,
    );
  }
  return warnings;
}

export function simulateCommand(): Command {
  return new Command("simulate")
    .description("Run a simulated NSX-v manager (HTTP or HTTPS) with a control API under /_simulator/.")
    .option("--port <port>", "port to listen on; 0 picks a free one", nonNegativeInteger, 0)
    .option("--host <host>", "address to listen on (beyond loopback: see the warnings)", "127.0.0.1")
    .option("--state <file>", "initial state, YAML or JSON (edges, pools, credentials, settings)")
    .option("--username <name>", "user name for API calls (default: the state file's, else admin)")
    .option(
      "--password-file <file>",
      `password for API calls, the file's first line (or ${SIMULATE_ENV.password}; default: the state file's, else default)`,
    )
    .option("--password <password>", "the same on the command line, where ps shows it to every user")
    .option(
      "--control-token-file <file>",
      `the control API answers only requests with Authorization: Bearer <the file's first line> (or ${SIMULATE_ENV.controlToken})`,
    )
    .option("--tls-key <file>", "PEM private key: serve HTTPS (needs --tls-cert)")
    .option("--tls-cert <file>", "PEM certificate: serve HTTPS (needs --tls-key)")
    .option("--latency-ms <ms>", "each API call's least time, its work included", nonNegativeInteger)
    .action(async function (this: Command, flags: SimulateFlags) {
      if ((flags.tlsKey === undefined) !== (flags.tlsCert === undefined)) {
        this.error("error: give --tls-key and --tls-cert together");
      }
      let configured: Awaited<ReturnType<typeof simulateOptions>>;
      try {
        configured = await simulateOptions(flags, process.env);
      } catch (error) {
        this.error(`error: ${error instanceof Error ? error.message : String(error)}`);
      }
      let simulator: Awaited<ReturnType<typeof startSimulator>>;
      try {
        simulator = await startSimulator(configured.options);
      } catch (error) {
        this.error(`error: ${listenProblem(error, flags)}`);
      }
      for (const warning of configured.warnings) process.stderr.write(`warning: ${warning}\n`);
      // the handlers first: whoever reads the line may signal at once
      const stopped = new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      process.stdout.write(`nsx manager simulator listening on ${simulator.url}\n`);
      await stopped;
      await simulator.close();
    });
}
/** Why the simulator could not listen, in one line that says what to do. */
function listenProblem(error: unknown, flags: SimulateFlags): string {
  const code = (error as { code?: unknown }).code;
  const where = `${flags.host}:${flags.port}`;
  if (code === "EADDRINUSE")
    return `port ${flags.port} on ${flags.host} is in use: stop what listens there, or pick another with --port (0 picks a free one)`;
  if (code === "EACCES")
    return `not allowed to listen on ${where}: ports below 1024 need privileges; pick another with --port`;
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND")
    return `cannot listen on ${where}: ${flags.host} is not an address of this machine (--host)`;
  return `cannot listen on ${where}: ${error instanceof Error ? error.message : String(error)}`;
}
