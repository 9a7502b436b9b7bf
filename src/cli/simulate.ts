/**
 * `nsxv-operator simulate`: runs the NSX manager simulator until SIGINT or SIGTERM, printing its
 * URL on one line of stdout so that scripts and tests can read the port.
 */
import { readFile } from "node:fs/promises";
import { Command, InvalidArgumentError } from "commander";
import { loadStateFile, startSimulator, type SimulatorOptions } from "../simulator/index.ts";

interface SimulateFlags {
  port: number;
  host: string;
  state?: string;
  username?: string;
  password?: string;
  tlsKey?: string;
  tlsCert?: string;
  latencyMs?: number;
}

function nonNegativeInteger(text: string): number {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError("not a non-negative integer");
  return Number(text);
}

export function simulateCommand(): Command {
  return new Command("simulate")
    .description("Run a simulated NSX-v manager (HTTP or HTTPS) with a control API under /_simulator/.")
    .option("--port <port>", "port to listen on; 0 picks a free one", nonNegativeInteger, 0)
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--state <file>", "initial state, YAML or JSON (edges, pools, credentials, settings)")
    .option("--username <name>", "user name for API calls (default: the state file's, else admin)")
    .option("--password <password>", "password for API calls (default: the state file's, else default)")
    .option("--tls-key <file>", "PEM private key: serve HTTPS (needs --tls-cert)")
    .option("--tls-cert <file>", "PEM certificate: serve HTTPS (needs --tls-key)")
    .option("--latency-ms <ms>", "added to every API call", nonNegativeInteger)
    .action(async function (this: Command, flags: SimulateFlags) {
      if ((flags.username === undefined) !== (flags.password === undefined)) {
        this.error("error: give --username and --password together");
      }
      if ((flags.tlsKey === undefined) !== (flags.tlsCert === undefined)) {
        this.error("error: give --tls-key and --tls-cert together");
      }
      let options: SimulatorOptions;
      try {
        options = await optionsFrom(flags);
      } catch (error) {
        this.error(`error: ${error instanceof Error ? error.message : String(error)}`);
      }
      let simulator: Awaited<ReturnType<typeof startSimulator>>;
      try {
        simulator = await startSimulator(options);
      } catch (error) {
        this.error(`error: ${listenProblem(error, flags)}`);
      }
      process.stdout.write(`nsx manager simulator listening on ${simulator.url}\n`);
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
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

async function optionsFrom(flags: SimulateFlags): Promise<SimulatorOptions> {
  const options: SimulatorOptions = { host: flags.host, port: flags.port };
  if (flags.state !== undefined) options.state = await loadStateFile(flags.state);
  if (flags.username !== undefined && flags.password !== undefined) {
    options.credentials = { username: flags.username, password: flags.password };
  }
  if (flags.tlsKey !== undefined && flags.tlsCert !== undefined) {
    options.tls = { key: await readFile(flags.tlsKey, "utf8"), cert: await readFile(flags.tlsCert, "utf8") };
  }
  if (flags.latencyMs !== undefined) options.settings = { latencyMs: flags.latencyMs };
  return options;
}
